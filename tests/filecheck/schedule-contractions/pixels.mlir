// RUN: fusion-opt %s --split-input-file -p 'schedule-contractions{vector-width=4 registers=16 cores=2}' | filecheck %s

// A 1x1 convolution (NCHW, 8 -> 16 channels, 6 x 6 pixels) is vectorised along its pixels:
// the two pixel loops collapse into one column dimension of 36 (`oh * 6 + ow`), the panel is a
// copy of the input's pixels (no window: nothing moves with the reduction), the weights are
// the broadcast rows, and each output row of the tile is stored along the output's contiguous
// pixels. Vectorising along the 16 output channels instead would leave an R x 16 tile to store
// transposed (scattered) into NCHW. The tile, 4 rows x 3 vectors of 4, issues its steps row
// by row (16 registers: contraction_tiles.steps_by_rows), a loop over the columns per row.

loop.func @conv1x1(%x: memref<1x8x6x6xf32>, %w: memref<16x8x1x1xf32>, %b: memref<1x16x1x1xf32>) outs(%y: memref<1x16x6x6xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c6 = arith.constant 6 : index
  %cst = arith.constant 0.000000e+00 : f32
  %c8 = arith.constant 8 : index
  loop.for %i = %c0 to %c16 step %c1 {
    loop.for %i_1 = %c0 to %c6 step %c1 {
      loop.for %i_2 = %c0 to %c6 step %c1 {
        memref.store %cst, %y[%c0, %i, %i_1, %i_2] : memref<1x16x6x6xf32>
        loop.for %k = %c0 to %c8 step %c1 {
          %0 = memref.load %x[%c0, %k, %i_1, %i_2] : memref<1x8x6x6xf32>
          %1 = memref.load %w[%i, %k, %c0, %c0] : memref<16x8x1x1xf32>
          %2 = arith.mulf %0, %1 fastmath<contract> : f32
          %3 = memref.load %y[%c0, %i, %i_1, %i_2] : memref<1x16x6x6xf32>
          %4 = arith.addf %3, %2 fastmath<contract> : f32
          memref.store %4, %y[%c0, %i, %i_1, %i_2] : memref<1x16x6x6xf32>
        }
        %5 = memref.load %y[%c0, %i, %i_1, %i_2] : memref<1x16x6x6xf32>
        %6 = memref.load %b[%c0, %i, %c0, %c0] : memref<1x16x1x1xf32>
        %7 = arith.addf %5, %6 : f32
        %8 = arith.maximumf %7, %cst : f32
        memref.store %8, %y[%c0, %i, %i_1, %i_2] : memref<1x16x6x6xf32>
      }
    }
  }
  loop.return
}

// CHECK-LABEL: loop.func @conv1x1
// CHECK:         loop.for %[[JT:.*]] = %c0 to %c36 step %c12 parallel {
// CHECK-NEXT:      %[[PANEL:.*]] = loop.alloc {fusion.private} : memref<8x12xf32>
// CHECK:             %[[P:.*]] = arith.addi %[[JT]], %{{.*}} : index
// CHECK-NEXT:        %[[H:.*]] = arith.divui %[[P]], %c6 : index
// CHECK-NEXT:        %[[W:.*]] = arith.remui %[[P]], %c6 : index
// CHECK-NEXT:        %[[X:.*]] = memref.load %x[%c0, %{{.*}}, %[[H]], %[[W]]] : memref<1x8x6x6xf32>
// CHECK-NEXT:        memref.store %[[X]], %[[PANEL]][%{{.*}}, %{{.*}}] : memref<8x12xf32>
// CHECK:           loop.for %[[IT:.*]] = %c0 to %c16 step %c4 {
// CHECK-NEXT:        %[[ACC:.*]] = loop.alloc {fusion.private} : memref<4x12xf32>
// CHECK:               %{{.*}} = memref.load %[[PANEL]][%{{.*}}, %{{.*}}] : memref<8x12xf32>
// CHECK-NEXT:          %{{.*}} = memref.load %w[%[[IT]], %{{.*}}, %c0, %c0] : memref<16x8x1x1xf32>

// -----

// A 3x3 convolution of stride 1 whose plane is larger than one column tile collapses its
// pixels too when the tile model prices it below the weights' plan: its panel, an im2col of
// each column tile, is packed row by row of the plane. Columns `jt .. jt + 12` cross at most
// two rows of 6 (the tiles start at multiples of 12); in row `r` the window's subscripts are
// affine in the column `q` (`oh = r`, `ow = q - 6 r`), so each row's part is a vector loop of
// contiguous reads, not a division and a gather per element.

