// bench/fuzz.py mutant seed 289 of graph289: ['type f32->f16 at 432']
builtin.module {
  func.func @main(%x0: tensor<4x3xf32>, %x1: tensor<5xf32>, %x2: tensor<6x1xf32>, %x3: tensor<1xf32>, %x4: tensor<1xf32>, %x5: tensor<1xf32>, %x6: tensor<6x1xf32>, %x7: tensor<6x2xf32>, %x8: tensor<1xf32>, %x9: tensor<1xf32>) -> (tensor<1xf32>, tensor<1xf32>, tensor<6x4xf32>) {
    %v0 = graph.constant dense<0.70482409> : tensor<1xf32>
    %v1 = graph.batch_norm %x2, %x3, %x4, %x5, %v0 {epsilon = 1.000000e-02 : f16} : (tensor<6x1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x1xf32>
    %v2 = graph.concat %v1, %x6, %x7 {axis = 1 : i64} : (tensor<6x1xf32>, tensor<6x1xf32>, tensor<6x2xf32>) -> tensor<6x4xf32>
    %v3 = graph.abs %x4 : tensor<1xf32>
    %v4 = graph.layer_norm %x3, %x8, %x9 {axis = -1 : i64, epsilon = 1.000000e-03 : f32} : (tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    %v5 = graph.reshape %v4 : (tensor<1xf32>) -> tensor<1xf32>
    %v6 = graph.mul %v2, %v2 : (tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<6x4xf32>
    func.return %v3, %v5, %v6 : tensor<1xf32>, tensor<1xf32>, tensor<6x4xf32>
  }
}