// apache/tvm tests/python/relax/test_transform_annotate_tir_op_pattern.py::test_annotate_opkind_pooling:
// a padding block into a temporary (TIR's if_then_else: a clamped load and a select), then
// tensor[n, c, y, x] = max over (ry, rx) of pad[n, c, 2y + ry, 2x + rx]: out_ewise_fusable.
// (TVM's 1x64x112x112 input is 1x2x6x6 here; the kind does not depend on sizes.)
// RUN: fusion-opt %s -p annotate-pattern | filecheck %s

// CHECK: loop.func @max_pool2d(
// CHECK-SAME: pattern out_ewise_fusable {
loop.func @max_pool2d(%in: memref<1x2x6x6xf32>) outs(%out: memref<1x2x3x3xf32>) {
  %pad = loop.alloc : memref<1x2x8x8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %lowest = arith.constant -3.40282347E+38 : f32
  loop.for %n = %c0 to %c1 step %c1 {
    loop.for %c = %c0 to %c2 step %c1 {
      loop.for %y = %c0 to %c8 step %c1 {
        loop.for %x = %c0 to %c8 step %c1 {
          %ym = arith.maxsi %y, %c1 : index
          %ymm = arith.minsi %ym, %c7 : index
          %yi = arith.subi %ymm, %c1 : index
          %xm = arith.maxsi %x, %c1 : index
          %xmm = arith.minsi %xm, %c7 : index
          %xi = arith.subi %xmm, %c1 : index
          %v = memref.load %in[%n, %c, %yi, %xi] : memref<1x2x6x6xf32>
          %y_lo = arith.cmpi uge, %y, %c1 : index
          %y_hi = arith.cmpi ult, %y, %c7 : index
          %x_lo = arith.cmpi uge, %x, %c1 : index
          %x_hi = arith.cmpi ult, %x, %c7 : index
          %a = arith.andi %y_lo, %y_hi : i1
          %b = arith.andi %x_lo, %x_hi : i1
          %inside = arith.andi %a, %b : i1
          %p = arith.select %inside, %v, %lowest : f32
          memref.store %p, %pad[%n, %c, %y, %x] : memref<1x2x8x8xf32>
        }
      }
    }
  }
  loop.for %n = %c0 to %c1 step %c1 {
    loop.for %c = %c0 to %c2 step %c1 {
      loop.for %y = %c0 to %c3 step %c1 {
        loop.for %x = %c0 to %c3 step %c1 {
          memref.store %lowest, %out[%n, %c, %y, %x] : memref<1x2x3x3xf32>
          loop.for %ry = %c0 to %c3 step %c1 {
            loop.for %rx = %c0 to %c3 step %c1 {
              %y2 = arith.muli %y, %c2 : index
              %iy = arith.addi %y2, %ry : index
              %x2 = arith.muli %x, %c2 : index
              %ix = arith.addi %x2, %rx : index
              %old = memref.load %out[%n, %c, %y, %x] : memref<1x2x3x3xf32>
              %w = memref.load %pad[%n, %c, %iy, %ix] : memref<1x2x8x8xf32>
              %m = arith.maximumf %old, %w : f32
              memref.store %m, %out[%n, %c, %y, %x] : memref<1x2x3x3xf32>
            }
          }
        }
      }
    }
  }
  loop.return
}
