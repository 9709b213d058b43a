// Matches the pass rejects: an intermediate used outside the match, and a check callback that
// says no (TVM's test_branch_tuple_output, test_cyclic_dependency and test_check_pattern).
// RUN: python %S/Inputs/tvm_tables.py %s --split-input-file -p 'fuse-ops-by-pattern{patterns=dnnl}' | filecheck %s --check-prefix=LEAK
// RUN: python %S/Inputs/tvm_tables.py %s --split-input-file -p 'fuse-ops-by-pattern{patterns=compiler_A}' | filecheck %s --check-prefix=CYCLE
// RUN: python %S/Inputs/tvm_tables.py %s --split-input-file -p 'fuse-ops-by-pattern{patterns=reject}' 2>&1 | filecheck %s --check-prefix=REJECT

// A branch: conv1 is used by the relu of the match and by a gelu outside it. TVM's core
// partitioner returns conv1 as a second output of the composite; every TVM backend's check
// rejects such a match (`has_leaking_intermediate_variables`), and so does the pass: nothing
// is grouped. With add(relu(conv2d), wildcard) (compiler_A), TVM reports a cyclic dependency
// (the gelu reads the group and feeds it); the pass rejects the leaking match instead.
func.func @branch(%data: tensor<1x64x56x56xf32>, %weight: tensor<64x64x3x3xf32>) -> tensor<1x64x54x54xf32> {
  %conv1 = graph.conv2d %data, %weight {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x54x54xf32>
  %relu1 = graph.relu %conv1 : tensor<1x64x54x54xf32>
  %gelu1 = graph.gelu %conv1 : tensor<1x64x54x54xf32>
  %out = graph.add %relu1, %gelu1 : (tensor<1x64x54x54xf32>, tensor<1x64x54x54xf32>) -> tensor<1x64x54x54xf32>
  func.return %out : tensor<1x64x54x54xf32>
}

// LEAK-NOT:   graph.composite
// LEAK-LABEL: func.func @branch(
// LEAK-NEXT:    graph.conv2d
// LEAK-NEXT:    graph.relu
// LEAK-NEXT:    graph.gelu
// LEAK-NEXT:    graph.add
// CYCLE-NOT:   graph.composite
// CYCLE-LABEL: func.func @branch(
// CYCLE-NEXT:    graph.conv2d
// CYCLE-NEXT:    graph.relu
// CYCLE-NEXT:    graph.gelu
// CYCLE-NEXT:    graph.add

// -----

// Without the branch, the same patterns group: conv2d + relu, and conv2d + relu + add.
func.func @no_branch(%data: tensor<1x64x56x56xf32>, %weight: tensor<64x64x3x3xf32>, %other: tensor<1x64x54x54xf32>) -> tensor<1x64x54x54xf32> {
  %conv1 = graph.conv2d %data, %weight {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x54x54xf32>
  %relu1 = graph.relu %conv1 : tensor<1x64x54x54xf32>
  %out = graph.add %relu1, %other : (tensor<1x64x54x54xf32>, tensor<1x64x54x54xf32>) -> tensor<1x64x54x54xf32>
  func.return %out : tensor<1x64x54x54xf32>
}

// LEAK-LABEL: func.func @no_branch(
// LEAK-NEXT:    %[[G:.*]] = func.call @fused_conv2d_relu_dnnl(%data, %weight)
// LEAK-NEXT:    graph.add %[[G]], %other
// CYCLE:       func.func private @fused_conv2d_relu_add_compiler_A({{.*}}graph.composite = "compiler_A.conv2d_relu_add"
// CYCLE-LABEL: func.func @no_branch(
// CYCLE-NEXT:    %[[G:.*]] = func.call @fused_conv2d_relu_add_compiler_A(%data, %weight, %other)
// CYCLE-NEXT:    func.return %[[G]]

// -----

// test_check_pattern: the check sees the root, the annotated operands, the bindings and the
// uses, and rejects: no partitioning.
func.func @checked(%data: tensor<1x64x56x56xf32>, %weight1: tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32> {
  %c = graph.conv2d %data, %weight1 {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32>
  %conv1 = graph.relu %c : tensor<1x64x56x56xf32>
  func.return %conv1 : tensor<1x64x56x56xf32>
}

// REJECT:      check: root graph.conv2d, lhs %data, rhs %weight1, root used by ['graph.relu']
// REJECT-NOT:  graph.composite
// REJECT-LABEL: func.func @checked(
// REJECT-NEXT:    graph.conv2d %data, %weight1
// REJECT-NEXT:    graph.relu
