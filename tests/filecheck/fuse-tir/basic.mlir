// RUN: fusion-opt %s --split-input-file -p fuse-tir | filecheck %s

loop.func @add(%a: memref<4xf32>, %b: memref<4xf32>) outs(%c: memref<4xf32>) pattern elemwise {
  %lo = arith.constant 0 : index
  %hi = arith.constant 4 : index
  %one = arith.constant 1 : index
  loop.for %i = %lo to %hi step %one {
    %x = memref.load %a[%i] : memref<4xf32>
    %y = memref.load %b[%i] : memref<4xf32>
    %s = arith.addf %x, %y : f32
    memref.store %s, %c[%i] : memref<4xf32>
  }
}
loop.func @relu(%a: memref<4xf32>) outs(%c: memref<4xf32>) pattern elemwise {
  %lo = arith.constant 0 : index
  %hi = arith.constant 4 : index
  %one = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  loop.for %i = %lo to %hi step %one {
    %x = memref.load %a[%i] : memref<4xf32>
    %r = arith.maximumf %x, %zero : f32
    memref.store %r, %c[%i] : memref<4xf32>
  }
}
func.func private @fused_add_relu(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> attributes {graph.primitive} {
  %sum = graph.call_loop @add(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r = graph.call_loop @relu(%sum) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %r = func.call @fused_add_relu(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r2 = func.call @fused_add_relu(%r, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %out = graph.call_loop @relu(%r2) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %out : tensor<4xf32>
}

// The member kernels' loop nests, in call order; the value passed between them becomes a
// kernel-local buffer; arguments are the inputs then the outputs.
// CHECK-NOT:   func.func private
// CHECK-LABEL: loop.func @fused_add_relu(
// CHECK-SAME:      %[[X:.*]]: memref<4xf32>, %[[Y:.*]]: memref<4xf32>) outs(%[[OUT:.*]]: memref<4xf32>) {
// CHECK-NEXT:    %[[SUM:.*]] = loop.alloc : memref<4xf32>
// CHECK:         loop.for
// CHECK:           memref.load %[[X]]
// CHECK:           memref.load %[[Y]]
// CHECK:           arith.addf
// CHECK:           memref.store %{{.*}}, %[[SUM]]
// CHECK:         loop.for
// CHECK:           memref.load %[[SUM]]
// CHECK:           arith.maximumf
// CHECK:           memref.store %{{.*}}, %[[OUT]]
// CHECK:         loop.return
// A kernel still called outside any group stays; @add is no longer called and is removed.
// CHECK-NOT:   loop.func @add(
// CHECK-LABEL: func.func @main(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[R:.*]] = graph.call_loop @fused_add_relu(%[[X]], %[[Y]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[R2:.*]] = graph.call_loop @fused_add_relu(%[[R]], %[[Y]])
// CHECK-NEXT:    %[[OUT:.*]] = graph.call_loop @relu(%[[R2]])
// CHECK-NEXT:    func.return %[[OUT]]

// -----

loop.func @split(%a: memref<4xf32>) outs(%b: memref<2xf32>, %c: memref<2xf32>) pattern injective {
  %lo = arith.constant 0 : index
  %two = arith.constant 2 : index
  %one = arith.constant 1 : index
  loop.for %i = %lo to %two step %one {
    %x = memref.load %a[%i] : memref<4xf32>
    memref.store %x, %b[%i] : memref<2xf32>
  }
  loop.for %i = %lo to %two step %one {
    %j = arith.addi %i, %two : index
    %x = memref.load %a[%j] : memref<4xf32>
    memref.store %x, %c[%i] : memref<2xf32>
  }
}
func.func private @fused_split(%x: tensor<4xf32>) -> (tensor<2xf32>, tensor<2xf32>) attributes {graph.primitive} {
  %lo, %hi = graph.call_loop @split(%x) : (tensor<4xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  func.return %hi, %lo : tensor<2xf32>, tensor<2xf32>
}
func.func @two_results(%x: tensor<4xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %a, %b = func.call @fused_split(%x) : (tensor<4xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  func.return %a, %b : tensor<2xf32>, tensor<2xf32>
}

// Each result of the primitive function is an output buffer, in return order.
// CHECK-LABEL: loop.func @fused_split(
// CHECK-SAME:      %{{.*}}: memref<4xf32>) outs(%[[HI:.*]]: memref<2xf32>, %[[LO:.*]]: memref<2xf32>)
// CHECK-NOT:     loop.alloc
// CHECK:         memref.store %{{.*}}, %[[LO]]
// CHECK:         memref.store %{{.*}}, %[[HI]]
// CHECK-LABEL: func.func @two_results(
// CHECK-NEXT:    graph.call_loop @fused_split(%{{.*}}) : (tensor<4xf32>) -> (tensor<2xf32>, tensor<2xf32>)
