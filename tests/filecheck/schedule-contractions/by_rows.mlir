// RUN: fusion-opt %s -p 'schedule-contractions{rows=6 cols=8 vector-width=4 registers=16 cores=1}' | filecheck %s --check-prefix=ROWS
// RUN: fusion-opt %s -p 'schedule-contractions{rows=5 cols=8 vector-width=4 registers=16 cores=1}' | filecheck %s --check-prefix=COLS

// The order of a register tile's reduction step (contraction_tiles.steps_by_rows), on a host
// of 16 registers of four lanes. A tile of 6 rows x 2 vectors holds 12 accumulators; with
// its 6 broadcasts live at once (one loop over the columns for every row: LLVM loads every
// row's broadcast first) it would need 19 registers, so each row gets a loop over the
// columns of its own, which loads the panel and updates that row (the panel's loads are the
// same in every row's loop: LLVM merges them): 12 accumulators, 2 panel vectors and one
// broadcast. A tile of 5 rows fits the usual order (10 + 5 + 1 registers): one loop, every
// row's update in it.

loop.func @matmul_by_rows(%a: memref<6x5xf32>, %b: memref<5x16xf32>) outs(%c: memref<6x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %c6 step %c1 {
    loop.for %j = %c0 to %c16 step %c1 {
      memref.store %zero, %c[%i, %j] : memref<6x16xf32>
      loop.for %k = %c0 to %c5 step %c1 {
        %x = memref.load %a[%i, %k] : memref<6x5xf32>
        %y = memref.load %b[%k, %j] : memref<5x16xf32>
        %p = arith.mulf %x, %y fastmath<contract> : f32
        %o = memref.load %c[%i, %j] : memref<6x16xf32>
        %s = arith.addf %o, %p fastmath<contract> : f32
        memref.store %s, %c[%i, %j] : memref<6x16xf32>
      }
    }
  }
}

// ROWS-LABEL: loop.func @matmul_by_rows
// ROWS:         loop.for %[[K:.*]] = %c0 to %c5 step %c1 attributes {fusion.rolled} {
// ROWS-NEXT:      loop.for %[[JJ0:.*]] = %c0 to %c8 step %c1 {
// ROWS-NEXT:        %[[P0:.*]] = memref.load %panel[%[[K]], %[[JJ0]]]
// ROWS-NEXT:        %[[Y0:.*]] = memref.load %{{.*}}[{{.*}}]
// ROWS-NEXT:        %[[M0:.*]] = arith.mulf
// ROWS-NEXT:        %[[O0:.*]] = memref.load %[[ACC:.*]][%c0, %[[JJ0]]]
// ROWS-NEXT:        %[[S0:.*]] = arith.addf %[[O0]], %[[M0]]
// ROWS-NEXT:        memref.store %[[S0]], %[[ACC]][%c0, %[[JJ0]]]
// ROWS-NEXT:      }
// ROWS-NEXT:      loop.for %[[JJ1:.*]] = %c0 to %c8 step %c1 {
// ROWS-NEXT:        %[[P1:.*]] = memref.load %panel[%[[K]], %[[JJ1]]]
// ROWS:             memref.store %{{.*}}, %[[ACC]][%c1, %[[JJ1]]]
// ROWS-NEXT:      }
// ROWS-NEXT:      loop.for
// ROWS:             memref.store %{{.*}}, %[[ACC]][%c2,
// ROWS-NEXT:      }
// ROWS-NEXT:      loop.for
// ROWS:             memref.store %{{.*}}, %[[ACC]][%c3,
// ROWS-NEXT:      }
// ROWS-NEXT:      loop.for
// ROWS:             memref.store %{{.*}}, %[[ACC]][%c4,
// ROWS-NEXT:      }
// ROWS-NEXT:      loop.for %[[JJ5:.*]] = %c0 to %c8 step %c1 {
// ROWS-NEXT:        %[[P5:.*]] = memref.load %panel[%[[K]], %[[JJ5]]]
// ROWS:             memref.store %{{.*}}, %[[ACC]][%c5, %[[JJ5]]]
// ROWS-NEXT:      }
// ROWS-NEXT:    }

// COLS-LABEL: loop.func @matmul_by_rows
// COLS:         loop.for %[[K:.*]] = %c0 to %c5 step %c1 attributes {fusion.rolled} {
// COLS-NEXT:      loop.for %[[JJ:.*]] = %c0 to %c8 step %c1 {
// COLS-NEXT:        %[[P:.*]] = memref.load %panel[%[[K]], %[[JJ]]]
// COLS:             memref.store %{{.*}}, %[[ACC:.*]][%c0, %[[JJ]]]
// COLS:             memref.store %{{.*}}, %[[ACC]][%c1, %[[JJ]]]
// COLS:             memref.store %{{.*}}, %[[ACC]][%c2, %[[JJ]]]
// COLS:             memref.store %{{.*}}, %[[ACC]][%c3, %[[JJ]]]
// COLS:             memref.store %{{.*}}, %[[ACC]][%c4, %[[JJ]]]
// COLS-NEXT:      }
// COLS-NEXT:    }
