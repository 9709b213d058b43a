// Every verifier and syntax error of the loop dialect, one case per message, written in the
// generic form (except where the custom syntax is the point). Positions are those of the whole
// file.
// RUN: fusion-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Kernel arguments are buffers.
"loop.func"() <{sym_name = "k", function_type = (tensor<4xf32>) -> memref<4xf32>}> ({
^bb0(%x: tensor<4xf32>, %y: memref<4xf32>):
  "loop.return"() : () -> ()
}) : () -> ()
// CHECK: {{.*}}invalid.mlir:7:1: error: loop.func: 'k': argument #0 must be a memref, got tensor<4xf32>

// -----

// The entry block takes the inputs, then the outputs: here the output is missing...
"loop.func"() <{sym_name = "k", function_type = (memref<4xf32>) -> memref<4xf32>}> ({
^bb0(%x: memref<4xf32>):
  "loop.return"() : () -> ()
}) : () -> ()
// CHECK: {{.*}}invalid.mlir:16:1: error: loop.func: 'k': block argument types (memref<4xf32>) do not match the function type's inputs and outputs (memref<4xf32>, memref<4xf32>)

// -----

// ... and here it has the wrong shape.
"loop.func"() <{sym_name = "k", function_type = (memref<4xf32>) -> memref<4xf32>}> ({
^bb0(%x: memref<4xf32>, %y: memref<8xf32>):
  "loop.return"() : () -> ()
}) : () -> ()
// CHECK: {{.*}}invalid.mlir:25:1: error: loop.func: 'k': block argument types (memref<4xf32>, memref<8xf32>) do not match the function type's inputs and outputs (memref<4xf32>, memref<4xf32>)

// -----

// A kernel has a function type.
"loop.func"() <{sym_name = "k"}> ({
  "loop.return"() : () -> ()
}) : () -> ()
// CHECK: {{.*}}invalid.mlir:34:1: error: loop.func: property 'function_type' expected in operation 'loop.func'

// -----

// Local buffers have static shapes.
"loop.func"() <{sym_name = "k", function_type = () -> ()}> ({
  %b = "loop.alloc"() : () -> memref<?x4xf32>
  "loop.return"() : () -> ()
}) : () -> ()
// CHECK: {{.*}}invalid.mlir:43:3: error: loop.alloc: a local buffer needs a static shape, got memref<?x4xf32>

// -----

// An unknown pattern kind is a syntax error in the custom form...
loop.func @k(%x: memref<4xf32>) outs(%y: memref<4xf32>) pattern fancy {
  loop.return
}
// CHECK: {{.*}}invalid.mlir:51:65: error: unknown pattern kind 'fancy', expected one of: elemwise, broadcast, injective, comm_reduce, out_ewise_fusable, tuple, opaque

// -----

// ... and in the generic form.
"loop.func"() <{sym_name = "k", function_type = () -> (), pattern = #loop.pattern<fancy>}> ({
  "loop.return"() : () -> ()
}) : () -> ()
// CHECK: {{.*}}invalid.mlir:59:83: error: unknown pattern kind 'fancy', expected one of: elemwise, broadcast, injective, comm_reduce, out_ewise_fusable, tuple, opaque

// -----

// An unknown loop kind is a syntax error.
"loop.func"() <{sym_name = "k", function_type = () -> ()}> ({
  %c0 = "arith.constant"() <{value = 0 : index}> : () -> index
  "loop.for"(%c0, %c0, %c0) <{kind = #loop.kind<diagonal>}> ({
  ^bb0(%i: index):
    "loop.yield"() : () -> ()
  }) : (index, index, index) -> ()
  "loop.return"() : () -> ()
}) : () -> ()
// CHECK: {{.*}}invalid.mlir:69:49: error: Expected `serial`, `parallel`, `vectorized`, or `unrolled`.

// -----

// A loop body takes the induction variable...
"loop.func"() <{sym_name = "k", function_type = () -> ()}> ({
  %c0 = "arith.constant"() <{value = 0 : index}> : () -> index
  "loop.for"(%c0, %c0, %c0) <{kind = #loop.kind<serial>}> ({
    "loop.yield"() : () -> ()
  }) : (index, index, index) -> ()
  "loop.return"() : () -> ()
}) : () -> ()
// CHECK: {{.*}}invalid.mlir:82:3: error: loop.for: the body must take exactly one 'index' induction variable

// -----

// ... of type index ...
"loop.func"() <{sym_name = "k", function_type = () -> ()}> ({
  %c0 = "arith.constant"() <{value = 0 : index}> : () -> index
  "loop.for"(%c0, %c0, %c0) <{kind = #loop.kind<serial>}> ({
  ^bb0(%i: i32):
    "loop.yield"() : () -> ()
  }) : (index, index, index) -> ()
  "loop.return"() : () -> ()
}) : () -> ()
// CHECK: {{.*}}invalid.mlir:94:3: error: loop.for: the body must take exactly one 'index' induction variable