loop.func @conv3x3(%x: memref<1x4x6x6xf32>, %w: memref<16x4x3x3xf32>, %b: memref<1x16x1x1xf32>) outs(%y: memref<1x16x6x6xf32>) {
  %pad = loop.alloc : memref<1x4x8x8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c7 = arith.constant 7 : index
  %c6 = arith.constant 6 : index
  %cst = arith.constant 0.000000e+00 : f32
  %c16 = arith.constant 16 : index
  %c3 = arith.constant 3 : index
  loop.for %i = %c0 to %c4 step %c1 {
    loop.for %i_1 = %c0 to %c8 step %c1 {
      loop.for %i_2 = %c0 to %c8 step %c1 {
        %0 = arith.cmpi sge, %i_1, %c1 : index
        %1 = arith.cmpi slt, %i_1, %c7 : index
        %2 = arith.maxsi %i_1, %c1 : index
        %3 = arith.minsi %2, %c6 : index
        %4 = arith.subi %3, %c1 : index
        %5 = arith.cmpi sge, %i_2, %c1 : index
        %6 = arith.cmpi slt, %i_2, %c7 : index
        %7 = arith.maxsi %i_2, %c1 : index
        %8 = arith.minsi %7, %c6 : index
        %9 = arith.subi %8, %c1 : index
        %10 = memref.load %x[%c0, %i, %4, %9] : memref<1x4x6x6xf32>
        %11 = arith.select %0, %10, %cst : f32
        %12 = arith.select %1, %11, %cst : f32
        %13 = arith.select %5, %12, %cst : f32
        %14 = arith.select %6, %13, %cst : f32
        memref.store %14, %pad[%c0, %i, %i_1, %i_2] : memref<1x4x8x8xf32>
      }
    }
  }
  loop.for %i_3 = %c0 to %c16 step %c1 {
    loop.for %i_4 = %c0 to %c6 step %c1 {
      loop.for %i_5 = %c0 to %c6 step %c1 {
        memref.store %cst, %y[%c0, %i_3, %i_4, %i_5] : memref<1x16x6x6xf32>
        loop.for %k = %c0 to %c4 step %c1 {
          loop.for %k_1 = %c0 to %c3 step %c1 {
            loop.for %k_2 = %c0 to %c3 step %c1 {
              %15 = arith.addi %i_4, %k_1 : index
              %16 = arith.addi %i_5, %k_2 : index
              %17 = memref.load %pad[%c0, %k, %15, %16] : memref<1x4x8x8xf32>
              %18 = memref.load %w[%i_3, %k, %k_1, %k_2] : memref<16x4x3x3xf32>
              %19 = arith.mulf %17, %18 fastmath<contract> : f32
              %20 = memref.load %y[%c0, %i_3, %i_4, %i_5] : memref<1x16x6x6xf32>
              %21 = arith.addf %20, %19 fastmath<contract> : f32
              memref.store %21, %y[%c0, %i_3, %i_4, %i_5] : memref<1x16x6x6xf32>
            }
          }
        }
        %22 = memref.load %y[%c0, %i_3, %i_4, %i_5] : memref<1x16x6x6xf32>
        %23 = memref.load %b[%c0, %i_3, %c0, %c0] : memref<1x16x1x1xf32>
        %24 = arith.addf %22, %23 : f32
        %25 = arith.maximumf %24, %cst : f32
        memref.store %25, %y[%c0, %i_3, %i_4, %i_5] : memref<1x16x6x6xf32>
      }
    }
  }
  loop.return
}

