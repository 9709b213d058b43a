// RUN: fusion-opt %s --split-input-file -p lower-graph | filecheck %s

// Concats in place (`lowering/in_place.py`): the operands of a concat (a kernel legalize-ops
// marks with `fusion.concat_axis`) become views of their runs of its buffer, and the concat's
// launch is dropped. Nested concats add their offsets: %a, %b (the parts of %c) and %d (with
// %c, the parts of %e) all live in %e's slot, which is alive from %a's launch to the last.
// The concat kernels, launched nowhere any more, are erased (nothing compiles them).
loop.func @neg(%a: memref<1x2x3xf32>) outs(%b: memref<1x2x3xf32>) {}
loop.func @head(%a: memref<1x4x3xf32>) outs(%b: memref<1x2x3xf32>) {}
loop.func @tail(%a: memref<1x6x3xf32>) outs(%b: memref<1x6x3xf32>) {}
loop.func @cat(%a: memref<1x2x3xf32>, %b: memref<1x2x3xf32>) outs(%c: memref<1x4x3xf32>) attributes {fusion.concat_axis = 1 : i64} {}
loop.func @cat2(%a: memref<1x4x3xf32>, %b: memref<1x2x3xf32>) outs(%c: memref<1x6x3xf32>) attributes {fusion.concat_axis = 1 : i64} {}
func.func @main(%x: tensor<1x2x3xf32>) -> tensor<1x6x3xf32> {
  %a = graph.call_loop @neg(%x) : (tensor<1x2x3xf32>) -> tensor<1x2x3xf32>
  %b = graph.call_loop @neg(%a) : (tensor<1x2x3xf32>) -> tensor<1x2x3xf32>
  %c = graph.call_loop @cat(%a, %b) : (tensor<1x2x3xf32>, tensor<1x2x3xf32>) -> tensor<1x4x3xf32>
  %d = graph.call_loop @head(%c) : (tensor<1x4x3xf32>) -> tensor<1x2x3xf32>
  %e = graph.call_loop @cat2(%c, %d) : (tensor<1x4x3xf32>, tensor<1x2x3xf32>) -> tensor<1x6x3xf32>
  %f = graph.call_loop @tail(%e) : (tensor<1x6x3xf32>) -> tensor<1x6x3xf32>
  func.return %f : tensor<1x6x3xf32>
}

// CHECK:       loop.func @tail(
// CHECK-NOT:   loop.func @cat
// CHECK-LABEL: loop.func @main(
// CHECK-NEXT:    %[[SLOT:.*]] = loop.alloc {fusion.kept} : memref<18xf32>
// CHECK-NEXT:    %[[A:.*]] = loop.view %[[SLOT]] : memref<18xf32> to memref<1x2x3xf32>
// CHECK-NEXT:    %[[B:.*]] = loop.view %[[SLOT]][6] : memref<18xf32> to memref<1x2x3xf32>
// CHECK-NEXT:    %[[C:.*]] = loop.view %[[SLOT]] : memref<18xf32> to memref<1x4x3xf32>
// CHECK-NEXT:    %[[D:.*]] = loop.view %[[SLOT]][12] : memref<18xf32> to memref<1x2x3xf32>
// CHECK-NEXT:    %[[E:.*]] = loop.view %[[SLOT]] : memref<18xf32> to memref<1x6x3xf32>
// CHECK-NEXT:    loop.call @neg(%x, %[[A]])
// CHECK-NEXT:    loop.call @neg(%[[A]], %[[B]])
// CHECK-NEXT:    loop.call @head(%[[C]], %[[D]])
// CHECK-NEXT:    loop.call @tail(%[[E]], %{{.*}})
// CHECK-NEXT:    loop.return

// -----

// A concat into a returned value writes its parts into the output buffer.
loop.func @neg(%a: memref<1x2x3xf32>) outs(%b: memref<1x2x3xf32>) {}
loop.func @cat(%a: memref<1x2x3xf32>, %b: memref<1x2x3xf32>) outs(%c: memref<1x4x3xf32>) attributes {fusion.concat_axis = 1 : i64} {}
func.func @main(%x: tensor<1x2x3xf32>) -> tensor<1x4x3xf32> {
  %a = graph.call_loop @neg(%x) : (tensor<1x2x3xf32>) -> tensor<1x2x3xf32>
  %b = graph.call_loop @neg(%a) : (tensor<1x2x3xf32>) -> tensor<1x2x3xf32>
  %c = graph.call_loop @cat(%a, %b) : (tensor<1x2x3xf32>, tensor<1x2x3xf32>) -> tensor<1x4x3xf32>
  func.return %c : tensor<1x4x3xf32>
}

