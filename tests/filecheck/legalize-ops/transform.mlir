// RUN: fusion-opt %s --split-input-file -p legalize-ops | filecheck %s

func.func @case(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %y = graph.transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  func.return %y : tensor<4x2x3xf32>
}

// transpose: the store is at the plain induction variables, the load permutes them.

// CHECK-LABEL: loop.func @transpose(
// CHECK-SAME:      %[[X:.*]]: memref<2x3x4xf32>) outs(%[[OUT:.*]]: memref<4x2x3xf32>) {
// CHECK:         loop.for %[[I:.*]] =
// CHECK-NEXT:      loop.for %[[J:.*]] =
// CHECK-NEXT:        loop.for %[[K:.*]] =
// CHECK-NEXT:          %[[V:.*]] = memref.load %[[X]][%[[J]], %[[K]], %[[I]]]
// CHECK-NEXT:          memref.store %[[V]], %[[OUT]][%[[I]], %[[J]], %[[K]]]
// CHECK-LABEL: func.func @case(
// CHECK-NOT:     graph.transpose

// -----

func.func @case(%x: tensor<4x6xf32>) -> tensor<2x3x4xf32> {
  %y = graph.reshape %x : (tensor<4x6xf32>) -> tensor<2x3x4xf32>
  func.return %y : tensor<2x3x4xf32>
}

// reshape: row-major through the linear index, split with divui / remui.

// CHECK-LABEL: loop.func @reshape(
// CHECK-SAME:      %[[X:.*]]: memref<4x6xf32>) outs(%[[OUT:.*]]: memref<2x3x4xf32>) {
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[C6:.*]] = arith.constant 6 : index
// CHECK-DAG:     %[[C12:.*]] = arith.constant 12 : index
// CHECK:         loop.for %[[I:.*]] =
// CHECK-NEXT:      loop.for %[[J:.*]] =
// CHECK-NEXT:        loop.for %[[K:.*]] =
// CHECK-NEXT:          %[[A:.*]] = arith.muli %[[I]], %[[C12]] : index
// CHECK-NEXT:          %[[B:.*]] = arith.muli %[[J]], %[[C4]] : index
// CHECK-NEXT:          %[[AB:.*]] = arith.addi %[[A]], %[[B]] : index
// CHECK-NEXT:          %[[L:.*]] = arith.addi %[[AB]], %[[K]] : index
// CHECK-NEXT:          %[[R:.*]] = arith.divui %[[L]], %[[C6]] : index
// CHECK-NEXT:          %[[C:.*]] = arith.remui %[[L]], %[[C6]] : index
// CHECK-NEXT:          %[[V:.*]] = memref.load %[[X]][%[[R]], %[[C]]]
// CHECK-NEXT:          memref.store %[[V]], %[[OUT]][%[[I]], %[[J]], %[[K]]]
// CHECK-LABEL: func.func @case(
// CHECK-NOT:     graph.reshape

// -----

func.func @case(%a: tensor<2x3xf32>, %b: tensor<2x1xf32>, %c: tensor<2x2xf32>) -> tensor<2x6xf32> {
  %y = graph.concat %a, %b, %c {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x2xf32>) -> tensor<2x6xf32>
  func.return %y : tensor<2x6xf32>
}

// concat: one clamped load per operand, then selects on the position along the axis
// (a one-element operand is loaded at %c0). The kernel is marked with its axis, for
// lower-graph's concats in place.

// CHECK-LABEL: loop.func @concat(
// CHECK-SAME:      %[[A:.*]]: memref<2x3xf32>, %[[B:.*]]: memref<2x1xf32>, %[[C:.*]]: memref<2x2xf32>) outs(%[[OUT:.*]]: memref<2x6xf32>) attributes {fusion.concat_axis = 1 : i64} {
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK:         loop.for %[[I:.*]] =
// CHECK-NEXT:      loop.for %[[J:.*]] =
// CHECK-NEXT:        %[[JA:.*]] = arith.minsi %[[J]], %[[C2]] : index
// CHECK-NEXT:        %[[VA:.*]] = memref.load %[[A]][%[[I]], %[[JA]]]
// CHECK-NEXT:        %[[VB:.*]] = memref.load %[[B]][%[[I]], %[[C0]]]
// CHECK-NEXT:        %[[INB:.*]] = arith.cmpi sge, %[[J]], %[[C3]] : index
// CHECK-NEXT:        %[[SB:.*]] = arith.select %[[INB]], %[[VB]], %[[VA]] : f32
// CHECK-NEXT:        %[[JC0:.*]] = arith.maxsi %[[J]], %[[C4]] : index
// CHECK-NEXT:        %[[JC:.*]] = arith.subi %[[JC0]], %[[C4]] : index
// CHECK-NEXT:        %[[VC:.*]] = memref.load %[[C]][%[[I]], %[[JC]]]
// CHECK-NEXT:        %[[INC:.*]] = arith.cmpi sge, %[[J]], %[[C4]] : index
// CHECK-NEXT:        %[[SC:.*]] = arith.select %[[INC]], %[[VC]], %[[SB]] : f32
// CHECK-NEXT:        memref.store %[[SC]], %[[OUT]][%[[I]], %[[J]]]
// CHECK-LABEL: func.func @case(
// CHECK-NOT:     graph.concat

// -----

func.func @case(%x: tensor<5x4xf32>) -> (tensor<2x4xf32>, tensor<3x4xf32>) {
  %a, %b = graph.split %x {axis = 0 : i64, sections = array<i64: 2, 3>} : (tensor<5x4xf32>) -> (tensor<2x4xf32>, tensor<3x4xf32>)
  func.return %a, %b : tensor<2x4xf32>, tensor<3x4xf32>
}

