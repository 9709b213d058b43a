// add of a scalar constant → exp → squeeze: one kernel (3 → 1); the constant stays a graph value.
// RUN: %{fuse} %{examples}/add_exp_squeeze.mlir > %t
// RUN: filecheck %s < %t
// RUN: grep -c '^  loop.func @' %t | filecheck %s --check-prefix=KERNELS
// RUN: grep -c 'graph.call_loop' %t | filecheck %s --check-prefix=CALLS
// KERNELS: {{^}}1{{$}}
// CALLS: {{^}}1{{$}}

// CHECK:       loop.func @fused_add_exp_squeeze(
// CHECK-LABEL: func.func @main(
// CHECK:         %[[C:.*]] = graph.constant
// CHECK-NEXT:    graph.call_loop @fused_add_exp_squeeze(%{{.*}}, %[[C]])
// CHECK-NEXT:    func.return
