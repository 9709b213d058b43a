// The transformer encoder block (29 → 15 kernel calls, 11 distinct kernels), as TVM 0.27 gives.
// The attention's scale (a scalar constant) is a literal of fused_matmul_mul (legalize-ops).
// RUN: %{fuse} %{examples}/transformer_block.mlir > %t
// RUN: filecheck %s < %t
// RUN: grep -c '^  loop.func @' %t | filecheck %s --check-prefix=KERNELS
// RUN: grep -c 'graph.call_loop' %t | filecheck %s --check-prefix=CALLS
// KERNELS: {{^}}11{{$}}
// CALLS: {{^}}15{{$}}

// CHECK-DAG:   loop.func @fused_matmul_add(
// CHECK-DAG:   loop.func @fused_reshape_transpose(
// CHECK-DAG:   loop.func @fused_reshape_transpose_1(
// CHECK-DAG:   loop.func @fused_matmul_mul(
// CHECK-DAG:   loop.func @softmax(
// CHECK-DAG:   loop.func @matmul_2(
// CHECK-DAG:   loop.func @fused_transpose_reshape(
// CHECK-DAG:   loop.func @fused_matmul_add_add(
// CHECK-DAG:   loop.func @layer_norm(
// CHECK-DAG:   loop.func @fused_matmul_add_gelu(
// CHECK-DAG:   loop.func @fused_matmul_add_add_1(
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %[[Q:.*]] = graph.call_loop @fused_matmul_add(
// CHECK-NEXT:    %[[K:.*]] = graph.call_loop @fused_matmul_add(
// CHECK-NEXT:    %[[V:.*]] = graph.call_loop @fused_matmul_add(
// CHECK-NEXT:    %[[QH:.*]] = graph.call_loop @fused_reshape_transpose(%[[Q]])
// CHECK-NEXT:    %[[KH:.*]] = graph.call_loop @fused_reshape_transpose_1(%[[K]])
// CHECK-NEXT:    %[[VH:.*]] = graph.call_loop @fused_reshape_transpose(%[[V]])
// CHECK-NEXT:    %[[SC:.*]] = graph.call_loop @fused_matmul_mul(%[[QH]], %[[KH]])
// CHECK-NEXT:    graph.constant dense<1.250000e-01>
// CHECK-NEXT:    %[[P:.*]] = graph.call_loop @softmax(%[[SC]])
// CHECK-NEXT:    %[[OH:.*]] = graph.call_loop @matmul_2(%[[P]], %[[VH]])
// CHECK-NEXT:    %[[O:.*]] = graph.call_loop @fused_transpose_reshape(%[[OH]])
// CHECK-NEXT:    %[[R1:.*]] = graph.call_loop @fused_matmul_add_add(%[[O]],
// CHECK-NEXT:    %[[L1:.*]] = graph.call_loop @layer_norm(%[[R1]],
// CHECK-NEXT:    %[[G:.*]] = graph.call_loop @fused_matmul_add_gelu(%[[L1]],
// CHECK-NEXT:    %[[R2:.*]] = graph.call_loop @fused_matmul_add_add_1(%[[G]], %{{.*}}, %{{.*}}, %[[L1]])
// CHECK-NEXT:    %[[Y:.*]] = graph.call_loop @layer_norm(%[[R2]],
// CHECK-NEXT:    func.return %[[Y]]
