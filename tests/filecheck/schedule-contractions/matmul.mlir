// RUN: fusion-opt %s --split-input-file -p 'schedule-contractions{rows=2 cols=4 vector-width=4 registers=16 packing=false}' | filecheck %s

// A matmul with a fused bias + relu epilogue (fuse-loops' form):
// a 2 x 4 accumulator tile over the whole reduction. The tile loops (%jt over columns, %it
// over rows) replace %j and %i; the outermost is parallel. Per reduction step, one load of B
// is shared by the two rows' updates (each keeps its own mulf/addf pair, so the same FMA).
// The init and the epilogue run over the tile (%r, %jj) before and after the reduction.

loop.func @matmul_bias_relu(%a: memref<4x6xf32>, %b: memref<6x8xf32>, %bias: memref<8xf32>) outs(%c: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %c4 step %c1 {
    loop.for %j = %c0 to %c8 step %c1 {
      memref.store %zero, %c[%i, %j] : memref<4x8xf32>
      loop.for %k = %c0 to %c6 step %c1 {
        %x = memref.load %a[%i, %k] : memref<4x6xf32>
        %y = memref.load %b[%k, %j] : memref<6x8xf32>
        %p = arith.mulf %x, %y fastmath<contract> : f32
        %o = memref.load %c[%i, %j] : memref<4x8xf32>
        %s = arith.addf %o, %p fastmath<contract> : f32
        memref.store %s, %c[%i, %j] : memref<4x8xf32>
      }
      %v = memref.load %c[%i, %j] : memref<4x8xf32>
      %w = memref.load %bias[%j] : memref<8xf32>
      %sum = arith.addf %v, %w : f32
      %relu = arith.maximumf %sum, %zero : f32
      memref.store %relu, %c[%i, %j] : memref<4x8xf32>
    }
  }
}

