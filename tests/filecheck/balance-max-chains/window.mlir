// RUN: fusion-opt %s -p balance-max-chains | filecheck %s

// A 1x4 max window unrolled into its loop and kept in a register (what unroll-reductions and
// clean-up-kernels leave of max_pool2d): a chain of four `nan_max` steps from -inf. It becomes
// a NaN test of the terms in pairs, a balanced tree of plain maxima of the same terms in the
// same order, without the -inf (max(max(t0, t1), max(t2, t3)), `max(a, b)` keeping `a` on
// ties), and the canonical NaN selected where a term is NaN.

loop.func @pool(%x: memref<8x16xf32>) outs(%y: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %ninf = arith.constant 0xFF800000 : f32
  %qnan = arith.constant 0x7FC00000 : f32
  loop.for %i = %c0 to %c8 step %c1 {
    loop.for %j = %c0 to %c4 step %c1 {
      %base = arith.muli %j, %c4 : index
      %k1 = arith.addi %base, %c1 : index
      %k2 = arith.addi %base, %c2 : index
      %k3 = arith.addi %base, %c3 : index
      %t0 = memref.load %x[%i, %base] : memref<8x16xf32>
      %t1 = memref.load %x[%i, %k1] : memref<8x16xf32>
      %t2 = memref.load %x[%i, %k2] : memref<8x16xf32>
      %t3 = memref.load %x[%i, %k3] : memref<8x16xf32>
      %g0 = arith.cmpf ogt, %t0, %ninf : f32
      %l0 = arith.select %g0, %t0, %ninf : f32
      %n0 = arith.cmpf uno, %t0, %t0 : f32
      %m0 = arith.select %n0, %qnan, %l0 : f32
      %g1 = arith.cmpf ogt, %t1, %m0 : f32
      %l1 = arith.select %g1, %t1, %m0 : f32
      %n1 = arith.cmpf uno, %t1, %t1 : f32
      %m1 = arith.select %n1, %qnan, %l1 : f32
      %g2 = arith.cmpf ogt, %t2, %m1 : f32
      %l2 = arith.select %g2, %t2, %m1 : f32
      %n2 = arith.cmpf uno, %t2, %t2 : f32
      %m2 = arith.select %n2, %qnan, %l2 : f32
      %g3 = arith.cmpf ogt, %t3, %m2 : f32
      %l3 = arith.select %g3, %t3, %m2 : f32
      %n3 = arith.cmpf uno, %t3, %t3 : f32
      %m3 = arith.select %n3, %qnan, %l3 : f32
      memref.store %m3, %y[%i, %j] : memref<8x4xf32>
    }
  }
  loop.return
}

// CHECK-LABEL: loop.func @pool
// CHECK:         %[[QNAN:.*]] = arith.constant 0x7fc00000 : f32
// CHECK:         %[[T0:.*]] = memref.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<8x16xf32>
// CHECK-NEXT:    %[[T1:.*]] = memref.load
// CHECK-NEXT:    %[[T2:.*]] = memref.load
// CHECK-NEXT:    %[[T3:.*]] = memref.load
// CHECK-NEXT:    %[[N01:.*]] = arith.cmpf uno, %[[T0]], %[[T1]] : f32
// CHECK-NEXT:    %[[N23:.*]] = arith.cmpf uno, %[[T2]], %[[T3]] : f32
// CHECK-NEXT:    %[[G01:.*]] = arith.cmpf ogt, %[[T1]], %[[T0]] : f32
// CHECK-NEXT:    %[[M01:.*]] = arith.select %[[G01]], %[[T1]], %[[T0]] : f32
// CHECK-NEXT:    %[[G23:.*]] = arith.cmpf ogt, %[[T3]], %[[T2]] : f32
// CHECK-NEXT:    %[[M23:.*]] = arith.select %[[G23]], %[[T3]], %[[T2]] : f32
// CHECK-NEXT:    %[[G:.*]] = arith.cmpf ogt, %[[M23]], %[[M01]] : f32
// CHECK-NEXT:    %[[M:.*]] = arith.select %[[G]], %[[M23]], %[[M01]] : f32
// CHECK-NEXT:    %[[N:.*]] = arith.ori %[[N01]], %[[N23]] : i1
// CHECK-NEXT:    %[[R:.*]] = arith.select %[[N]], %[[QNAN]], %[[M]] : f32
// CHECK-NEXT:    memref.store %[[R]], %{{.*}}[%{{.*}}, %{{.*}}] : memref<8x4xf32>
// CHECK-NOT:     arith.cmpf

