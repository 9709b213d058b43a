// bench/fuzz.py mutant seed 5048 of graph5048: ['shape dim 6->4294967297']
builtin.module {
  func.func @main(%x0: tensor<4294967297xf32>, %x1: tensor<6x4x5xf32>, %x2: tensor<1xf32>, %x3: tensor<6x4x5xf32>, %x4: tensor<6x4x5xf32>, %x5: tensor<5x4xf32>, %x6: tensor<5x3xf32>) -> (tensor<1x1x1xf32>, tensor<6x4x3xf32>, tensor<6x4x5xf32>) {
    %v0 = graph.layer_norm %x1, %x3, %x4 {axis = 0 : i64, epsilon = 1.000000e-02 : f32} : (tensor<6x4x5xf32>, tensor<6x4x5xf32>, tensor<6x4x5xf32>) -> tensor<6x4x5xf32>
    %v1 = graph.matmul %v0, %x5 : (tensor<6x4x5xf32>, tensor<5x4xf32>) -> tensor<6x4x4xf32>
    %v2 = graph.reduce_max %v1 {axes = array<i64>, keepdims = true} : (tensor<6x4x4xf32>) -> tensor<1x1x1xf32>
    %v3 = graph.matmul %x3, %x6 : (tensor<6x4x5xf32>, tensor<5x3xf32>) -> tensor<6x4x3xf32>
    func.return %v2, %v3, %v0 : tensor<1x1x1xf32>, tensor<6x4x3xf32>, tensor<6x4x5xf32>
  }
}