// CHECK-LABEL: loop.func @conv3x3
// CHECK:         loop.for %[[JT:.*]] = %c0 to %c36 step %c12 parallel {
// CHECK-NEXT:      %[[PANEL:.*]] = loop.alloc {fusion.private} : memref<4x3x3x12xf32>
// CHECK-NEXT:      %[[ROW:.*]] = arith.divui %[[JT]], %c6 : index
// CHECK-NEXT:      %[[END:.*]] = arith.addi %[[JT]], %c12 : index
// CHECK-NEXT:      %[[START:.*]] = arith.muli %[[ROW]], %c6 : index
// CHECK-NEXT:      %[[LO:.*]] = arith.maxui %[[JT]], %[[START]] : index
// CHECK-NEXT:      %[[ROW_END:.*]] = arith.addi %[[START]], %c6 : index
// CHECK-NEXT:      %[[CUT:.*]] = arith.minui %[[END]], %[[ROW_END]] : index
// CHECK-NEXT:      %[[HI:.*]] = arith.maxui %[[LO]], %[[CUT]] : index
// CHECK-NEXT:      %[[ROW1:.*]] = arith.addi %[[ROW]], %c1 : index
// CHECK:           loop.for %[[C:.*]] = %c0 to %c4 step %c1 {
// CHECK-NEXT:        loop.for %[[KH:.*]] = %c0 to %c3 step %c1 {
// CHECK-NEXT:          loop.for %[[KW:.*]] = %c0 to %c3 step %c1 {
// CHECK-NEXT:            loop.for %[[Q:.*]] = %[[LO]] to %[[HI]] step %c1 vectorized {
// CHECK-NEXT:              %[[OW:.*]] = arith.subi %[[Q]], %[[START]] : index
// CHECK-NEXT:              %[[J:.*]] = arith.subi %[[Q]], %[[JT]] : index
// CHECK-NEXT:              %[[H:.*]] = arith.addi %[[ROW]], %[[KH]] : index
// CHECK-NEXT:              %[[W:.*]] = arith.addi %[[OW]], %[[KW]] : index
// CHECK-NEXT:              %[[X:.*]] = memref.load %pad[%c0, %[[C]], %[[H]], %[[W]]] : memref<1x4x8x8xf32>
// CHECK-NEXT:              memref.store %[[X]], %[[PANEL]][%[[C]], %[[KH]], %[[KW]], %[[J]]] : memref<4x3x3x12xf32>
// CHECK-NEXT:            }
// CHECK-NEXT:            loop.for %{{.*}} = %{{.*}} to %{{.*}} step %c1 vectorized {
// CHECK:                   memref.load %pad[%c0, %[[C]], %{{.*}}, %{{.*}}] : memref<1x4x8x8xf32>
// CHECK:                 }
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NOT:       arith.remui
// CHECK:           loop.for %{{.*}} = %c0 to %c16 step %c4 {

// -----

// A strided window would be packed by gathers (`ow * 2 + kw` is not contiguous in the
// column): a 3x3 convolution of stride 2 keeps the output channels as its columns when its
// plane is larger than one column tile. Its panel is the weights.

loop.func @conv3x3_stride2(%x: memref<1x4x13x13xf32>, %w: memref<16x4x3x3xf32>) outs(%y: memref<1x16x6x6xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %c16 = arith.constant 16 : index
  %cst = arith.constant 0.000000e+00 : f32
  loop.for %i = %c0 to %c16 step %c1 {
    loop.for %i_1 = %c0 to %c6 step %c1 {
      loop.for %i_2 = %c0 to %c6 step %c1 {
        memref.store %cst, %y[%c0, %i, %i_1, %i_2] : memref<1x16x6x6xf32>
        loop.for %k = %c0 to %c4 step %c1 {
          loop.for %k_1 = %c0 to %c3 step %c1 {
            loop.for %k_2 = %c0 to %c3 step %c1 {
              %0 = arith.muli %i_1, %c2 : index
              %1 = arith.addi %0, %k_1 : index
              %2 = arith.muli %i_2, %c2 : index
              %3 = arith.addi %2, %k_2 : index
              %4 = memref.load %x[%c0, %k, %1, %3] : memref<1x4x13x13xf32>
              %5 = memref.load %w[%i, %k, %k_1, %k_2] : memref<16x4x3x3xf32>
              %6 = arith.mulf %4, %5 fastmath<contract> : f32
              %7 = memref.load %y[%c0, %i, %i_1, %i_2] : memref<1x16x6x6xf32>
              %8 = arith.addf %7, %6 fastmath<contract> : f32
              memref.store %8, %y[%c0, %i, %i_1, %i_2] : memref<1x16x6x6xf32>
            }
          }
        }
      }
    }
  }
  loop.return
}

// CHECK-LABEL: loop.func @conv3x3_stride2
// CHECK:         %[[PANEL:.*]] = loop.alloc {fusion.private} : memref<4x3x3x{{[0-9]+}}xf32>
// CHECK-NOT:     arith.divui
// CHECK-NOT:     arith.maxui

// -----

// A 3x3 convolution whose 3 x 3 output plane fits one column tile collapses its pixels (its
// im2col panel is packed once) and broadcasts its weights `w[o, c, kh, kw]`: their subscripts
// are the reduction loops in order, so the micro-kernel runs them as one loop over
// `k = (c * 3 + kh) * 3 + kw` (36 steps), not as a nest of 3-step loops; the LLVM lowering
// folds the digits of `k` back into one affine address.

