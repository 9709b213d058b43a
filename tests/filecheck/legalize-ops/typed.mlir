// RUN: fusion-opt %s --split-input-file -p legalize-ops | filecheck %s

// Integer arithmetic: the integer arith ops, without overflow flags (wrapping, as numpy).

func.func @case(%a: tensor<4xi64>, %b: tensor<4xi64>) -> tensor<4xi64> {
  %s = graph.add %a, %b : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %m = graph.max %s, %b : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %n = graph.abs %m : tensor<4xi64>
  func.return %n : tensor<4xi64>
}

// CHECK-LABEL: loop.func @add(
// CHECK-SAME:      memref<4xi64>, %{{.*}}: memref<4xi64>) outs(%{{.*}}: memref<4xi64>) {
// CHECK:         arith.addi %{{.*}}, %{{.*}} : i64
// CHECK-LABEL: loop.func @max(
// CHECK:         arith.maxsi %{{.*}}, %{{.*}} : i64
// CHECK-LABEL: loop.func @abs(
// CHECK:         %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK:         %[[X:.*]] = memref.load
// CHECK-NEXT:    %[[NEG:.*]] = arith.subi %[[ZERO]], %[[X]] : i64
// CHECK-NEXT:    arith.maxsi %[[X]], %[[NEG]] : i64

// -----

// Comparisons produce i1: ordered float predicates (false for NaN), signed integer ones.

func.func @case(%x: tensor<2x4xf32>, %y: tensor<4xf32>, %i: tensor<2x4xi32>) -> (tensor<2x4xi1>, tensor<2x4xi1>) {
  %l = graph.less_equal %x, %y : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xi1>
  %g = graph.greater %i, %i : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi1>
  func.return %l, %g : tensor<2x4xi1>, tensor<2x4xi1>
}

// CHECK-LABEL: loop.func @less_equal(
// CHECK-SAME:      memref<2x4xf32>, %{{.*}}: memref<4xf32>) outs(%[[OUT:.*]]: memref<2x4xi1>) {
// CHECK:         %[[C:.*]] = arith.cmpf ole, %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:    memref.store %[[C]], %[[OUT]][%{{.*}}, %{{.*}}] : memref<2x4xi1>
// CHECK-LABEL: loop.func @greater(
// CHECK:         arith.cmpi sgt, %{{.*}}, %{{.*}} : i32

// -----

// Logical ops on i1, and where as a select of the loaded condition.

