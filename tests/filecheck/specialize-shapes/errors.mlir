// RUN: not fusion-opt %s -p 'specialize-shapes' 2>&1 | filecheck %s --check-prefix=NOSHAPE
// RUN: not fusion-opt %s -p 'specialize-shapes{shapes="y=3x16"}' 2>&1 | filecheck %s --check-prefix=NONAME
// RUN: not fusion-opt %s -p 'specialize-shapes{shapes="x=3x17"}' 2>&1 | filecheck %s --check-prefix=STATIC
// RUN: not fusion-opt %s -p 'specialize-shapes{shapes="x=3x16x1"}' 2>&1 | filecheck %s --check-prefix=RANK
// RUN: not fusion-opt %s -p 'specialize-shapes{shapes="x=3xa"}' 2>&1 | filecheck %s --check-prefix=SYNTAX
// RUN: not fusion-opt %s -p 'specialize-shapes{shapes="x=5x16"}' 2>&1 | filecheck %s --check-prefix=RULE
// RUN: not fusion-opt %s -p 'legalize-ops' 2>&1 | filecheck %s --check-prefix=UNSPECIALISED

// The model only accepts inputs of 4 rows (its reshape to 2x32 says so): a shape that
// violates that is an error at the op, naming both shapes. Every other mistake names the
// argument; the fusion pipeline refuses a dynamic module, naming its dynamic argument.

func.func @main(%x: tensor<?x16xf32>) -> tensor<2x32xf32> {
  %r = graph.relu %x : tensor<?x16xf32>
  %y = graph.reshape %r : (tensor<?x16xf32>) -> tensor<2x32xf32>
  func.return %y : tensor<2x32xf32>
}

// NOSHAPE: errors.mlir:13:1: error: specialize-shapes: @main: argument %x has the dynamic type tensor<?x16xf32> and no shape was given (x=...)
// NONAME: error: specialize-shapes: @main has no argument 'y' (arguments: x)
// STATIC: error: specialize-shapes: @main: argument %x of type tensor<?x16xf32> cannot have the shape 3x17
// RANK: error: specialize-shapes: @main: argument %x of type tensor<?x16xf32> cannot have the shape 3x16x1
// SYNTAX: error: specialize-shapes: option 'shapes': 'x=3xa' is not NAME=DIMS (such as x=2x16, dimensions >= 0)
// RULE: errors.mlir:15:3: error: specialize-shapes: specialised shapes do not fit: graph.reshape: cannot reshape 5x16 (80 elements) to 2x32 (64 elements)
// UNSPECIALISED: errors.mlir:13:1: error: legalize-ops: @main: argument #0 (%x) has the dynamic type tensor<?x16xf32>; specialize its shapes first (specialize-shapes{shapes="x=..."}