loop.func @conv3x3_small_plane(%x: memref<1x4x5x5xf32>, %w: memref<16x4x3x3xf32>, %b: memref<1x16x1x1xf32>) outs(%y: memref<1x16x3x3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c3 = arith.constant 3 : index
  %cst = arith.constant 0.000000e+00 : f32
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c16 step %c1 {
    loop.for %i_1 = %c0 to %c3 step %c1 {
      loop.for %i_2 = %c0 to %c3 step %c1 {
        memref.store %cst, %y[%c0, %i, %i_1, %i_2] : memref<1x16x3x3xf32>
        loop.for %k = %c0 to %c4 step %c1 {
          loop.for %k_1 = %c0 to %c3 step %c1 {
            loop.for %k_2 = %c0 to %c3 step %c1 {
              %0 = arith.addi %i_1, %k_1 : index
              %1 = arith.addi %i_2, %k_2 : index
              %2 = memref.load %x[%c0, %k, %0, %1] : memref<1x4x5x5xf32>
              %3 = memref.load %w[%i, %k, %k_1, %k_2] : memref<16x4x3x3xf32>
              %4 = arith.mulf %2, %3 fastmath<contract> : f32
              %5 = memref.load %y[%c0, %i, %i_1, %i_2] : memref<1x16x3x3xf32>
              %6 = arith.addf %5, %4 fastmath<contract> : f32
              memref.store %6, %y[%c0, %i, %i_1, %i_2] : memref<1x16x3x3xf32>
            }
          }
        }
        %7 = memref.load %y[%c0, %i, %i_1, %i_2] : memref<1x16x3x3xf32>
        %8 = memref.load %b[%c0, %i, %c0, %c0] : memref<1x16x1x1xf32>
        %9 = arith.addf %7, %8 : f32
        %10 = arith.maximumf %9, %cst : f32
        memref.store %10, %y[%c0, %i, %i_1, %i_2] : memref<1x16x3x3xf32>
      }
    }
  }
  loop.return
}

// CHECK-LABEL: loop.func @conv3x3_small_plane
// CHECK:         %[[PANEL:.*]] = loop.alloc {fusion.private} : memref<4x3x3x12xf32>
// CHECK:         loop.for %[[K:.*]] = %c0 to %c36 step %c1 attributes {fusion.rolled} {
// CHECK-NEXT:      %[[C:.*]] = arith.divui %[[K]], %c9 : index
// CHECK-NEXT:      %[[T:.*]] = arith.divui %[[K]], %c3 : index
// CHECK-NEXT:      %[[KH:.*]] = arith.remui %[[T]], %c3 : index
// CHECK-NEXT:      %[[KW:.*]] = arith.remui %[[K]], %c3 : index
// CHECK-NEXT:      loop.for %[[JJ:.*]] = %c0 to %c12 step %c1 {
// CHECK-NEXT:        memref.load %[[PANEL]][%[[C]], %[[KH]], %[[KW]], %[[JJ]]] : memref<4x3x3x12xf32>
// CHECK-NEXT:        memref.load %w[%{{.*}}, %[[C]], %[[KH]], %[[KW]]] : memref<16x4x3x3xf32>

// -----

// On rows of two vectors or more (10 pixels, 4-lane vectors here), the window's rows are copies
// in each row's loop (three loads and stores per vector, rows apart) rather than a loop
// around it: a third as many loops to enter, each with its masked last vector. The window's
// columns stay a loop: copies one element apart in one loop are what LLVM's load PRE turns
// into a value carried across iterations, which it cannot vectorise
// (`tests/lowering/test_pack_by_rows.py`). On shorter rows (`@conv3x3` above: 6 pixels) every
// step keeps its loop.

