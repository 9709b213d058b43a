// RUN: not fusion-opt %s -p fuse-tir 2>&1 | filecheck %s

loop.func @neg(%a: memref<4xf32>) outs(%c: memref<4xf32>) pattern elemwise {}
func.func private @fused_bad(%x: tensor<4xf32>) -> tensor<4xf32> attributes {graph.primitive} {
  %c = graph.constant dense<1.0> : tensor<4xf32>
  %r = graph.call_loop @neg(%c) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// CHECK: invalid.mlir:5:3: error: fuse-tir: primitive function @fused_bad may only call kernels, found graph.constant
// CHECK-NEXT: {{^}}  %c = graph.constant
// CHECK-NEXT: {{^}}  ^
// CHECK-NOT: Traceback
