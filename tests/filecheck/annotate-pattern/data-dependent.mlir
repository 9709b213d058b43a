// Kernels of integer and boolean tensors, and subscripts computed from loaded values.
// RUN: fusion-opt %s --split-input-file -p annotate-pattern | filecheck %s

// A gather: the data subscript is computed from a loaded index, which only uses the store's
// variables (`data[idx[i], j]`): injective, as TVM classifies `take`.
// CHECK-LABEL: loop.func @gather(
// CHECK-SAME:  pattern injective {
loop.func @gather(%data: memref<10x8xf32>, %ids: memref<3xi64>) outs(%out: memref<3x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0 : i64
  %last = arith.constant 9 : i64
  loop.for %i = %c0 to %c3 step %c1 {
    loop.for %j = %c0 to %c8 step %c1 {
      %raw = memref.load %ids[%i] : memref<3xi64>
      %lo = arith.maxsi %raw, %zero : i64
      %in = arith.minsi %lo, %last : i64
      %idx = arith.index_cast %in : i64 to index
      %v = memref.load %data[%idx, %j] : memref<10x8xf32>
      memref.store %v, %out[%i, %j] : memref<3x8xf32>
    }
  }
  loop.return
}

// -----

// An index loaded at a variable the store does not use (a data-dependent reduction-like
// read): opaque.
// CHECK-LABEL: loop.func @indirect(
// CHECK-SAME:  pattern opaque {
loop.func @indirect(%data: memref<10xf32>, %ids: memref<3x4xi64>) outs(%out: memref<3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c3 step %c1 {
    loop.for %k = %c0 to %c4 step %c1 {
      %raw = memref.load %ids[%i, %k] : memref<3x4xi64>
      %idx = arith.index_cast %raw : i64 to index
      %v = memref.load %data[%idx] : memref<10xf32>
      memref.store %v, %out[%i] : memref<3xf32>
    }
  }
  loop.return
}

// -----

// A comparison (f32 in, i1 out) and a select of a broadcast scalar: elemwise.
// CHECK-LABEL: loop.func @mask(
// CHECK-SAME:  pattern elemwise {
loop.func @mask(%x: memref<4xf32>, %fill: memref<f32>) outs(%out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %x[%i] : memref<4xf32>
    %f = memref.load %fill[] : memref<f32>
    %p = arith.cmpf olt, %v, %zero : f32
    %s = arith.select %p, %f, %v : f32
    memref.store %s, %out[%i] : memref<4xf32>
  }
  loop.return
}
