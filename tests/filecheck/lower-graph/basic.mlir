// RUN: fusion-opt %s --split-input-file --verify-diagnostics -p lower-graph | filecheck %s

loop.func @neg(%a: memref<4xf32>) outs(%b: memref<4xf32>) {}
loop.func @add(%a: memref<4xf32>, %b: memref<4xf32>) outs(%c: memref<4xf32>) {}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = graph.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %a = graph.call_loop @neg(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = graph.call_loop @neg(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %c = graph.call_loop @neg(%b) : (tensor<4xf32>) -> tensor<4xf32>
  %d = graph.call_loop @add(%c, %w) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %d : tensor<4xf32>
}

// Arguments, then bound constants, are inputs; results are outputs. Intermediates whose
// lifetimes do not overlap share a slot: %a and %c both live in slot 0, %b in slot 1.
// CHECK-LABEL: loop.func @main(
// CHECK-SAME:      %[[X:.*]]: memref<4xf32>, %[[W:.*]]: memref<4xf32>) outs(%[[D:.*]]: memref<4xf32>) attributes {loop.bound_constants = 1 : i64} {
// CHECK-NEXT:    %[[S0:.*]] = loop.alloc {fusion.kept} : memref<4xf32>
// CHECK-NEXT:    %[[S1:.*]] = loop.alloc {fusion.kept} : memref<4xf32>
// CHECK-NEXT:    %[[A:.*]] = loop.view %[[S0]] : memref<4xf32> to memref<4xf32>
// CHECK-NEXT:    %[[B:.*]] = loop.view %[[S1]] : memref<4xf32> to memref<4xf32>
// CHECK-NEXT:    %[[C:.*]] = loop.view %[[S0]] : memref<4xf32> to memref<4xf32>
// CHECK-NEXT:    loop.call @neg(%[[X]], %[[A]])
// CHECK-NEXT:    loop.call @neg(%[[A]], %[[B]])
// CHECK-NEXT:    loop.call @neg(%[[B]], %[[C]])
// CHECK-NEXT:    loop.call @add(%[[C]], %[[W]], %[[D]])
// CHECK-NEXT:    loop.return
// CHECK-NOT:   func.func

// -----

func.func @passthrough(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  func.return %x, %x : tensor<2x3xf32>, tensor<2x3xf32>
}

// A returned value that no kernel writes into the output is copied there.
// CHECK:       loop.func @copy_2x3(
// CHECK:         memref.load
// CHECK:         memref.store
// CHECK-LABEL: loop.func @passthrough(
// CHECK-SAME:      %[[X:.*]]: memref<2x3xf32>) outs(%[[O1:.*]]: memref<2x3xf32>, %[[O2:.*]]: memref<2x3xf32>)
// CHECK-NEXT:    loop.call @copy_2x3(%[[X]], %[[O1]])
// CHECK-NEXT:    loop.call @copy_2x3(%[[X]], %[[O2]])

// -----

func.func private @fused_x(%x: tensor<4xf32>) -> tensor<4xf32> attributes {graph.primitive} {
  func.return %x : tensor<4xf32>
}

// CHECK: error: lower-graph: run fuse-tir first (primitive function left)
