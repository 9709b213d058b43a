// RUN: fusion-opt %s --split-input-file -p convert-loop-to-llvm | filecheck %s
// RUN: fusion-opt %s --split-input-file -p 'convert-loop-to-llvm{stack-limit=0}' | filecheck %s --check-prefix=HEAP

// A local buffer is allocated once, at the top of the entry block, even inside a loop:
// on the stack when it is small (1000 bytes <= stack-limit = 4096 by default), otherwise
// with aligned_alloc and a free before the return.
loop.func @local(%a: memref<250xf32>) outs(%c: memref<250xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 250 : index
  loop.for %i = %c0 to %n step %c1 {
    %t = loop.alloc : memref<250xf32>
    %x = memref.load %a[%i] : memref<250xf32>
    memref.store %x, %t[%i] : memref<250xf32>
    %y = memref.load %t[%i] : memref<250xf32>
    memref.store %y, %c[%i] : memref<250xf32>
  }
  loop.return
}

// CHECK-LABEL: llvm.func @local(
// CHECK-NEXT:    %[[COUNT:.*]] = llvm.mlir.constant(250) : i64
// CHECK-NEXT:    %[[T:.*]] = llvm.alloca %[[COUNT]] x f32 {alignment = 64 : i64} : (i64) -> !llvm.ptr
// CHECK:       ^{{.*}}:
// CHECK:         llvm.getelementptr inbounds %[[T]][%{{.*}}]
// CHECK:         llvm.return
// CHECK-NOT:   llvm.call @free

// HEAP-LABEL: llvm.func @local(
// HEAP-NEXT:    %[[ALIGN:.*]] = llvm.mlir.constant(64) : i64
// HEAP-NEXT:    %[[SIZE:.*]] = llvm.mlir.constant(1024) : i64
// HEAP-NEXT:    %[[T:.*]] = llvm.call @aligned_alloc(%[[ALIGN]], %[[SIZE]]) : (i64, i64) -> !llvm.ptr
// HEAP:         llvm.getelementptr inbounds %[[T]][%{{.*}}]
// HEAP:         llvm.call @free(%[[T]]) : (!llvm.ptr) -> ()
// HEAP-NEXT:    llvm.return
// HEAP-DAG:   llvm.func @aligned_alloc(i64, i64) -> !llvm.ptr
// HEAP-DAG:   llvm.func @free(!llvm.ptr)

// -----

// An entry function (from lower-graph) calls kernels on pointers; a view is its slot's pointer.
loop.func @neg(%a: memref<4xf32>) outs(%b: memref<4xf32>) {
  loop.return
}
loop.func @main(%x: memref<4xf32>) outs(%y: memref<4xf32>) attributes {loop.bound_constants = 0 : i64} {
  %slot = loop.alloc : memref<8xf32>
  %t = loop.view %slot : memref<8xf32> to memref<2x2xf32>
  %u = loop.view %slot : memref<8xf32> to memref<4xf32>
  loop.call @neg(%x, %u) : memref<4xf32>, memref<4xf32>
  loop.call @neg(%u, %y) : memref<4xf32>, memref<4xf32>
  loop.return
}

// CHECK-LABEL: llvm.func @main(
// CHECK-SAME:      %[[X:[^:]*]]: !llvm.ptr {llvm.noalias, llvm.nocapture}, %[[Y:[^:]*]]: !llvm.ptr {llvm.noalias, llvm.nocapture})
// CHECK-SAME:      attributes {loop.bound_constants = 0 : i64, loop.kernel_type = (memref<4xf32>) -> memref<4xf32>}
// CHECK:         %[[SLOT:.*]] = llvm.alloca
// CHECK-NEXT:    llvm.call @neg(%[[X]], %[[SLOT]]) : (!llvm.ptr, !llvm.ptr) -> ()
// CHECK-NEXT:    llvm.call @neg(%[[SLOT]], %[[Y]]) : (!llvm.ptr, !llvm.ptr) -> ()
// CHECK-NEXT:    llvm.return

// -----

