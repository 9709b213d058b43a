// RUN: fusion-opt %s --split-input-file -p 'fuse-loops,clean-up-kernels' | filecheck %s

// An elementwise chain: the nests fuse, the stored value replaces the load, the
// intermediate buffer disappears.

loop.func @chain(%a: memref<8xf32>) outs(%c: memref<8xf32>) {
  %t = loop.alloc : memref<8xf32>
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c1 = arith.constant 1 : index
  loop.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %a[%i] : memref<8xf32>
    %e = math.exp %x : f32
    memref.store %e, %t[%i] : memref<8xf32>
  }
  %zero = arith.constant 0.0 : f32
  loop.for %j = %c0 to %c8 step %c1 {
    %y = memref.load %t[%j] : memref<8xf32>
    %r = arith.maximumf %y, %zero : f32
    memref.store %r, %c[%j] : memref<8xf32>
  }
}

// CHECK-LABEL: loop.func @chain
// CHECK-NOT:     loop.alloc
// CHECK:         loop.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      %[[X:.*]] = memref.load %a[%[[I]]]
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[X]]
// CHECK-NEXT:      %[[R:.*]] = arith.maximumf %[[E]], %{{.*}}
// CHECK-NEXT:      memref.store %[[R]], %c[%[[I]]]
// CHECK-NEXT:    }
// CHECK-NOT:     loop.for

// -----

// A reduction with an epilogue: the epilogue runs right after the reduction loop, in the
// nest of the output element; the accumulator stays (its last value is read after a loop
// that writes it).

loop.func @sum_scale(%x: memref<4x8xf32>) outs(%y: memref<4xf32>) {
  %acc = loop.alloc : memref<4xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  loop.for %i = %c0 to %c4 step %c1 {
    memref.store %zero, %acc[%i] : memref<4xf32>
    loop.for %k = %c0 to %c8 step %c1 {
      %v = memref.load %x[%i, %k] : memref<4x8xf32>
      %o = memref.load %acc[%i] : memref<4xf32>
      %n = arith.addf %o, %v : f32
      memref.store %n, %acc[%i] : memref<4xf32>
    }
  }
  loop.for %j = %c0 to %c4 step %c1 {
    %s = memref.load %acc[%j] : memref<4xf32>
    %m = arith.mulf %s, %half : f32
    memref.store %m, %y[%j] : memref<4xf32>
  }
}

// CHECK-LABEL: loop.func @sum_scale
// CHECK:         %[[ACC:.*]] = loop.alloc : memref<4xf32>
// CHECK:         loop.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      memref.store %{{.*}}, %[[ACC]][%[[I]]]
// CHECK-NEXT:      loop.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           }
// CHECK-NEXT:      %[[S:.*]] = memref.load %[[ACC]][%[[I]]]
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[S]], %{{.*}}
// CHECK-NEXT:      memref.store %[[M]], %y[%[[I]]]
// CHECK-NEXT:    }
// CHECK-NOT:     loop.for

// -----

// The consumer reads a neighbouring element: fusing would read it before it is written.

loop.func @shifted(%a: memref<8xf32>) outs(%c: memref<8xf32>) {
  %t = loop.alloc : memref<8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  loop.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %a[%i] : memref<8xf32>
    %e = math.exp %x : f32
    memref.store %e, %t[%i] : memref<8xf32>
  }
  loop.for %j = %c0 to %c8 step %c1 {
    %j1 = arith.addi %j, %c1 : index
    %j2 = arith.minsi %j1, %c7 : index
    %y = memref.load %t[%j2] : memref<8xf32>
    memref.store %y, %c[%j] : memref<8xf32>
  }
}

// CHECK-LABEL: loop.func @shifted
// CHECK:         loop.alloc
// CHECK:         loop.for
// CHECK:           memref.store %{{.*}}, %t
// CHECK:         loop.for
// CHECK:           memref.load %t

// -----

// An init store between two loops moves above the first, so that the loops fuse.

loop.func @square_sum(%x: memref<8xf32>) outs(%e: memref<8xf32>, %s: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %x[%i] : memref<8xf32>
    %w = arith.mulf %v, %v : f32
    memref.store %w, %e[%i] : memref<8xf32>
  }
  memref.store %zero, %s[] : memref<f32>
  loop.for %k = %c0 to %c8 step %c1 {
    %v = memref.load %e[%k] : memref<8xf32>
    %o = memref.load %s[] : memref<f32>
    %n = arith.addf %o, %v : f32
    memref.store %n, %s[] : memref<f32>
  }
}

// CHECK-LABEL: loop.func @square_sum
// CHECK:         memref.store %{{.*}}, %s[]
// CHECK-NEXT:    loop.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           %[[W:.*]] = arith.mulf
// CHECK-NEXT:      memref.store %[[W]], %e[%[[I]]]
// CHECK-NEXT:      %[[O:.*]] = memref.load %s[]
// CHECK-NEXT:      %{{.*}} = arith.addf %[[O]], %[[W]]
// CHECK:         }
// CHECK-NOT:     loop.for

// -----

// Softmax's exp and sum: the rows fuse, but inside a row the vectorisable exp loop is not
// fused into the sum's reduction loop (which runs in order: the exp would go scalar).
// The sum reads the exponentials back.

