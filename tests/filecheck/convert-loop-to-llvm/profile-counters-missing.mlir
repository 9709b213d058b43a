// RUN: not fusion-opt %s -p convert-loop-to-llvm 2>&1 | filecheck %s

// A profiled launch whose counters global is missing (lower-graph{profile=true} defines it
// beside the entry): an error at the launch, not the failed assertion it was (found by
// bench/fuzz.py lit-mutants, session 63).

loop.func @k(%a: memref<4xf32>) outs(%b: memref<4xf32>) {}
loop.func @main(%x: memref<4xf32>) outs(%y: memref<4xf32>) attributes {loop.bound_constants = 0 : i64, loop.profile_counters = @__fusion_profile_main} {
  loop.call @k(%x, %y) {loop.profile_slot = 0 : i64, loop.profile_counters = @__fusion_profile_main} : memref<4xf32>, memref<4xf32>
}

// CHECK-NOT: internal error
// CHECK: profile-counters-missing.mlir:9:3: error: convert-loop-to-llvm: loop.call: its profile counters @__fusion_profile_main are not an llvm.mlir.global of this module
