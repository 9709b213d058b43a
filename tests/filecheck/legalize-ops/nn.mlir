// RUN: fusion-opt %s --split-input-file -p legalize-ops | filecheck %s

// conv2d with padding: a pad block fills a local buffer (clamped load, selects on the bounds),
// then the conv block reduces over c, ky, kx into the output.

func.func @case(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x4x4xf32> {
  %y = graph.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x4x4xf32>
  func.return %y : tensor<1x3x4x4xf32>
}

// CHECK-LABEL: loop.func @conv2d(
// CHECK-SAME:      %[[X:.*]]: memref<1x2x4x4xf32>, %[[W:.*]]: memref<3x2x3x3xf32>) outs(%[[OUT:.*]]: memref<1x3x4x4xf32>) {
// CHECK-NEXT:    %[[PAD:.*]] = loop.alloc : memref<1x2x6x6xf32>
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[C5:.*]] = arith.constant 5 : index
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
//                The pad block.
// CHECK:         loop.for %[[N:.*]] =
// CHECK-NEXT:      loop.for %[[C:.*]] =
// CHECK-NEXT:        loop.for %[[H:.*]] =
// CHECK-NEXT:          loop.for %[[WI:.*]] =
// CHECK-NEXT:            %[[HLO:.*]] = arith.cmpi sge, %[[H]], %[[C1]] : index
// CHECK-NEXT:            %[[HHI:.*]] = arith.cmpi slt, %[[H]], %[[C5]] : index
// CHECK-NEXT:            %[[HMAX:.*]] = arith.maxsi %[[H]], %[[C1]] : index
// CHECK-NEXT:            %[[HMIN:.*]] = arith.minsi %[[HMAX]], %[[C4]] : index
// CHECK-NEXT:            %[[HH:.*]] = arith.subi %[[HMIN]], %[[C1]] : index
// CHECK:                 %[[WW:.*]] = arith.subi
// CHECK-NEXT:            %[[V:.*]] = memref.load %[[X]][%[[N]], %[[C]], %[[HH]], %[[WW]]]
// CHECK-NEXT:            %[[S0:.*]] = arith.select %[[HLO]], %[[V]], %[[ZERO]] : f32
// CHECK-NEXT:            %[[S1:.*]] = arith.select %[[HHI]], %[[S0]], %[[ZERO]] : f32
// CHECK-NEXT:            %[[S2:.*]] = arith.select %{{.*}}, %[[S1]], %[[ZERO]] : f32
// CHECK-NEXT:            %[[S3:.*]] = arith.select %{{.*}}, %[[S2]], %[[ZERO]] : f32
// CHECK-NEXT:            memref.store %[[S3]], %[[PAD]][%[[N]], %[[C]], %[[H]], %[[WI]]]
//                The conv block: init, then the reduction loops c, ky, kx.
// CHECK:         loop.for %[[N:.*]] =
// CHECK-NEXT:      loop.for %[[F:.*]] =
// CHECK-NEXT:        loop.for %[[Y:.*]] =
// CHECK-NEXT:          loop.for %[[XX:.*]] =
// CHECK-NEXT:            memref.store %[[ZERO]], %[[OUT]][%[[N]], %[[F]], %[[Y]], %[[XX]]]
// CHECK-NEXT:            loop.for %[[CI:.*]] =
// CHECK-NEXT:              loop.for %[[KY:.*]] =
// CHECK-NEXT:                loop.for %[[KX:.*]] =
// CHECK-NEXT:                  %[[R:.*]] = arith.addi %[[Y]], %[[KY]] : index
// CHECK-NEXT:                  %[[S:.*]] = arith.addi %[[XX]], %[[KX]] : index
// CHECK-NEXT:                  %[[A:.*]] = memref.load %[[PAD]][%[[N]], %[[CI]], %[[R]], %[[S]]]
// CHECK-NEXT:                  %[[B:.*]] = memref.load %[[W]][%[[F]], %[[CI]], %[[KY]], %[[KX]]]
// CHECK-NEXT:                  %[[P:.*]] = arith.mulf %[[A]], %[[B]] fastmath<contract> : f32
// CHECK-NEXT:                  %[[OLD:.*]] = memref.load %[[OUT]][%[[N]], %[[F]], %[[Y]], %[[XX]]]
// CHECK-NEXT:                  %[[NEW:.*]] = arith.addf %[[OLD]], %[[P]] fastmath<contract> : f32
// CHECK-NEXT:                  memref.store %[[NEW]], %[[OUT]][%[[N]], %[[F]], %[[Y]], %[[XX]]]
// CHECK-LABEL: func.func @case(
// CHECK:         graph.call_loop @conv2d(
// CHECK-NOT:     graph.conv2d

