// Transformer encoder block (row 8 of the fusion table in tests/test_examples.py): sequence S = 128, hidden 256,
// 4 heads of D = 64, feed-forward width 1024, post-layer-norm.
//
//   q = reshape(x @ wq + bq, [128, 4, 64]) -> transpose [1, 0, 2]   4x128x64
//   k = reshape(x @ wk + bk, [128, 4, 64]) -> transpose [1, 2, 0]   4x64x128
//   v = reshape(x @ wv + bv, [128, 4, 64]) -> transpose [1, 0, 2]   4x128x64
//   p = softmax(matmul(q, k) * 1/sqrt(D), last axis)                4x128x128
//   o = reshape(transpose(matmul(p, v), [1, 0, 2]), [128, 256]) @ wo + bo
//   l1 = layer_norm(x + o, gamma1, beta1)                           128x256
//   f = gelu(l1 @ w1 + b1) @ w2 + b2                                128x256
//   y = layer_norm(l1 + f, gamma2, beta2)                           128x256
//
//   x 128x256; wq, wk, wv, wo 256x256 with biases 256; w1 256x1024, b1 1024; w2 1024x256,
//   b2 256; layer norms over the last axis with gamma/beta 256 and epsilon 1e-5;
//   1/sqrt(D) = 0.125 is a scalar constant.
//
// Compute ops: 29 (graph.constant not counted).
// Expected fusion (TVM 0.27): 29 kernels -> 15:
//   fused_matmul_add (one kernel, 3 calls: q, k, v), fused_reshape_transpose (3 calls, two
//   distinct kernels: perm [1, 0, 2] for q and v, [1, 2, 0] for k), fused_matmul_mul, softmax,
//   matmul, fused_transpose_reshape, fused_matmul_add_add, layer_norm, fused_matmul_add_gelu,
//   fused_matmul_add_add, layer_norm.
//   The injective reshape/transpose pairs never join a matmul group; softmax and layer_norm
//   are out_ewise_fusable with nothing elemwise after them to absorb.

func.func @main(%x: tensor<128x256xf32>, %wq: tensor<256x256xf32>, %bq: tensor<256xf32>, %wk: tensor<256x256xf32>, %bk: tensor<256xf32>, %wv: tensor<256x256xf32>, %bv: tensor<256xf32>, %wo: tensor<256x256xf32>, %bo: tensor<256xf32>, %gamma1: tensor<256xf32>, %beta1: tensor<256xf32>, %w1: tensor<256x1024xf32>, %b1: tensor<1024xf32>, %w2: tensor<1024x256xf32>, %b2: tensor<256xf32>, %gamma2: tensor<256xf32>, %beta2: tensor<256xf32>) -> tensor<128x256xf32> {
  // Projections.
  %qm = graph.matmul %x, %wq : (tensor<128x256xf32>, tensor<256x256xf32>) -> tensor<128x256xf32>
  %q = graph.add %qm, %bq : (tensor<128x256xf32>, tensor<256xf32>) -> tensor<128x256xf32>
  %km = graph.matmul %x, %wk : (tensor<128x256xf32>, tensor<256x256xf32>) -> tensor<128x256xf32>
  %k = graph.add %km, %bk : (tensor<128x256xf32>, tensor<256xf32>) -> tensor<128x256xf32>
  %vm = graph.matmul %x, %wv : (tensor<128x256xf32>, tensor<256x256xf32>) -> tensor<128x256xf32>
  %v = graph.add %vm, %bv : (tensor<128x256xf32>, tensor<256xf32>) -> tensor<128x256xf32>
  // Split into heads.
  %q3 = graph.reshape %q : (tensor<128x256xf32>) -> tensor<128x4x64xf32>
  %qh = graph.transpose %q3 {perm = array<i64: 1, 0, 2>} : (tensor<128x4x64xf32>) -> tensor<4x128x64xf32>
  %k3 = graph.reshape %k : (tensor<128x256xf32>) -> tensor<128x4x64xf32>
  %kh = graph.transpose %k3 {perm = array<i64: 1, 2, 0>} : (tensor<128x4x64xf32>) -> tensor<4x64x128xf32>
  %v3 = graph.reshape %v : (tensor<128x256xf32>) -> tensor<128x4x64xf32>
  %vh = graph.transpose %v3 {perm = array<i64: 1, 0, 2>} : (tensor<128x4x64xf32>) -> tensor<4x128x64xf32>
  // Attention.
  %scores = graph.matmul %qh, %kh : (tensor<4x128x64xf32>, tensor<4x64x128xf32>) -> tensor<4x128x128xf32>
  %scale = graph.constant dense<1.250000e-01> : tensor<f32>
  %scaled = graph.mul %scores, %scale : (tensor<4x128x128xf32>, tensor<f32>) -> tensor<4x128x128xf32>
  %p = graph.softmax %scaled {axis = -1 : i64} : (tensor<4x128x128xf32>) -> tensor<4x128x128xf32>
  %oh = graph.matmul %p, %vh : (tensor<4x128x128xf32>, tensor<4x128x64xf32>) -> tensor<4x128x64xf32>
  // Merge the heads and project.
  %o3 = graph.transpose %oh {perm = array<i64: 1, 0, 2>} : (tensor<4x128x64xf32>) -> tensor<128x4x64xf32>
  %o2 = graph.reshape %o3 : (tensor<128x4x64xf32>) -> tensor<128x256xf32>
  %om = graph.matmul %o2, %wo : (tensor<128x256xf32>, tensor<256x256xf32>) -> tensor<128x256xf32>
  %o = graph.add %om, %bo : (tensor<128x256xf32>, tensor<256xf32>) -> tensor<128x256xf32>
  // Residual and first layer norm.
  %r1 = graph.add %x, %o : (tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<128x256xf32>
  %l1 = graph.layer_norm %r1, %gamma1, %beta1 {axis = -1 : i64, epsilon = 1.000000e-05 : f32} : (tensor<128x256xf32>, tensor<256xf32>, tensor<256xf32>) -> tensor<128x256xf32>
  // Feed-forward.
  %f1m = graph.matmul %l1, %w1 : (tensor<128x256xf32>, tensor<256x1024xf32>) -> tensor<128x1024xf32>
  %f1 = graph.add %f1m, %b1 : (tensor<128x1024xf32>, tensor<1024xf32>) -> tensor<128x1024xf32>
  %g = graph.gelu %f1 : tensor<128x1024xf32>
  %f2m = graph.matmul %g, %w2 : (tensor<128x1024xf32>, tensor<1024x256xf32>) -> tensor<128x256xf32>
  %f2 = graph.add %f2m, %b2 : (tensor<128x256xf32>, tensor<256xf32>) -> tensor<128x256xf32>
  // Residual and second layer norm.
  %r2 = graph.add %l1, %f2 : (tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<128x256xf32>
  %y = graph.layer_norm %r2, %gamma2, %beta2 {axis = -1 : i64, epsilon = 1.000000e-05 : f32} : (tensor<128x256xf32>, tensor<256xf32>, tensor<256xf32>) -> tensor<128x256xf32>
  func.return %y : tensor<128x256xf32>
}
