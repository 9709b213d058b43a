// RUN: fusion-opt %s -p 'fuse-ops{opt-level=0}' | filecheck %s --check-prefix=OPT0
// RUN: fusion-opt %s -p 'fuse-ops{max-depth=2}' | filecheck %s --check-prefix=DEPTH2
// RUN: fusion-opt %s -p 'fuse-ops{explain=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=EXPLAIN

loop.func @add(%a: memref<4xf32>, %b: memref<4xf32>) outs(%c: memref<4xf32>) pattern elemwise {}
loop.func @relu(%a: memref<4xf32>) outs(%c: memref<4xf32>) pattern elemwise {}
loop.func @opaque(%a: memref<4xf32>) outs(%c: memref<4xf32>) {}
func.func @chain(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %a = graph.call_loop @add(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r = graph.call_loop @relu(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %a2 = graph.call_loop @add(%r, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r2 = graph.call_loop @relu(%a2) : (tensor<4xf32>) -> tensor<4xf32>
  %o = graph.call_loop @opaque(%r2) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %o : tensor<4xf32>
}

// opt-level 0 switches fusion off.
// OPT0-NOT:   @fused_
// OPT0-LABEL: func.func @chain(
// OPT0-COUNT-5: graph.call_loop
// OPT0-NOT:   func.call

// With groups of at most two ops, the chain splits in two identical groups: one function
// called twice.
// DEPTH2:       func.func private @fused_add_relu(
// DEPTH2-NOT:   func.func private
// DEPTH2-LABEL: func.func @chain(
// DEPTH2-SAME:      %[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// DEPTH2-NEXT:    %[[R:.*]] = func.call @fused_add_relu(%[[X]], %[[Y]])
// DEPTH2-NEXT:    %[[R2:.*]] = func.call @fused_add_relu(%[[R]], %[[Y]])
// DEPTH2-NEXT:    graph.call_loop @opaque(%[[R2]])

// explain lists the groups and, for each edge between groups, the rule that refused it.
// EXPLAIN:      fuse-ops: @chain
// EXPLAIN:      group {{[0-9]+}} (elemwise): add relu add relu
// EXPLAIN:      group {{[0-9]+}} (opaque): opaque
// EXPLAIN-DAG:  not fused arg0 -> add: producer is opaque
// EXPLAIN-DAG:  not fused relu -> opaque: {{.*}}
