// The conv block of DESIGN.md: TVM 0.27 gives one kernel, fused_conv2d_add_relu (3 → 1).
// RUN: %{fuse} %{examples}/conv_block.mlir > %t
// RUN: filecheck %s < %t
// RUN: grep -c '^  loop.func @' %t | filecheck %s --check-prefix=KERNELS
// RUN: grep -c 'graph.call_loop' %t | filecheck %s --check-prefix=CALLS
// KERNELS: {{^}}1{{$}}
// CALLS: {{^}}1{{$}}

// CHECK:       loop.func @fused_conv2d_add_relu(
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    graph.call_loop @fused_conv2d_add_relu(
// CHECK-NEXT:    func.return
