// The loop dialect in its custom syntax: loop.func with inputs, outputs (`outs`), a pattern kind
// and attributes; loop.for of every kind (serial is the default and is not printed); loop.alloc;
// element accesses with memref.load/store. Round-trips through the custom and the generic form,
// and printing the printed form again gives identical bytes.
// RUN: %{roundtrip} | filecheck %s
// RUN: %{generic-roundtrip} | filecheck %s
// RUN: fusion-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: fusion-opt %s > %t.a && fusion-opt %s | fusion-opt > %t.b && diff %t.a %t.b

loop.func @add(%a: memref<4xf32>, %b: memref<4xf32>) outs(%c: memref<4xf32>) pattern elemwise {
  %lo = arith.constant 0 : index
  %hi = arith.constant 4 : index
  %one = arith.constant 1 : index
  loop.for %i = %lo to %hi step %one {
    %x = memref.load %a[%i] : memref<4xf32>
    %y = memref.load %b[%i] : memref<4xf32>
    %s = arith.addf %x, %y : f32
    memref.store %s, %c[%i] : memref<4xf32>
  }
  loop.return
}

// CHECK-LABEL: loop.func @add(%a: memref<4xf32>, %b: memref<4xf32>) outs(%c: memref<4xf32>) pattern elemwise {
// CHECK-NEXT:    %lo = arith.constant 0 : index
// CHECK-NEXT:    %hi = arith.constant 4 : index
// CHECK-NEXT:    %one = arith.constant 1 : index
// CHECK-NEXT:    loop.for %i = %lo to %hi step %one {
// CHECK-NEXT:      %x = memref.load %a[%i] : memref<4xf32>
// CHECK-NEXT:      %y = memref.load %b[%i] : memref<4xf32>
// CHECK-NEXT:      %s = arith.addf %x, %y : f32
// CHECK-NEXT:      memref.store %s, %c[%i] : memref<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.return
// CHECK-NEXT:  }

// Loop kinds: parallel, serial (the default) and vectorized.
loop.func @relu(%x: memref<64x128xf32>) outs(%y: memref<64x128xf32>) pattern elemwise {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.000000e+00 : f32
  loop.for %i = %c0 to %c64 step %c1 parallel {
    loop.for %jo = %c0 to %c128 step %c8 {
      loop.for %ji = %c0 to %c8 step %c1 vectorized {
        %j = arith.addi %jo, %ji : index
        %v = memref.load %x[%i, %j] : memref<64x128xf32>
        %r = arith.maximumf %v, %zero : f32
        memref.store %r, %y[%i, %j] : memref<64x128xf32>
      }
    }
  }
  loop.return
}

// CHECK-LABEL: loop.func @relu(%x: memref<64x128xf32>) outs(%y: memref<64x128xf32>) pattern elemwise {
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %c8 = arith.constant 8 : index
// CHECK-NEXT:    %c64 = arith.constant 64 : index
// CHECK-NEXT:    %c128 = arith.constant 128 : index
// CHECK-NEXT:    %zero = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    loop.for %i = %c0 to %c64 step %c1 parallel {
// CHECK-NEXT:      loop.for %jo = %c0 to %c128 step %c8 {
// CHECK-NEXT:        loop.for %ji = %c0 to %c8 step %c1 vectorized {
// CHECK-NEXT:          %j = arith.addi %jo, %ji : index
// CHECK-NEXT:          %v = memref.load %x[%i, %j] : memref<64x128xf32>
// CHECK-NEXT:          %r = arith.maximumf %v, %zero : f32
// CHECK-NEXT:          memref.store %r, %y[%i, %j] : memref<64x128xf32>
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.return
// CHECK-NEXT:  }

