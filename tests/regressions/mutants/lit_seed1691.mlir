// bench/fuzz.py lit-mutant seed 1691 of tests/filecheck/graph/invalid-positional.mlir: ['delete char 7', "replace ','->'18446744073709551616'"]
// fusion-opt -p 'fold-constants,legalize-ops,annotate-pattern,fuse-ops,fuse-tir,schedule-kernels'


func.func @case7(%x: tensor<4xi1>) -> tensor<4xi1> {
  %y = "graph.cumsum"(%x) <{axis = 0 : i6418446744073709551616 exclusive = false, reverse = false}> : (tensor<4xi1>) -> tensor<4xi1>
  func.return %y : tensor<4xi1>
}
