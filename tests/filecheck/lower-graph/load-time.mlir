// RUN: fusion-opt %s -p lower-graph | filecheck %s

// Launches on constants only (here a packing kernel on a weight, and a launch on its result)
// compute the same values at every run: they move to the load entry @main__load, which the
// runtime runs once when the model is loaded. %w is read only at load time: it is bound to
// the load entry alone; %b is read by both. The entry binds %b and the load entry's result
// %p2 after its argument (`loop.bound_sources`: constant 1, then load result 0).

loop.func @pack(%a: memref<4xf32>) outs(%b: memref<4xf32>) {}
loop.func @add(%a: memref<4xf32>, %b: memref<4xf32>) outs(%c: memref<4xf32>) {}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = graph.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %b = graph.constant dense<0.5> : tensor<4xf32>
  %p = graph.call_loop @pack(%w) : (tensor<4xf32>) -> tensor<4xf32>
  %p2 = graph.call_loop @add(%p, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %y = graph.call_loop @add(%x, %p2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %z = graph.call_loop @add(%y, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %z : tensor<4xf32>
}

// The load entry runs once: its slots are its own (no fusion.kept); the run entry keeps its own
// between calls.
// CHECK-LABEL: loop.func @main__load(
// CHECK-SAME:      %[[W:.*]]: memref<4xf32>, %[[B:.*]]: memref<4xf32>) outs(%[[P2:.*]]: memref<4xf32>) attributes {loop.bound_constants = 2 : i64, loop.bound_sources = [0 : i64, 1 : i64]} {
// CHECK-NEXT:    %[[S0:.*]] = loop.alloc : memref<4xf32>
// CHECK-NEXT:    %[[P:.*]] = loop.view %[[S0]] : memref<4xf32> to memref<4xf32>
// CHECK-NEXT:    loop.call @pack(%[[W]], %[[P]])
// CHECK-NEXT:    loop.call @add(%[[P]], %[[B]], %[[P2]])
// CHECK-NEXT:    loop.return
// CHECK-LABEL: loop.func @main(
// CHECK-SAME:      %[[X:.*]]: memref<4xf32>, %[[B1:.*]]: memref<4xf32>, %[[Q:.*]]: memref<4xf32>) outs(%[[Z:.*]]: memref<4xf32>) attributes {loop.bound_constants = 2 : i64, loop.bound_sources = [1 : i64, -1 : i64], loop.load_entry = "main__load"} {
// CHECK-NEXT:    %[[S:.*]] = loop.alloc {fusion.kept} : memref<4xf32>
// CHECK-NEXT:    %[[Y:.*]] = loop.view %[[S]] : memref<4xf32> to memref<4xf32>
// CHECK-NEXT:    loop.call @add(%[[X]], %[[Q]], %[[Y]])
// CHECK-NEXT:    loop.call @add(%[[Y]], %[[B1]], %[[Z]])
// CHECK-NEXT:    loop.return
