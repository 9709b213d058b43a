// An op written after a file's module: the parser puts both into another module, and the
// passes, which read a module's ops as its functions, failed on the nested one (fuse-ops: an
// internal error). Found by bench/fuzz.py lit-mutants (seed 215706, session 63).
// RUN: not fusion-opt %s -p legalize-ops,annotate-pattern,fuse-ops 2>&1 | filecheck %s

builtin.module {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %y = graph.relu %x : tensor<4xf32>
    func.return %y : tensor<4xf32>
  }
}
%c0 = arith.constant 0 : index

// CHECK-NOT: internal error
// CHECK: {{.*}}nested_module.mlir:6:1: error: builtin.module inside a module: the compiler takes one module (ops written outside a file's module are put with it into another)