// -----

// ... and nothing else.
"loop.func"() <{sym_name = "k", function_type = () -> ()}> ({
  %c0 = "arith.constant"() <{value = 0 : index}> : () -> index
  "loop.for"(%c0, %c0, %c0) <{kind = #loop.kind<serial>}> ({
  ^bb0(%i: index, %j: index):
    "loop.yield"() : () -> ()
  }) : (index, index, index) -> ()
  "loop.return"() : () -> ()
}) : () -> ()
// CHECK: {{.*}}invalid.mlir:107:3: error: loop.for: the body must take exactly one 'index' induction variable

// -----

// Loop bounds are indices.
"loop.func"() <{sym_name = "k", function_type = () -> ()}> ({
  %c0 = "arith.constant"() <{value = 0 : i32}> : () -> i32
  "loop.for"(%c0, %c0, %c0) <{kind = #loop.kind<serial>}> ({
  ^bb0(%i: index):
    "loop.yield"() : () -> ()
  }) : (i32, i32, i32) -> ()
  "loop.return"() : () -> ()
}) : () -> ()
// CHECK: {{.*}}invalid.mlir:120:3: error: loop.for: operand 'lb' at position 0 does not verify

// -----

// loop.return ends a kernel only.
func.func @f() {
  "loop.return"() : () -> ()
}
// CHECK: {{.*}}invalid.mlir:132:3: error: loop.return: 'loop.return' expects parent op 'loop.func'

// -----

// Inside a loop body: a loaded value stored above its load.
"loop.func"() <{sym_name = "k", function_type = (memref<4xf32>) -> memref<4xf32>}> ({
^bb0(%x: memref<4xf32>, %y: memref<4xf32>):
  %c0 = "arith.constant"() <{value = 0 : index}> : () -> index
  %c1 = "arith.constant"() <{value = 1 : index}> : () -> index
  %c4 = "arith.constant"() <{value = 4 : index}> : () -> index
  "loop.for"(%c0, %c4, %c1) ({
  ^bb1(%i: index):
    "memref.store"(%v, %y, %i) : (f32, memref<4xf32>, index) -> ()
    %v = "memref.load"(%x, %i) : (memref<4xf32>, index) -> f32
    "loop.yield"() : () -> ()
  }) : (index, index, index) -> ()
  "loop.return"() : () -> ()
}) : () -> ()
// CHECK: {{.*}}invalid.mlir:146:5: error: memref.store: operand #0 does not dominate this use

// -----

// A loop bound defined after the loop.
"loop.func"() <{sym_name = "k", function_type = (memref<4xf32>) -> memref<4xf32>}> ({
^bb0(%x: memref<4xf32>, %y: memref<4xf32>):
  %c0 = "arith.constant"() <{value = 0 : index}> : () -> index
  %c1 = "arith.constant"() <{value = 1 : index}> : () -> index
  "loop.for"(%c0, %c4, %c1) ({
  ^bb1(%i: index):
    %v = "memref.load"(%x, %i) : (memref<4xf32>, index) -> f32
    "memref.store"(%v, %y, %i) : (f32, memref<4xf32>, index) -> ()
    "loop.yield"() : () -> ()
  }) : (index, index, index) -> ()
  %c4 = "arith.constant"() <{value = 4 : index}> : () -> index
  "loop.return"() : () -> ()
}) : () -> ()
// CHECK: {{.*}}invalid.mlir:161:3: error: loop.for: operand #1 does not dominate this use

// -----

// A block label inside a loop body written in the custom syntax (the region holds two blocks,
// which the parser took for the body's one; found by mutating lit inputs, session 63).
loop.func @k(%x: memref<4xf32>) outs(%y: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %x[%i] : memref<4xf32>
  ^bb1:
    loop.yield
  }
}
// CHECK: {{.*}}invalid.mlir:180:37: error: the body of 'loop.for' is one block: it cannot hold a block label

// -----

// The same in a kernel's body.
loop.func @k(%x: memref<4xf32>) outs(%y: memref<4xf32>) {
  %c0 = arith.constant 0 : index
^bb1:
  loop.return
}
// CHECK: {{.*}}invalid.mlir:191:57: error: the body of 'loop.func' is one block: it cannot hold a block label

// -----

// A store with one index fewer than its buffer's rank: xDSL's verifier of memref.store raises
// a bare `Exception`, which was an internal error (found by mutating lit inputs, session 63).
loop.func @k(%x: memref<4x4xf32>) outs(%y: memref<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0, %c0] : memref<4x4xf32>
  memref.store %v, %y[%c0] : memref<4x4xf32>
  loop.return
}
// CHECK: {{.*}}invalid.mlir:205:3: error: memref.store: Expected an index for each dimension
