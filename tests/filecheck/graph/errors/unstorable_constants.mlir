// Constants whose elements xDSL 0.75 cannot store: integers wider than 64 bits, in each of
// the three ways to write them, and values out of their element type's range. xDSL failed
// inside its parser or in the weights' resolution (internal errors: NotImplementedError,
// ValueError, OverflowError); each is now an error at the constant. Found by mutating lit
// inputs (session 63). Narrower unusual widths (i3, i24) parse, and the graph dialect's
// verifier names the element types it takes.
// RUN: fusion-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @main() -> tensor<2xi64> {
  %a = graph.constant dense<[1, 2]> : tensor<2xi94>
  %b = graph.constant dense<[1, 2]> : tensor<2xi64>
  func.return %b : tensor<2xi64>
}

// CHECK-NOT: internal error
// CHECK:      {{.*}}unstorable_constants.mlir:10:39: error: a dense literal of i94 elements is not supported: its integers can be at most 64 bits wide
// CHECK-NEXT: %a = graph.constant dense<[1, 2]> : tensor<2xi94>
// CHECK-NEXT: {{^                                      \^$}}

// -----

func.func @main(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %y = graph.transpose %x {perm = array<i65: 0, 1>} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  func.return %y : tensor<4x2xf32>
}

// CHECK-NOT: internal error
// CHECK:      {{.*}}unstorable_constants.mlir:23:41: error: an array of i65 elements is not supported: its integers can be at most 64 bits wide

// -----

func.func @main() -> tensor<2xi94> {
  %a = graph.constant dense_resource<blob1> : tensor<2xi94>
  func.return %a : tensor<2xi94>
}
{-#
  dialect_resources: {
    builtin: {
      blob1: "0x040000000100000000000000020000000000000001000000"
    }
  }
#-}

// CHECK-NOT: internal error
// CHECK:      {{.*}}unstorable_constants.mlir:33:3: error: dense_resource<blob1> has i94 elements, which are not supported (a tensor's elements are floats, or integers of at most 64 bits)

// -----

func.func @main() -> tensor<2xf32> {
  %a = graph.constant dense<[1.0, 3.5e38]> : tensor<2xf32>
  func.return %a : tensor<2xf32>
}

// CHECK:      {{.*}}unstorable_constants.mlir:50:23: error: a value of this attribute is out of its element type's range
// CHECK-NEXT: %a = graph.constant dense<[1.0, 3.5e38]> : tensor<2xf32>
// CHECK-NEXT: {{^                      \^}}

// -----

func.func @main() -> tensor<i8> {
  %a = graph.constant dense<300> : tensor<i8>
  func.return %a : tensor<i8>
}

// CHECK:      {{.*}}unstorable_constants.mlir:61:23: error: Integer value 300 is out of range for type i8 which supports values in the range [-128, 256)
// CHECK-NOT: internal error
