// RUN: fusion-opt %s -p 'normalize-kernels{vector-rows=true}' | filecheck %s
// RUN: fusion-opt %s -p normalize-kernels | filecheck %s --check-prefix=OFF

// A 1x6 @ 6x16 matrix-vector product, launched with a constant B by @main (a weight) and
// with B passed at run time by @main_arg. With `vector-rows`, the row loop of one iteration
// of the weight's kernel stays (schedule-contractions then tiles it as a row of one over a
// panel packed at load time); the other kernel's is inlined as always, and so are both
// without the option, and the batch loop of the elementwise kernel.

loop.func @mv(%a: memref<1x6xf32>, %b: memref<6x16xf32>) outs(%c: memref<1x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %c1 step %c1 {
    loop.for %j = %c0 to %c16 step %c1 {
      memref.store %zero, %c[%i, %j] : memref<1x16xf32>
      loop.for %k = %c0 to %c6 step %c1 {
        %x = memref.load %a[%i, %k] : memref<1x6xf32>
        %y = memref.load %b[%k, %j] : memref<6x16xf32>
        %p = arith.mulf %x, %y fastmath<contract> : f32
        %o = memref.load %c[%i, %j] : memref<1x16xf32>
        %s = arith.addf %o, %p fastmath<contract> : f32
        memref.store %s, %c[%i, %j] : memref<1x16xf32>
      }
    }
  }
  loop.return
}
loop.func @mv_arg(%a: memref<1x6xf32>, %b: memref<6x16xf32>) outs(%c: memref<1x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %c1 step %c1 {
    loop.for %j = %c0 to %c16 step %c1 {
      memref.store %zero, %c[%i, %j] : memref<1x16xf32>
      loop.for %k = %c0 to %c6 step %c1 {
        %x = memref.load %a[%i, %k] : memref<1x6xf32>
        %y = memref.load %b[%k, %j] : memref<6x16xf32>
        %p = arith.mulf %x, %y fastmath<contract> : f32
        %o = memref.load %c[%i, %j] : memref<1x16xf32>
        %s = arith.addf %o, %p fastmath<contract> : f32
        memref.store %s, %c[%i, %j] : memref<1x16xf32>
      }
    }
  }
  loop.return
}
loop.func @relu(%x: memref<1x16xf32>) outs(%y: memref<1x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  loop.for %n = %c0 to %c1 step %c1 {
    loop.for %j = %c0 to %c16 step %c1 {
      %v = memref.load %x[%n, %j] : memref<1x16xf32>
      %r = arith.maximumf %v, %zero : f32
      memref.store %r, %y[%n, %j] : memref<1x16xf32>
    }
  }
  loop.return
}
func.func @main(%x: tensor<1x6xf32>, %v: tensor<6x16xf32>) -> (tensor<1x16xf32>, tensor<1x16xf32>) {
  %w = graph.constant dense<0.5> : tensor<6x16xf32>
  %y = graph.call_loop @mv(%x, %w) : (tensor<1x6xf32>, tensor<6x16xf32>) -> tensor<1x16xf32>
  %r = graph.call_loop @relu(%y) : (tensor<1x16xf32>) -> tensor<1x16xf32>
  %z = graph.call_loop @mv_arg(%x, %v) : (tensor<1x6xf32>, tensor<6x16xf32>) -> tensor<1x16xf32>
  func.return %r, %z : tensor<1x16xf32>, tensor<1x16xf32>
}

// CHECK-LABEL: loop.func @mv(
// CHECK:         loop.for %[[I:.*]] = %c0 to %c1 step %c1 {
// CHECK-NEXT:      loop.for %[[J:.*]] = %c0 to %c16 step %c1 {
// CHECK-NEXT:        memref.store %zero, %c[%[[I]], %[[J]]]
// CHECK-LABEL: loop.func @mv_arg(
// CHECK-NOT:     to %c1 step
// CHECK:         loop.for %[[J:.*]] = %c0 to %c16 step %c1 {
// CHECK-NEXT:      memref.store %zero, %c[%c0, %[[J]]]
// CHECK-LABEL: loop.func @relu(
// CHECK-NOT:     to %c1 step
// CHECK:         loop.return

// OFF-LABEL: loop.func @mv(
// OFF-NOT:     to %c1 step
// OFF:         memref.store %zero, %c[%c0,
// OFF-LABEL: loop.func @mv_arg(
// OFF-NOT:     to %c1 step
// OFF-LABEL: loop.func @relu(
