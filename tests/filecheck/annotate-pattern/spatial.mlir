// Kernels without reduction loops: every load is compared with the store's subscripts.
// RUN: fusion-opt %s --split-input-file -p annotate-pattern | filecheck %s

// Every load reads the stored element: elemwise.
// CHECK-LABEL: loop.func @add(
// CHECK-SAME:  pattern elemwise {
loop.func @add(%a: memref<4xf32>, %b: memref<4xf32>) outs(%c: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 {
    %x = memref.load %a[%i] : memref<4xf32>
    %y = memref.load %b[%i] : memref<4xf32>
    %s = arith.addf %x, %y : f32
    memref.store %s, %c[%i] : memref<4xf32>
  }
  loop.return
}

// -----

// The bias is a broadcast load (its unit dims indexed by 0), next to an elemwise load: elemwise.
// CHECK-LABEL: loop.func @bias_add(
// CHECK-SAME:  pattern elemwise {
loop.func @bias_add(%a: memref<1x4x3x3xf32>, %b: memref<1x4x1x1xf32>) outs(%c: memref<1x4x3x3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  loop.for %n = %c0 to %c1 step %c1 {
    loop.for %f = %c0 to %c4 step %c1 {
      loop.for %y = %c0 to %c3 step %c1 {
        loop.for %x = %c0 to %c3 step %c1 {
          %va = memref.load %a[%n, %f, %y, %x] : memref<1x4x3x3xf32>
          %vb = memref.load %b[%c0, %f, %c0, %c0] : memref<1x4x1x1xf32>
          %s = arith.addf %va, %vb : f32
          memref.store %s, %c[%n, %f, %y, %x] : memref<1x4x3x3xf32>
        }
      }
    }
  }
  loop.return
}

// -----

// The only load reads the store's subscripts with the new unit axis %u dropped: broadcast.
// CHECK-LABEL: loop.func @expand_dims(
// CHECK-SAME:  pattern broadcast {
loop.func @expand_dims(%x: memref<2x3xf32>) outs(%y: memref<2x1x3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  loop.for %i = %c0 to %c2 step %c1 {
    loop.for %u = %c0 to %c1 step %c1 {
      loop.for %j = %c0 to %c3 step %c1 {
        %v = memref.load %x[%i, %j] : memref<2x3xf32>
        memref.store %v, %y[%i, %u, %j] : memref<2x1x3xf32>
      }
    }
  }
  loop.return
}

// -----

// The store's variables in another order: injective.
// CHECK-LABEL: loop.func @transpose(
// CHECK-SAME:  pattern injective {
loop.func @transpose(%x: memref<2x3xf32>) outs(%y: memref<3x2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  loop.for %i = %c0 to %c3 step %c1 {
    loop.for %j = %c0 to %c2 step %c1 {
      %v = memref.load %x[%j, %i] : memref<2x3xf32>
      memref.store %v, %y[%i, %j] : memref<3x2xf32>
    }
  }
  loop.return
}

// -----

// Subscripts computed from the store's variables (flat index, then divui/remui): injective.
// CHECK-LABEL: loop.func @reshape(
// CHECK-SAME:  pattern injective {
loop.func @reshape(%x: memref<2x6xf32>) outs(%y: memref<3x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  loop.for %i = %c0 to %c3 step %c1 {
    loop.for %j = %c0 to %c4 step %c1 {
      %row = arith.muli %i, %c4 : index
      %flat = arith.addi %row, %j : index
      %xi = arith.divui %flat, %c6 : index
      %xj = arith.remui %flat, %c6 : index
      %v = memref.load %x[%xi, %xj] : memref<2x6xf32>
      memref.store %v, %y[%i, %j] : memref<3x4xf32>
    }
  }
  loop.return
}

// -----

// A padded read: the subscript is clamped into range and the pad value selected: injective.
// CHECK-LABEL: loop.func @pad(
// CHECK-SAME:  pattern injective {
loop.func @pad(%x: memref<4xf32>) outs(%y: memref<6xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %zero = arith.constant 0.000000e+00 : f32
  loop.for %i = %c0 to %c6 step %c1 {
    %p = arith.subi %i, %c1 : index
    %low = arith.maxsi %p, %c0 : index
    %clamped = arith.minsi %low, %c3 : index
    %above = arith.cmpi sge, %i, %c1 : index
    %below = arith.cmpi slt, %i, %c5 : index
    %inside = arith.andi %above, %below : i1
    %v = memref.load %x[%clamped] : memref<4xf32>
    %r = arith.select %inside, %v, %zero : f32
    memref.store %r, %y[%i] : memref<6xf32>
  }
  loop.return
}

// -----

// A rank-0 operand (`%s[]`) is a broadcast load; with an elemwise load next to it: elemwise.
// CHECK-LABEL: loop.func @add_scalar(
// CHECK-SAME:  pattern elemwise {
loop.func @add_scalar(%a: memref<4xf32>, %s: memref<f32>) outs(%c: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 {
    %x = memref.load %a[%i] : memref<4xf32>
    %y = memref.load %s[] : memref<f32>
    %r = arith.addf %x, %y : f32
    memref.store %r, %c[%i] : memref<4xf32>
  }
  loop.return
}

// -----

// A unit axis indexed by 0 in the load is left out: squeeze is elemwise.
// CHECK-LABEL: loop.func @squeeze(
// CHECK-SAME:  pattern elemwise {
loop.func @squeeze(%x: memref<2x1x3xf32>) outs(%y: memref<2x3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  loop.for %i = %c0 to %c2 step %c1 {
    loop.for %j = %c0 to %c3 step %c1 {
      %v = memref.load %x[%i, %c0, %j] : memref<2x1x3xf32>
      memref.store %v, %y[%i, %j] : memref<2x3xf32>
    }
  }
  loop.return
}
