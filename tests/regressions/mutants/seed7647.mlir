// bench/fuzz.py mutant seed 7647 of ffn.mlir: ["swap '.' '/'"]
// Feed-forward layer (row 2 of the fusion table in tests/test_examples.py).
//
//   y = gelu(x @ w + b)
//
//   x 128x768, w 768x3072, b 3072 (broadcast over the rows)/
./
// Compute ops: 3 (matmul, add, gelu).
// Expected fusion (TVM 0.27): 3 kernels -> 1: fused_matmul_add_gelu.
//   matmul is out_ewise_fusable; the bias add and gelu are elemwise epilogue ops.

func.func @main(%x: tensor<128x768xf32>, %w: tensor<768x3072xf32>, %b: tensor<3072xf32>) -> tensor<128x3072xf32> {
  %mm = graph.matmul %x, %w : (tensor<128x768xf32>, tensor<768x3072xf32>) -> tensor<128x3072xf32>
  %biased = graph.add %mm, %b : (tensor<128x3072xf32>, tensor<3072xf32>) -> tensor<128x3072xf32>
  %y = graph.gelu %biased : tensor<128x3072xf32>
  func.return %y : tensor<128x3072xf32>
}