// A kernel-local buffer, an unrolled loop, and a reduction written as an init store followed by
// an update store of the same element.
loop.func @row_sum_exp(%x: memref<4x8xf32>) outs(%y: memref<4xf32>) pattern comm_reduce {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.000000e+00 : f32
  %e = loop.alloc : memref<4x8xf32>
  loop.for %i = %c0 to %c4 step %c1 {
    loop.for %j = %c0 to %c8 step %c1 unrolled {
      %v = memref.load %x[%i, %j] : memref<4x8xf32>
      %ev = math.exp %v : f32
      memref.store %ev, %e[%i, %j] : memref<4x8xf32>
    }
  }
  loop.for %r = %c0 to %c4 step %c1 {
    memref.store %zero, %y[%r] : memref<4xf32>
    loop.for %k = %c0 to %c8 step %c1 {
      %acc = memref.load %y[%r] : memref<4xf32>
      %t = memref.load %e[%r, %k] : memref<4x8xf32>
      %s = arith.addf %acc, %t : f32
      memref.store %s, %y[%r] : memref<4xf32>
    }
  }
  loop.return
}

// CHECK-LABEL: loop.func @row_sum_exp(%x: memref<4x8xf32>) outs(%y: memref<4xf32>) pattern comm_reduce {
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %c4 = arith.constant 4 : index
// CHECK-NEXT:    %c8 = arith.constant 8 : index
// CHECK-NEXT:    %zero = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %e = loop.alloc : memref<4x8xf32>
// CHECK-NEXT:    loop.for %i = %c0 to %c4 step %c1 {
// CHECK-NEXT:      loop.for %j = %c0 to %c8 step %c1 unrolled {
// CHECK-NEXT:        %v = memref.load %x[%i, %j] : memref<4x8xf32>
// CHECK-NEXT:        %ev = math.exp %v : f32
// CHECK-NEXT:        memref.store %ev, %e[%i, %j] : memref<4x8xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.for %r = %c0 to %c4 step %c1 {
// CHECK-NEXT:      memref.store %zero, %y[%r] : memref<4xf32>
// CHECK-NEXT:      loop.for %k = %c0 to %c8 step %c1 {
// CHECK-NEXT:        %acc = memref.load %y[%r] : memref<4xf32>
// CHECK-NEXT:        %t = memref.load %e[%r, %k] : memref<4x8xf32>
// CHECK-NEXT:        %s = arith.addf %acc, %t : f32
// CHECK-NEXT:        memref.store %s, %y[%r] : memref<4xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.return
// CHECK-NEXT:  }

// Several outputs, and attributes after the pattern kind.
loop.func @split(%x: memref<8xf32>) outs(%lo: memref<4xf32>, %hi: memref<4xf32>) pattern injective attributes {origin = "graph.split"} {
  loop.return
}

// CHECK-LABEL: loop.func @split(%x: memref<8xf32>) outs(%lo: memref<4xf32>, %hi: memref<4xf32>) pattern injective attributes {origin = "graph.split"} {
// CHECK-NEXT:    loop.return
// CHECK-NEXT:  }

// No pattern kind until annotate-pattern runs; then each of the seven kinds.
loop.func @unannotated(%x: memref<2x3xf32>) outs(%y: memref<2x3xf32>) {
  loop.return
}

// CHECK-LABEL: loop.func @unannotated(%x: memref<2x3xf32>) outs(%y: memref<2x3xf32>) {
// CHECK-NEXT:    loop.return
// CHECK-NEXT:  }

loop.func @broadcast(%x: memref<3xf32>) outs(%y: memref<2x3xf32>) pattern broadcast {
  loop.return
}

// CHECK-LABEL: loop.func @broadcast(%x: memref<3xf32>) outs(%y: memref<2x3xf32>) pattern broadcast {
// CHECK-NEXT:    loop.return
// CHECK-NEXT:  }

loop.func @matmul(%a: memref<2x3xf32>, %b: memref<3x4xf32>) outs(%c: memref<2x4xf32>) pattern out_ewise_fusable {
  loop.return
}

// CHECK-LABEL: loop.func @matmul(%a: memref<2x3xf32>, %b: memref<3x4xf32>) outs(%c: memref<2x4xf32>) pattern out_ewise_fusable {
// CHECK-NEXT:    loop.return
// CHECK-NEXT:  }

loop.func @tuple(%x: memref<1xf32>) outs(%y: memref<1xf32>) pattern tuple {
  loop.return
}

// CHECK-LABEL: loop.func @tuple(%x: memref<1xf32>) outs(%y: memref<1xf32>) pattern tuple {
// CHECK-NEXT:    loop.return
// CHECK-NEXT:  }

