// bench/fuzz.py mutant seed 56 of graph56: ["delete '>'", 'type f32->bf16 at 768', 'shape dim 1->3']
builtin.module {
  func.func @main(%x0: tensor<2x2x3x1xf32>, %x1: tensor<4x1xf32>) -> (tensor<2x2x3x1xf32>, tensor<1x1xf32>, tensor<1xf32>, tensor<f32>) {
    %v0 = graph.reduce_max %x1 {axes = array<i64>, keepdims = true} : (tensor<4x1xf32>) -> tensor<1x1xf32>
    %v1 = graph.abs %x0 : tensor<2x2x3x1xf32>
    %v2 = graph.constant dense<0.88737458> : tensor<f32>
    %v3 = graph.add %v1, %v2 : (tensor<2x2x3x1xf32>, tensor<f32>) -> tensor<2x2x3x1xf32>
    %v4 = graph.div %v3, %v3 : (tensor<2x2x3x1xf32>, tensor<2x2x3x1xf32>) -> tensor<2x2x3x1xf32>
    %v5 = graph.constant dense<-0.582694948> : tensor<1xf32>
    %v6 = graph.mul %v5, %v0 : (tensor<1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
    %v7 = graph.clip %v5 {min = 0.000000e+00 : f32, max = 6.000000e+00 : bf16} : tensor<1xf32>
    %v8 = graph.softmax %x1 {axis = 0 : i64} : (tensor<4x1xf32>) -> tensor<4x1xf32
    %v9 = graph.reduce_max %v8 {axes = array<i64: 0, -1>, keepdims = false} : (tensor<4x1xf32>) -> tensor<f32>
    func.return %v4, %v6, %v7, %v9 : tensor<2x2x3x1xf32>, tensor<1x3xf32>, tensor<1xf32>, tensor<f32>
  }
}