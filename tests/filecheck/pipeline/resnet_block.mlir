// ResNet basic block with inference batch norm (7 → 2).
// RUN: %{fuse} %{examples}/resnet_block.mlir > %t
// RUN: filecheck %s < %t
// RUN: grep -c '^  loop.func @' %t | filecheck %s --check-prefix=KERNELS
// RUN: grep -c 'graph.call_loop' %t | filecheck %s --check-prefix=CALLS
// KERNELS: {{^}}2{{$}}
// CALLS: {{^}}2{{$}}

// CHECK-DAG:   loop.func @fused_conv2d_batch_norm_relu(
// CHECK-DAG:   loop.func @fused_conv2d_batch_norm_add_relu(
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %[[H:.*]] = graph.call_loop @fused_conv2d_batch_norm_relu(
// CHECK-NEXT:    graph.call_loop @fused_conv2d_batch_norm_add_relu(%[[H]],
// CHECK-NEXT:    func.return
