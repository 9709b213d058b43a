// RUN: not fusion-opt %s -p 'specialize-shapes{shapes="n=1"}' 2>&1 | filecheck %s

// A shape computed from the values of an argument (not from its shape) cannot be
// specialised on shapes: the range up to the value of %n stays dynamic, which is an error
// naming the op.

func.func @main(%n: tensor<1xi64>) -> tensor<?xi64> {
  %s = graph.squeeze %n {axes = array<i64: 0>} : (tensor<1xi64>) -> tensor<i64>
  %z = graph.constant dense<0> : tensor<i64>
  %d = graph.constant dense<1> : tensor<i64>
  %r = graph.dynamic_range %z, %s, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  func.return %r : tensor<?xi64>
}

// CHECK: data-dependent.mlir:11:3: error: specialize-shapes: the result shape of 'graph.dynamic_range' depends on the values of the arguments, not only on their shapes (not supported)
