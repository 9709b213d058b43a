// Elementwise chain ending in a squeeze (row 3 of the fusion table in tests/test_examples.py).
//
//   y = squeeze(exp(x + c), axis 1)
//
//   x 10x1x20, c a scalar constant (rank 0, broadcast to every element); y 10x20.
//
// Compute ops: 3 (add, exp, squeeze); graph.constant is not a compute op.
// Expected fusion (TVM 0.27): 3 kernels -> 1: fused_add_exp_squeeze.
//   All three kernels are elemwise (squeeze of a unit axis reads the input at the output's
//   indices); the scalar constant becomes an argument of the fused function.

func.func @main(%x: tensor<10x1x20xf32>) -> tensor<10x20xf32> {
  %c = graph.constant dense<1.000000e+00> : tensor<f32>
  %sum = graph.add %x, %c : (tensor<10x1x20xf32>, tensor<f32>) -> tensor<10x1x20xf32>
  %e = graph.exp %sum : tensor<10x1x20xf32>
  %y = graph.squeeze %e {axes = array<i64: 1>} : (tensor<10x1x20xf32>) -> tensor<10x20xf32>
  func.return %y : tensor<10x20xf32>
}