// split: one block per result, offset along the axis.

// CHECK-LABEL: loop.func @split(
// CHECK-SAME:      %[[X:.*]]: memref<5x4xf32>) outs(%[[A:.*]]: memref<2x4xf32>, %[[B:.*]]: memref<3x4xf32>) {
// CHECK-DAG:     %[[C2:.*]] = arith.constant 2 : index
// CHECK:         loop.for %[[I:.*]] =
// CHECK-NEXT:      loop.for %[[J:.*]] =
// CHECK-NEXT:        %[[V:.*]] = memref.load %[[X]][%[[I]], %[[J]]]
// CHECK-NEXT:        memref.store %[[V]], %[[A]][%[[I]], %[[J]]]
// CHECK:         loop.for %[[I:.*]] =
// CHECK-NEXT:      loop.for %[[J:.*]] =
// CHECK-NEXT:        %[[R:.*]] = arith.addi %[[I]], %[[C2]] : index
// CHECK-NEXT:        %[[V:.*]] = memref.load %[[X]][%[[R]], %[[J]]]
// CHECK-NEXT:        memref.store %[[V]], %[[B]][%[[I]], %[[J]]]
// CHECK-LABEL: func.func @case(
// CHECK-NEXT:    %{{.*}}, %{{.*}} = graph.call_loop @split(

// -----

func.func @case(%x: tensor<5x6xf32>) -> tensor<2x3xf32> {
  %y = graph.slice %x {starts = array<i64: -1, 1>, ends = array<i64: -5, 6>, steps = array<i64: -2, 2>} : (tensor<5x6xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// slice: start + i * step; a negative step subtracts (x[-1:-5:-2, 1:6:2] reads rows 4 - 2i).

// CHECK-LABEL: loop.func @slice(
// CHECK-SAME:      %[[X:.*]]: memref<5x6xf32>) outs(%[[OUT:.*]]: memref<2x3xf32>) {
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK:         loop.for %[[I:.*]] =
// CHECK-NEXT:      loop.for %[[J:.*]] =
// CHECK-NEXT:        %[[I2:.*]] = arith.muli %[[I]], %[[C2]] : index
// CHECK-NEXT:        %[[R:.*]] = arith.subi %[[C4]], %[[I2]] : index
// CHECK-NEXT:        %[[J2:.*]] = arith.muli %[[J]], %[[C2]] : index
// CHECK-NEXT:        %[[C:.*]] = arith.addi %[[J2]], %[[C1]] : index
// CHECK-NEXT:        %[[V:.*]] = memref.load %[[X]][%[[R]], %[[C]]]
// CHECK-NEXT:        memref.store %[[V]], %[[OUT]][%[[I]], %[[J]]]

// -----

func.func @case(%x: tensor<10x1x20xf32>) -> tensor<10x20xf32> {
  %y = graph.squeeze %x {axes = array<i64: 1>} : (tensor<10x1x20xf32>) -> tensor<10x20xf32>
  func.return %y : tensor<10x20xf32>
}

// squeeze: the squeezed axis is read at %c0.

// CHECK-LABEL: loop.func @squeeze(
// CHECK-SAME:      %[[X:.*]]: memref<10x1x20xf32>) outs(%[[OUT:.*]]: memref<10x20xf32>) {
// CHECK:         %[[C0:.*]] = arith.constant 0 : index
// CHECK:         loop.for %[[I:.*]] =
// CHECK-NEXT:      loop.for %[[J:.*]] =
// CHECK-NEXT:        %[[V:.*]] = memref.load %[[X]][%[[I]], %[[C0]], %[[J]]]
// CHECK-NEXT:        memref.store %[[V]], %[[OUT]][%[[I]], %[[J]]]

// -----

func.func @case(%x: tensor<3x4xf32>) -> tensor<3x1x4xf32> {
  %y = graph.expand_dims %x {axes = array<i64: -2>} : (tensor<3x4xf32>) -> tensor<3x1x4xf32>
  func.return %y : tensor<3x1x4xf32>
}

// expand_dims: the inserted axis has its (unit) loop; the load drops its variable.

// CHECK-LABEL: loop.func @expand_dims(
// CHECK-SAME:      %[[X:.*]]: memref<3x4xf32>) outs(%[[OUT:.*]]: memref<3x1x4xf32>) {
// CHECK:         loop.for %[[I:.*]] =
// CHECK-NEXT:      loop.for %[[U:.*]] =
// CHECK-NEXT:        loop.for %[[J:.*]] =
// CHECK-NEXT:          %[[V:.*]] = memref.load %[[X]][%[[I]], %[[J]]]
// CHECK-NEXT:          memref.store %[[V]], %[[OUT]][%[[I]], %[[U]], %[[J]]]

// -----

func.func @case(%x: tensor<3x1xf32>) -> tensor<2x3x4xf32> {
  %y = graph.broadcast_to %x : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
  func.return %y : tensor<2x3x4xf32>
}

// broadcast_to: a broadcasting load (leading axis dropped, stretched unit axis at %c0).

// CHECK-LABEL: loop.func @broadcast_to(
// CHECK-SAME:      %[[X:.*]]: memref<3x1xf32>) outs(%[[OUT:.*]]: memref<2x3x4xf32>) {
// CHECK:         %[[C0:.*]] = arith.constant 0 : index
// CHECK:         loop.for %[[I:.*]] =
// CHECK-NEXT:      loop.for %[[J:.*]] =
// CHECK-NEXT:        loop.for %[[K:.*]] =
// CHECK-NEXT:          %[[V:.*]] = memref.load %[[X]][%[[J]], %[[C0]]]
// CHECK-NEXT:          memref.store %[[V]], %[[OUT]][%[[I]], %[[J]], %[[K]]]
