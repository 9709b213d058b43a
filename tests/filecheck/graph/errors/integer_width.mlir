// An integer type wider than MLIR's limit (2^24 - 1 bits): xDSL 0.75 takes any width and
// failed computing the range of a value of it (OverflowError, an internal error); it is an
// error at the type's name. Found by bench/fuzz.py lit-mutants (session 63).
// RUN: not fusion-opt %s 2>&1 | filecheck %s

func.func @main(%x: tensor<4xi1>) -> tensor<4xi1> {
  %y = "graph.cumsum"(%x) <{axis = 0 : i6418446744073709551616, exclusive = false, reverse = false}> : (tensor<4xi1>) -> tensor<4xi1>
  func.return %y : tensor<4xi1>
}

// CHECK-NOT: internal error
// CHECK: {{.*}}integer_width.mlir:7:40: error: integer types are at most 16777215 bits wide (as in MLIR)
