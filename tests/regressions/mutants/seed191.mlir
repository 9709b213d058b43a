// bench/fuzz.py mutant seed 191 of graph191: ['shape dim 5->7', "duplicate '0.619134545'", 'type f32->f16 at 441']
builtin.module {
  func.func @main(%x0: tensor<4x4xf32>, %x1: tensor<3xf32>, %x2: tensor<1x5x2xf32>, %x3: tensor<2x5x1xf32>, %x4: tensor<2x5x1xf32>, %x5: tensor<2x1x5xf32>) -> (tensor<2x5x5xf32>, tensor<2x5x2xf32>, tensor<2x5x3xf32>, tensor<2x5x5xf32>) {
    %v0 = graph.transpose %x2 {perm = array<i64: 2, 1, 0>} : (tensor<1x5x2xf32>) -> tensor<2x5x1xf32>
    %v1 = graph.layer_norm %v0, %x3, %x4 {axis = -3 : i64, epsilon = 1.000000e-03 : f16} : (tensor<2x5x1xf32>, tensor<2x5x1xf32>, tensor<2x5x1xf32>) -> tensor<2x5x1xf32>
    %v2 = graph.matmul %v1, %x5 : (tensor<2x5x1xf32>, tensor<2x1x5xf32>) -> tensor<2x5x5xf32>
    %v3 = graph.abs %v2 : tensor<2x5x5xf32>
    %v4 = graph.constant dense<[[0.619134545 0.619134545], [0.63372457], [0.595199525], [0.994029462], [0.730832577]]> : tensor<5x1xf32>
    %v5 = graph.add %v3, %v4 : (tensor<2x5x5xf32>, tensor<5x1xf32>) -> tensor<2x7x5xf32>
    %v6 = graph.constant dense<-0.687578559> : tensor<1xf32>
    %v7 = graph.pow %v5, %v6 : (tensor<2x5x5xf32>, tensor<1xf32>) -> tensor<2x5x5xf32>
    %v8 = graph.exp %v7 : tensor<2x5x5xf32>
    %v9, %v9_1 = graph.split %v2 {axis = 2 : i64, sections = array<i64: 2, 3>} : (tensor<2x5x5xf32>) -> (tensor<2x5x2xf32>, tensor<2x5x3xf32>)
    func.return %v8, %v9, %v9_1, %v2 : tensor<2x5x5xf32>, tensor<2x5x2xf32>, tensor<2x5x3xf32>, tensor<2x5x5xf32>
  }
}