// bench/fuzz.py lit-mutant seed 21724 of tests/filecheck/convert-loop-to-llvm/profile.mlir: ['delete line 7']
// fusion-opt -p 'convert-loop-to-llvm'


loop.func @k(%a: memref<4xf32>) outs(%b: memref<4xf32>) {}
loop.func @main(%x: memref<4xf32>) outs(%y: memref<4xf32>) attributes {loop.bound_constants = 0 : i64, loop.profile_counters = @__fusion_profile_main} {
  loop.call @k(%x, %y) {loop.profile_slot = 0 : i64, loop.profile_counters = @__fusion_profile_main} : memref<4xf32>, memref<4xf32>
}
