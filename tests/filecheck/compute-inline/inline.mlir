// RUN: fusion-opt %s --split-input-file -p 'compute-inline' | filecheck %s

// A transpose of a reshape: the reshape's load is recomputed at the transpose's read, with
// the producer's induction variables replaced by the read's subscripts; the intermediate
// and its nest disappear.

loop.func @reshape_transpose(%q: memref<4x8xf32>) outs(%out: memref<4x2x4xf32>) {
  %t = loop.alloc : memref<2x4x4xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  loop.for %a = %c0 to %c2 step %c1 {
    loop.for %b = %c0 to %c4 step %c1 {
      loop.for %c = %c0 to %c4 step %c1 {
        %row = arith.muli %a, %c2 : index
        %r = arith.divui %b, %c2 : index
        %i = arith.addi %row, %r : index
        %m = arith.remui %b, %c2 : index
        %m4 = arith.muli %m, %c4 : index
        %j = arith.addi %m4, %c : index
        %v = memref.load %q[%i, %j] : memref<4x8xf32>
        memref.store %v, %t[%a, %b, %c] : memref<2x4x4xf32>
      }
    }
  }
  loop.for %x = %c0 to %c4 step %c1 {
    loop.for %y = %c0 to %c2 step %c1 {
      loop.for %z = %c0 to %c4 step %c1 {
        %w = memref.load %t[%y, %x, %z] : memref<2x4x4xf32>
        memref.store %w, %out[%x, %y, %z] : memref<4x2x4xf32>
      }
    }
  }
}

// CHECK-LABEL: loop.func @reshape_transpose
// CHECK-NOT:     loop.alloc
// CHECK:         loop.for %[[X:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      loop.for %[[Y:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        loop.for %[[Z:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:          %[[ROW:.*]] = arith.muli %[[Y]], %c2
// CHECK-NEXT:          %[[R:.*]] = arith.divui %[[X]], %c2
// CHECK-NEXT:          %[[I:.*]] = arith.addi %[[ROW]], %[[R]]
// CHECK-NEXT:          %[[M:.*]] = arith.remui %[[X]], %c2
// CHECK-NEXT:          %[[M4:.*]] = arith.muli %[[M]], %c4
// CHECK-NEXT:          %[[J:.*]] = arith.addi %[[M4]], %[[Z]]
// CHECK-NEXT:          %[[V:.*]] = memref.load %q[%[[I]], %[[J]]]
// CHECK-NEXT:          memref.store %[[V]], %out[%[[X]], %[[Y]], %[[Z]]]
// CHECK-NOT:     loop.for

// -----

// A pad (guarded, clamped load) read by a reduction stays materialised: inlining would
// recompute it for every reduction step.

loop.func @pad_sum(%x: memref<4xf32>) outs(%s: memref<3xf32>) {
  %p = loop.alloc : memref<6xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %c6 step %c1 {
    %in = arith.cmpi sge, %i, %c1 : index
    %lo = arith.maxsi %i, %c1 : index
    %hi = arith.minsi %lo, %c5 : index
    %j = arith.subi %hi, %c1 : index
    %v = memref.load %x[%j] : memref<4xf32>
    %g = arith.select %in, %v, %zero : f32
    memref.store %g, %p[%i] : memref<6xf32>
  }
  loop.for %o = %c0 to %c3 step %c1 {
    memref.store %zero, %s[%o] : memref<3xf32>
    loop.for %k = %c0 to %c3 step %c1 {
      %e = arith.addi %o, %k : index
      %w = memref.load %p[%e] : memref<6xf32>
      %a = memref.load %s[%o] : memref<3xf32>
      %n = arith.addf %a, %w : f32
      memref.store %n, %s[%o] : memref<3xf32>
    }
  }
}

// CHECK-LABEL: loop.func @pad_sum
// CHECK:         %[[P:.*]] = loop.alloc : memref<6xf32>
// CHECK:         memref.store %{{.*}}, %[[P]]
// CHECK:         memref.load %[[P]]

// -----

// A producer doing float arithmetic is not inlined (it would be recomputed at every read).

loop.func @exp_transpose(%q: memref<2x4xf32>) outs(%out: memref<4x2xf32>) {
  %t = loop.alloc : memref<2x4xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  loop.for %a = %c0 to %c2 step %c1 {
    loop.for %b = %c0 to %c4 step %c1 {
      %v = memref.load %q[%a, %b] : memref<2x4xf32>
      %e = math.exp %v : f32
      memref.store %e, %t[%a, %b] : memref<2x4xf32>
    }
  }
  loop.for %x = %c0 to %c4 step %c1 {
    loop.for %y = %c0 to %c2 step %c1 {
      %w = memref.load %t[%y, %x] : memref<2x4xf32>
      memref.store %w, %out[%x, %y] : memref<4x2xf32>
    }
  }
}

// CHECK-LABEL: loop.func @exp_transpose
// CHECK:         %[[T:.*]] = loop.alloc : memref<2x4xf32>
// CHECK:         math.exp
// CHECK:         memref.store %{{.*}}, %[[T]]
// CHECK:         memref.load %[[T]]
// CHECK-NOT:     math.exp
