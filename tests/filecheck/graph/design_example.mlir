// The example of DESIGN.md, verbatim in the generic form: it parses, verifies, and round-trips
// through the custom and the generic syntax.
// RUN: %{roundtrip} | filecheck %s
// RUN: %{generic-roundtrip} | filecheck %s
// RUN: fusion-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

func.func @main(%x: tensor<1x64x56x56xf32>, %w: tensor<64x64x3x3xf32>, %b: tensor<1x64x1x1xf32>) -> tensor<1x64x56x56xf32> {
  %c = "graph.conv2d"(%x, %w) <{strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64}> : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32>
  %a = "graph.add"(%c, %b) : (tensor<1x64x56x56xf32>, tensor<1x64x1x1xf32>) -> tensor<1x64x56x56xf32>
  %r = "graph.relu"(%a) : (tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
  func.return %r : tensor<1x64x56x56xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK-SAME:      %[[X:.*]]: tensor<1x64x56x56xf32>, %[[W:.*]]: tensor<64x64x3x3xf32>, %[[B:.*]]: tensor<1x64x1x1xf32>)
// CHECK:         %[[C:.*]] = graph.conv2d %[[X]], %[[W]] {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32>
// CHECK-NEXT:    %[[A:.*]] = graph.add %[[C]], %[[B]] : (tensor<1x64x56x56xf32>, tensor<1x64x1x1xf32>) -> tensor<1x64x56x56xf32>
// CHECK-NEXT:    %[[R:.*]] = graph.relu %[[A]] : tensor<1x64x56x56xf32>
// CHECK-NEXT:    func.return %[[R]] : tensor<1x64x56x56xf32>

// GENERIC: "graph.conv2d"(%{{.*}}, %{{.*}}) <{strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64}>
// GENERIC: "graph.add"
// GENERIC: "graph.relu"
