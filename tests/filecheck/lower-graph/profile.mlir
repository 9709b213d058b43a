// RUN: fusion-opt %s -p 'lower-graph{profile=true}' | filecheck %s
// RUN: fusion-opt %s -p lower-graph | filecheck %s --check-prefix=PLAIN

// A profiling build marks every launch with its row in the entry's counters, and the
// counters global holds, per launch, [ns, calls, FLOPs, bytes] (FLOPs and bytes of one
// launch, from the kernel's loops), then the run's row. @scale runs 4 multiplies (16 bytes in,
// 16 out); @copy_4 (the copy of the returned argument) computes nothing.

loop.func @scale(%a: memref<4xf32>) outs(%b: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %two = arith.constant 2.0 : f32
  loop.for %i = %c0 to %c4 step %c1 {
    %x = memref.load %a[%i] : memref<4xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %b[%i] : memref<4xf32>
  }
}
func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = graph.call_loop @scale(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = graph.call_loop @scale(%a) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %b, %x : tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: loop.func @main(
// CHECK-SAME:      loop.profile_counters = @__fusion_profile_main
// CHECK:         loop.call @scale({{.*}}) {loop.profile_slot = 0 : i64, loop.profile_counters = @__fusion_profile_main}
// CHECK-NEXT:    loop.call @scale({{.*}}) {loop.profile_slot = 1 : i64, loop.profile_counters = @__fusion_profile_main}
// CHECK-NEXT:    loop.call @copy_4({{.*}}) {loop.profile_slot = 2 : i64, loop.profile_counters = @__fusion_profile_main}
// CHECK:       llvm.mlir.global external @__fusion_profile_main(dense<[0, 0, 4, 32, 0, 0, 4, 32, 0, 0, 0, 32, 0, 0, 0, 0]> : tensor<16xi64>)
// CHECK-SAME:      : !llvm.array<16 x i64>

// Without the option, nothing of the profiler is emitted.
// PLAIN-NOT: profile
