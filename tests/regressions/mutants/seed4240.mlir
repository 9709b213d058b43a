// bench/fuzz.py mutant seed 4240 of graph4240: ['shape dim 1->4294967297']
builtin.module {
  func.func @main(%x0: tensor<5xf32>, %x1: tensor<3x2x4x1xf32>, %x2: tensor<3x2xf32>) -> (tensor<5xf32>, tensor<f32>, tensor<1xf32>, tensor<5xf32>) {
    %v0 = graph.abs %x0 : tensor<5xf32>
    %v1 = graph.constant dense<0.934901237> : tensor<4294967297xf32>
    %v2 = graph.add %v0, %v1 : (tensor<5xf32>, tensor<1xf32>) -> tensor<5xf32>
    %v3 = graph.constant dense<[-0.0386284254, -0.00894849934, -0.964018226, 0.812473893, -0.30793041]> : tensor<5xf32>
    %v4 = graph.pow %v2, %v3 : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
    %v5 = graph.slice %v4 {starts = array<i64: 4>, ends = array<i64: -6>, steps = array<i64: -1>} : (tensor<5xf32>) -> tensor<5xf32>
    %v6 = graph.reduce_mean %x1 {axes = array<i64>, keepdims = false} : (tensor<3x2x4x1xf32>) -> tensor<f32>
    %v7 = graph.constant dense<-0.377040356> : tensor<f32>
    %v8 = graph.mul %v7, %v6 : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %v9 = graph.reduce_mean %v4 {axes = array<i64: -1>, keepdims = true} : (tensor<5xf32>) -> tensor<1xf32>
    func.return %v5, %v8, %v9, %v4 : tensor<5xf32>, tensor<f32>, tensor<1xf32>, tensor<5xf32>
  }
}