// RUN: fusion-opt %s --split-input-file -p convert-loop-to-llvm | filecheck %s

// A kernel becomes an external llvm.func taking one noalias pointer per buffer; the loop
// becomes a header block with the i64 induction variable, a body and an exit block.
loop.func @add(%a: memref<1000xf32>, %b: memref<1000xf32>) outs(%c: memref<1000xf32>) {
  %lo = arith.constant 0 : index
  %hi = arith.constant 1000 : index
  %one = arith.constant 1 : index
  loop.for %i = %lo to %hi step %one {
    %x = memref.load %a[%i] : memref<1000xf32>
    %y = memref.load %b[%i] : memref<1000xf32>
    %s = arith.addf %x, %y : f32
    memref.store %s, %c[%i] : memref<1000xf32>
  }
  loop.return
}

// CHECK-LABEL: llvm.func @add(
// CHECK-SAME:      %[[A:[^:]*]]: !llvm.ptr {llvm.noalias, llvm.nocapture},
// CHECK-SAME:      %[[B:[^:]*]]: !llvm.ptr {llvm.noalias, llvm.nocapture},
// CHECK-SAME:      %[[C:[^:]*]]: !llvm.ptr {llvm.noalias, llvm.nocapture})
// CHECK-SAME:      attributes {loop.kernel_type = (memref<1000xf32>, memref<1000xf32>) -> memref<1000xf32>}
// CHECK-DAG:     %[[LO:.*]] = llvm.mlir.constant(0) : i64
// CHECK-DAG:     %[[HI:.*]] = llvm.mlir.constant(1000) : i64
// CHECK-DAG:     %[[ONE:.*]] = llvm.mlir.constant(1) : i64
// CHECK:         llvm.br ^[[HEADER:.*]](%[[LO]] : i64)
// CHECK-NEXT:  ^[[HEADER]](%[[IV:.*]]: i64):
// CHECK-NEXT:    %[[COND:.*]] = llvm.icmp "slt" %[[IV]], %[[HI]] : i64
// CHECK-NEXT:    llvm.cond_br %[[COND]], ^[[BODY:.*]], ^[[EXIT:.*]]
// CHECK-NEXT:  ^[[BODY]]:
// CHECK-NEXT:    %[[PA:.*]] = llvm.getelementptr inbounds %[[A]][%[[IV]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    %[[X:.*]] = llvm.load %[[PA]] {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-NEXT:    %[[PB:.*]] = llvm.getelementptr inbounds %[[B]][%[[IV]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    %[[Y:.*]] = llvm.load %[[PB]] {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-NEXT:    %[[S:.*]] = llvm.fadd %[[X]], %[[Y]] : f32
// CHECK-NEXT:    %[[PC:.*]] = llvm.getelementptr inbounds %[[C]][%[[IV]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    llvm.store %[[S]], %[[PC]] {alignment = 4 : i64} : f32, !llvm.ptr
// CHECK-NEXT:    %[[NEXT:.*]] = llvm.add %[[IV]], %[[ONE]] overflow<nsw> : i64
// CHECK-NEXT:    llvm.br ^[[HEADER]](%[[NEXT]] : i64)
// CHECK-NEXT:  ^[[EXIT]]:
// CHECK-NEXT:    llvm.return
// CHECK-NOT:   loop.
// CHECK-NOT:   memref.
// CHECK-NOT:   arith.
// CHECK-NOT:   unrealized_conversion_cast

// -----

// Subscripts are linearised with the static row-major strides (53, 1) into one GEP index;
// nested loops nest their blocks: the inner exit block steps the outer induction variable.
loop.func @copy2d(%a: memref<37x53xf32>) outs(%c: memref<37x53xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %h = arith.constant 37 : index
  %w = arith.constant 53 : index
  loop.for %i = %c0 to %h step %c1 {
    loop.for %j = %c0 to %w step %c1 vectorized {
      %x = memref.load %a[%i, %j] : memref<37x53xf32>
      memref.store %x, %c[%i, %j] : memref<37x53xf32>
    }
  }
  loop.return
}

// CHECK-LABEL: llvm.func @copy2d(
// CHECK:         llvm.br ^[[OUTER:.*]](%{{.*}} : i64)
// CHECK-NEXT:  ^[[OUTER]](%[[I:.*]]: i64):
// CHECK:         llvm.cond_br %{{.*}}, ^[[OUTER_BODY:.*]], ^[[OUTER_EXIT:.*]]
// CHECK-NEXT:  ^[[OUTER_BODY]]:
// CHECK-NEXT:    llvm.br ^[[INNER:.*]](%{{.*}} : i64)
// CHECK-NEXT:  ^[[INNER]](%[[J:.*]]: i64):
// CHECK:         llvm.cond_br %{{.*}}, ^[[INNER_BODY:.*]], ^[[INNER_EXIT:.*]]
// CHECK-NEXT:  ^[[INNER_BODY]]:
// A row-major buffer is addressed by one GEP over its rows' array type (LLVM scales the
// indices), whose opaque pointer the load takes as it is.
// CHECK-NEXT:    %[[P:.*]] = llvm.getelementptr inbounds %{{.*}}[%[[I]], %[[J]]] : (!llvm.ptr, i64, i64) -> !llvm.ptr, !llvm.array<53 x f32>
// CHECK-NEXT:    llvm.load %[[P]]
// CHECK:         llvm.br ^[[INNER]](%{{.*}} : i64)
// CHECK-NEXT:  ^[[INNER_EXIT]]:
// CHECK-NEXT:    %[[NEXT_I:.*]] = llvm.add %[[I]], %{{.*}} overflow<nsw> : i64
// CHECK-NEXT:    llvm.br ^[[OUTER]](%[[NEXT_I]] : i64)
// CHECK-NEXT:  ^[[OUTER_EXIT]]:
// CHECK-NEXT:    llvm.return

// -----

// A rank-0 buffer is accessed at offset 0; a static strided layout uses its strides and offset.
loop.func @scalar(%s: memref<f32>, %v: memref<4xf32, strided<[3], offset: 2>>) outs(%o: memref<f32>) {
  %c1 = arith.constant 1 : index
  %x = memref.load %s[] : memref<f32>
  %y = memref.load %v[%c1] : memref<4xf32, strided<[3], offset: 2>>
  %z = arith.addf %x, %y : f32
  memref.store %z, %o[] : memref<f32>
  loop.return
}

// CHECK-LABEL: llvm.func @scalar(
// CHECK-SAME:      %[[S:[^:]*]]: !llvm.ptr {{.*}}, %[[V:[^:]*]]: !llvm.ptr {{.*}}, %[[O:[^:]*]]: !llvm.ptr
// CHECK-DAG:     %[[ONE:.*]] = llvm.mlir.constant(1) : i64
// CHECK-DAG:     %[[ZERO:.*]] = llvm.mlir.constant(0) : i64
// CHECK:         llvm.getelementptr inbounds %[[S]][%[[ZERO]]]
// CHECK:         %[[THREE:.*]] = llvm.mlir.constant(3) : i64
// CHECK-NEXT:    %[[SCALED:.*]] = llvm.mul %[[ONE]], %[[THREE]] overflow<nsw> : i64
// CHECK-NEXT:    %[[TWO:.*]] = llvm.mlir.constant(2) : i64
// CHECK-NEXT:    %[[OFF:.*]] = llvm.add %[[SCALED]], %[[TWO]] overflow<nsw> : i64
// CHECK-NEXT:    llvm.getelementptr inbounds %[[V]][%[[OFF]]]
// CHECK:         llvm.getelementptr inbounds %[[O]][%{{.*}}]
