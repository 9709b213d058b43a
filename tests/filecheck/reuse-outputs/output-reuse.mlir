// RUN: fusion-opt %s --split-input-file -p 'reuse-outputs' | filecheck %s

// A matmul, a bias add and a relu: the relu stores the output at the element it reads, so the
// bias add's buffer becomes the output; then the bias add does, so the matmul accumulates
// straight into the output. No local buffer is left.

loop.func @matmul_bias_relu(%a: memref<4x6xf32>, %b: memref<6x8xf32>, %bias: memref<8xf32>) outs(%y: memref<4x8xf32>) {
  %mm = loop.alloc : memref<4x8xf32>
  %biased = loop.alloc : memref<4x8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %c4 step %c1 {
    loop.for %j = %c0 to %c8 step %c1 {
      memref.store %zero, %mm[%i, %j] : memref<4x8xf32>
      loop.for %k = %c0 to %c6 step %c1 {
        %x = memref.load %a[%i, %k] : memref<4x6xf32>
        %w = memref.load %b[%k, %j] : memref<6x8xf32>
        %p = arith.mulf %x, %w : f32
        %o = memref.load %mm[%i, %j] : memref<4x8xf32>
        %s = arith.addf %o, %p : f32
        memref.store %s, %mm[%i, %j] : memref<4x8xf32>
      }
    }
  }
  loop.for %i = %c0 to %c4 step %c1 {
    loop.for %j = %c0 to %c8 step %c1 {
      %v = memref.load %mm[%i, %j] : memref<4x8xf32>
      %c = memref.load %bias[%j] : memref<8xf32>
      %s = arith.addf %v, %c : f32
      memref.store %s, %biased[%i, %j] : memref<4x8xf32>
    }
  }
  loop.for %i = %c0 to %c4 step %c1 {
    loop.for %j = %c0 to %c8 step %c1 {
      %v = memref.load %biased[%i, %j] : memref<4x8xf32>
      %r = arith.maximumf %v, %zero : f32
      memref.store %r, %y[%i, %j] : memref<4x8xf32>
    }
  }
}

// CHECK-LABEL: loop.func @matmul_bias_relu
// CHECK-NOT:     loop.alloc
// CHECK:         memref.store %zero, %y[
// CHECK:         %[[O:.*]] = memref.load %y[%[[I:.*]], %[[J:.*]]]
// CHECK:         memref.store %{{.*}}, %y[%[[I]], %[[J]]]
// CHECK:         %[[V:.*]] = memref.load %y[%[[I2:.*]], %[[J2:.*]]]
// CHECK:         memref.store %{{.*}}, %y[%[[I2]], %[[J2]]]
// CHECK:         %[[V3:.*]] = memref.load %y[%[[I3:.*]], %[[J3:.*]]]
// CHECK-NEXT:    %{{.*}} = arith.maximumf %[[V3]], %zero
// CHECK-NEXT:    memref.store %{{.*}}, %y[%[[I3]], %[[J3]]]

// -----

// A transposing reader: iteration (i, j) reads element (j, i) but writes (i, j), which a later
// iteration still has to read. The buffer stays.

loop.func @transpose_exp(%x: memref<4x4xf32>) outs(%y: memref<4x4xf32>) {
  %t = loop.alloc : memref<4x4xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 {
    loop.for %j = %c0 to %c4 step %c1 {
      %v = memref.load %x[%i, %j] : memref<4x4xf32>
      %e = math.exp %v : f32
      memref.store %e, %t[%i, %j] : memref<4x4xf32>
    }
  }
  loop.for %i = %c0 to %c4 step %c1 {
    loop.for %j = %c0 to %c4 step %c1 {
      %v = memref.load %t[%j, %i] : memref<4x4xf32>
      memref.store %v, %y[%i, %j] : memref<4x4xf32>
    }
  }
}

