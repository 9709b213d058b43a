// bench/fuzz.py lit-mutant seed 4724 of tests/filecheck/fuse-tir/invalid.mlir: ['cut at 173']
// fusion-opt -p 'fuse-tir'

loop.func @neg(%a: memref<4xf32>) outs(%c: memref<4xf32>) pattern elemwise {}
func.func private @fused_bad(%x: tensor<4xf32>) -> tensor<4xf32> attributes {graph.primitive} 