// -----

// Two steps are a tree already, and a chain whose intermediate value is used elsewhere is
// not one chain: both are left as they are.

loop.func @short(%x: memref<2xf32>, %z: memref<1xf32>) outs(%y: memref<1xf32>, %w: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ninf = arith.constant 0xFF800000 : f32
  %qnan = arith.constant 0x7FC00000 : f32
  %t0 = memref.load %x[%c0] : memref<2xf32>
  %t1 = memref.load %x[%c1] : memref<2xf32>
  %t2 = memref.load %z[%c0] : memref<1xf32>
  %g0 = arith.cmpf ogt, %t0, %ninf : f32
  %l0 = arith.select %g0, %t0, %ninf : f32
  %n0 = arith.cmpf uno, %t0, %t0 : f32
  %m0 = arith.select %n0, %qnan, %l0 : f32
  %g1 = arith.cmpf ogt, %t1, %m0 : f32
  %l1 = arith.select %g1, %t1, %m0 : f32
  %n1 = arith.cmpf uno, %t1, %t1 : f32
  %m1 = arith.select %n1, %qnan, %l1 : f32
  memref.store %m1, %w[%c0] : memref<1xf32>
  %g2 = arith.cmpf ogt, %t2, %m1 : f32
  %l2 = arith.select %g2, %t2, %m1 : f32
  %n2 = arith.cmpf uno, %t2, %t2 : f32
  %m2 = arith.select %n2, %qnan, %l2 : f32
  memref.store %m2, %y[%c0] : memref<1xf32>
  loop.return
}

// CHECK-LABEL: loop.func @short
// CHECK:         arith.cmpf ogt, %{{.*}}, %[[NINF:.*]] : f32
// CHECK-COUNT-3: arith.cmpf uno
// CHECK-NOT:     arith.cmpf

// -----

// A chain from a start that is not -inf (here a loaded value): the tree of the three terms,
// then one `nan_max` step from the start, which keeps a NaN start when no term is NaN, as the
// chain does.

loop.func @start(%x: memref<4xf32>) outs(%y: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %qnan = arith.constant 0x7FC00000 : f32
  %a0 = memref.load %x[%c0] : memref<4xf32>
  %t0 = memref.load %x[%c1] : memref<4xf32>
  %t1 = memref.load %x[%c2] : memref<4xf32>
  %t2 = memref.load %x[%c3] : memref<4xf32>
  %g0 = arith.cmpf ogt, %t0, %a0 : f32
  %l0 = arith.select %g0, %t0, %a0 : f32
  %n0 = arith.cmpf uno, %t0, %t0 : f32
  %m0 = arith.select %n0, %qnan, %l0 : f32
  %g1 = arith.cmpf ogt, %t1, %m0 : f32
  %l1 = arith.select %g1, %t1, %m0 : f32
  %n1 = arith.cmpf uno, %t1, %t1 : f32
  %m1 = arith.select %n1, %qnan, %l1 : f32
  %g2 = arith.cmpf ogt, %t2, %m1 : f32
  %l2 = arith.select %g2, %t2, %m1 : f32
  %n2 = arith.cmpf uno, %t2, %t2 : f32
  %m2 = arith.select %n2, %qnan, %l2 : f32
  memref.store %m2, %y[%c0] : memref<1xf32>
  loop.return
}

// CHECK-LABEL: loop.func @start
// CHECK:         %[[QNAN:.*]] = arith.constant 0x7fc00000 : f32
// CHECK:         %[[A0:.*]] = memref.load
// CHECK:         %[[TREE:.*]] = arith.select %{{.*}}, %[[QNAN]], %{{.*}} : f32
// CHECK-NEXT:    %[[G:.*]] = arith.cmpf ogt, %[[TREE]], %[[A0]] : f32
// CHECK-NEXT:    %[[L:.*]] = arith.select %[[G]], %[[TREE]], %[[A0]] : f32
// CHECK-NEXT:    %[[N:.*]] = arith.cmpf uno, %[[TREE]], %[[TREE]] : f32
// CHECK-NEXT:    %[[R:.*]] = arith.select %[[N]], %[[QNAN]], %[[L]] : f32
// CHECK-NEXT:    memref.store %[[R]]
