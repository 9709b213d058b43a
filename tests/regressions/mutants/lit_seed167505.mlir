// bench/fuzz.py lit-mutant seed 167505 of tests/filecheck/graph/errors/function_blocks.mlir: ["replace 'bb1'->'9223372036854775807'"]
// fusion-opt -p 'fold-constants,legalize-ops,annotate-pattern,fuse-ops,fuse-tir,schedule-kernels'

func.func @case(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = graph.relu %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
^9223372036854775807:
}

