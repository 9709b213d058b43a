// RUN: fusion-opt %s -p 'specialize-shapes{shapes="ids=2x5,mask=2x5"}' | filecheck %s

// An embedding block as transformers export it: position ids sliced to the sequence length
// and broadcast to the batch, a mask, and a range up to the sequence length. Every shape
// computation resolves: dynamic_slice -> slice, dynamic_broadcast_to -> broadcast_to,
// dynamic_range -> a constant; the float cast of the range is left to fold-constants.

func.func @main(%ids: tensor<?x?xi64>, %emb: tensor<100x8xf32>, %pos: tensor<1x64xi64>, %mask: tensor<?x?xi64>) -> tensor<?x?x8xf32> {
  %s = graph.shape_of %ids : (tensor<?x?xi64>) -> tensor<2xi64>
  %one = graph.constant dense<[1]> : tensor<1xi64>
  %seq = graph.gather %s, %one {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>) -> tensor<1xi64>
  %zero = graph.constant dense<[0]> : tensor<1xi64>
  %p = graph.dynamic_slice %pos, %zero, %seq {axes = array<i64: 1>, steps = array<i64: 1>} : (tensor<1x64xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x?xi64>
  %pe = graph.dynamic_broadcast_to %p, %s : (tensor<1x?xi64>, tensor<2xi64>) -> tensor<?x?xi64>
  %sum = graph.add %ids, %pe : (tensor<?x?xi64>, tensor<?x?xi64>) -> tensor<?x?xi64>
  %e = graph.gather %emb, %sum {axis = 0 : i64} : (tensor<100x8xf32>, tensor<?x?xi64>) -> tensor<?x?x8xf32>
  %mf = graph.cast %mask : (tensor<?x?xi64>) -> tensor<?x?xf32>
  %m3 = graph.expand_dims %mf {axes = array<i64: 2>} : (tensor<?x?xf32>) -> tensor<?x?x1xf32>
  %y = graph.mul %e, %m3 : (tensor<?x?x8xf32>, tensor<?x?x1xf32>) -> tensor<?x?x8xf32>
  %z0 = graph.constant dense<0> : tensor<i64>
  %st = graph.squeeze %seq {axes = array<i64: 0>} : (tensor<1xi64>) -> tensor<i64>
  %d = graph.constant dense<1> : tensor<i64>
  %r = graph.dynamic_range %z0, %st, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %rf = graph.cast %r : (tensor<?xi64>) -> tensor<?xf32>
  %rr = graph.expand_dims %rf {axes = array<i64: 1>} : (tensor<?xf32>) -> tensor<?x1xf32>
  %out = graph.add %y, %rr : (tensor<?x?x8xf32>, tensor<?x1xf32>) -> tensor<?x?x8xf32>
  func.return %out : tensor<?x?x8xf32>
}

// CHECK-LABEL: func.func @main(%ids: tensor<2x5xi64>, %emb: tensor<100x8xf32>, %pos: tensor<1x64xi64>, %mask: tensor<2x5xi64>) -> tensor<2x5x8xf32> {
// CHECK-NEXT:    %p = graph.slice %pos {starts = array<i64: 0, 0>, ends = array<i64: 1, 5>, steps = array<i64: 1, 1>} : (tensor<1x64xi64>) -> tensor<1x5xi64>
// CHECK-NEXT:    %pe = graph.broadcast_to %p : (tensor<1x5xi64>) -> tensor<2x5xi64>
// CHECK-NEXT:    %sum = graph.add %ids, %pe : (tensor<2x5xi64>, tensor<2x5xi64>) -> tensor<2x5xi64>
// CHECK-NEXT:    %e = graph.gather %emb, %sum {axis = 0 : i64} : (tensor<100x8xf32>, tensor<2x5xi64>) -> tensor<2x5x8xf32>
// CHECK-NEXT:    %mf = graph.cast %mask : (tensor<2x5xi64>) -> tensor<2x5xf32>
// CHECK-NEXT:    %m3 = graph.expand_dims %mf {axes = array<i64: 2>} : (tensor<2x5xf32>) -> tensor<2x5x1xf32>
// CHECK-NEXT:    %y = graph.mul %e, %m3 : (tensor<2x5x8xf32>, tensor<2x5x1xf32>) -> tensor<2x5x8xf32>
// CHECK-NEXT:    %r = graph.constant dense<[0, 1, 2, 3, 4]> : tensor<5xi64>
// CHECK-NEXT:    %rf = graph.cast %r : (tensor<5xi64>) -> tensor<5xf32>
// CHECK-NEXT:    %rr = graph.expand_dims %rf {axes = array<i64: 1>} : (tensor<5xf32>) -> tensor<5x1xf32>
// CHECK-NEXT:    %out = graph.add %y, %rr : (tensor<2x5x8xf32>, tensor<5x1xf32>) -> tensor<2x5x8xf32>
// CHECK-NEXT:    func.return %out : tensor<2x5x8xf32>
