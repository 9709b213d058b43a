// add of a scalar constant → exp → squeeze: one kernel (3 → 1); the constant is a literal of the
// kernel (legalize-ops), and stays in @main, unused.
// RUN: %{fuse} %{examples}/add_exp_squeeze.mlir > %t
// RUN: filecheck %s < %t
// RUN: grep -c '^  loop.func @' %t | filecheck %s --check-prefix=KERNELS
// RUN: grep -c 'graph.call_loop' %t | filecheck %s --check-prefix=CALLS
// KERNELS: {{^}}1{{$}}
// CALLS: {{^}}1{{$}}

// CHECK:       loop.func @fused_add_exp_squeeze(%x: memref<10x1x20xf32>) outs(
// CHECK:         arith.constant 1.000000e+00 : f32
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    graph.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    graph.call_loop @fused_add_exp_squeeze(%x)
// CHECK-NEXT:    func.return