// CHECK-LABEL: loop.func @transpose_exp
// CHECK:         %t = loop.alloc : memref<4x4xf32>

// -----

// The buffer is read again after the nest that writes the output `%y` (by a nest that writes
// an output of another type): it stays.

loop.func @read_after(%x: memref<8xf32>) outs(%y: memref<8xf32>, %z: memref<4xf32>) {
  %t = loop.alloc : memref<8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  loop.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %x[%i] : memref<8xf32>
    %e = math.exp %v : f32
    memref.store %e, %t[%i] : memref<8xf32>
  }
  loop.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %t[%i] : memref<8xf32>
    %n = arith.negf %v : f32
    memref.store %n, %y[%i] : memref<8xf32>
  }
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %t[%i] : memref<8xf32>
    %a = math.absf %v : f32
    memref.store %a, %z[%i] : memref<4xf32>
  }
}

// CHECK-LABEL: loop.func @read_after
// CHECK:         %t = loop.alloc : memref<8xf32>
// CHECK-NOT:     loop.alloc
// CHECK:         memref.load %t
// CHECK:         memref.load %t

// -----

// The output is stored in every iteration of `k` (not one element per iteration): a later
// iteration would read the value an earlier one stored. The buffer stays.

loop.func @stored_repeatedly(%x: memref<4xf32>, %s: memref<3xf32>) outs(%y: memref<4xf32>) {
  %t = loop.alloc : memref<4xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %x[%i] : memref<4xf32>
    %e = math.exp %v : f32
    memref.store %e, %t[%i] : memref<4xf32>
  }
  loop.for %i = %c0 to %c4 step %c1 {
    loop.for %k = %c0 to %c3 step %c1 {
      %v = memref.load %t[%i] : memref<4xf32>
      %w = memref.load %s[%k] : memref<3xf32>
      %a = arith.addf %v, %w : f32
      memref.store %a, %y[%i] : memref<4xf32>
    }
  }
}

// CHECK-LABEL: loop.func @stored_repeatedly
// CHECK:         %t = loop.alloc : memref<4xf32>

// -----

// A buffer of another type than the output is never the output.

loop.func @other_shape(%x: memref<8xf32>) outs(%y: memref<2x4xf32>) {
  %t = loop.alloc : memref<8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  loop.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %x[%i] : memref<8xf32>
    %e = math.exp %v : f32
    memref.store %e, %t[%i] : memref<8xf32>
  }
  loop.for %i = %c0 to %c2 step %c1 {
    loop.for %j = %c0 to %c4 step %c1 {
      %r = arith.muli %i, %c4 : index
      %f = arith.addi %r, %j : index
      %v = memref.load %t[%f] : memref<8xf32>
      memref.store %v, %y[%i, %j] : memref<2x4xf32>
    }
  }
}

// CHECK-LABEL: loop.func @other_shape
// CHECK:         %t = loop.alloc : memref<8xf32>

// -----

// Constant subscripts (a unit dimension whose loop was removed) do not matter: each iteration
// still stores its own element.

loop.func @unit_dim(%x: memref<1x8xf32>) outs(%y: memref<1x8xf32>) {
  %t = loop.alloc : memref<1x8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  loop.for %j = %c0 to %c8 step %c1 {
    %v = memref.load %x[%c0, %j] : memref<1x8xf32>
    %e = math.exp %v : f32
    memref.store %e, %t[%c0, %j] : memref<1x8xf32>
  }
  loop.for %j = %c0 to %c8 step %c1 {
    %v = memref.load %t[%c0, %j] : memref<1x8xf32>
    %n = arith.negf %v : f32
    memref.store %n, %y[%c0, %j] : memref<1x8xf32>
  }
}

// CHECK-LABEL: loop.func @unit_dim
// CHECK-NOT:     loop.alloc
// CHECK:         memref.store %{{.*}}, %y[%c0, %{{.*}}]
// CHECK:         memref.load %y[%c0, %{{.*}}]
