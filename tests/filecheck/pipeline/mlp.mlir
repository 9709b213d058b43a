// The 3-layer MLP: one kernel fused_matmul_add_relu called three times (9 → 3).
// RUN: %{fuse} %{examples}/mlp.mlir > %t
// RUN: filecheck %s < %t
// RUN: grep -c '^  loop.func @' %t | filecheck %s --check-prefix=KERNELS
// RUN: grep -c 'graph.call_loop' %t | filecheck %s --check-prefix=CALLS
// KERNELS: {{^}}1{{$}}
// CALLS: {{^}}3{{$}}

// CHECK:       loop.func @fused_matmul_add_relu(
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %[[H1:.*]] = graph.call_loop @fused_matmul_add_relu(
// CHECK-NEXT:    %[[H2:.*]] = graph.call_loop @fused_matmul_add_relu(%[[H1]],
// CHECK-NEXT:    %[[H3:.*]] = graph.call_loop @fused_matmul_add_relu(%[[H2]],
// CHECK-NEXT:    func.return %[[H3]]
