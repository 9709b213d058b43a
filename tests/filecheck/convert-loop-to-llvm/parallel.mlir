// RUN: fusion-opt %s --split-input-file -p convert-loop-to-llvm | filecheck %s
// RUN: fusion-opt %s --split-input-file -p 'convert-loop-to-llvm{threads=false}' | filecheck %s --check-prefix=SERIAL

// The outermost parallel loop (128 x 256 = 32768 innermost iterations >= 16384) becomes a
// launch: the captured values that are not constants (the buffers and the scalar %k) are
// stored into pointer-sized slots of a context on the stack, allocated in the entry block,
// and GOMP_parallel runs the trampoline @scale_par0 on a team of @__fusion_num_threads
// threads. The trampoline loads the slots and calls @scale_par0_body, whose buffer
// arguments are noalias like the kernel's; the body clones the constants, computes the
// thread's chunk [lo, hi) of the rows from omp_get_thread_num / omp_get_num_threads (the
// trip count a constant; no arithmetic for the lower bound 0 and the step 1), and runs the
// loop serially on it.
loop.func @scale(%a: memref<128x256xf32>, %s: memref<1xf32>) outs(%c: memref<128x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = arith.constant 128 : index
  %cols = arith.constant 256 : index
  %k = memref.load %s[%c0] : memref<1xf32>
  loop.for %i = %c0 to %rows step %c1 parallel {
    loop.for %j = %c0 to %cols step %c1 vectorized {
      %x = memref.load %a[%i, %j] : memref<128x256xf32>
      %y = arith.mulf %x, %k : f32
      memref.store %y, %c[%i, %j] : memref<128x256xf32>
    }
  }
  loop.return
}

// CHECK:       llvm.mlir.global external @__fusion_num_threads(0 : i32) {addr_space = 0 : i32} : i32
// CHECK-LABEL: llvm.func @scale(
// CHECK-SAME:      %[[A:[^:]*]]: !llvm.ptr {llvm.noalias, llvm.nocapture}, %[[S:[^:]*]]: !llvm.ptr {{.*}}, %[[C:[^:]*]]: !llvm.ptr
// CHECK-NEXT:    %[[SLOTS:.*]] = llvm.mlir.constant(3) : i64
// CHECK-NEXT:    %[[CTX:.*]] = llvm.alloca %[[SLOTS]] x !llvm.ptr {alignment = 8 : i64} : (i64) -> !llvm.ptr
// CHECK:         %[[K:.*]] = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-NEXT:    %[[SLOT0:.*]] = llvm.getelementptr inbounds %[[CTX]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    llvm.store %[[A]], %[[SLOT0]] : !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[SLOT1:.*]] = llvm.getelementptr inbounds %[[CTX]][2] : (!llvm.ptr) -> !llvm.ptr, f32
// CHECK-NEXT:    llvm.store %[[K]], %[[SLOT1]] : f32, !llvm.ptr
// CHECK-NEXT:    %[[SLOT2:.*]] = llvm.getelementptr inbounds %[[CTX]][2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    llvm.store %[[C]], %[[SLOT2]] : !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[FN:.*]] = llvm.mlir.addressof @scale_par0 : !llvm.ptr
// CHECK-NEXT:    %[[GLOBAL:.*]] = llvm.mlir.addressof @__fusion_num_threads : !llvm.ptr
// CHECK-NEXT:    %[[TEAM:.*]] = llvm.load %[[GLOBAL]] {alignment = 4 : i64} : !llvm.ptr -> i32
// CHECK-NEXT:    %[[FLAGS:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:    llvm.call @GOMP_parallel(%[[FN]], %[[CTX]], %[[TEAM]], %[[FLAGS]]) : (!llvm.ptr, !llvm.ptr, i32, i32) -> ()
// CHECK-NEXT:    llvm.return

