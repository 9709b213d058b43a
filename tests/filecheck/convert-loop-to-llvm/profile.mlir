// RUN: fusion-opt %s -p convert-loop-to-llvm | filecheck %s

// A launch marked by lower-graph{profile=true} is bracketed by two clock reads; the elapsed
// nanoseconds and one call are added to its row of the counters. The first launch records
// the start of the run, the last adds the run's time to the run row (cells 8 and 9 here).

loop.func @k(%a: memref<4xf32>) outs(%b: memref<4xf32>) {}
loop.func @main(%x: memref<4xf32>) outs(%y: memref<4xf32>) attributes {loop.bound_constants = 0 : i64, loop.profile_counters = @__fusion_profile_main} {
  loop.call @k(%x, %y) {loop.profile_slot = 0 : i64, loop.profile_counters = @__fusion_profile_main} : memref<4xf32>, memref<4xf32>
}
"llvm.mlir.global"() <{global_type = !llvm.array<8 x i64>, sym_name = "__fusion_profile_main", linkage = #llvm.linkage<"external">, addr_space = 0 : i32, value = dense<[0, 0, 0, 16, 0, 0, 0, 0]> : tensor<8xi64>}> ({}) : () -> ()

// CHECK-LABEL: llvm.func @main(
// CHECK:         %[[START:.*]] = llvm.call @__fusion_profile_clock() : () -> i64
// CHECK-NEXT:    llvm.call @k(
// CHECK-NEXT:    %[[END:.*]] = llvm.call @__fusion_profile_clock() : () -> i64
// CHECK:         %[[ELAPSED:.*]] = llvm.sub %[[END]], %[[START]]
// CHECK:         %[[NS:.*]] = llvm.getelementptr %{{.*}}[0] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK:         llvm.add %{{.*}}, %[[ELAPSED]]
// CHECK:         llvm.getelementptr %{{.*}}[1] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK:         llvm.getelementptr %{{.*}}[6] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK:         llvm.store %[[START]]
// CHECK:         llvm.getelementptr %{{.*}}[4] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK:         llvm.getelementptr %{{.*}}[5] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK:         llvm.return
// CHECK-LABEL: llvm.func internal @__fusion_profile_clock() -> i64
// CHECK:         llvm.call @clock_gettime(
// CHECK:         llvm.return
