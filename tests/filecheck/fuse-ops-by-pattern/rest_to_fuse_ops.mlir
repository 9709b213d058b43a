// A table that takes only the convolution leaves the rest to automatic fusion: legalize-ops,
// fuse-ops and fuse-tir skip the composite and fuse the bias add and relu after it into one
// kernel, as TVM's pipeline does after FuseOpsByPattern (FuseOps then sees the composite call
// as an opaque op).
// RUN: python %S/Inputs/tvm_tables.py %s -p 'fuse-ops-by-pattern{patterns=cutlass},legalize-ops,annotate-pattern,fuse-ops,fuse-tir' | filecheck %s

func.func @conv_bias_relu_exp(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>, %b: tensor<1x4x1x1xf32>) -> tensor<1x4x8x8xf32> {
  %conv = graph.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32>
  %biased = graph.add %conv, %b : (tensor<1x4x8x8xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %y = graph.relu %biased : tensor<1x4x8x8xf32>
  func.return %y : tensor<1x4x8x8xf32>
}

// CHECK-NOT:   loop.func @conv2d
// CHECK:       func.func private @fused_conv2d_cutlass(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32> attributes {graph.primitive, graph.composite = "cutlass.conv2d"} {
// CHECK-NEXT:    graph.conv2d %x, %w
// CHECK:       loop.func @fused_add_relu(
// CHECK-LABEL: func.func @conv_bias_relu_exp(
// CHECK-NEXT:    %[[C:.*]] = func.call @fused_conv2d_cutlass(%x, %w)
// CHECK-NEXT:    %[[Y:.*]] = graph.call_loop @fused_add_relu(%[[C]], %b)
// CHECK-NEXT:    func.return %[[Y]]