// CHECK-LABEL: llvm.func internal @scale_par0(
// CHECK-SAME:      %[[PCTX:[^:]*]]: !llvm.ptr) {
// CHECK-NEXT:    %[[P0:.*]] = llvm.getelementptr inbounds %[[PCTX]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[PA:.*]] = llvm.load %[[P0]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:    %[[P1:.*]] = llvm.getelementptr inbounds %[[PCTX]][2] : (!llvm.ptr) -> !llvm.ptr, f32
// CHECK-NEXT:    %[[PK:.*]] = llvm.load %[[P1]] : !llvm.ptr -> f32
// CHECK-NEXT:    %[[P2:.*]] = llvm.getelementptr inbounds %[[PCTX]][2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[PC:.*]] = llvm.load %[[P2]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:    llvm.call @scale_par0_body(%[[PA]], %[[PK]], %[[PC]]) : (!llvm.ptr, f32, !llvm.ptr) -> ()
// CHECK-NEXT:    llvm.return

// CHECK-LABEL: llvm.func internal @scale_par0_body(
// CHECK-SAME:      %[[BA:[^:]*]]: !llvm.ptr {llvm.noalias, llvm.nocapture}, %[[BK:[^:]*]]: f32, %[[BC:[^:]*]]: !llvm.ptr {llvm.noalias, llvm.nocapture}) {
// CHECK-DAG:     %[[COLS:.*]] = llvm.mlir.constant(256) : i64
// CHECK:         %[[TID32:.*]] = llvm.call @omp_get_thread_num() : () -> i32
// CHECK-NEXT:    %[[TID:.*]] = llvm.sext %[[TID32]] : i32 to i64
// CHECK-NEXT:    %[[NT32:.*]] = llvm.call @omp_get_num_threads() : () -> i32
// CHECK-NEXT:    %[[NT:.*]] = llvm.sext %[[NT32]] : i32 to i64
// CHECK-NEXT:    %[[TRIPS:.*]] = llvm.mlir.constant(128) : i64
// CHECK-NEXT:    %[[Q:.*]] = llvm.sdiv %[[TRIPS]], %[[NT]] : i64
// CHECK-NEXT:    %[[R:.*]] = llvm.srem %[[TRIPS]], %[[NT]] : i64
// CHECK-NEXT:    %[[ONE:.*]] = llvm.mlir.constant(1) : i64
// CHECK-NEXT:    %[[NEXT:.*]] = llvm.add %[[TID]], %[[ONE]] : i64
// CHECK-NEXT:    %[[SCALED:.*]] = llvm.mul %[[TID]], %[[Q]] : i64
// CHECK-NEXT:    %[[EXTRA:.*]] = llvm.call_intrinsic "llvm.smin.i64"(%[[TID]], %[[R]]) : (i64, i64) -> i64
// CHECK-NEXT:    %[[LO:.*]] = llvm.add %[[SCALED]], %[[EXTRA]] : i64
// CHECK-NEXT:    %[[NEXT_SCALED:.*]] = llvm.mul %[[NEXT]], %[[Q]] : i64
// CHECK-NEXT:    %[[NEXT_EXTRA:.*]] = llvm.call_intrinsic "llvm.smin.i64"(%[[NEXT]], %[[R]]) : (i64, i64) -> i64
// CHECK-NEXT:    %[[HI:.*]] = llvm.add %[[NEXT_SCALED]], %[[NEXT_EXTRA]] : i64
// CHECK-NEXT:    llvm.br ^[[HEADER:.*]](%[[LO]] : i64)
// CHECK-NEXT:  ^[[HEADER]](%[[I:.*]]: i64):
// CHECK-NEXT:    %{{.*}} = llvm.icmp "slt" %[[I]], %[[HI]] : i64
// CHECK:         llvm.fmul %{{.*}}, %[[BK]] : f32
// CHECK:         llvm.getelementptr inbounds %[[BC]][%{{.*}}, %{{.*}}] : (!llvm.ptr, i64, i64) -> !llvm.ptr, !llvm.array<256 x f32>
// CHECK:         llvm.return