// -----

// conv2d without padding: no pad block, no local buffer. Strides and dilation scale the
// window subscripts; with groups, the input channel is (f / (F / groups)) * Cg + c.

func.func @case(%x: tensor<1x4x9x9xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x3x4xf32> {
  %y = graph.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, dilation = array<i64: 2, 1>, groups = 2 : i64} : (tensor<1x4x9x9xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x3x4xf32>
  func.return %y : tensor<1x4x3x4xf32>
}

// CHECK-LABEL: loop.func @conv2d(
// CHECK-SAME:      %[[X:.*]]: memref<1x4x9x9xf32>, %[[W:.*]]: memref<4x2x3x3xf32>) outs(%[[OUT:.*]]: memref<1x4x3x4xf32>) {
// CHECK-NOT:     loop.alloc
// CHECK:         %[[C2:.*]] = arith.constant 2 : index
// CHECK:         loop.for %[[N:.*]] =
// CHECK-NEXT:      loop.for %[[F:.*]] =
// CHECK-NEXT:        loop.for %[[Y:.*]] =
// CHECK-NEXT:          loop.for %[[XX:.*]] =
// CHECK-NEXT:            memref.store
// CHECK-NEXT:            loop.for %[[CI:.*]] =
// CHECK-NEXT:              loop.for %[[KY:.*]] =
// CHECK-NEXT:                loop.for %[[KX:.*]] =
// CHECK-NEXT:                  %[[G:.*]] = arith.divui %[[F]], %[[C2]] : index
// CHECK-NEXT:                  %[[GB:.*]] = arith.muli %[[G]], %[[C2]] : index
// CHECK-NEXT:                  %[[CH:.*]] = arith.addi %[[GB]], %[[CI]] : index
// CHECK-NEXT:                  %[[YS:.*]] = arith.muli %[[Y]], %[[C2]] : index
// CHECK-NEXT:                  %[[KD:.*]] = arith.muli %[[KY]], %[[C2]] : index
// CHECK-NEXT:                  %[[R:.*]] = arith.addi %[[YS]], %[[KD]] : index
// CHECK-NEXT:                  %[[XS:.*]] = arith.muli %[[XX]], %[[C2]] : index
// CHECK-NEXT:                  %[[S:.*]] = arith.addi %[[XS]], %[[KX]] : index
// CHECK-NEXT:                  memref.load %[[X]][%[[N]], %[[CH]], %[[R]], %[[S]]]
// CHECK-NEXT:                  memref.load %[[W]][%[[F]], %[[CI]], %[[KY]], %[[KX]]]

// -----

// matmul with a broadcast batch: the rank-2 operand drops the batch dimension.

func.func @case(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>) -> tensor<2x3x5xf32> {
  %c = graph.matmul %a, %b : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  func.return %c : tensor<2x3x5xf32>
}

// CHECK-LABEL: loop.func @matmul(
// CHECK-SAME:      %[[A:.*]]: memref<2x3x4xf32>, %[[B:.*]]: memref<4x5xf32>) outs(%[[C:.*]]: memref<2x3x5xf32>) {
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK:         loop.for %[[BI:.*]] =
// CHECK-NEXT:      loop.for %[[I:.*]] =
// CHECK-NEXT:        loop.for %[[J:.*]] =
// CHECK-NEXT:          memref.store %[[ZERO]], %[[C]][%[[BI]], %[[I]], %[[J]]]
// CHECK-NEXT:          loop.for %[[K:.*]] = %{{.*}} to %[[C4]] step
// CHECK-NEXT:            %[[AV:.*]] = memref.load %[[A]][%[[BI]], %[[I]], %[[K]]]
// CHECK-NEXT:            %[[BV:.*]] = memref.load %[[B]][%[[K]], %[[J]]]
// CHECK-NEXT:            %[[P:.*]] = arith.mulf %[[AV]], %[[BV]] fastmath<contract> : f32
// CHECK-NEXT:            %[[OLD:.*]] = memref.load %[[C]][%[[BI]], %[[I]], %[[J]]]
// CHECK-NEXT:            %[[NEW:.*]] = arith.addf %[[OLD]], %[[P]] fastmath<contract> : f32
// CHECK-NEXT:            memref.store %[[NEW]], %[[C]][%[[BI]], %[[I]], %[[J]]]
// CHECK-LABEL: func.func @case(
// CHECK-NOT:     graph.matmul

// -----

// max_pool2d: the pad block fills with -inf, then a max reduction over the window. Its max
// propagates NaN as the canonical quiet NaN and keeps the earlier value on ties (`nan_max`:
// the NaN constant if the term is NaN, else the term if greater), three x86 instructions
// where `arith.maximumf`, which orders -0.0 below +0.0, takes six.

func.func @case(%x: tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32> {
  %y = graph.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32>
  func.return %y : tensor<1x2x3x3xf32>
}

// CHECK-LABEL: loop.func @max_pool2d(
// CHECK-NEXT:    %[[PAD:.*]] = loop.alloc : memref<1x2x7x7xf32>
// CHECK-DAG:     %[[NEG_INF:.*]] = arith.constant 0xff800000 : f32
// CHECK-DAG:     %[[QNAN:.*]] = arith.constant 0x7fc00000 : f32
// CHECK:         arith.select %{{.*}}, %{{.*}}, %[[NEG_INF]] : f32
// CHECK:         memref.store %[[NEG_INF]], %[[OUT:.*]][%[[N:.*]], %[[C:.*]], %[[Y:.*]], %[[X:.*]]] : memref<1x2x3x3xf32>
// CHECK:         %[[V:.*]] = memref.load %[[PAD]]
// CHECK-NEXT:    %[[OLD:.*]] = memref.load %[[OUT]][%[[N]], %[[C]], %[[Y]], %[[X]]]
// CHECK-NEXT:    %[[GT:.*]] = arith.cmpf ogt, %[[V]], %[[OLD]] : f32
// CHECK-NEXT:    %[[MAX:.*]] = arith.select %[[GT]], %[[V]], %[[OLD]] : f32
// CHECK-NEXT:    %[[NAN:.*]] = arith.cmpf uno, %[[V]], %[[V]] : f32
// CHECK-NEXT:    %[[NEW:.*]] = arith.select %[[NAN]], %[[QNAN]], %[[MAX]] : f32
// CHECK-NEXT:    memref.store %[[NEW]], %[[OUT]][%[[N]], %[[C]], %[[Y]], %[[X]]]

// -----

// avg_pool2d without count_include_pad: a pad block, a window-sum block, a block counting the
// window elements inside the input, then the output block dividing by the count.

func.func @case(%x: tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32> {
  %y = graph.avg_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, count_include_pad = false} : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32>
  func.return %y : tensor<1x2x3x3xf32>
}

// CHECK-LABEL: loop.func @avg_pool2d(
// CHECK-SAME:      outs(%[[OUT:.*]]: memref<1x2x3x3xf32>)
// CHECK-NEXT:    %[[PAD:.*]] = loop.alloc : memref<1x2x7x7xf32>
// CHECK-NEXT:    %[[SUM:.*]] = loop.alloc : memref<1x2x3x3xf32>
// CHECK-NEXT:    %[[COUNT:.*]] = loop.alloc : memref<3x3xf32>
// CHECK:         memref.store %{{.*}}, %[[PAD]]
// CHECK:         memref.store %{{.*}}, %[[SUM]]
// CHECK:         memref.store %{{.*}}, %[[COUNT]]
// CHECK:         %[[OLD:.*]] = memref.load %[[COUNT]]
// CHECK-NEXT:    %[[NEW:.*]] = arith.addf %[[OLD]], %{{.*}} : f32
// CHECK-NEXT:    memref.store %[[NEW]], %[[COUNT]]
// CHECK:         loop.for %[[N:.*]] =
// CHECK-NEXT:      loop.for %[[C:.*]] =
// CHECK-NEXT:        loop.for %[[Y:.*]] =
// CHECK-NEXT:          loop.for %[[X:.*]] =
// CHECK-NEXT:            %[[CNT:.*]] = memref.load %[[COUNT]][%[[Y]], %[[X]]]
// CHECK-NEXT:            %[[S:.*]] = memref.load %[[SUM]][%[[N]], %[[C]], %[[Y]], %[[X]]]
// CHECK-NEXT:            %[[AVG:.*]] = arith.divf %[[S]], %[[CNT]] : f32
// CHECK-NEXT:            memref.store %[[AVG]], %[[OUT]][%[[N]], %[[C]], %[[Y]], %[[X]]]
// CHECK-NOT:     graph.avg_pool2d
