// bench/fuzz.py lit-mutant seed 30791 of tests/filecheck/legalize-ops/invalid.mlir: ['insert 5', 'delete line 6']
// fusion-opt -p 'legalize-ops'

func.func @case(%x: tensor<0x4xf32>) -> tensor<0x4xf32> {
  %y = graph.relu %x : tensor<0x4xf32>
  func.return %y : tensor<0x4xf32>
^bb1:}