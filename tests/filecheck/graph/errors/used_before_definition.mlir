// A loop's bound used before its definition, which is inside the loop's own body: xDSL 0.75
// keeps such a use as a placeholder that it neither reports nor can verify (its verifier
// failed on it with an internal error). Found by mutating lit inputs (session 63).
// RUN: not fusion-opt %s 2>&1 | filecheck %s

loop.func @k(%a: memref<8xf32>) outs(%b: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  loop.for %i = %c0 to %c8 step %c1 {
    %c8 = arith.constant 8 : index
    %v = memref.load %a[%i] : memref<8xf32>
    memref.store %v, %b[%i] : memref<8xf32>
  }
  loop.return
}

// CHECK-NOT: internal error
// CHECK:      {{.*}}used_before_definition.mlir:9:24: error: value %c8 is used before its definition, which is inside a region of 'loop.for' and not visible where it is used
// CHECK-NEXT: loop.for %i = %c0 to %c8 step %c1 {
// CHECK-NEXT: {{^                       \^$}}
// CHECK-NOT: internal error