// A slot the entry keeps between calls (lower-graph's `fusion.kept`) is taken from a global
// of its own and given back before every return (the keeper's functions are linked in when
// the unit is compiled); a small one stays on the stack, and the second kept slot of an
// entry gets the next global.
loop.func @neg(%a: memref<4xf32>) outs(%b: memref<4xf32>) {
  loop.return
}
loop.func @main(%x: memref<4xf32>) outs(%y: memref<4xf32>) attributes {loop.bound_constants = 0 : i64} {
  %big = loop.alloc {fusion.kept} : memref<2000xf32>
  %other = loop.alloc {fusion.kept} : memref<1500xi64>
  %small = loop.alloc {fusion.kept} : memref<8xf32>
  %u = loop.view %big : memref<2000xf32> to memref<4xf32>
  %v = loop.view %small : memref<8xf32> to memref<4xf32>
  loop.call @neg(%x, %u) : memref<4xf32>, memref<4xf32>
  loop.call @neg(%u, %v) : memref<4xf32>, memref<4xf32>
  loop.call @neg(%v, %y) : memref<4xf32>, memref<4xf32>
  loop.return
}

// CHECK-LABEL: llvm.func @main(
// CHECK-DAG:     %[[SMALL:.*]] = llvm.alloca
// CHECK-DAG:     %[[G1:.*]] = llvm.mlir.addressof @__fusion_kept_main_1 : !llvm.ptr
// CHECK-DAG:     %[[N1:.*]] = llvm.mlir.constant(12032) : i64
// CHECK-DAG:     %[[OTHER:.*]] = llvm.call @__fusion_take_buffer(%[[G1]], %[[N1]]) : (!llvm.ptr, i64) -> !llvm.ptr
// CHECK-DAG:     %[[G0:.*]] = llvm.mlir.addressof @__fusion_kept_main_0 : !llvm.ptr
// CHECK-DAG:     %[[N0:.*]] = llvm.mlir.constant(8000) : i64
// CHECK-DAG:     %[[BIG:.*]] = llvm.call @__fusion_take_buffer(%[[G0]], %[[N0]]) : (!llvm.ptr, i64) -> !llvm.ptr
// CHECK:         llvm.call @neg(%[[X:.*]], %[[BIG]])
// CHECK-NEXT:    llvm.call @neg(%[[BIG]], %[[SMALL]])
// CHECK-NEXT:    llvm.call @neg(%[[SMALL]], %{{.*}})
// CHECK-NEXT:    llvm.call @__fusion_give_buffer(%[[G0]], %[[BIG]]) : (!llvm.ptr, !llvm.ptr) -> ()
// CHECK-NEXT:    llvm.call @__fusion_give_buffer(%[[G1]], %[[OTHER]]) : (!llvm.ptr, !llvm.ptr) -> ()
// CHECK-NEXT:    llvm.return
// CHECK-DAG:   llvm.mlir.global external @__fusion_kept_main_0(0 : i64) {addr_space = 0 : i32, alignment = 8 : i64} : i64
// CHECK-DAG:   llvm.mlir.global external @__fusion_kept_main_1(0 : i64) {addr_space = 0 : i32, alignment = 8 : i64} : i64
// CHECK-DAG:   llvm.func @__fusion_take_buffer(!llvm.ptr, i64) -> !llvm.ptr
// CHECK-DAG:   llvm.func @__fusion_give_buffer(!llvm.ptr, !llvm.ptr)
// CHECK-NOT:   @free

// -----

// A view with an offset (an operand of a concat written in place) is its source's pointer
// advanced by that many elements; the source may be an output buffer.
loop.func @neg(%a: memref<4xf32>) outs(%b: memref<4xf32>) {
  loop.return
}
loop.func @main(%x: memref<4xf32>) outs(%y: memref<2x4xf32>) attributes {loop.bound_constants = 0 : i64} {
  %low = loop.view %y : memref<2x4xf32> to memref<4xf32>
  %high = loop.view %y[4] : memref<2x4xf32> to memref<4xf32>
  loop.call @neg(%x, %low) : memref<4xf32>, memref<4xf32>
  loop.call @neg(%x, %high) : memref<4xf32>, memref<4xf32>
  loop.return
}

// CHECK-LABEL: llvm.func @main(
// CHECK-SAME:      %[[X:[^:]*]]: !llvm.ptr {llvm.noalias, llvm.nocapture}, %[[Y:[^:]*]]: !llvm.ptr {llvm.noalias, llvm.nocapture})
// CHECK-NEXT:    %[[HIGH:.*]] = llvm.getelementptr inbounds %[[Y]][4] : (!llvm.ptr) -> !llvm.ptr, f32
// CHECK-NEXT:    llvm.call @neg(%[[X]], %[[Y]]) : (!llvm.ptr, !llvm.ptr) -> ()
// CHECK-NEXT:    llvm.call @neg(%[[X]], %[[HIGH]]) : (!llvm.ptr, !llvm.ptr) -> ()
// CHECK-NEXT:    llvm.return
