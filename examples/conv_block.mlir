// Conv block (row 1 of the fusion table in tests/test_examples.py).
//
//   y = relu(conv2d(x, w, padding 1) + b)
//
//   x 1x64x56x56 (NCHW), w 64x64x3x3 (OIHW), stride 1, padding 1 on every side,
//   b 1x64x1x1 (a per-channel bias, broadcast over N, H and W).
//
// Compute ops: 3 (conv2d, add, relu).
// Expected fusion (TVM 0.27): 3 kernels -> 1: fused_conv2d_add_relu.
//   conv2d is out_ewise_fusable; the bias add and the relu are elemwise, so both join its
//   epilogue.

func.func @main(%x: tensor<1x64x56x56xf32>, %w: tensor<64x64x3x3xf32>, %b: tensor<1x64x1x1xf32>) -> tensor<1x64x56x56xf32> {
  %conv = graph.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32>
  %biased = graph.add %conv, %b : (tensor<1x64x56x56xf32>, tensor<1x64x1x1xf32>) -> tensor<1x64x56x56xf32>
  %y = graph.relu %biased : tensor<1x64x56x56xf32>
  func.return %y : tensor<1x64x56x56xf32>
}
