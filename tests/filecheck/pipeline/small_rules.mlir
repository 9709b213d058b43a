// Fusion rules end to end from graph ops: exp → reduce_sum fuses, reduce_sum → exp does not,
// matmul → matmul does not, opt-level=0 gives no fusion.
// RUN: %{fuse} %s --split-input-file | filecheck %s
// RUN: fusion-opt %s --split-input-file -p 'legalize-ops,annotate-pattern,fuse-ops{opt-level=0},fuse-tir' | filecheck %s --check-prefix=NOFUSE

func.func @exp_sum_exp(%x: tensor<16x32xf32>) -> tensor<16xf32> {
  %e = graph.exp %x : tensor<16x32xf32>
  %s = graph.reduce_sum %e {axes = array<i64: 1>, keepdims = false} : (tensor<16x32xf32>) -> tensor<16xf32>
  %r = graph.exp %s : tensor<16xf32>
  func.return %r : tensor<16xf32>
}

// CHECK-LABEL: func.func @exp_sum_exp(
// CHECK-NEXT:    %[[S:.*]] = graph.call_loop @fused_exp_reduce_sum(
// CHECK-NEXT:    graph.call_loop @exp_1(%[[S]])
// NOFUSE-LABEL: func.func @exp_sum_exp(
// NOFUSE-NEXT:    graph.call_loop @exp(
// NOFUSE-NEXT:    graph.call_loop @reduce_sum(
// NOFUSE-NEXT:    graph.call_loop @exp_1(

// -----

func.func @matmul_matmul(%x: tensor<8x16xf32>, %w1: tensor<16x16xf32>, %w2: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %h = graph.matmul %x, %w1 : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  %y = graph.matmul %h, %w2 : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  func.return %y : tensor<8x4xf32>
}

// CHECK-LABEL: func.func @matmul_matmul(
// CHECK-NEXT:    %[[H:.*]] = graph.call_loop @matmul(
// CHECK-NEXT:    graph.call_loop @matmul_1(%[[H]],
// CHECK-NOT:   fused
