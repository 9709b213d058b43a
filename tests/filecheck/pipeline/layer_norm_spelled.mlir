// Layer norm spelled out with graph ops (9 → 3): mean legalizes to a sum block plus a scaling
// block, so it is out_ewise_fusable and takes the following sub; mul(d, d) cannot join it
// (a second consumer of d) and stays alone.
// RUN: %{fuse} %{examples}/layer_norm_spelled.mlir > %t
// RUN: filecheck %s < %t
// RUN: grep -c '^  loop.func @' %t | filecheck %s --check-prefix=KERNELS
// RUN: grep -c 'graph.call_loop' %t | filecheck %s --check-prefix=CALLS
// KERNELS: {{^}}3{{$}}
// CALLS: {{^}}3{{$}}

// CHECK-DAG:   loop.func @mul(
// CHECK-DAG:   loop.func @fused_reduce_mean_sub(
// CHECK-DAG:   loop.func @fused_reduce_mean_add_sqrt_div_mul_add(
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %[[D:.*]] = graph.call_loop @fused_reduce_mean_sub(
// CHECK-NEXT:    %[[DD:.*]] = graph.call_loop @mul(%[[D]], %[[D]])
// CHECK-NEXT:    graph.call_loop @fused_reduce_mean_add_sqrt_div_mul_add(%[[DD]], %[[D]], %gamma, %beta)
// CHECK-NEXT:    graph.constant dense<1.000000e-05>
// CHECK-NEXT:    func.return
