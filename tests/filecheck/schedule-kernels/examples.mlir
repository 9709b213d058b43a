// RUN: %{fuse} %{examples}/conv_block.mlir | fusion-opt -p 'schedule-kernels{contraction-rows=4 contraction-cols=16}' | filecheck %s --check-prefix=CONV
// RUN: %{fuse} %{examples}/ffn.mlir | fusion-opt -p 'schedule-kernels{contraction-rows=4 contraction-cols=16}' | filecheck %s --check-prefix=FFN
// RUN: %{fuse} %{examples}/layer_norm_spelled.mlir | fusion-opt -p schedule-kernels | filecheck %s --check-prefix=LN

// The conv block: the bias add and the relu run in the convolution's nest, right after its
// reduction (their intermediate is gone), and the convolution accumulates straight into the
// output `%y`; the pad stays materialised. schedule-contractions register-tiles it (the
// tile fixed at 4 x 16 here): 4 output channels by 16 pixels of an output row, over the
// whole (c, ky, kx) reduction; the row's last 8 pixels are a 4 x 8 tile; rows run parallel.

// CONV-LABEL: loop.func @fused_conv2d_add_relu
// CONV-SAME:    attributes {fusion.wide_vectors, fusion.register_tiled}
// CONV:         %[[PAD:.*]] = loop.alloc : memref<1x64x58x58xf32>
// CONV-NOT:     loop.alloc
// CONV:         memref.store %{{.*}}, %[[PAD]]
// CONV:         loop.for %[[Y:.*]] = %c0 to %c56 step %c1 parallel {
// CONV-NEXT:      loop.for %[[XT:.*]] = %c0 to %c48 step %c16 {
// CONV-NEXT:        loop.for %[[FT:.*]] = %c0 to %c64 step %c4 {
// CONV:               memref.store %cst, %y
// CONV:             loop.for %[[C:.*]] = %c0 to %c64 step %c1 {
// CONV-NEXT:          loop.for %[[KY:.*]] = %c0 to %c3 step %c1 {
// CONV-NEXT:            loop.for %[[KX:.*]] = %c0 to %c3 step %c1 {
// CONV-NEXT:              loop.for %{{.*}} = %c0 to %c16 step %c1 vectorized {
// CONV-COUNT-4:             arith.mulf
// CONV-NOT:                 arith.mulf
// CONV:                   }
// CONV-NEXT:            }
// CONV-NEXT:          }
// CONV-NEXT:        }
// CONV-NEXT:        loop.for %[[R:.*]] = %c0 to %c4 step %c1 {
// CONV-NEXT:          loop.for %[[X:.*]] = %c0 to %c16 step %c1 vectorized {
// CONV:                 memref.load %b
// CONV:                 arith.maximumf
// CONV:         loop.for %{{.*}} = %c0 to %c8 step %c1 vectorized {
// CONV-COUNT-4:   arith.mulf

// The matmul of the feed-forward layer: 4 x 16 tiles of the output over the whole k loop
// (one vector of w shared by four rows per step), the bias and gelu on each tile right
// after its reduction.

// FFN-LABEL: loop.func @fused_matmul_add_gelu
// FFN-NOT:     loop.alloc
// FFN:         loop.for %[[JT:.*]] = %c0 to %c3072 step %c16 parallel {
// FFN-NEXT:      loop.for %[[IT:.*]] = %c0 to %c128 step %c4 {
// FFN:             loop.for %[[K:.*]] = %c0 to %c768 step %c1 {
// FFN-NEXT:          loop.for %[[JJ:.*]] = %c0 to %c16 step %c1 vectorized {
// FFN-NEXT:            %[[J:.*]] = arith.addi %[[JT]], %[[JJ]]
// FFN-NEXT:            memref.load %x[%[[IT]], %[[K]]]
// FFN-NEXT:            memref.load %w[%[[K]], %[[J]]]
// FFN-COUNT-4:         arith.mulf
// FFN-NOT:             arith.mulf
// FFN:             loop.for %{{.*}} = %c0 to %c16 step %c1 vectorized {
// FFN:               math.erf
// FFN-NOT:         math.erf
// FFN:             }

// The spelled-out layer norm: each mean is a row reduction followed, in the same row
// iteration, by the elementwise ops that use it; the 512x1 intermediates are gone from the
// first kernel. Eight rows' sums run interleaved in one loop (independent chains, each in
// its own order); each row keeps its own elementwise loop.

// LN-LABEL: loop.func @fused_reduce_mean_sub
// LN:         %[[SUM:.*]] = loop.alloc : memref<512x1xf32>
// LN-NOT:     loop.alloc
// LN:         loop.for %[[I:.*]] = %c0 to %c512 step %c8 parallel {
// LN-NEXT:      memref.store %cst, %[[SUM]][%[[I]], %c0]
// LN-COUNT-7:   memref.store %cst, %[[SUM]]
// LN-NEXT:      loop.for %[[K:.*]] = %c0 to %c768 step %c1 {
// LN-COUNT-8:     arith.addf
// LN-NOT:         arith.addf
// LN:           }
// LN-NEXT:      %[[S:.*]] = memref.load %[[SUM]][%[[I]], %c0]
// LN-NEXT:      %[[M:.*]] = arith.divf %[[S]]
// LN-NEXT:      loop.for %[[J:.*]] = %c0 to %c768 step %c1 vectorized {
// LN-NEXT:        %[[X:.*]] = memref.load %x[%[[I]], %[[J]]]
// LN-NEXT:        %[[D:.*]] = arith.subf %[[X]], %[[M]]
// LN-NEXT:        memref.store %[[D]], %d[%[[I]], %[[J]]]
// LN-LABEL: loop.func @fused_reduce_mean_add_sqrt_div_mul_add
// LN:         loop.alloc : memref<512x1xf32>
// LN-NOT:     loop.alloc
