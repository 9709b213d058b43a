// bench/fuzz.py mutant seed 365 of graph365: ['type f32->bf16 at 536']
builtin.module {
  func.func @main(%x0: tensor<3x1xf32>, %x1: tensor<4x3xf32>, %x2: tensor<4x5x1xf32>, %x3: tensor<1x1xf32>, %x4: tensor<5xf32>, %x5: tensor<5xf32>, %x6: tensor<5xf32>, %x7: tensor<1x5x3xf32>) -> (tensor<4x5x3xf32>, tensor<4x5x1xf32>) {
    %v0 = graph.matmul %x2, %x3 : (tensor<4x5x1xf32>, tensor<1x1xf32>) -> tensor<4x5x1xf32>
    %v1 = graph.constant dense<[0.657595456, 0.279227674, 0.449210167, 0.372298539, 0.542184949]> : tensor<5xf32>
    %v2 = graph.batch_norm %v0, %x4, %x5, %x6, %v1 {epsilon = 1.000000e-03 : bf16} : (tensor<4x5x1xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>) -> tensor<4x5x1xf32>
    %v3 = graph.min %x7, %v2 : (tensor<1x5x3xf32>, tensor<4x5x1xf32>) -> tensor<4x5x3xf32>
    func.return %v3, %v0 : tensor<4x5x3xf32>, tensor<4x5x1xf32>
  }
}