// CHECK-LABEL: loop.func @matmul_bias_relu
// The FLOPs of the algorithm, recorded for the profiler: 2 * 4 * 6 * 8 + 32 (bias) + 32 (relu).
// CHECK-SAME:    attributes {fusion.wide_vectors, fusion.register_tiled, fusion.algorithm_flops = 448 : i64}
// CHECK:         loop.for %[[JT:.*]] = %c0 to %c8 step %c4 parallel {
// CHECK-NEXT:      loop.for %[[IT:.*]] = %c0 to %c4 step %c2 {
// CHECK-NEXT:        loop.for %[[R:.*]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:          loop.for %[[JJ:.*]] = %c0 to %c4 step %c1 {
// CHECK-NEXT:            %[[I:.*]] = arith.addi %[[IT]], %[[R]]
// CHECK-NEXT:            %[[J:.*]] = arith.addi %[[JT]], %[[JJ]]
// CHECK-NEXT:            memref.store %zero, %c[%[[I]], %[[J]]]
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:        loop.for %[[K:.*]] = %c0 to %c6 step %c1 {
// CHECK-NEXT:          loop.for %[[KJ:.*]] = %c0 to %c4 step %c1 {
// CHECK-NEXT:            %[[J:.*]] = arith.addi %[[JT]], %[[KJ]]
// CHECK-NEXT:            %[[X0:.*]] = memref.load %a[%[[IT]], %[[K]]]
// CHECK-NEXT:            %[[Y0:.*]] = memref.load %b[%[[K]], %[[J]]]
// CHECK-NEXT:            %[[P0:.*]] = arith.mulf %[[X0]], %[[Y0]] fastmath<contract>
// CHECK-NEXT:            %[[O0:.*]] = memref.load %c[%[[IT]], %[[J]]]
// CHECK-NEXT:            %[[S0:.*]] = arith.addf %[[O0]], %[[P0]] fastmath<contract>
// CHECK-NEXT:            memref.store %[[S0]], %c[%[[IT]], %[[J]]]
// CHECK-NEXT:            %[[I1:.*]] = arith.addi %[[IT]], %c1
// CHECK-NEXT:            %[[X1:.*]] = memref.load %a[%[[I1]], %[[K]]]
// CHECK-NEXT:            %[[Y1:.*]] = memref.load %b[%[[K]], %[[J]]]
// CHECK-NEXT:            %[[P1:.*]] = arith.mulf %[[X1]], %[[Y1]] fastmath<contract>
// CHECK-NEXT:            %[[O1:.*]] = memref.load %c[%[[I1]], %[[J]]]
// CHECK-NEXT:            %[[S1:.*]] = arith.addf %[[O1]], %[[P1]] fastmath<contract>
// CHECK-NEXT:            memref.store %[[S1]], %c[%[[I1]], %[[J]]]
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:        loop.for %[[R:.*]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:          loop.for %[[JJ:.*]] = %c0 to %c4 step %c1 {
// CHECK-NEXT:            %[[I:.*]] = arith.addi %[[IT]], %[[R]]
// CHECK-NEXT:            %[[J:.*]] = arith.addi %[[JT]], %[[JJ]]
// CHECK-NEXT:            %[[V:.*]] = memref.load %c[%[[I]], %[[J]]]
// CHECK-NEXT:            %[[W:.*]] = memref.load %bias[%[[J]]]
// CHECK-NEXT:            %[[SUM:.*]] = arith.addf %[[V]], %[[W]]
// CHECK-NEXT:            %[[RELU:.*]] = arith.maximumf %[[SUM]], %zero
// CHECK-NEXT:            memref.store %[[RELU]], %c[%[[I]], %[[J]]]
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.return

// -----

// Sizes the tile does not divide: 5 rows by 2 (two tiles, one row left), 10 columns by 4 (two
// tiles, two columns left). The remainders are tiles of their own, with constant bases,
// outside the tile loops: rows inside each column tile, then the last columns.

loop.func @matmul_remainders(%a: memref<5x3xf32>, %b: memref<3x10xf32>) outs(%c: memref<5x10xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c10 = arith.constant 10 : index
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %c5 step %c1 {
    loop.for %j = %c0 to %c10 step %c1 {
      memref.store %zero, %c[%i, %j] : memref<5x10xf32>
      loop.for %k = %c0 to %c3 step %c1 {
        %x = memref.load %a[%i, %k] : memref<5x3xf32>
        %y = memref.load %b[%k, %j] : memref<3x10xf32>
        %p = arith.mulf %x, %y fastmath<contract> : f32
        %o = memref.load %c[%i, %j] : memref<5x10xf32>
        %s = arith.addf %o, %p fastmath<contract> : f32
        memref.store %s, %c[%i, %j] : memref<5x10xf32>
      }
    }
  }
}

// CHECK-LABEL: loop.func @matmul_remainders
// CHECK:         loop.for %[[JT:.*]] = %c0 to %c8 step %c4 parallel {
// CHECK-NEXT:      loop.for %[[IT:.*]] = %c0 to %c4 step %c2 {
// CHECK:             loop.for %{{.*}} = %c0 to %c3 step %c1 {
// CHECK-NEXT:          loop.for %{{.*}} = %c0 to %c4 step %c1 {
// CHECK-COUNT-2:         memref.store %{{.*}}, %c[%{{.*}}, %{{.*}}] : memref<5x10xf32>
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// The last row of every column tile: a 1 x 4 tile at row 4.
// CHECK-NEXT:      loop.for %{{.*}} = %c0 to %c1 step %c1 {
// CHECK-NEXT:        loop.for %{{.*}} = %c0 to %c4 step %c1 {
// CHECK-NEXT:          arith.addi %c4,
// CHECK:           loop.for %{{.*}} = %c0 to %c3 step %c1 {
// CHECK-NEXT:        loop.for %{{.*}} = %c0 to %c4 step %c1 {
// CHECK-NEXT:          %[[J:.*]] = arith.addi %[[JT]]
// CHECK-NEXT:          memref.load %a[%c4, %{{.*}}]
// CHECK:               memref.store %{{.*}}, %c[%c4, %[[J]]]
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// The last two columns: 2 x 2 tiles over rows 0..3, then the 1 x 2 corner.
// CHECK-NEXT:    loop.for %[[IT:.*]] = %c0 to %c4 step %c2 parallel {
// CHECK-NEXT:      loop.for %[[R:.*]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:        loop.for %[[JJ:.*]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:          arith.addi %[[IT]], %[[R]]
// CHECK-NEXT:          arith.addi %c8, %[[JJ]]
// CHECK:         loop.for %{{.*}} = %c0 to %c1 step %c1 {
// CHECK-NEXT:      loop.for %{{.*}} = %c0 to %c2 step %c1 {
// CHECK-NEXT:        arith.addi %c4,
// CHECK-NEXT:        arith.addi %c8,
// CHECK:         loop.for %{{.*}} = %c0 to %c3 step %c1 {
// CHECK-NEXT:      loop.for %{{.*}} = %c0 to %c2 step %c1 {
// CHECK-NEXT:        %[[J:.*]] = arith.addi %c8
// CHECK-NEXT:        memref.load %a[%c4, %{{.*}}]
// CHECK:             memref.store %{{.*}}, %c[%c4, %[[J]]]
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.return
