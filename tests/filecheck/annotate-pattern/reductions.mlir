// Kernels with reduction loops (loops whose variable the store does not use).
// RUN: fusion-opt %s --split-input-file -p annotate-pattern | filecheck %s

// Init store, then `out[i] = out[i] + x[i, k]` over %k: comm_reduce.
// CHECK-LABEL: loop.func @row_sum(
// CHECK-SAME:  pattern comm_reduce {
loop.func @row_sum(%x: memref<2x3xf32>) outs(%y: memref<2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.000000e+00 : f32
  loop.for %i = %c0 to %c2 step %c1 {
    memref.store %zero, %y[%i] : memref<2xf32>
    loop.for %k = %c0 to %c3 step %c1 {
      %old = memref.load %y[%i] : memref<2xf32>
      %v = memref.load %x[%i, %k] : memref<2x3xf32>
      %new = arith.addf %old, %v : f32
      memref.store %new, %y[%i] : memref<2xf32>
    }
  }
  loop.return
}

// -----

// `C[i, j] = C[i, j] + A[i, k] * B[k, j]`, A missing %j and B missing %i: out_ewise_fusable.
// CHECK-LABEL: loop.func @matmul(
// CHECK-SAME:  pattern out_ewise_fusable {
loop.func @matmul(%a: memref<2x3xf32>, %b: memref<3x4xf32>) outs(%c: memref<2x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.000000e+00 : f32
  loop.for %i = %c0 to %c2 step %c1 {
    loop.for %j = %c0 to %c4 step %c1 {
      memref.store %zero, %c[%i, %j] : memref<2x4xf32>
      loop.for %k = %c0 to %c3 step %c1 {
        %old = memref.load %c[%i, %j] : memref<2x4xf32>
        %va = memref.load %a[%i, %k] : memref<2x3xf32>
        %vb = memref.load %b[%k, %j] : memref<3x4xf32>
        %p = arith.mulf %va, %vb : f32
        %new = arith.addf %old, %p : f32
        memref.store %new, %c[%i, %j] : memref<2x4xf32>
      }
    }
  }
  loop.return
}

// -----

// A stride-2 convolution: the input is read at `y*2 + ky`, a window expression: out_ewise_fusable.
// CHECK-LABEL: loop.func @conv2d(
// CHECK-SAME:  pattern out_ewise_fusable {
loop.func @conv2d(%in: memref<1x2x5x5xf32>, %w: memref<4x2x3x3xf32>) outs(%out: memref<1x4x2x2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.000000e+00 : f32
  loop.for %n = %c0 to %c1 step %c1 {
    loop.for %f = %c0 to %c4 step %c1 {
      loop.for %y = %c0 to %c2 step %c1 {
        loop.for %x = %c0 to %c2 step %c1 {
          memref.store %zero, %out[%n, %f, %y, %x] : memref<1x4x2x2xf32>
          loop.for %c = %c0 to %c2 step %c1 {
            loop.for %ky = %c0 to %c3 step %c1 {
              loop.for %kx = %c0 to %c3 step %c1 {
                %ys = arith.muli %y, %c2 : index
                %iy = arith.addi %ys, %ky : index
                %xs = arith.muli %x, %c2 : index
                %ix = arith.addi %xs, %kx : index
                %old = memref.load %out[%n, %f, %y, %x] : memref<1x4x2x2xf32>
                %vi = memref.load %in[%n, %c, %iy, %ix] : memref<1x2x5x5xf32>
                %vw = memref.load %w[%f, %c, %ky, %kx] : memref<4x2x3x3xf32>
                %p = arith.mulf %vi, %vw : f32
                %new = arith.addf %old, %p : f32
                memref.store %new, %out[%n, %f, %y, %x] : memref<1x4x2x2xf32>
              }
            }
          }
        }
      }
    }
  }
  loop.return
}

// -----

// A max reduction over a 2x2 window (not a multiply-add): the window expression makes it
// out_ewise_fusable rather than comm_reduce.
// CHECK-LABEL: loop.func @max_pool2d(
// CHECK-SAME:  pattern out_ewise_fusable {
loop.func @max_pool2d(%in: memref<1x1x4x4xf32>) outs(%out: memref<1x1x2x2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %ninf = arith.constant 0xFF800000 : f32
  loop.for %n = %c0 to %c1 step %c1 {
    loop.for %c = %c0 to %c1 step %c1 {
      loop.for %y = %c0 to %c2 step %c1 {
        loop.for %x = %c0 to %c2 step %c1 {
          memref.store %ninf, %out[%n, %c, %y, %x] : memref<1x1x2x2xf32>
          loop.for %ky = %c0 to %c2 step %c1 {
            loop.for %kx = %c0 to %c2 step %c1 {
              %ys = arith.muli %y, %c2 : index
              %iy = arith.addi %ys, %ky : index
              %xs = arith.muli %x, %c2 : index
              %ix = arith.addi %xs, %kx : index
              %old = memref.load %out[%n, %c, %y, %x] : memref<1x1x2x2xf32>
              %v = memref.load %in[%n, %c, %iy, %ix] : memref<1x1x4x4xf32>
              %new = arith.maximumf %old, %v : f32
              memref.store %new, %out[%n, %c, %y, %x] : memref<1x1x2x2xf32>
            }
          }
        }
      }
    }
  }
  loop.return
}