loop.func @conv3x3_wide_rows(%in0: memref<1x2x10x10xf32>, %in1: memref<8x2x3x3xf32>) outs(%out0: memref<1x8x10x10xf32>) pattern out_ewise_fusable {
  %pad = loop.alloc : memref<1x2x12x12xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c12 = arith.constant 12 : index
  %c11 = arith.constant 11 : index
  %c10 = arith.constant 10 : index
  %cst = arith.constant 0.000000e+00 : f32
  %c8 = arith.constant 8 : index
  %c3 = arith.constant 3 : index
  loop.for %i = %c0 to %c1 step %c1 {
    loop.for %i_1 = %c0 to %c2 step %c1 {
      loop.for %i_2 = %c0 to %c12 step %c1 {
        loop.for %i_3 = %c0 to %c12 step %c1 {
          %0 = arith.cmpi sge, %i_2, %c1 : index
          %1 = arith.cmpi slt, %i_2, %c11 : index
          %2 = arith.maxsi %i_2, %c1 : index
          %3 = arith.minsi %2, %c10 : index
          %4 = arith.subi %3, %c1 : index
          %5 = arith.cmpi sge, %i_3, %c1 : index
          %6 = arith.cmpi slt, %i_3, %c11 : index
          %7 = arith.maxsi %i_3, %c1 : index
          %8 = arith.minsi %7, %c10 : index
          %9 = arith.subi %8, %c1 : index
          %10 = memref.load %in0[%i, %i_1, %4, %9] : memref<1x2x10x10xf32>
          %11 = arith.select %0, %10, %cst : f32
          %12 = arith.select %1, %11, %cst : f32
          %13 = arith.select %5, %12, %cst : f32
          %14 = arith.select %6, %13, %cst : f32
          memref.store %14, %pad[%i, %i_1, %i_2, %i_3] : memref<1x2x12x12xf32>
        }
      }
    }
  }
  loop.for %i_4 = %c0 to %c1 step %c1 {
    loop.for %i_5 = %c0 to %c8 step %c1 {
      loop.for %i_6 = %c0 to %c10 step %c1 {
        loop.for %i_7 = %c0 to %c10 step %c1 {
          memref.store %cst, %out0[%i_4, %i_5, %i_6, %i_7] : memref<1x8x10x10xf32>
          loop.for %k = %c0 to %c2 step %c1 {
            loop.for %k_1 = %c0 to %c3 step %c1 {
              loop.for %k_2 = %c0 to %c3 step %c1 {
                %15 = arith.addi %i_6, %k_1 : index
                %16 = arith.addi %i_7, %k_2 : index
                %17 = memref.load %pad[%i_4, %k, %15, %16] : memref<1x2x12x12xf32>
                %18 = memref.load %in1[%i_5, %k, %k_1, %k_2] : memref<8x2x3x3xf32>
                %19 = arith.mulf %17, %18 fastmath<contract> : f32
                %20 = memref.load %out0[%i_4, %i_5, %i_6, %i_7] : memref<1x8x10x10xf32>
                %21 = arith.addf %20, %19 fastmath<contract> : f32
                memref.store %21, %out0[%i_4, %i_5, %i_6, %i_7] : memref<1x8x10x10xf32>
              }
            }
          }
        }
      }
    }
  }
  loop.return
}

// CHECK-LABEL: loop.func @conv3x3_wide_rows
// CHECK:           %[[PANEL:.*]] = loop.alloc {fusion.private} : memref<2x3x3x12xf32>
// CHECK:           loop.for %[[C:.*]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:        loop.for %[[KW:.*]] = %c0 to %c3 step %c1 {
// CHECK-NEXT:          loop.for %[[Q:.*]] = %{{.*}} to %{{.*}} step %c1 vectorized {
// CHECK-NEXT:            %[[OW:.*]] = arith.subi %[[Q]], %{{.*}} : index
// CHECK-NEXT:            %[[J:.*]] = arith.subi %[[Q]], %{{.*}} : index
// CHECK-NEXT:            %[[H0:.*]] = arith.addi %[[ROW:.*]], %c0 : index
// CHECK-NEXT:            %[[W:.*]] = arith.addi %[[OW]], %[[KW]] : index
// CHECK-NEXT:            %[[X:.*]] = memref.load %pad[%{{.*}}, %[[C]], %[[H0]], %[[W]]] : memref<1x2x12x12xf32>
// CHECK-NEXT:            memref.store %[[X]], %[[PANEL]][%[[C]], %c0, %[[KW]], %[[J]]] : memref<2x3x3x12xf32>
// CHECK-NEXT:            %[[H1:.*]] = arith.addi %[[ROW]], %c1 : index
// CHECK:                 memref.store %{{.*}}, %[[PANEL]][%[[C]], %c1, %[[KW]], %[[J]]] : memref<2x3x3x12xf32>
// CHECK-NEXT:            %[[H2:.*]] = arith.addi %[[ROW]], %c2 : index
// CHECK:                 memref.store %{{.*}}, %[[PANEL]][%[[C]], %c2, %[[KW]], %[[J]]] : memref<2x3x3x12xf32>
// CHECK-NEXT:          }
