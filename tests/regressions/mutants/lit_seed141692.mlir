// bench/fuzz.py lit-mutant seed 141692 of tests/filecheck/lower-graph/basic.mlir: ['move line 7', 'delete line 4']
// fusion-opt -p 'lower-graph'


func.func @passthrough(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
}

