func.func @main(%x: tensor<4x8xf32>, %ids: tensor<2x3xi64>, %t: tensor<10x8xf32>) -> (tensor<4x8xf32>, tensor<2x3x8xf32>, tensor<4x8xi1>) {
  %m = graph.less %x, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
  %n = graph.not %m : tensor<4x8xi1>
  %a = graph.and %m, %n : (tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
  %w = graph.where %a, %x, %x : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %g = graph.gather %t, %ids {axis = 0 : i64} : (tensor<10x8xf32>, tensor<2x3xi64>) -> tensor<2x3x8xf32>
  %c = graph.cast %ids : (tensor<2x3xi64>) -> tensor<2x3xi32>
  %i = graph.add %c, %c : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  func.return %w, %g, %a : tensor<4x8xf32>, tensor<2x3x8xf32>, tensor<4x8xi1>
}