func.func @case(%a: tensor<4xi1>, %b: tensor<4xi1>, %x: tensor<4xf32>, %y: tensor<f32>) -> tensor<4xf32> {
  %o = graph.or %a, %b : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %n = graph.not %o : tensor<4xi1>
  %w = graph.where %n, %x, %y : (tensor<4xi1>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  func.return %w : tensor<4xf32>
}

// CHECK-LABEL: loop.func @or(
// CHECK:         arith.ori %{{.*}}, %{{.*}} : i1
// CHECK-LABEL: loop.func @not(
// CHECK:         %[[TRUE:.*]] = arith.constant true
// CHECK:         arith.xori %{{.*}}, %[[TRUE]] : i1
// CHECK-LABEL: loop.func @where(
// CHECK-SAME:      %[[C:[^:]*]]: memref<4xi1>, %[[X:[^:]*]]: memref<4xf32>, %[[Y:[^:]*]]: memref<f32>)
// CHECK:         %[[CV:.*]] = memref.load %[[C]][%[[I:.*]]] : memref<4xi1>
// CHECK-NEXT:    %[[XV:.*]] = memref.load %[[X]][%[[I]]] : memref<4xf32>
// CHECK-NEXT:    %[[YV:.*]] = memref.load %[[Y]][] : memref<f32>
// CHECK-NEXT:    arith.select %[[CV]], %[[XV]], %[[YV]] : f32

// -----

// Casts: one conversion op per pair of element types.

func.func @case(%x: tensor<4xf32>, %i: tensor<4xi64>, %b: tensor<4xi1>) -> (tensor<4xi32>, tensor<4xi1>, tensor<4xf32>, tensor<4xi64>, tensor<4xi32>) {
  %0 = graph.cast %x : (tensor<4xf32>) -> tensor<4xi32>
  %1 = graph.cast %x : (tensor<4xf32>) -> tensor<4xi1>
  %2 = graph.cast %b : (tensor<4xi1>) -> tensor<4xf32>
  %3 = graph.cast %b : (tensor<4xi1>) -> tensor<4xi64>
  %4 = graph.cast %i : (tensor<4xi64>) -> tensor<4xi32>
  func.return %0, %1, %2, %3, %4 : tensor<4xi32>, tensor<4xi1>, tensor<4xf32>, tensor<4xi64>, tensor<4xi32>
}

// CHECK-LABEL: loop.func @cast(
// CHECK:         arith.fptosi %{{.*}} : f32 to i32
// CHECK-LABEL: loop.func @cast_1(
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         arith.cmpf une, %{{.*}}, %[[ZERO]] : f32
// CHECK-LABEL: loop.func @cast_2(
// CHECK:         arith.uitofp %{{.*}} : i1 to f32
// CHECK-LABEL: loop.func @cast_3(
// CHECK:         arith.extui %{{.*}} : i1 to i64
// CHECK-LABEL: loop.func @cast_4(
// CHECK:         arith.trunci %{{.*}} : i64 to i32

// -----

// Gather: the loaded index wraps once when negative, is clamped into [0, size), and becomes
// the subscript of the gathered axis; i32 indices are sign-extended first.

func.func @case(%t: tensor<10x8xf32>, %ids: tensor<3xi32>) -> tensor<10x3xf32> {
  %g = graph.gather %t, %ids {axis = 1 : i64} : (tensor<10x8xf32>, tensor<3xi32>) -> tensor<10x3xf32>
  func.return %g : tensor<10x3xf32>
}

// CHECK-LABEL: loop.func @gather(
// CHECK-SAME:      %[[DATA:[^:]*]]: memref<10x8xf32>, %[[IDS:[^:]*]]: memref<3xi32>) outs(%[[OUT:.*]]: memref<10x3xf32>) {
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-DAG:     %[[SIZE:.*]] = arith.constant 8 : i64
// CHECK-DAG:     %[[LAST:.*]] = arith.constant 7 : i64
// CHECK:         loop.for %[[I:.*]] = {{.*}} {
// CHECK-NEXT:      loop.for %[[J:.*]] = {{.*}} {
// CHECK-NEXT:        %[[RAW:.*]] = memref.load %[[IDS]][%[[J]]] : memref<3xi32>
// CHECK-NEXT:        %[[WIDE:.*]] = arith.extsi %[[RAW]] : i32 to i64
// CHECK-NEXT:        %[[NEG:.*]] = arith.cmpi slt, %[[WIDE]], %[[ZERO]] : i64
// CHECK-NEXT:        %[[UP:.*]] = arith.addi %[[WIDE]], %[[SIZE]] : i64
// CHECK-NEXT:        %[[W:.*]] = arith.select %[[NEG]], %[[UP]], %[[WIDE]] : i64
// CHECK-NEXT:        %[[LO:.*]] = arith.maxsi %[[W]], %[[ZERO]] : i64
// CHECK-NEXT:        %[[IN:.*]] = arith.minsi %[[LO]], %[[LAST]] : i64
// CHECK-NEXT:        %[[IDX:.*]] = arith.index_cast %[[IN]] : i64 to index
// CHECK-NEXT:        %[[V:.*]] = memref.load %[[DATA]][%[[I]], %[[IDX]]] : memref<10x8xf32>
// CHECK-NEXT:        memref.store %[[V]], %[[OUT]][%[[I]], %[[J]]] : memref<10x3xf32>

// -----

// Integer division rounds toward zero; the divisors 0 and -1, on which x86's division traps,
// never reach `arith.divsi`: they give 0 and the (wrapping) negation.

func.func @case(%a: tensor<5xi64>, %b: tensor<5xi64>) -> tensor<5xi64> {
  %q = graph.div %a, %b : (tensor<5xi64>, tensor<5xi64>) -> tensor<5xi64>
  func.return %q : tensor<5xi64>
}

// CHECK-LABEL: loop.func @div(
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG:     %[[MINUS_ONE:.*]] = arith.constant -1 : i64
// CHECK:         %[[A:.*]] = memref.load
// CHECK-NEXT:    %[[B:.*]] = memref.load
// CHECK-NEXT:    %[[BY_ZERO:.*]] = arith.cmpi eq, %[[B]], %[[ZERO]] : i64
// CHECK-NEXT:    %[[BY_MINUS_ONE:.*]] = arith.cmpi eq, %[[B]], %[[MINUS_ONE]] : i64
// CHECK-NEXT:    %[[TRAPS:.*]] = arith.ori %[[BY_ZERO]], %[[BY_MINUS_ONE]] : i1
// CHECK-NEXT:    %[[SAFE:.*]] = arith.select %[[TRAPS]], %[[ONE]], %[[B]] : i64
// CHECK-NEXT:    %[[Q:.*]] = arith.divsi %[[A]], %[[SAFE]] : i64
// CHECK-NEXT:    %[[NEG:.*]] = arith.subi %[[ZERO]], %[[A]] : i64
// CHECK-NEXT:    %[[R:.*]] = arith.select %[[BY_MINUS_ONE]], %[[NEG]], %[[Q]] : i64
// CHECK-NEXT:    %[[OUT:.*]] = arith.select %[[BY_ZERO]], %[[ZERO]], %[[R]] : i64
// CHECK-NEXT:    memref.store %[[OUT]]
