// Layer normalisation spelled out op by op (row 6 of the fusion table in tests/test_examples.py).
//
//   m = reduce_mean(x, axes [1], keepdims)      512x1
//   d = x - m                                   512x768
//   v = reduce_mean(d * d, axes [1], keepdims)  512x1
//   s = sqrt(v + 1e-5)                          512x1
//   y = d / s * gamma + beta                    512x768
//
//   x 512x768, gamma 768, beta 768; 1e-5 is a scalar constant.
//
// Compute ops: 9 (reduce_mean, sub, mul, reduce_mean, add, sqrt, div, mul, add).
// Expected fusion (TVM 0.27): 9 kernels -> 3: fused_reduce_mean_sub, mul,
//   fused_reduce_mean_add_sqrt_div_mul_add.
//   reduce_mean legalizes to a sum block plus a scaling block, so it is out_ewise_fusable. The
//   first mean absorbs the sub, its only consumer, and no more: the paths from d to its
//   post-dominator (the div) go through the second mean. The mul (d * d) stays alone: its
//   consumer is out_ewise_fusable, and an elemwise op never fuses into such a consumer. The
//   second mean absorbs the add, sqrt, div, mul and add after it.

func.func @main(%x: tensor<512x768xf32>, %gamma: tensor<768xf32>, %beta: tensor<768xf32>) -> tensor<512x768xf32> {
  %m = graph.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : (tensor<512x768xf32>) -> tensor<512x1xf32>
  %d = graph.sub %x, %m : (tensor<512x768xf32>, tensor<512x1xf32>) -> tensor<512x768xf32>
  %dd = graph.mul %d, %d : (tensor<512x768xf32>, tensor<512x768xf32>) -> tensor<512x768xf32>
  %v = graph.reduce_mean %dd {axes = array<i64: 1>, keepdims = true} : (tensor<512x768xf32>) -> tensor<512x1xf32>
  %eps = graph.constant dense<1.000000e-05> : tensor<f32>
  %ve = graph.add %v, %eps : (tensor<512x1xf32>, tensor<f32>) -> tensor<512x1xf32>
  %s = graph.sqrt %ve : tensor<512x1xf32>
  %n = graph.div %d, %s : (tensor<512x768xf32>, tensor<512x1xf32>) -> tensor<512x768xf32>
  %scaled = graph.mul %n, %gamma : (tensor<512x768xf32>, tensor<768xf32>) -> tensor<512x768xf32>
  %y = graph.add %scaled, %beta : (tensor<512x768xf32>, tensor<768xf32>) -> tensor<512x768xf32>
  func.return %y : tensor<512x768xf32>
}