// CHECK-LABEL: loop.func @main(
// CHECK-SAME:      outs(%[[C:.*]]: memref<1x4x3xf32>)
// CHECK-NEXT:    %[[A:.*]] = loop.view %[[C]] : memref<1x4x3xf32> to memref<1x2x3xf32>
// CHECK-NEXT:    %[[B:.*]] = loop.view %[[C]][6] : memref<1x4x3xf32> to memref<1x2x3xf32>
// CHECK-NEXT:    loop.call @neg(%x, %[[A]])
// CHECK-NEXT:    loop.call @neg(%[[A]], %[[B]])
// CHECK-NEXT:    loop.return

// -----

// The concat keeps its launch when an operand has a buffer of its own (an argument here; a
// bound constant or a returned value alike), appears twice, or when the parts are not
// contiguous runs (a dimension before the axis is not 1).
loop.func @neg(%a: memref<1x2x3xf32>) outs(%b: memref<1x2x3xf32>) {}
loop.func @cat(%a: memref<1x2x3xf32>, %b: memref<1x2x3xf32>) outs(%c: memref<1x4x3xf32>) attributes {fusion.concat_axis = 1 : i64} {}
loop.func @cat3(%a: memref<1x2x3xf32>, %b: memref<1x2x3xf32>) outs(%c: memref<1x2x6xf32>) attributes {fusion.concat_axis = 2 : i64} {}
func.func @main(%x: tensor<1x2x3xf32>) -> (tensor<1x4x3xf32>, tensor<1x4x3xf32>, tensor<1x2x6xf32>) {
  %a = graph.call_loop @neg(%x) : (tensor<1x2x3xf32>) -> tensor<1x2x3xf32>
  %b = graph.call_loop @neg(%a) : (tensor<1x2x3xf32>) -> tensor<1x2x3xf32>
  %c = graph.call_loop @cat(%x, %a) : (tensor<1x2x3xf32>, tensor<1x2x3xf32>) -> tensor<1x4x3xf32>
  %d = graph.call_loop @cat(%b, %b) : (tensor<1x2x3xf32>, tensor<1x2x3xf32>) -> tensor<1x4x3xf32>
  %e = graph.call_loop @cat3(%a, %b) : (tensor<1x2x3xf32>, tensor<1x2x3xf32>) -> tensor<1x2x6xf32>
  func.return %c, %d, %e : tensor<1x4x3xf32>, tensor<1x4x3xf32>, tensor<1x2x6xf32>
}

// CHECK:       loop.func @cat(
// CHECK:       loop.func @cat3(
// CHECK-LABEL: loop.func @main(
// CHECK-NOT:     loop.view %{{.*}}[
// CHECK:         loop.call @cat(%x, %{{.*}}, %c)
// CHECK-NEXT:    loop.call @cat(%[[B:.*]], %[[B]], %d)
// CHECK-NEXT:    loop.call @cat3(
// CHECK-NEXT:    loop.return

// -----

// A concat kernel written in place by one function but launched by another is kept.
loop.func @neg(%a: memref<1x2x3xf32>) outs(%b: memref<1x2x3xf32>) {}
loop.func @cat(%a: memref<1x2x3xf32>, %b: memref<1x2x3xf32>) outs(%c: memref<1x4x3xf32>) attributes {fusion.concat_axis = 1 : i64} {}
func.func @in_place(%x: tensor<1x2x3xf32>) -> tensor<1x4x3xf32> {
  %a = graph.call_loop @neg(%x) : (tensor<1x2x3xf32>) -> tensor<1x2x3xf32>
  %b = graph.call_loop @neg(%a) : (tensor<1x2x3xf32>) -> tensor<1x2x3xf32>
  %c = graph.call_loop @cat(%a, %b) : (tensor<1x2x3xf32>, tensor<1x2x3xf32>) -> tensor<1x4x3xf32>
  func.return %c : tensor<1x4x3xf32>
}
func.func @launched(%x: tensor<1x2x3xf32>) -> tensor<1x4x3xf32> {
  %a = graph.call_loop @neg(%x) : (tensor<1x2x3xf32>) -> tensor<1x2x3xf32>
  %c = graph.call_loop @cat(%x, %a) : (tensor<1x2x3xf32>, tensor<1x2x3xf32>) -> tensor<1x4x3xf32>
  func.return %c : tensor<1x4x3xf32>
}

// CHECK:       loop.func @cat(
// CHECK-LABEL: loop.func @in_place(
// CHECK-NOT:     loop.call @cat
// CHECK:         loop.return
// CHECK-LABEL: loop.func @launched(
// CHECK:         loop.call @cat(%x,
