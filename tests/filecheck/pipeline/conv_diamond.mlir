// The conv diamond: conv2d; sigmoid and mul of its result; add of the two; relu (5 → 1).
// RUN: %{fuse} %{examples}/conv_diamond.mlir > %t
// RUN: filecheck %s < %t
// RUN: grep -c '^  loop.func @' %t | filecheck %s --check-prefix=KERNELS
// RUN: grep -c 'graph.call_loop' %t | filecheck %s --check-prefix=CALLS
// KERNELS: {{^}}1{{$}}
// CALLS: {{^}}1{{$}}

// CHECK:       loop.func @fused_conv2d_sigmoid_mul_add_relu(
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    graph.call_loop @fused_conv2d_sigmoid_mul_add_relu(
// CHECK-NEXT:    func.return