loop.func @opaque(%x: memref<1xf32>) outs(%y: memref<1xf32>) pattern opaque {
  loop.return
}

// CHECK-LABEL: loop.func @opaque(%x: memref<1xf32>) outs(%y: memref<1xf32>) pattern opaque {
// CHECK-NEXT:    loop.return
// CHECK-NEXT:  }

// An explicit `serial` parses (and is not printed); loop.for keeps its attributes.
loop.func @loop_attributes(%x: memref<4xf32>) outs(%y: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 serial attributes {note = "kept"} {
    %v = memref.load %x[%i] : memref<4xf32>
    memref.store %v, %y[%i] : memref<4xf32>
  }
  loop.return
}

// CHECK-LABEL: loop.func @loop_attributes(%x: memref<4xf32>) outs(%y: memref<4xf32>) {
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %c4 = arith.constant 4 : index
// CHECK-NEXT:    loop.for %i = %c0 to %c4 step %c1 attributes {note = "kept"} {
// CHECK-NEXT:      %v = memref.load %x[%i] : memref<4xf32>
// CHECK-NEXT:      memref.store %v, %y[%i] : memref<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.return
// CHECK-NEXT:  }

// The custom syntax may leave out loop.return; the printer writes it.
loop.func @implicit_return(%x: memref<1xf32>) outs(%y: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<1xf32>
  memref.store %v, %y[%c0] : memref<1xf32>
}

// CHECK-LABEL: loop.func @implicit_return(%x: memref<1xf32>) outs(%y: memref<1xf32>) {
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %v = memref.load %x[%c0] : memref<1xf32>
// CHECK-NEXT:    memref.store %v, %y[%c0] : memref<1xf32>
// CHECK-NEXT:    loop.return
// CHECK-NEXT:  }

// The generic form: the loop kind and the pattern kind are properties; loop.for's body ends in
// loop.yield and loop.func's in loop.return.
// GENERIC-LABEL: "loop.func"() <{sym_name = "add", function_type = (memref<4xf32>, memref<4xf32>) -> memref<4xf32>, pattern = #loop.pattern<elemwise>}> ({
// GENERIC-NEXT: ^bb0(%a: memref<4xf32>, %b: memref<4xf32>, %c: memref<4xf32>):
// GENERIC: "loop.for"(%lo, %hi, %one) <{kind = #loop.kind<serial>}> ({
// GENERIC-NEXT: ^bb0(%i: index):
// GENERIC: "loop.yield"() : () -> ()
// GENERIC: "loop.return"() : () -> ()
// GENERIC-LABEL: "loop.func"() <{sym_name = "row_sum_exp", function_type = (memref<4x8xf32>) -> memref<4xf32>, pattern = #loop.pattern<comm_reduce>}> ({
// GENERIC-NEXT: ^bb0(%x: memref<4x8xf32>, %y: memref<4xf32>):
// GENERIC: %e = "loop.alloc"() : () -> memref<4x8xf32>
// GENERIC: "loop.for"(%c0, %c4, %c1) <{kind = #loop.kind<serial>}> ({
// GENERIC-NEXT: ^bb0(%i: index):
// GENERIC: "loop.for"(%c0, %c8, %c1) <{kind = #loop.kind<unrolled>}> ({
// GENERIC-NEXT: ^bb0(%j: index):
// GENERIC: "loop.yield"() : () -> ()
// GENERIC: "loop.yield"() : () -> ()
// GENERIC: "loop.for"(%c0, %c4, %c1) <{kind = #loop.kind<serial>}> ({
// GENERIC-NEXT: ^bb0(%r: index):
// GENERIC: "loop.for"(%c0, %c8, %c1) <{kind = #loop.kind<serial>}> ({
// GENERIC-NEXT: ^bb0(%k: index):
// GENERIC: "loop.yield"() : () -> ()
// GENERIC: "loop.yield"() : () -> ()
// GENERIC: "loop.return"() : () -> ()
// GENERIC-LABEL: "loop.func"() <{sym_name = "unannotated", function_type = (memref<2x3xf32>) -> memref<2x3xf32>}> ({
// GENERIC-NEXT: ^bb0(%x: memref<2x3xf32>, %y: memref<2x3xf32>):
// GENERIC: "loop.return"() : () -> ()