// CHECK-DAG:   llvm.func @omp_get_thread_num() -> i32
// CHECK-DAG:   llvm.func @omp_get_num_threads() -> i32
// CHECK-DAG:   llvm.func @GOMP_parallel(!llvm.ptr, !llvm.ptr, i32, i32)

// With threads=false, no kernel launches a team (checked to the end of the output).
// SERIAL-NOT:  __fusion_num_threads
// SERIAL-LABEL: llvm.func @scale(
// SERIAL-NOT:  GOMP_parallel
// SERIAL-NOT:  __fusion_num_threads
// SERIAL-NOT:  _par0

// -----

// Too little work for a team (16 x 64 = 1024 < 16384 innermost iterations): a serial loop.
loop.func @small(%a: memref<16x64xf32>) outs(%c: memref<16x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = arith.constant 16 : index
  %cols = arith.constant 64 : index
  loop.for %i = %c0 to %rows step %c1 parallel {
    loop.for %j = %c0 to %cols step %c1 vectorized {
      %x = memref.load %a[%i, %j] : memref<16x64xf32>
      memref.store %x, %c[%i, %j] : memref<16x64xf32>
    }
  }
  loop.return
}

// CHECK-NOT:   __fusion_num_threads
// CHECK-LABEL: llvm.func @small(
// CHECK-NOT:   GOMP_parallel
// CHECK-NOT:   @small_par0

// -----

// A parallel loop inside a serial one is launched on every outer iteration; the outer
// induction variable it uses is captured (an i64 slot), and the parallel loop nested in it
// runs serially inside the outlined body. Two launch sites in one kernel get @k_par0 and
// @k_par1, each with its own context.
loop.func @nested(%a: memref<4x64x256xf32>) outs(%c: memref<4x64x256xf32>, %d: memref<64x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %batch = arith.constant 4 : index
  %rows = arith.constant 64 : index
  %cols = arith.constant 256 : index
  loop.for %b = %c0 to %batch step %c1 {
    loop.for %i = %c0 to %rows step %c1 parallel {
      loop.for %j = %c0 to %cols step %c1 parallel {
        %x = memref.load %a[%b, %i, %j] : memref<4x64x256xf32>
        memref.store %x, %c[%b, %i, %j] : memref<4x64x256xf32>
      }
    }
  }
  loop.for %i = %c0 to %rows step %c1 parallel {
    loop.for %j = %c0 to %cols step %c1 {
      %x = memref.load %a[%c0, %i, %j] : memref<4x64x256xf32>
      memref.store %x, %d[%i, %j] : memref<64x256xf32>
    }
  }
  loop.return
}

// CHECK-LABEL: llvm.func @nested(
// CHECK:         llvm.alloca %{{.*}} x !llvm.ptr
// CHECK:         llvm.alloca %{{.*}} x !llvm.ptr
// CHECK:       ^[[OUTER:.*]](%[[B:.*]]: i64):
// CHECK:         llvm.store %[[B]], %{{.*}} : i64, !llvm.ptr
// CHECK:         %[[FN0:.*]] = llvm.mlir.addressof @nested_par0 : !llvm.ptr
// CHECK:         llvm.call @GOMP_parallel(%[[FN0]],
// CHECK:         %[[FN1:.*]] = llvm.mlir.addressof @nested_par1 : !llvm.ptr
// CHECK:         llvm.call @GOMP_parallel(%[[FN1]],
// CHECK:       llvm.func internal @nested_par0(
// CHECK:       llvm.func internal @nested_par0_body(
// CHECK-SAME:      %{{.*}}: i64
// CHECK-NOT:     GOMP_parallel
// CHECK:       llvm.func internal @nested_par1(
// CHECK:       llvm.func internal @nested_par1_body(
// CHECK-NOT:   @nested_par2
