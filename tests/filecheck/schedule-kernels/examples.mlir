// RUN: %{fuse} %{examples}/conv_block.mlir | fusion-opt -p schedule-kernels | filecheck %s --check-prefix=CONV
// RUN: %{fuse} %{examples}/ffn.mlir | fusion-opt -p schedule-kernels | filecheck %s --check-prefix=FFN
// RUN: %{fuse} %{examples}/layer_norm_spelled.mlir | fusion-opt -p schedule-kernels | filecheck %s --check-prefix=LN

// The conv block: the bias add and the relu run in the convolution's nest, right after its
// reduction (their intermediate is gone), and the convolution accumulates straight into the
// output `%y`; the pad stays materialised; output channels are unrolled by 8 for the
// reduction only (each channel keeps its own init and epilogue loop), the 3x3 window is
// unrolled into the innermost loop, which runs along the image rows: 72 multiply-adds per
// vector iteration.

// CONV-LABEL: loop.func @fused_conv2d_add_relu
// CONV:         %[[PAD:.*]] = loop.alloc : memref<1x64x58x58xf32>
// CONV-NOT:     loop.alloc
// CONV:         memref.store %{{.*}}, %[[PAD]]
// CONV:         loop.for %[[F:.*]] = %c0 to %c64 step %c8 parallel {
// CONV-NEXT:      loop.for %[[Y:.*]] = %c0 to %c56 step %c1 {
// CONV-NEXT:        loop.for %{{.*}} = %c0 to %c56 step %c1 vectorized {
// CONV-NEXT:          memref.store %cst, %y
// CONV-NEXT:        }
// CONV-COUNT-7:     memref.store %cst, %y
// CONV:             loop.for %[[C:.*]] = %c0 to %c64 step %c1 {
// CONV-NEXT:          loop.for %[[X:.*]] = %c0 to %c56 step %c1 vectorized {
// CONV-NEXT:            memref.load %[[PAD]][%c0, %[[C]], %[[Y]], %[[X]]]
// CONV-COUNT-72:        arith.mulf
// CONV-NOT:             arith.mulf
// CONV:               }
// CONV-NEXT:        }
// CONV-NEXT:        loop.for %[[X2:.*]] = %c0 to %c56 step %c1 vectorized {
// CONV-NEXT:          %[[V:.*]] = memref.load %y[%c0, %[[F]], %[[Y]], %[[X2]]]
// CONV-NEXT:          %[[B:.*]] = memref.load %b[%c0, %[[F]], %c0, %c0]
// CONV-NEXT:          %[[S:.*]] = arith.addf %[[V]], %[[B]]
// CONV-NEXT:          %[[R:.*]] = arith.maximumf %[[S]], %cst
// CONV-NEXT:          memref.store %[[R]], %y[%c0, %[[F]], %[[Y]], %[[X2]]]
// CONV-NEXT:        }
// CONV-COUNT-7:     arith.maximumf

// The matmul of the feed-forward layer runs (i | k | j) with eight rows and eight steps of k
// per vector of C, accumulating in the output, and the bias and gelu run per row right after
// it, one row per loop (one erf per vector body).

// FFN-LABEL: loop.func @fused_matmul_add_gelu
// FFN-NOT:     loop.alloc
// FFN:         loop.for %[[I:.*]] = %c0 to %c128 step %c8 parallel {
// FFN:           loop.for %[[K:.*]] = %c0 to %c768 step %c8 {
// FFN-NEXT:        loop.for %[[J:.*]] = %c0 to %c3072 step %c1 vectorized {
// FFN-NEXT:          memref.load %x[%[[I]], %[[K]]]
// FFN-NEXT:          memref.load %w[%[[K]], %[[J]]]
// FFN-COUNT-64:      arith.mulf
// FFN-NOT:           arith.mulf
// FFN:           loop.for %{{.*}} = %c0 to %c3072 step %c1 vectorized {
// FFN:             math.erf
// FFN-NOT:         math.erf
// FFN:           }
// FFN-COUNT-7:   math.erf

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
