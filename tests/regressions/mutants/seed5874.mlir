// bench/fuzz.py mutant seed 5874 of graph5874: ['shape dim 1->4294967297']
builtin.module {
  func.func @main(%x0: tensor<1x6x5xf32>, %x1: tensor<3x5xf32>, %x2: tensor<1xf32>, %x3: tensor<5x1xf32>) -> tensor<9x3xf32> {
    %v0 = graph.max %x1, %x2 : (tensor<3x5xf32>, tensor<1xf32>) -> tensor<3x5xf32>
    %v1 = graph.constant dense<[[0.175340876, 0.0770191625, 0.727710426, 0.139262602, -0.274880201], [0.239807904, 0.974860609, 0.0511110947, -0.819478869, -0.576856554], [0.452186376, -0.835398316, -0.385922879, -0.89979744, -0.192001373]]> : tensor<3x5xf32>
    %v2 = graph.concat %v0, %v1, %x1 {axis = 0 : i64} : (tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<9x5xf32>
    %v3 = graph.matmul %v2, %x3 : (tensor<9x5xf32>, tensor<5x1xf32>) -> tensor<9x1xf32>
    %v4 = graph.abs %v3 : tensor<9x1xf32>
    %v5 = graph.constant dense<[0.687194049, 0.540425718, 0.995731711]> : tensor<3xf32>
    %v6 = graph.add %v4, %v5 : (tensor<9x1xf32>, tensor<3xf32>) -> tensor<9x3xf32>
    %v7 = graph.constant dense<-0.884715796> : tensor<4294967297xf32>
    %v8 = graph.pow %v6, %v7 : (tensor<9x3xf32>, tensor<1xf32>) -> tensor<9x3xf32>
    %v9 = graph.silu %v8 : tensor<9x3xf32>
    func.return %v9 : tensor<9x3xf32>
  }
}