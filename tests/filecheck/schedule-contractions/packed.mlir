// RUN: fusion-opt %s --split-input-file -p 'schedule-contractions{rows=2 cols=8 vector-width=4 registers=16 cores=2}' | filecheck %s

// The packed-panel schedule of a matmul with a bias epilogue, tile 2 x 8 (two vectors of four),
// 5 rows by 18 columns: two column tiles (the parallel loop) and two columns left, two row
// tiles and one row left. Per column tile, B's panel (6 x 8) is packed contiguously; each register tile
// accumulates in a local 2 x 8 buffer over the whole reduction (its loop stays rolled), one
// load of the panel shared by the two rows; then each element is stored once and the epilogue
// runs on it. The last two columns get a panel padded with zeros to one whole vector (4).

loop.func @matmul_packed(%a: memref<5x6xf32>, %b: memref<6x18xf32>, %bias: memref<18xf32>) outs(%c: memref<5x18xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c18 = arith.constant 18 : index
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %c5 step %c1 {
    loop.for %j = %c0 to %c18 step %c1 {
      memref.store %zero, %c[%i, %j] : memref<5x18xf32>
      loop.for %k = %c0 to %c6 step %c1 {
        %x = memref.load %a[%i, %k] : memref<5x6xf32>
        %y = memref.load %b[%k, %j] : memref<6x18xf32>
        %p = arith.mulf %x, %y fastmath<contract> : f32
        %o = memref.load %c[%i, %j] : memref<5x18xf32>
        %s = arith.addf %o, %p fastmath<contract> : f32
        memref.store %s, %c[%i, %j] : memref<5x18xf32>
      }
      %v = memref.load %c[%i, %j] : memref<5x18xf32>
      %w = memref.load %bias[%j] : memref<18xf32>
      %sum = arith.addf %v, %w : f32
      memref.store %sum, %c[%i, %j] : memref<5x18xf32>
    }
  }
}

