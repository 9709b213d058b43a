// RUN: fusion-opt %s --split-input-file -p fuse-ops | filecheck %s

loop.func @add(%a: memref<4xf32>, %b: memref<4xf32>) outs(%c: memref<4xf32>) pattern elemwise {}
loop.func @relu(%a: memref<4xf32>) outs(%c: memref<4xf32>) pattern elemwise {}
loop.func @add_1(%a: memref<8xf32>, %b: memref<8xf32>) outs(%c: memref<8xf32>) pattern elemwise {}
loop.func @relu_1(%a: memref<8xf32>) outs(%c: memref<8xf32>) pattern elemwise {}
func.func @first(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = graph.call_loop @add(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r = graph.call_loop @relu(%a) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
func.func @second(%x: tensor<4xf32>, %y: tensor<8xf32>) -> (tensor<4xf32>, tensor<8xf32>) {
  %a = graph.call_loop @add(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r = graph.call_loop @relu(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %b = graph.call_loop @add_1(%y, %y) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s = graph.call_loop @relu_1(%b) : (tensor<8xf32>) -> tensor<8xf32>
  func.return %r, %s : tensor<4xf32>, tensor<8xf32>
}

// Every function of the module is fused; identical groups share one function, and a different
// group with the same member names gets a numeric suffix.
// CHECK:       func.func private @fused_add_relu(%{{.*}}: tensor<4xf32>)
// CHECK-LABEL: func.func @first(
// CHECK-NEXT:    func.call @fused_add_relu(
// CHECK:       func.func private @fused_add_relu_1(%{{.*}}: tensor<8xf32>)
// CHECK-LABEL: func.func @second(
// CHECK-NEXT:    func.call @fused_add_relu(
// CHECK-NEXT:    func.call @fused_add_relu_1(

// -----

loop.func @add(%a: memref<4xf32>, %b: memref<4xf32>) outs(%c: memref<4xf32>) pattern elemwise {}
loop.func @relu(%a: memref<4xf32>) outs(%c: memref<4xf32>) pattern elemwise {}
func.func @dead_group(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = graph.call_loop @add(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r = graph.call_loop @relu(%a) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %x : tensor<4xf32>
}

// A group none of whose results is used is removed.
// CHECK-LABEL: func.func @dead_group(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    func.return %[[X]]

// -----

loop.func @neg(%a: memref<4xf32>) outs(%c: memref<4xf32>) pattern elemwise {}
func.func @long_name(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.call_loop @neg(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = graph.call_loop @neg(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = graph.call_loop @neg(%1) : (tensor<4xf32>) -> tensor<4xf32>
  %3 = graph.call_loop @neg(%2) : (tensor<4xf32>) -> tensor<4xf32>
  %4 = graph.call_loop @neg(%3) : (tensor<4xf32>) -> tensor<4xf32>
  %5 = graph.call_loop @neg(%4) : (tensor<4xf32>) -> tensor<4xf32>
  %6 = graph.call_loop @neg(%5) : (tensor<4xf32>) -> tensor<4xf32>
  %7 = graph.call_loop @neg(%6) : (tensor<4xf32>) -> tensor<4xf32>
  %8 = graph.call_loop @neg(%7) : (tensor<4xf32>) -> tensor<4xf32>
  %9 = graph.call_loop @neg(%8) : (tensor<4xf32>) -> tensor<4xf32>
  %10 = graph.call_loop @neg(%9) : (tensor<4xf32>) -> tensor<4xf32>
  %11 = graph.call_loop @neg(%10) : (tensor<4xf32>) -> tensor<4xf32>
  %12 = graph.call_loop @neg(%11) : (tensor<4xf32>) -> tensor<4xf32>
  %13 = graph.call_loop @neg(%12) : (tensor<4xf32>) -> tensor<4xf32>
  %14 = graph.call_loop @neg(%13) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %14 : tensor<4xf32>
}

// Names longer than 64 characters are cut and end in a stable hash of the full name.
// CHECK: func.func private @fused_neg_neg_neg_neg_neg_neg_neg_neg_neg_neg_neg_neg_n_{{[0-9a-f]+}}(
