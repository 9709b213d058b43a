// RUN: not fusion-opt %s -p fuse-tir 2>&1 | filecheck %s

// A primitive function declared without a body: fuse-tir has no kernel calls to fuse. It read
// the body's block regardless, an internal error (found by bench/fuzz.py lit-mutants,
// session 63).

loop.func @neg(%a: memref<4xf32>) outs(%c: memref<4xf32>) pattern elemwise {}
func.func private @fused_bad(%x: tensor<4xf32>) -> tensor<4xf32> attributes {graph.primitive}

// CHECK: bodiless.mlir:8:1: error: fuse-tir: primitive function @fused_bad has no body of kernel calls to fuse
// CHECK-NOT: internal error
