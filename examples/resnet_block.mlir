// ResNet basic block, batch norm in inference form (row 7 of the fusion table in tests/test_examples.py).
//
//   h = relu(batch_norm(conv2d(x, w1, pad 1), bn1))
//   y = relu(batch_norm(conv2d(h, w2, pad 1), bn2) + x)
//
//   x 1x64x56x56; w1, w2 64x64x3x3, stride 1, padding 1; each batch norm has scale, bias,
//   mean and var of shape 64 and epsilon 1e-5.
//
// Compute ops: 7 (conv2d, batch_norm, relu, conv2d, batch_norm, add, relu).
// Expected fusion (TVM 0.27): 7 kernels -> 2:
//   conv2d + batch_norm + relu; conv2d + batch_norm + add + relu.
//   Each conv2d is out_ewise_fusable and everything after it up to the next conv2d is
//   elemwise or broadcast (TVM needs DecomposeOpsForInference first; its tuple-valued
//   batch_norm otherwise blocks fusion and leaves 4 kernels).

func.func @main(%x: tensor<1x64x56x56xf32>, %w1: tensor<64x64x3x3xf32>, %scale1: tensor<64xf32>, %bias1: tensor<64xf32>, %mean1: tensor<64xf32>, %var1: tensor<64xf32>, %w2: tensor<64x64x3x3xf32>, %scale2: tensor<64xf32>, %bias2: tensor<64xf32>, %mean2: tensor<64xf32>, %var2: tensor<64xf32>) -> tensor<1x64x56x56xf32> {
  %c1 = graph.conv2d %x, %w1 {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32>
  %n1 = graph.batch_norm %c1, %scale1, %bias1, %mean1, %var1 {epsilon = 1.000000e-05 : f32} : (tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x56x56xf32>
  %h = graph.relu %n1 : tensor<1x64x56x56xf32>
  %c2 = graph.conv2d %h, %w2 {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32>
  %n2 = graph.batch_norm %c2, %scale2, %bias2, %mean2, %var2 {epsilon = 1.000000e-05 : f32} : (tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x56x56xf32>
  %sum = graph.add %n2, %x : (tensor<1x64x56x56xf32>, tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
  %y = graph.relu %sum : tensor<1x64x56x56xf32>
  func.return %y : tensor<1x64x56x56xf32>
}
