// bench/fuzz.py mutant seed 312 of graph312: ['type f32->f16 at 631']
builtin.module {
  func.func @main(%x0: tensor<3x4x2x2xf32>, %x1: tensor<2xf32>, %x2: tensor<2xf32>, %x3: tensor<2xf32>) -> (tensor<3x2x2x2x2xf32>, tensor<3x1x1x2x2xf32>, tensor<3x1x1x2x2xf32>, tensor<3x1x2x2x2xf32>) {
    %v0 = graph.reshape %x0 : (tensor<3x4x2x2xf32>) -> tensor<3x2x2x2x2xf32>
    %v1 = graph.constant dense<[[[0.73862648], [-0.56560576]]]> : tensor<1x2x1xf32>
    %v2 = graph.add %v0, %v1 : (tensor<3x2x2x2x2xf32>, tensor<1x2x1xf32>) -> tensor<3x2x2x2x2xf32>
    %v3 = graph.constant dense<[0.350427836, 0.557935894]> : tensor<2xf32>
    %v4 = graph.batch_norm %v0, %x1, %x2, %x3, %v3 {epsilon = 1.000000e-02 : f16} : (tensor<3x2x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<3x2x2x2x2xf32>
    %v5, %v5_1 = graph.split %v4 {axis = 1 : i64, sections = array<i64: 1, 1>} : (tensor<3x2x2x2x2xf32>) -> (tensor<3x1x2x2x2xf32>, tensor<3x1x2x2x2xf32>)
    %v6, %v6_1 = graph.split %v5_1 {axis = 2 : i64, sections = array<i64: 1, 1>} : (tensor<3x1x2x2x2xf32>) -> (tensor<3x1x1x2x2xf32>, tensor<3x1x1x2x2xf32>)
    %v7 = graph.reduce_max %v5 {axes = array<i64: 1>, keepdims = true} : (tensor<3x1x2x2x2xf32>) -> tensor<3x1x2x2x2xf32>
    func.return %v2, %v6, %v6_1, %v7 : tensor<3x2x2x2x2xf32>, tensor<3x1x1x2x2xf32>, tensor<3x1x1x2x2xf32>, tensor<3x1x2x2x2xf32>
  }
}