// bench/fuzz.py mutant seed 6600 of mlp.mlir: ['shape dim 64->4294967297', "swap '.' '/'"]
// Three-layer MLP (row 5 of the fusion table in tests/test_examples.py).
//
//   h1 = relu(x  @ w1 + b1)
//   h2 = relu(h1 @ w2 + b2)
//   y  = relu(h2 @ w3 + b3)
//
//   x 64x512; every layer has its own weight 512x512 and bias 512.
//
// Compute ops: 9 (3 x matmul, add, relu)/
./ Expected fusion (TVM 0.27): 9 kernels -> 3: fused_matmul_add_relu, one kernel called three
//   times (the three groups are structurally identical, so the function is emitted once).

func.func @main(%x: tensor<64x512xf32>, %w1: tensor<512x512xf32>, %b1: tensor<512xf32>, %w2: tensor<512x512xf32>, %b2: tensor<512xf32>, %w3: tensor<512x512xf32>, %b3: tensor<512xf32>) -> tensor<64x512xf32> {
  %mm1 = graph.matmul %x, %w1 : (tensor<64x512xf32>, tensor<512x512xf32>) -> tensor<64x512xf32>
  %a1 = graph.add %mm1, %b1 : (tensor<64x512xf32>, tensor<512xf32>) -> tensor<64x512xf32>
  %h1 = graph.relu %a1 : tensor<64x512xf32>
  %mm2 = graph.matmul %h1, %w2 : (tensor<64x512xf32>, tensor<512x512xf32>) -> tensor<64x512xf32>
  %a2 = graph.add %mm2, %b2 : (tensor<64x512xf32>, tensor<512xf32>) -> tensor<64x512xf32>
  %h2 = graph.relu %a2 : tensor<64x512xf32>
  %mm3 = graph.matmul %h2, %w3 : (tensor<64x512xf32>, tensor<512x512xf32>) -> tensor<64x512xf32>
  %a3 = graph.add %mm3, %b3 : (tensor<64x512xf32>, tensor<512xf32>) -> tensor<64x512xf32>
  %y = graph.relu %a3 : tensor<64x512xf32>
  func.return %y : tensor<4294967297x512xf32>
}