// CHECK-LABEL: loop.func @matmul_packed
// The FLOPs of the algorithm, not of the padded tile: 2 * 5 * 6 * 18 + 90 (bias).
// CHECK-SAME:    attributes {fusion.wide_vectors, fusion.register_tiled, fusion.algorithm_flops = 1170 : i64}
// CHECK:         %[[PANEL2:.*]] = loop.alloc {fusion.private} : memref<6x4xf32>
// CHECK:         loop.for %[[JT:.*]] = %c0 to %c16 step %c8 parallel {
// CHECK-NEXT:      %[[PANEL:.*]] = loop.alloc {fusion.private} : memref<6x8xf32>
// CHECK-NEXT:      loop.for %[[K:.*]] = %c0 to %c6 step %c1 {
// CHECK-NEXT:        loop.for %[[JJ:.*]] = %c0 to %c8 step %c1 vectorized {
// CHECK-NEXT:          %[[J:.*]] = arith.addi %[[JT]], %[[JJ]]
// CHECK-NEXT:          %[[Y:.*]] = memref.load %b[%[[K]], %[[J]]]
// CHECK-NEXT:          memref.store %[[Y]], %[[PANEL]][%[[K]], %[[JJ]]]
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.for %[[IT:.*]] = %c0 to %c4 step %c2 {
// CHECK-NEXT:        %[[ACC:.*]] = loop.alloc {fusion.private} : memref<2x8xf32>
// CHECK-NEXT:        loop.for %[[R:.*]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:          loop.for %[[JJ:.*]] = %c0 to %c8 step %c1 {
// CHECK-NEXT:            memref.store %zero, %[[ACC]][%[[R]], %[[JJ]]]
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:        loop.for %[[K:.*]] = %c0 to %c6 step %c1 attributes {fusion.rolled} {
// CHECK-NEXT:          loop.for %[[JJ:.*]] = %c0 to %c8 step %c1 {
// CHECK-NEXT:            %[[P:.*]] = memref.load %[[PANEL]][%[[K]], %[[JJ]]]
// CHECK-NEXT:            %[[X0:.*]] = memref.load %a[%[[IT]], %[[K]]]
// CHECK-NEXT:            %[[M0:.*]] = arith.mulf %[[X0]], %[[P]] fastmath<contract>
// CHECK-NEXT:            %[[O0:.*]] = memref.load %[[ACC]][%c0, %[[JJ]]]
// CHECK-NEXT:            %[[S0:.*]] = arith.addf %[[O0]], %[[M0]] fastmath<contract>
// CHECK-NEXT:            memref.store %[[S0]], %[[ACC]][%c0, %[[JJ]]]
// CHECK-NEXT:            %[[I1:.*]] = arith.addi %[[IT]], %c1
// CHECK-NEXT:            %[[X1:.*]] = memref.load %a[%[[I1]], %[[K]]]
// CHECK-NEXT:            %[[M1:.*]] = arith.mulf %[[X1]], %[[P]] fastmath<contract>
// CHECK-NEXT:            %[[O1:.*]] = memref.load %[[ACC]][%c1, %[[JJ]]]
// CHECK-NEXT:            %[[S1:.*]] = arith.addf %[[O1]], %[[M1]] fastmath<contract>
// CHECK-NEXT:            memref.store %[[S1]], %[[ACC]][%c1, %[[JJ]]]
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// The matmul's output is contiguous along the columns: they are the inner loop of the epilogue.
// CHECK-NEXT:        loop.for %[[R:.*]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:          loop.for %[[JJ:.*]] = %c0 to %c8 step %c1 {
// CHECK-NEXT:            %[[I:.*]] = arith.addi %[[IT]], %[[R]]
// CHECK-NEXT:            %[[J:.*]] = arith.addi %[[JT]], %[[JJ]]
// CHECK-NEXT:            %[[V:.*]] = memref.load %[[ACC]][%[[R]], %[[JJ]]]
// CHECK-NEXT:            memref.store %[[V]], %c[%[[I]], %[[J]]]
// CHECK-NEXT:            %[[C:.*]] = memref.load %c[%[[I]], %[[J]]]
// CHECK-NEXT:            %[[W:.*]] = memref.load %bias[%[[J]]]
// CHECK-NEXT:            %[[SUM:.*]] = arith.addf %[[C]], %[[W]]
// CHECK-NEXT:            memref.store %[[SUM]], %c[%[[I]], %[[J]]]
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// The last row of the column tile: a 1 x 8 tile at row 4.
// CHECK-NEXT:      loop.alloc {fusion.private} : memref<1x8xf32>
// CHECK:           memref.load %a[%c4, %{{.*}}]
// The last two columns: their panel, padded with zeros.
// CHECK:         loop.for %[[K:.*]] = %c0 to %c6 step %c1 {
// CHECK-NEXT:      loop.for %[[JJ:.*]] = %c0 to %c2 step %c1 vectorized {
// CHECK-NEXT:        %[[J:.*]] = arith.addi %c16, %[[JJ]]
// CHECK-NEXT:        %[[Y:.*]] = memref.load %b[%[[K]], %[[J]]]
// CHECK-NEXT:        memref.store %[[Y]], %[[PANEL2]][%[[K]], %[[JJ]]]
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.for %[[JJ:.*]] = %c2 to %c4 step %c1 {
// CHECK-NEXT:        memref.store %zero, %[[PANEL2]][%[[K]], %[[JJ]]]
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// Their tiles: the padded lanes of the accumulators start at zero, the reduction runs over the
// whole vector (4), the epilogue over the two real columns only.
// CHECK-NEXT:    loop.for %[[IT:.*]] = %c0 to %c4 step %c2 parallel {
// CHECK-NEXT:      %[[ACC:.*]] = loop.alloc {fusion.private} : memref<2x4xf32>
// CHECK-NEXT:      loop.for %{{.*}} = %c0 to %c2 step %c1 {
// CHECK-NEXT:        loop.for %{{.*}} = %c0 to %c2 step %c1 {
// CHECK-NEXT:          memref.store %zero, %[[ACC]]
// CHECK:           loop.for %{{.*}} = %c0 to %c2 step %c1 {
// CHECK-NEXT:        loop.for %{{.*}} = %c2 to %c4 step %c1 {
// CHECK-NEXT:          memref.store %zero, %[[ACC]]
// CHECK:           loop.for %{{.*}} = %c0 to %c6 step %c1 attributes {fusion.rolled} {
// CHECK-NEXT:        loop.for %{{.*}} = %c0 to %c4 step %c1 {
// CHECK-NEXT:          memref.load %[[PANEL2]]
// CHECK:           loop.for %{{.*}} = %c0 to %c2 step %c1 {
// CHECK-NEXT:        loop.for %[[JJ:.*]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:          arith.addi %[[IT]]
// CHECK-NEXT:          arith.addi %c16, %[[JJ]]
// CHECK:         loop.return

// -----

// An NCHW convolution, 3x3 stride 2, padded, with bias and relu (schedule-kernels' form after
// its fusion stage), 5 x 5 output pixels: vectorised along the 20 output channels (two tiles
// of 8, the parallel loop, then 4), the output pixels are the rows of the tile, each a
// broadcast of the padded input. The weights OIHW are packed per
// column tile as [C][KH][KW][8] panels (a gather: the channels are strided in OIHW). The
// output is contiguous along the pixels: they are the inner loop of the epilogue.

loop.func @fused_conv2d_add_relu(%x: memref<1x2x9x9xf32>, %w: memref<20x2x3x3xf32>, %b: memref<1x20x1x1xf32>) outs(%r: memref<1x20x5x5xf32>) {
  %pad = loop.alloc : memref<1x2x11x11xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c11 = arith.constant 11 : index
  %c10 = arith.constant 10 : index
  %c9 = arith.constant 9 : index
  %cst = arith.constant 0.000000e+00 : f32
  %c20 = arith.constant 20 : index
  %c5 = arith.constant 5 : index
  %c3 = arith.constant 3 : index
  loop.for %i = %c0 to %c2 step %c1 {
    loop.for %i_1 = %c0 to %c11 step %c1 {
      loop.for %i_2 = %c0 to %c11 step %c1 {
        %0 = arith.cmpi sge, %i_1, %c1 : index
        %1 = arith.cmpi slt, %i_1, %c10 : index
        %2 = arith.maxsi %i_1, %c1 : index
        %3 = arith.minsi %2, %c9 : index
        %4 = arith.subi %3, %c1 : index
        %5 = arith.cmpi sge, %i_2, %c1 : index
        %6 = arith.cmpi slt, %i_2, %c10 : index
        %7 = arith.maxsi %i_2, %c1 : index
        %8 = arith.minsi %7, %c9 : index
        %9 = arith.subi %8, %c1 : index
        %10 = memref.load %x[%c0, %i, %4, %9] : memref<1x2x9x9xf32>
        %11 = arith.select %0, %10, %cst : f32
        %12 = arith.select %1, %11, %cst : f32
        %13 = arith.select %5, %12, %cst : f32
        %14 = arith.select %6, %13, %cst : f32
        memref.store %14, %pad[%c0, %i, %i_1, %i_2] : memref<1x2x11x11xf32>
      }
    }
  }
  loop.for %i_3 = %c0 to %c20 step %c1 {
    loop.for %i_4 = %c0 to %c5 step %c1 {
      loop.for %i_5 = %c0 to %c5 step %c1 {
        memref.store %cst, %r[%c0, %i_3, %i_4, %i_5] : memref<1x20x5x5xf32>
        loop.for %k = %c0 to %c2 step %c1 {
          loop.for %k_1 = %c0 to %c3 step %c1 {
            loop.for %k_2 = %c0 to %c3 step %c1 {
              %15 = arith.muli %i_4, %c2 : index
              %16 = arith.addi %15, %k_1 : index
              %17 = arith.muli %i_5, %c2 : index
              %18 = arith.addi %17, %k_2 : index
              %19 = memref.load %pad[%c0, %k, %16, %18] : memref<1x2x11x11xf32>
              %20 = memref.load %w[%i_3, %k, %k_1, %k_2] : memref<20x2x3x3xf32>
              %21 = arith.mulf %19, %20 fastmath<contract> : f32
              %22 = memref.load %r[%c0, %i_3, %i_4, %i_5] : memref<1x20x5x5xf32>
              %23 = arith.addf %22, %21 fastmath<contract> : f32
              memref.store %23, %r[%c0, %i_3, %i_4, %i_5] : memref<1x20x5x5xf32>
            }
          }
        }
        %24 = memref.load %r[%c0, %i_3, %i_4, %i_5] : memref<1x20x5x5xf32>
        %25 = memref.load %b[%c0, %i_3, %c0, %c0] : memref<1x20x1x1xf32>
        %26 = arith.addf %24, %25 : f32
        %27 = arith.maximumf %26, %cst : f32
        memref.store %27, %r[%c0, %i_3, %i_4, %i_5] : memref<1x20x5x5xf32>
      }
    }
  }
  loop.return
}

// CHECK-LABEL: loop.func @fused_conv2d_add_relu
// CHECK:         %[[PANEL2:.*]] = loop.alloc {fusion.private} : memref<2x3x3x4xf32>
// CHECK:         loop.for %[[JT:.*]] = %c0 to %c16 step %c8 parallel {
// CHECK-NEXT:      %[[PANEL:.*]] = loop.alloc {fusion.private} : memref<2x3x3x8xf32>
// CHECK-NEXT:      loop.for %[[C:.*]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:        loop.for %[[KH:.*]] = %c0 to %c3 step %c1 {
// CHECK-NEXT:          loop.for %[[KW:.*]] = %c0 to %c3 step %c1 {
// CHECK-NEXT:            loop.for %[[JJ:.*]] = %c0 to %c8 step %c1 vectorized {
// CHECK-NEXT:              %[[O:.*]] = arith.addi %[[JT]], %[[JJ]]
// CHECK-NEXT:              %[[WV:.*]] = memref.load %w[%[[O]], %[[C]], %[[KH]], %[[KW]]]
// CHECK-NEXT:              memref.store %[[WV]], %[[PANEL]][%[[C]], %[[KH]], %[[KW]], %[[JJ]]]
// The 25 output pixels, rows and pixels collapsed (oh = i / 5, ow = i % 5), are the rows of the
// tiles: twelve tiles of 2, then 1 (five rows of two tiles and a tile of one pixel would take
// longer by the tile model). Each row's pixel is found once per tile, outside the reduction.
// CHECK:           loop.for %[[IT:.*]] = %c0 to %c24 step %c2 {
// CHECK-NEXT:        %[[ACC:.*]] = loop.alloc {fusion.private} : memref<2x8xf32>
// CHECK:             %[[OH0:.*]] = arith.divui %[[IT]], %c5
// CHECK-NEXT:        %[[OW0:.*]] = arith.remui %[[IT]], %c5
// CHECK-NEXT:        %[[I1:.*]] = arith.addi %[[IT]], %c1
// CHECK-NEXT:        %[[OH1:.*]] = arith.divui %[[I1]], %c5
// CHECK-NEXT:        %[[OW1:.*]] = arith.remui %[[I1]], %c5
// CHECK-NEXT:        loop.for %[[C:.*]] = %c0 to %c2 step %c1 attributes {fusion.rolled} {
// CHECK-NEXT:          loop.for %[[KH:.*]] = %c0 to %c3 step %c1 attributes {fusion.rolled} {
// CHECK-NEXT:            loop.for %[[KW:.*]] = %c0 to %c3 step %c1 attributes {fusion.rolled} {
// CHECK-NEXT:              loop.for %[[JJ:.*]] = %c0 to %c8 step %c1 {
// CHECK-NEXT:                %[[P:.*]] = memref.load %[[PANEL]][%[[C]], %[[KH]], %[[KW]], %[[JJ]]]
// CHECK-NEXT:                %[[Y0:.*]] = arith.muli %[[OH0]], %c2
// CHECK-NEXT:                %[[H0:.*]] = arith.addi %[[Y0]], %[[KH]]
// CHECK-NEXT:                %[[X0:.*]] = arith.muli %[[OW0]], %c2
// CHECK-NEXT:                %[[W0:.*]] = arith.addi %[[X0]], %[[KW]]
// CHECK-NEXT:                %[[V0:.*]] = memref.load %pad[%c0, %[[C]], %[[H0]], %[[W0]]]
// CHECK-NEXT:                %[[M0:.*]] = arith.mulf %[[V0]], %[[P]] fastmath<contract>
// CHECK-NEXT:                %[[A0:.*]] = memref.load %[[ACC]][%c0, %[[JJ]]]
// CHECK-NEXT:                %[[S0:.*]] = arith.addf %[[A0]], %[[M0]] fastmath<contract>
// CHECK-NEXT:                memref.store %[[S0]], %[[ACC]][%c0, %[[JJ]]]
// CHECK-NEXT:                %[[Y1:.*]] = arith.muli %[[OH1]], %c2
// CHECK-NEXT:                %[[H1:.*]] = arith.addi %[[Y1]], %[[KH]]
// CHECK-NEXT:                %[[X1:.*]] = arith.muli %[[OW1]], %c2
// CHECK-NEXT:                %[[W1:.*]] = arith.addi %[[X1]], %[[KW]]
// CHECK-NEXT:                %[[V1:.*]] = memref.load %pad[%c0, %[[C]], %[[H1]], %[[W1]]]
// CHECK-NEXT:                %[[M1:.*]] = arith.mulf %[[V1]], %[[P]] fastmath<contract>
// CHECK-NEXT:                %[[A1:.*]] = memref.load %[[ACC]][%c1, %[[JJ]]]
// CHECK-NEXT:                %[[S1:.*]] = arith.addf %[[A1]], %[[M1]] fastmath<contract>
// CHECK-NEXT:                memref.store %[[S1]], %[[ACC]][%c1, %[[JJ]]]
// CHECK-NEXT:              }
// CHECK-NEXT:            }
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// The output is contiguous along the pixels: the loop over the tile's channels stays scalar
// (its vectors would be scatters).
// CHECK-NEXT:        loop.for %[[JJ:.*]] = %c0 to %c8 step %c1 attributes {fusion.scalar} {
// CHECK-NEXT:          loop.for %[[R:.*]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:            %[[I:.*]] = arith.addi %[[IT]], %[[R]]
// CHECK-NEXT:            %[[OH:.*]] = arith.divui %[[I]], %c5
// CHECK-NEXT:            %[[OW:.*]] = arith.remui %[[I]], %c5
// CHECK-NEXT:            %[[O:.*]] = arith.addi %[[JT]], %[[JJ]]
// CHECK-NEXT:            %[[V:.*]] = memref.load %[[ACC]][%[[R]], %[[JJ]]]
// CHECK-NEXT:            memref.store %[[V]], %r[%c0, %[[O]], %[[OH]], %[[OW]]]
// CHECK-NEXT:            %[[Y:.*]] = memref.load %r[%c0, %[[O]], %[[OH]], %[[OW]]]
// CHECK-NEXT:            %[[B:.*]] = memref.load %b[%c0, %[[O]], %c0, %c0]
// CHECK-NEXT:            %[[SUM:.*]] = arith.addf %[[Y]], %[[B]]
// CHECK-NEXT:            %[[RELU:.*]] = arith.maximumf %[[SUM]], %cst
// CHECK-NEXT:            memref.store %[[RELU]], %r[%c0, %[[O]], %[[OH]], %[[OW]]]
// The last pixel: a 1 x 8 tile at pixel 24.
// CHECK:           loop.alloc {fusion.private} : memref<1x8xf32>
// The last four channels: one vector, no padding.
// CHECK:         loop.for %{{.*}} = %c0 to %c4 step %c1 vectorized {
// CHECK-NEXT:      arith.addi %c16,
// CHECK-NEXT:      memref.load %w
// CHECK:           memref.store %{{.*}}, %[[PANEL2]]
// CHECK:         loop.alloc {fusion.private} : memref<2x4xf32>
// CHECK:         loop.return

// -----

// The same convolution on a 5 x 5 input: 3 x 3 output pixels, few enough (at most four vectors)
// for the output rows and pixels to collapse into one column dimension of 9 (oh = j / 3,
// ow = j % 3): a tile of 8 and one pixel left, padded with zeros to one vector. The panel is
// the padded input, im2col'd per column tile ([C][KH][KW][8]); the 20 output channels are
// the rows of the tile (ten tiles of 2, the parallel loop), the weights their broadcasts.
// The output is contiguous along the columns: they are the inner loop of the epilogue.

loop.func @fused_conv2d_add_relu(%x: memref<1x2x5x5xf32>, %w: memref<20x2x3x3xf32>, %b: memref<1x20x1x1xf32>) outs(%r: memref<1x20x3x3xf32>) {
  %pad = loop.alloc : memref<1x2x7x7xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c7 = arith.constant 7 : index
  %c6 = arith.constant 6 : index
  %c5 = arith.constant 5 : index
  %cst = arith.constant 0.000000e+00 : f32
  %c20 = arith.constant 20 : index
  %c3 = arith.constant 3 : index
  loop.for %i = %c0 to %c2 step %c1 {
    loop.for %i_1 = %c0 to %c7 step %c1 {
      loop.for %i_2 = %c0 to %c7 step %c1 {
        %0 = arith.cmpi sge, %i_1, %c1 : index
        %1 = arith.cmpi slt, %i_1, %c6 : index
        %2 = arith.maxsi %i_1, %c1 : index
        %3 = arith.minsi %2, %c5 : index
        %4 = arith.subi %3, %c1 : index
        %5 = arith.cmpi sge, %i_2, %c1 : index
        %6 = arith.cmpi slt, %i_2, %c6 : index
        %7 = arith.maxsi %i_2, %c1 : index
        %8 = arith.minsi %7, %c5 : index
        %9 = arith.subi %8, %c1 : index
        %10 = memref.load %x[%c0, %i, %4, %9] : memref<1x2x5x5xf32>
        %11 = arith.select %0, %10, %cst : f32
        %12 = arith.select %1, %11, %cst : f32
        %13 = arith.select %5, %12, %cst : f32
        %14 = arith.select %6, %13, %cst : f32
        memref.store %14, %pad[%c0, %i, %i_1, %i_2] : memref<1x2x7x7xf32>
      }
    }
  }
  loop.for %i_3 = %c0 to %c20 step %c1 {
    loop.for %i_4 = %c0 to %c3 step %c1 {
      loop.for %i_5 = %c0 to %c3 step %c1 {
        memref.store %cst, %r[%c0, %i_3, %i_4, %i_5] : memref<1x20x3x3xf32>
        loop.for %k = %c0 to %c2 step %c1 {
          loop.for %k_1 = %c0 to %c3 step %c1 {
            loop.for %k_2 = %c0 to %c3 step %c1 {
              %15 = arith.muli %i_4, %c2 : index
              %16 = arith.addi %15, %k_1 : index
              %17 = arith.muli %i_5, %c2 : index
              %18 = arith.addi %17, %k_2 : index
              %19 = memref.load %pad[%c0, %k, %16, %18] : memref<1x2x7x7xf32>
              %20 = memref.load %w[%i_3, %k, %k_1, %k_2] : memref<20x2x3x3xf32>
              %21 = arith.mulf %19, %20 fastmath<contract> : f32
              %22 = memref.load %r[%c0, %i_3, %i_4, %i_5] : memref<1x20x3x3xf32>
              %23 = arith.addf %22, %21 fastmath<contract> : f32
              memref.store %23, %r[%c0, %i_3, %i_4, %i_5] : memref<1x20x3x3xf32>
            }
          }
        }
        %24 = memref.load %r[%c0, %i_3, %i_4, %i_5] : memref<1x20x3x3xf32>
        %25 = memref.load %b[%c0, %i_3, %c0, %c0] : memref<1x20x1x1xf32>
        %26 = arith.addf %24, %25 : f32
        %27 = arith.maximumf %26, %cst : f32
        memref.store %27, %r[%c0, %i_3, %i_4, %i_5] : memref<1x20x3x3xf32>
      }
    }
  }
  loop.return
}

// CHECK-LABEL: loop.func @fused_conv2d_add_relu
// CHECK:         %[[PANEL:.*]] = loop.alloc {fusion.private} : memref<2x3x3x8xf32>
// CHECK:         memref.store %{{.*}}, %pad
// CHECK:         loop.for %[[C:.*]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:      loop.for %[[KH:.*]] = %c0 to %c3 step %c1 {
// CHECK-NEXT:        loop.for %[[KW:.*]] = %c0 to %c3 step %c1 {
// CHECK-NEXT:          loop.for %[[JJ:.*]] = %c0 to %c8 step %c1 vectorized {
// CHECK-NEXT:            %[[J:.*]] = arith.addi %c0, %[[JJ]]
// CHECK-NEXT:            %[[OH:.*]] = arith.divui %[[J]], %c3
// CHECK-NEXT:            %[[OW:.*]] = arith.remui %[[J]], %c3
// CHECK:                 memref.load %pad[%c0, %[[C]], %{{.*}}, %{{.*}}]
// CHECK-NEXT:            memref.store %{{.*}}, %[[PANEL]][%[[C]], %[[KH]], %[[KW]], %[[JJ]]]
// CHECK:         loop.for %[[IT:.*]] = %c0 to %c20 step %c2 parallel {
// CHECK-NEXT:      %[[ACC:.*]] = loop.alloc {fusion.private} : memref<2x8xf32>
// The weights' subscripts are the reduction loops in order: one loop over their 18 steps.
// CHECK:           loop.for %[[K:.*]] = %c0 to %c18 step %c1 attributes {fusion.rolled} {
// CHECK-NEXT:        %[[KC:.*]] = arith.divui %[[K]], %c9 : index
// CHECK-NEXT:        %[[KQ:.*]] = arith.divui %[[K]], %c3 : index
// CHECK-NEXT:        %[[KKH:.*]] = arith.remui %[[KQ]], %c3 : index
// CHECK-NEXT:        %[[KKW:.*]] = arith.remui %[[K]], %c3 : index
// CHECK-NEXT:        loop.for %{{.*}} = %c0 to %c8 step %c1 {
// CHECK-NEXT:          %[[P:.*]] = memref.load %[[PANEL]]
// CHECK-NEXT:          %[[W0:.*]] = memref.load %w[%[[IT]], %[[KC]], %[[KKH]], %[[KKW]]]
// CHECK-NEXT:          arith.mulf %[[P]], %[[W0]] fastmath<contract>
// CHECK:           loop.for %[[R:.*]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:        loop.for %[[JJ:.*]] = %c0 to %c8 step %c1 {
// CHECK-NEXT:          %[[O:.*]] = arith.addi %[[IT]], %[[R]]
// CHECK-NEXT:          %[[J:.*]] = arith.addi %c0, %[[JJ]]
// CHECK-NEXT:          %[[OH:.*]] = arith.divui %[[J]], %c3
// CHECK-NEXT:          %[[OW:.*]] = arith.remui %[[J]], %c3
// CHECK-NEXT:          %[[V:.*]] = memref.load %[[ACC]][%[[R]], %[[JJ]]]
// CHECK-NEXT:          memref.store %[[V]], %r[%c0, %[[O]], %[[OH]], %[[OW]]]
// The ninth pixel: its panel, padded with zeros, and its tiles.
// CHECK:         loop.for %{{.*}} = %c1 to %c4 step %c1 {
// CHECK:         loop.for %{{.*}} = %c0 to %c20 step %c2 parallel {
// CHECK:           loop.alloc {fusion.private} : memref<2x4xf32>
// CHECK:         loop.return
