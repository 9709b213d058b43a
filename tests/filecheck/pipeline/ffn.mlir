// FFN: matmul → add bias → gelu fuses into one kernel (3 → 1).
// RUN: %{fuse} %{examples}/ffn.mlir > %t
// RUN: filecheck %s < %t
// RUN: grep -c '^  loop.func @' %t | filecheck %s --check-prefix=KERNELS
// RUN: grep -c 'graph.call_loop' %t | filecheck %s --check-prefix=CALLS
// KERNELS: {{^}}1{{$}}
// CALLS: {{^}}1{{$}}

// CHECK:       loop.func @fused_matmul_add_gelu(
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    graph.call_loop @fused_matmul_add_gelu(
// CHECK-NEXT:    func.return
