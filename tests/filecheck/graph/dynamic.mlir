// RUN: %{roundtrip} | filecheck %s
// RUN: %{generic-roundtrip} | filecheck %s

// Dynamic dimensions (`?`) in graph types, and the shape computations that stay in the graph
// until specialize-shapes: custom syntax and generic form both round-trip.

func.func @main(%x: tensor<?x16xf32>, %pos: tensor<1x64xi64>) -> (tensor<?x4x4xf32>, tensor<?x?xi64>, tensor<?xi64>) {
  %r = graph.relu %x : tensor<?x16xf32>
  %s = graph.shape_of %r : (tensor<?x16xf32>) -> tensor<2xi64>
  %t = graph.constant dense<[0, 4, 4]> : tensor<3xi64>
  %y = graph.dynamic_reshape %r, %t : (tensor<?x16xf32>, tensor<3xi64>) -> tensor<?x4x4xf32>
  %zero = graph.constant dense<[0]> : tensor<1xi64>
  %one = graph.constant dense<[1]> : tensor<1xi64>
  %n = graph.slice %s {starts = array<i64: 0>, ends = array<i64: 1>, steps = array<i64: 1>} : (tensor<2xi64>) -> tensor<1xi64>
  %p = graph.dynamic_slice %pos, %zero, %n {axes = array<i64: 1>, steps = array<i64: 1>} : (tensor<1x64xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x?xi64>
  %b = graph.dynamic_broadcast_to %p, %s : (tensor<1x?xi64>, tensor<2xi64>) -> tensor<?x?xi64>
  %z = graph.constant dense<0> : tensor<i64>
  %l = graph.squeeze %n {axes = array<i64: 0>} : (tensor<1xi64>) -> tensor<i64>
  %d = graph.constant dense<1> : tensor<i64>
  %g = graph.dynamic_range %z, %l, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  func.return %y, %b, %g : tensor<?x4x4xf32>, tensor<?x?xi64>, tensor<?xi64>
}

// CHECK:      func.func @main(%x: tensor<?x16xf32>, %pos: tensor<1x64xi64>) -> (tensor<?x4x4xf32>, tensor<?x?xi64>, tensor<?xi64>) {
// CHECK:        %s = graph.shape_of %r : (tensor<?x16xf32>) -> tensor<2xi64>
// CHECK:        %y = graph.dynamic_reshape %r, %t : (tensor<?x16xf32>, tensor<3xi64>) -> tensor<?x4x4xf32>
// CHECK:        %p = graph.dynamic_slice %pos, %zero, %n {axes = array<i64: 1>, steps = array<i64: 1>} : (tensor<1x64xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x?xi64>
// CHECK:        %b = graph.dynamic_broadcast_to %p, %s : (tensor<1x?xi64>, tensor<2xi64>) -> tensor<?x?xi64>
// CHECK:        %g = graph.dynamic_range %z, %l, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
