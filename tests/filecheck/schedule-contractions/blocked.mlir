// RUN: fusion-opt %s -p 'schedule-contractions{rows=2 cols=8 vector-width=4 registers=16 cores=2 l1-bytes=1024 l1-ways=8 l2-bytes=2048}' | filecheck %s

// The packed schedule with its reduction in blocks (`reduction_block`): the stride-2 3x3
// convolution of packed.mlir on 6 input channels, its output pixels collapsed into the rows.
// A register tile's broadcasts read 18 lines (6 channels x 3 rows), more than the 1 KiB L1
// given holds, and a column tile's panel (6 x 3 x 3 steps x 8 columns, 1728 bytes) is past a
// quarter of the 2 KiB L2 given, so the row tiles run over blocks of the input channels
// whose panel fits that quarter (2 channels): the first block from the init (0) to partial
// sums stored in the output, a loop over the middle blocks from and to the output, the last
// block from the output, then the epilogue (bias, relu). The same updates in the same order.

loop.func @fused_conv2d_add_relu(%x: memref<1x6x9x9xf32>, %w: memref<20x6x3x3xf32>, %b: memref<1x20x1x1xf32>) outs(%r: memref<1x20x5x5xf32>) {
  %pad = loop.alloc : memref<1x6x11x11xf32>
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
  %c6 = arith.constant 6 : index
  loop.for %i = %c0 to %c6 step %c1 {
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
        %10 = memref.load %x[%c0, %i, %4, %9] : memref<1x6x9x9xf32>
        %11 = arith.select %0, %10, %cst : f32
        %12 = arith.select %1, %11, %cst : f32
        %13 = arith.select %5, %12, %cst : f32
        %14 = arith.select %6, %13, %cst : f32
        memref.store %14, %pad[%c0, %i, %i_1, %i_2] : memref<1x6x11x11xf32>
      }
    }
  }
  loop.for %i_3 = %c0 to %c20 step %c1 {
    loop.for %i_4 = %c0 to %c5 step %c1 {
      loop.for %i_5 = %c0 to %c5 step %c1 {
        memref.store %cst, %r[%c0, %i_3, %i_4, %i_5] : memref<1x20x5x5xf32>
        loop.for %k = %c0 to %c6 step %c1 {
          loop.for %k_1 = %c0 to %c3 step %c1 {
            loop.for %k_2 = %c0 to %c3 step %c1 {
              %15 = arith.muli %i_4, %c2 : index
              %16 = arith.addi %15, %k_1 : index
              %17 = arith.muli %i_5, %c2 : index
              %18 = arith.addi %17, %k_2 : index
              %19 = memref.load %pad[%c0, %k, %16, %18] : memref<1x6x11x11xf32>
              %20 = memref.load %w[%i_3, %k, %k_1, %k_2] : memref<20x6x3x3xf32>
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

// CHECK-LABEL: loop.func @fused_conv2d_add_relu(
// CHECK:         loop.for %[[JT:.*]] = %c0 to %c16 step %c8 parallel {
// CHECK:           %[[PANEL:.*]] = loop.alloc {fusion.private} : memref<6x3x3x8xf32>
// The first block: channels 0 and 1, the tile stored alone.
// CHECK:           loop.for %[[IT:.*]] = %c0 to %c24 step %c2 {
// CHECK:             memref.store %cst, %[[ACC:.*]][%{{.*}}, %{{.*}}] : memref<2x8xf32>
// CHECK:             loop.for %{{.*}} = %c0 to %c2 step %c1 attributes {fusion.rolled} {
// CHECK:             memref.store %{{.*}}, %r[%c0, %{{.*}}, %{{.*}}, %{{.*}}] : memref<1x20x5x5xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// The middle blocks: from the output, channels kb and kb + 1, back to the output.
// CHECK:           loop.for %[[KB:.*]] = %c2 to %c4 step %c2 {
// CHECK-NEXT:        %[[KB_END:.*]] = arith.addi %[[KB]], %c2 : index
// CHECK:             loop.for %{{.*}} = %c0 to %c24 step %c2 {
// CHECK:                 %[[PARTIAL:.*]] = memref.load %r[%c0, %{{.*}}, %{{.*}}, %{{.*}}] : memref<1x20x5x5xf32>
// CHECK-NEXT:            memref.store %[[PARTIAL]], %{{.*}}[%{{.*}}, %{{.*}}] : memref<2x8xf32>
// CHECK:               loop.for %{{.*}} = %[[KB]] to %[[KB_END]] step %c1 attributes {fusion.rolled} {
// CHECK-NOT:           arith.maximumf
// CHECK:               memref.store %{{.*}}, %r[%c0, %{{.*}}, %{{.*}}, %{{.*}}] : memref<1x20x5x5xf32>
// The last block: channels 4 and 5, then bias and relu on the stored tile.
// CHECK:           loop.for %{{.*}} = %c0 to %c24 step %c2 {
// CHECK:               memref.load %r[%c0, %{{.*}}, %{{.*}}, %{{.*}}] : memref<1x20x5x5xf32>
// CHECK:             loop.for %{{.*}} = %c4 to %c6 step %c1 attributes {fusion.rolled} {
// CHECK:             memref.store %{{.*}}, %r[%c0, %[[J:.*]], %[[OH:.*]], %[[OW:.*]]] : memref<1x20x5x5xf32>
// CHECK-NEXT:        %[[Y:.*]] = memref.load %r[%c0, %[[J]], %[[OH]], %[[OW]]]
// CHECK-NEXT:        %[[B:.*]] = memref.load %b[%c0, %[[J]], %c0, %c0]
// CHECK-NEXT:        %[[S:.*]] = arith.addf %[[Y]], %[[B]] : f32
// CHECK-NEXT:        %{{.*}} = arith.maximumf %[[S]], %cst : f32
