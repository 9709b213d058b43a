// RUN: fusion-opt %s --split-input-file -p 'schedule-contractions{rows=2 cols=8 vector-width=4 registers=16 cores=2}' | filecheck %s
// RUN: fusion-opt %s --split-input-file -p 'schedule-contractions{rows=2 cols=8 vector-width=4 registers=16 cores=1}' | filecheck %s --check-prefix=ONE

// Which loop of the packed schedule runs in parallel: the outermost whose iterations divide
// evenly among the cores (balance >= 0.9), unless a loop inside it balances better and has
// enough work per launch (2^14 innermost iterations, the lowering's threshold).
// 40 columns in tiles of 8 are 5 column tiles: on 2 cores one thread runs 3 of them, the
// other 2 (balance 5/6). The 4 row tiles inside each split 2 + 2, and each launch of them runs
// 4 x 512 x 8 reduction steps: they are the parallel loop, launched once per column tile;
// the panel is packed before each launch. On 1 core every loop balances: the column tiles.

loop.func @five_column_tiles(%a: memref<8x512xf32>, %b: memref<512x40xf32>) outs(%c: memref<8x40xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c40 = arith.constant 40 : index
  %c512 = arith.constant 512 : index
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %c8 step %c1 {
    loop.for %j = %c0 to %c40 step %c1 {
      memref.store %zero, %c[%i, %j] : memref<8x40xf32>
      loop.for %k = %c0 to %c512 step %c1 {
        %x = memref.load %a[%i, %k] : memref<8x512xf32>
        %y = memref.load %b[%k, %j] : memref<512x40xf32>
        %p = arith.mulf %x, %y fastmath<contract> : f32
        %o = memref.load %c[%i, %j] : memref<8x40xf32>
        %s = arith.addf %o, %p fastmath<contract> : f32
        memref.store %s, %c[%i, %j] : memref<8x40xf32>
      }
    }
  }
}

// CHECK-LABEL: loop.func @five_column_tiles
// CHECK:         loop.for %[[JT:.*]] = %c0 to %c40 step %c8 {
// CHECK-NEXT:      %[[PANEL:.*]] = loop.alloc {fusion.private} : memref<512x8xf32>
// CHECK:           loop.for %[[IT:.*]] = %c0 to %c8 step %c2 parallel {
// CHECK-NEXT:        %[[ACC:.*]] = loop.alloc {fusion.private} : memref<2x8xf32>
// CHECK-NOT:     parallel

// ONE-LABEL:   loop.func @five_column_tiles
// ONE:           loop.for %[[JT:.*]] = %c0 to %c40 step %c8 parallel {
// ONE:             loop.for %[[IT:.*]] = %c0 to %c8 step %c2 {
// ONE-NOT:       parallel

// -----

// The same grid over a reduction of 4: a launch of the row tiles would run 4 x 4 x 8 steps,
// too few for a team, so the column tiles stay the parallel loop, imbalance and all.

loop.func @little_work(%a: memref<8x4xf32>, %b: memref<4x40xf32>) outs(%c: memref<8x40xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c40 = arith.constant 40 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %c8 step %c1 {
    loop.for %j = %c0 to %c40 step %c1 {
      memref.store %zero, %c[%i, %j] : memref<8x40xf32>
      loop.for %k = %c0 to %c4 step %c1 {
        %x = memref.load %a[%i, %k] : memref<8x4xf32>
        %y = memref.load %b[%k, %j] : memref<4x40xf32>
        %p = arith.mulf %x, %y fastmath<contract> : f32
        %o = memref.load %c[%i, %j] : memref<8x40xf32>
        %s = arith.addf %o, %p fastmath<contract> : f32
        memref.store %s, %c[%i, %j] : memref<8x40xf32>
      }
    }
  }
}

// CHECK-LABEL: loop.func @little_work
// CHECK:         loop.for %[[JT:.*]] = %c0 to %c40 step %c8 parallel {
// CHECK:           loop.for %[[IT:.*]] = %c0 to %c8 step %c2 {
// CHECK-NOT:     parallel

// ONE-LABEL:   loop.func @little_work
// ONE:           loop.for %[[JT:.*]] = %c0 to %c40 step %c8 parallel {
