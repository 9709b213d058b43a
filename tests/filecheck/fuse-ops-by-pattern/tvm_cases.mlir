// TVM's FuseOpsByPattern cases (tests/python/relax/test_transform_fuse_ops_by_pattern.py) that
// apply to our ops, each with the grouping TVM produces. The tables are in Inputs/tvm_tables.py.
// RUN: python %S/Inputs/tvm_tables.py %s --split-input-file -p 'fuse-ops-by-pattern{patterns=dnnl}' | filecheck %s --check-prefix=DNNL
// RUN: python %S/Inputs/tvm_tables.py %s --split-input-file -p 'fuse-ops-by-pattern{patterns=dnnl-relu-first}' | filecheck %s --check-prefix=RELU-FIRST
// RUN: python %S/Inputs/tvm_tables.py %s --split-input-file -p 'fuse-ops-by-pattern{patterns=dnnl-conv-first}' | filecheck %s --check-prefix=CONV-FIRST

// test_partition_conv2d_relu: two chained conv2d + relu are two groups; the second reads the
// first's result through a wildcard, which never takes the first group in.
func.func @conv2d_relu_x2(%data: tensor<1x64x56x56xf32>, %weight1: tensor<64x64x3x3xf32>, %weight2: tensor<64x64x3x3xf32>) -> tensor<1x64x54x54xf32> {
  %c1 = graph.conv2d %data, %weight1 {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32>
  %conv1 = graph.relu %c1 : tensor<1x64x56x56xf32>
  %c2 = graph.conv2d %conv1, %weight2 {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x54x54xf32>
  %conv2 = graph.relu %c2 : tensor<1x64x54x54xf32>
  func.return %conv2 : tensor<1x64x54x54xf32>
}

// DNNL:       func.func private @fused_conv2d_relu_dnnl(%data: tensor<1x64x56x56xf32>, %weight1: tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32> attributes {graph.primitive, graph.composite = "dnnl.conv2d_relu"} {
// DNNL-NEXT:    %[[C:.*]] = graph.conv2d %data, %weight1 {{.*}}padding = array<i64: 1, 1, 1, 1>
// DNNL-NEXT:    %[[R:.*]] = graph.relu %[[C]]
// DNNL-NEXT:    func.return %[[R]]
// DNNL:       func.func private @fused_conv2d_relu_dnnl_1(%conv1: tensor<1x64x56x56xf32>, %weight2: tensor<64x64x3x3xf32>) -> tensor<1x64x54x54xf32> attributes {graph.primitive, graph.composite = "dnnl.conv2d_relu"} {
// DNNL-NEXT:    %[[C:.*]] = graph.conv2d %conv1, %weight2 {{.*}}padding = array<i64: 0, 0, 0, 0>
// DNNL-NEXT:    %[[R:.*]] = graph.relu %[[C]]
// DNNL-NEXT:    func.return %[[R]]
// DNNL-LABEL: func.func @conv2d_relu_x2(
// DNNL-NEXT:    %[[A:.*]] = func.call @fused_conv2d_relu_dnnl(%data, %weight1)
// DNNL-NEXT:    %[[B:.*]] = func.call @fused_conv2d_relu_dnnl_1(%[[A]], %weight2)
// DNNL-NEXT:    func.return %[[B]]

// test_partition_order: with conv2d first, it takes both convolutions and conv2d_relu finds
// nothing left; the relus stay in main.
// CONV-FIRST:       func.func private @fused_conv2d_dnnl({{.*}} attributes {graph.primitive, graph.composite = "dnnl.conv2d"}
// CONV-FIRST:       func.func private @fused_conv2d_dnnl_1({{.*}} attributes {graph.primitive, graph.composite = "dnnl.conv2d"}
// CONV-FIRST-NOT:   dnnl.conv2d_relu
// CONV-FIRST-LABEL: func.func @conv2d_relu_x2(
// CONV-FIRST-NEXT:    %[[A:.*]] = func.call @fused_conv2d_dnnl(%data, %weight1)
// CONV-FIRST-NEXT:    %[[R1:.*]] = graph.relu %[[A]]
// CONV-FIRST-NEXT:    %[[B:.*]] = func.call @fused_conv2d_dnnl_1(%[[R1]], %weight2)
// CONV-FIRST-NEXT:    %[[R2:.*]] = graph.relu %[[B]]
// CONV-FIRST-NEXT:    func.return %[[R2]]

// With conv2d_relu first, the same module gives the two conv2d_relu groups.
// RELU-FIRST-LABEL: func.func @conv2d_relu_x2(
// RELU-FIRST-NEXT:    func.call @fused_conv2d_relu_dnnl(
// RELU-FIRST-NEXT:    func.call @fused_conv2d_relu_dnnl_1(
// RELU-FIRST-NEXT:    func.return

// -----

// test_partition_multiple_patterns: conv2d, then conv2d + relu. Priority: conv2d_relu takes the
// second convolution with its relu, conv2d then takes the first one alone.
func.func @conv2d_conv2d_relu(%data: tensor<1x64x56x56xf32>, %weight1: tensor<64x64x3x3xf32>, %weight2: tensor<64x64x3x3xf32>) -> tensor<1x64x54x54xf32> {
  %conv1 = graph.conv2d %data, %weight1 {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32>
  %c2 = graph.conv2d %conv1, %weight2 {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x54x54xf32>
  %conv2d = graph.relu %c2 : tensor<1x64x54x54xf32>
  func.return %conv2d : tensor<1x64x54x54xf32>
}

// RELU-FIRST:       func.func private @fused_conv2d_relu_dnnl(%conv1: {{.*}} attributes {graph.primitive, graph.composite = "dnnl.conv2d_relu"}
// RELU-FIRST:       func.func private @fused_conv2d_dnnl(%data: {{.*}} attributes {graph.primitive, graph.composite = "dnnl.conv2d"}
// RELU-FIRST-LABEL: func.func @conv2d_conv2d_relu(
// RELU-FIRST-NEXT:    %[[A:.*]] = func.call @fused_conv2d_dnnl(%data, %weight1)
// RELU-FIRST-NEXT:    %[[B:.*]] = func.call @fused_conv2d_relu_dnnl(%[[A]], %weight2)
// RELU-FIRST-NEXT:    func.return %[[B]]