loop.func @exp_row_sum(%x: memref<4x8xf32>) outs(%e: memref<4x8xf32>, %s: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %c4 step %c1 {
    loop.for %j = %c0 to %c8 step %c1 {
      %v = memref.load %x[%i, %j] : memref<4x8xf32>
      %ev = math.exp %v : f32
      memref.store %ev, %e[%i, %j] : memref<4x8xf32>
    }
  }
  loop.for %i = %c0 to %c4 step %c1 {
    memref.store %zero, %s[%i] : memref<4xf32>
    loop.for %k = %c0 to %c8 step %c1 {
      %v = memref.load %e[%i, %k] : memref<4x8xf32>
      %o = memref.load %s[%i] : memref<4xf32>
      %n = arith.addf %o, %v : f32
      memref.store %n, %s[%i] : memref<4xf32>
    }
  }
}

// CHECK-LABEL: loop.func @exp_row_sum
// CHECK:         loop.for %[[I:.*]] = %c0 to %c4 step %c1 {
// CHECK-NEXT:      loop.for %[[J:.*]] = %c0 to %c8 step %c1 {
// CHECK-NEXT:        %[[V:.*]] = memref.load %x[%[[I]], %[[J]]]
// CHECK-NEXT:        %[[EV:.*]] = math.exp %[[V]]
// CHECK-NEXT:        memref.store %[[EV]], %e[%[[I]], %[[J]]]
// CHECK-NEXT:      }
// CHECK-NEXT:      memref.store %zero, %s[%[[I]]]
// CHECK-NEXT:      loop.for %[[K:.*]] = %c0 to %c8 step %c1 {
// CHECK-NEXT:        %[[R:.*]] = memref.load %e[%[[I]], %[[K]]]
// CHECK:             memref.store %{{.*}}, %s[%[[I]]]
// CHECK-NEXT:      }
// CHECK-NEXT:    }

// -----

// A producer is not fused into a contraction nest after it, even where legal (both run
// over the batch `b` and slice `%t` by it): inside the producer's loop the contraction would
// not be a perfect nest, and schedule-contractions would leave its loops naive. Its epilogue
// is fused into it as usual.

loop.func @batched_matmul(%a: memref<2x4x8xf32>, %w: memref<8x8xf32>) outs(%y: memref<2x4x8xf32>) {
  %t = loop.alloc : memref<2x4x8xf32>
  %acc = loop.alloc : memref<2x4x8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  loop.for %b = %c0 to %c2 step %c1 {
    loop.for %i = %c0 to %c4 step %c1 {
      loop.for %k = %c0 to %c8 step %c1 {
        %x = memref.load %a[%b, %i, %k] : memref<2x4x8xf32>
        %r = arith.maximumf %x, %zero : f32
        memref.store %r, %t[%b, %i, %k] : memref<2x4x8xf32>
      }
    }
  }
  loop.for %b2 = %c0 to %c2 step %c1 {
    loop.for %i2 = %c0 to %c4 step %c1 {
      loop.for %j2 = %c0 to %c8 step %c1 {
        memref.store %zero, %acc[%b2, %i2, %j2] : memref<2x4x8xf32>
        loop.for %k2 = %c0 to %c8 step %c1 {
          %p = memref.load %t[%b2, %i2, %k2] : memref<2x4x8xf32>
          %q = memref.load %w[%k2, %j2] : memref<8x8xf32>
          %s = memref.load %acc[%b2, %i2, %j2] : memref<2x4x8xf32>
          %m = arith.mulf %p, %q : f32
          %n = arith.addf %s, %m : f32
          memref.store %n, %acc[%b2, %i2, %j2] : memref<2x4x8xf32>
        }
      }
    }
  }
  loop.for %b3 = %c0 to %c2 step %c1 {
    loop.for %i3 = %c0 to %c4 step %c1 {
      loop.for %j3 = %c0 to %c8 step %c1 {
        %v = memref.load %acc[%b3, %i3, %j3] : memref<2x4x8xf32>
        %e = arith.addf %v, %one : f32
        memref.store %e, %y[%b3, %i3, %j3] : memref<2x4x8xf32>
      }
    }
  }
}

// CHECK-LABEL: loop.func @batched_matmul
// CHECK:         loop.for %[[B:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      loop.for
// CHECK-NEXT:        loop.for
// CHECK-NEXT:          memref.load %a
// CHECK-NEXT:          arith.maximumf
// CHECK-NEXT:          memref.store %{{.*}}, %t
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.for %[[B2:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      loop.for %[[I2:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        loop.for %[[J2:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:          memref.store %{{.*}}, %acc[%[[B2]], %[[I2]], %[[J2]]]
// CHECK-NEXT:          loop.for
// CHECK:               }
// CHECK-NEXT:          %[[V:.*]] = memref.load %acc[%[[B2]], %[[I2]], %[[J2]]]
// CHECK-NEXT:          %[[E:.*]] = arith.addf %[[V]], %{{.*}}
// CHECK-NEXT:          memref.store %[[E]], %y[%[[B2]], %[[I2]], %[[J2]]]
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NOT:     loop.for