// -----

// TVM's four softmax blocks: max (local), exp(x - max) (local), sum (local), divide (output).
// The output block after the reductions makes the kernel out_ewise_fusable.
// CHECK-LABEL: loop.func @softmax(
// CHECK-SAME:  pattern out_ewise_fusable {
loop.func @softmax(%x: memref<2x3xf32>) outs(%y: memref<2x3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %max = loop.alloc : memref<2xf32>
  %exp = loop.alloc : memref<2x3xf32>
  %sum = loop.alloc : memref<2xf32>
  loop.for %i = %c0 to %c2 step %c1 {
    memref.store %ninf, %max[%i] : memref<2xf32>
    loop.for %k = %c0 to %c3 step %c1 {
      %old = memref.load %max[%i] : memref<2xf32>
      %v = memref.load %x[%i, %k] : memref<2x3xf32>
      %new = arith.maximumf %old, %v : f32
      memref.store %new, %max[%i] : memref<2xf32>
    }
  }
  loop.for %i = %c0 to %c2 step %c1 {
    loop.for %j = %c0 to %c3 step %c1 {
      %v = memref.load %x[%i, %j] : memref<2x3xf32>
      %m = memref.load %max[%i] : memref<2xf32>
      %d = arith.subf %v, %m : f32
      %e = math.exp %d : f32
      memref.store %e, %exp[%i, %j] : memref<2x3xf32>
    }
  }
  loop.for %i = %c0 to %c2 step %c1 {
    memref.store %zero, %sum[%i] : memref<2xf32>
    loop.for %k = %c0 to %c3 step %c1 {
      %old = memref.load %sum[%i] : memref<2xf32>
      %v = memref.load %exp[%i, %k] : memref<2x3xf32>
      %new = arith.addf %old, %v : f32
      memref.store %new, %sum[%i] : memref<2xf32>
    }
  }
  loop.for %i = %c0 to %c2 step %c1 {
    loop.for %j = %c0 to %c3 step %c1 {
      %e = memref.load %exp[%i, %j] : memref<2x3xf32>
      %s = memref.load %sum[%i] : memref<2xf32>
      %q = arith.divf %e, %s : f32
      memref.store %q, %y[%i, %j] : memref<2x3xf32>
    }
  }
  loop.return
}

// -----

// reduce_mean with keepdims: a sum into a local buffer, then a scaling block writing the output
// (its reduced unit axis subscripted by 0): out_ewise_fusable.
// CHECK-LABEL: loop.func @reduce_mean(
// CHECK-SAME:  pattern out_ewise_fusable {
loop.func @reduce_mean(%x: memref<2x3xf32>) outs(%y: memref<2x1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.000000e+00 : f32
  %third = arith.constant 0.333333343 : f32
  %sum = loop.alloc : memref<2xf32>
  loop.for %i = %c0 to %c2 step %c1 {
    memref.store %zero, %sum[%i] : memref<2xf32>
    loop.for %k = %c0 to %c3 step %c1 {
      %old = memref.load %sum[%i] : memref<2xf32>
      %v = memref.load %x[%i, %k] : memref<2x3xf32>
      %new = arith.addf %old, %v : f32
      memref.store %new, %sum[%i] : memref<2xf32>
    }
  }
  loop.for %i = %c0 to %c2 step %c1 {
    %s = memref.load %sum[%i] : memref<2xf32>
    %m = arith.mulf %s, %third : f32
    memref.store %m, %y[%i, %c0] : memref<2x1xf32>
  }
  loop.return
}

// -----

// A keepdims reduction straight into the output: the init store is part of the reduction block,
// not an output block of its own, so the kernel stays comm_reduce.
// CHECK-LABEL: loop.func @reduce_max_keepdims(
// CHECK-SAME:  pattern comm_reduce {
loop.func @reduce_max_keepdims(%x: memref<2x3xf32>) outs(%y: memref<2x1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %ninf = arith.constant 0xFF800000 : f32
  loop.for %i = %c0 to %c2 step %c1 {
    memref.store %ninf, %y[%i, %c0] : memref<2x1xf32>
    loop.for %k = %c0 to %c3 step %c1 {
      %old = memref.load %y[%i, %c0] : memref<2x1xf32>
      %v = memref.load %x[%i, %k] : memref<2x3xf32>
      %new = arith.maximumf %old, %v : f32
      memref.store %new, %y[%i, %c0] : memref<2x1xf32>
    }
  }
  loop.return
}

// -----

// A full reduction to a rank-0 buffer, with its init outside any loop: comm_reduce.
// CHECK-LABEL: loop.func @sum_all(
// CHECK-SAME:  pattern comm_reduce {
loop.func @sum_all(%x: memref<4xf32>) outs(%y: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.000000e+00 : f32
  memref.store %zero, %y[] : memref<f32>
  loop.for %k = %c0 to %c4 step %c1 {
    %old = memref.load %y[] : memref<f32>
    %v = memref.load %x[%k] : memref<4xf32>
    %new = arith.addf %old, %v : f32
    memref.store %new, %y[] : memref<f32>
  }
  loop.return
}
