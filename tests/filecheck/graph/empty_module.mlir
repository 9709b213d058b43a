// A file of only comments (or nothing at all) is an empty module, as in MLIR.
// RUN: fusion-opt %s | filecheck %s
// RUN: fusion-opt %s -p legalize-ops,annotate-pattern,fuse-ops,fuse-tir | filecheck %s

// CHECK:      builtin.module {
// CHECK-NEXT: }
