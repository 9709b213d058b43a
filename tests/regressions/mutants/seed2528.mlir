// bench/fuzz.py mutant seed 2528 of conv_diamond.mlir: ["swap '.' '/'"]
// Diamond after a convolution (row 4 of the fusion table in tests/test_examples.py).
//
//            x, w
//              |
//        y = conv2d(pad 1)
//           /        \
//     sigmoid(y)   mul(y, s)
//           \        /
//              add
//               |
//              relu
//
//   x 1x64x56x56, w 64x64x3x3, stride 1, padding 1; s 1x64x1x1 (per-channel scale)/
./
// Compute ops: 5 (conv2d, sigmoid, mul, add, relu).
// Expected fusion (TVM 0.27): 5 kernels -> 1: fused_conv2d_sigmoid_mul_add_relu.
//   Every path from the conv2d to its post-dominator (the add) is elemwise, so the whole
//   diamond and the relu after it become the conv2d's epilogue.

func.func @main(%x: tensor<1x64x56x56xf32>, %w: tensor<64x64x3x3xf32>, %s: tensor<1x64x1x1xf32>) -> tensor<1x64x56x56xf32> {
  %y = graph.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32>
  %gate = graph.sigmoid %y : tensor<1x64x56x56xf32>
  %scaled = graph.mul %y, %s : (tensor<1x64x56x56xf32>, tensor<1x64x1x1xf32>) -> tensor<1x64x56x56xf32>
  %sum = graph.add %gate, %scaled : (tensor<1x64x56x56xf32>, tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
  %out = graph.relu %sum : tensor<1x64x56x56xf32>
  func.return %out : tensor<1x64x56x56xf32>
}
