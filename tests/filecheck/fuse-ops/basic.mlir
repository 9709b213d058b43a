// fuse-ops only reads each kernel's pattern kind, so the kernels here have empty bodies.
// RUN: fusion-opt %s --split-input-file -p fuse-ops | filecheck %s

loop.func @add(%a: memref<4xf32>, %b: memref<4xf32>) outs(%c: memref<4xf32>) pattern elemwise {}
loop.func @relu(%a: memref<4xf32>) outs(%c: memref<4xf32>) pattern elemwise {}
func.func @elementwise_chain(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %a = graph.call_loop @add(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r = graph.call_loop @relu(%a) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func private @fused_add_relu(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>) -> tensor<4xf32> attributes {graph.primitive} {
// CHECK-NEXT:    %[[A:.*]] = graph.call_loop @add(%[[X]], %[[Y]])
// CHECK-NEXT:    %[[R:.*]] = graph.call_loop @relu(%[[A]])
// CHECK-NEXT:    func.return %[[R]] : tensor<4xf32>
// CHECK-LABEL: func.func @elementwise_chain(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[R:.*]] = func.call @fused_add_relu(%[[X]], %[[Y]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[R]]

// -----

loop.func @conv2d(%x: memref<1x4x8x8xf32>, %w: memref<4x4x3x3xf32>) outs(%y: memref<1x4x8x8xf32>) pattern out_ewise_fusable {}
loop.func @add(%a: memref<1x4x8x8xf32>, %b: memref<1x4x1x1xf32>) outs(%c: memref<1x4x8x8xf32>) pattern elemwise {}
loop.func @relu(%a: memref<1x4x8x8xf32>) outs(%c: memref<1x4x8x8xf32>) pattern elemwise {}
func.func @conv_bias_relu(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>, %b: tensor<1x4x1x1xf32>) -> tensor<1x4x8x8xf32> {
  %c = graph.call_loop @conv2d(%x, %w) : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32>
  %a = graph.call_loop @add(%c, %b) : (tensor<1x4x8x8xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %r = graph.call_loop @relu(%a) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  func.return %r : tensor<1x4x8x8xf32>
}

// The arguments are the values the group uses from outside, in order of first use.
// CHECK-LABEL: func.func private @fused_conv2d_add_relu(
// CHECK-SAME:      %{{.*}}: tensor<1x4x8x8xf32>, %{{.*}}: tensor<4x4x3x3xf32>, %{{.*}}: tensor<1x4x1x1xf32>) -> tensor<1x4x8x8xf32> attributes {graph.primitive}
// CHECK-COUNT-3: graph.call_loop
// CHECK-LABEL: func.func @conv_bias_relu(
// CHECK-NEXT:    func.call @fused_conv2d_add_relu(
// CHECK-NOT:     graph.call_loop
// CHECK:         func.return

// -----

loop.func @conv2d(%x: memref<1x4x8x8xf32>, %w: memref<4x4x3x3xf32>) outs(%y: memref<1x4x8x8xf32>) pattern out_ewise_fusable {}
loop.func @sigmoid(%a: memref<1x4x8x8xf32>) outs(%c: memref<1x4x8x8xf32>) pattern elemwise {}
loop.func @mul(%a: memref<1x4x8x8xf32>, %b: memref<1x4x1x1xf32>) outs(%c: memref<1x4x8x8xf32>) pattern elemwise {}
loop.func @add(%a: memref<1x4x8x8xf32>, %b: memref<1x4x8x8xf32>) outs(%c: memref<1x4x8x8xf32>) pattern elemwise {}
loop.func @relu(%a: memref<1x4x8x8xf32>) outs(%c: memref<1x4x8x8xf32>) pattern elemwise {}
func.func @diamond(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>, %s: tensor<1x4x1x1xf32>) -> tensor<1x4x8x8xf32> {
  %y = graph.call_loop @conv2d(%x, %w) : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32>
  %g = graph.call_loop @sigmoid(%y) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %m = graph.call_loop @mul(%y, %s) : (tensor<1x4x8x8xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %a = graph.call_loop @add(%g, %m) : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %r = graph.call_loop @relu(%a) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  func.return %r : tensor<1x4x8x8xf32>
}

// CHECK-LABEL: func.func private @fused_conv2d_sigmoid_mul_add_relu(
// CHECK-COUNT-5: graph.call_loop
// CHECK-LABEL: func.func @diamond(
// CHECK-NEXT:    func.call @fused_conv2d_sigmoid_mul_add_relu(
// CHECK-NEXT:    func.return

// -----

loop.func @exp(%a: memref<4x8xf32>) outs(%c: memref<4x8xf32>) pattern elemwise {}
loop.func @reduce_sum(%a: memref<4x8xf32>) outs(%c: memref<4xf32>) pattern comm_reduce {}
loop.func @exp_1(%a: memref<4xf32>) outs(%c: memref<4xf32>) pattern elemwise {}
func.func @reduction_ends_a_group(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %e = graph.call_loop @exp(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = graph.call_loop @reduce_sum(%e) : (tensor<4x8xf32>) -> tensor<4xf32>
  %r = graph.call_loop @exp_1(%s) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// exp → reduce_sum fuses; a comm_reduce never starts a fusion, so reduce_sum → exp does not.
// CHECK-LABEL: func.func private @fused_exp_reduce_sum(
// CHECK-LABEL: func.func @reduction_ends_a_group(
// CHECK-NEXT:    %[[S:.*]] = func.call @fused_exp_reduce_sum(
// CHECK-NEXT:    %[[R:.*]] = graph.call_loop @exp_1(%[[S]])
// CHECK-NEXT:    func.return %[[R]]

// -----

loop.func @matmul(%a: memref<4x4xf32>, %b: memref<4x4xf32>) outs(%c: memref<4x4xf32>) pattern out_ewise_fusable {}
func.func @matmul_matmul(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %a = graph.call_loop @matmul(%x, %w) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %b = graph.call_loop @matmul(%a, %w) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %b : tensor<4x4xf32>
}

// A group holds at most one out_ewise_fusable anchor, and the edge into a matmul is not elemwise.
// CHECK-LABEL: func.func @matmul_matmul(
// CHECK-NOT:     func.call
// CHECK:         graph.call_loop @matmul
// CHECK-NEXT:    graph.call_loop @matmul
// CHECK-NOT:     @fused_

// -----

loop.func @add(%a: memref<4xf32>, %b: memref<4xf32>) outs(%c: memref<4xf32>) pattern elemwise {}
loop.func @relu(%a: memref<4xf32>) outs(%c: memref<4xf32>) pattern elemwise {}
func.func @returned_intermediate(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = graph.call_loop @add(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r = graph.call_loop @relu(%a) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %a, %r : tensor<4xf32>, tensor<4xf32>
}

// A returned value has no post-dominator: nothing fuses through it.
// CHECK-LABEL: func.func @returned_intermediate(
// CHECK-NEXT:    graph.call_loop @add
// CHECK-NEXT:    graph.call_loop @relu
// CHECK-NEXT:    func.return

// -----

loop.func @relu(%a: memref<4xf32>) outs(%c: memref<4xf32>) pattern elemwise {}
loop.func @opaque(%a: memref<4xf32>) outs(%c: memref<4xf32>) {}
func.func @opaque_barrier(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = graph.call_loop @relu(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = graph.call_loop @opaque(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %c = graph.call_loop @relu(%b) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %c : tensor<4xf32>
}

// A kernel without a pattern is opaque and fuses with nothing.
// CHECK-LABEL: func.func @opaque_barrier(
// CHECK-NOT:     func.call
// CHECK-COUNT-3: graph.call_loop
