// RUN: %{fuse} %{examples}/conv_block.mlir | fusion-opt -p 'schedule-kernels{contraction-rows=4 contraction-cols=16}' | filecheck %s --check-prefix=CONV
// RUN: %{fuse} %{examples}/ffn.mlir | fusion-opt -p 'schedule-kernels{contraction-rows=4 contraction-cols=16}' | filecheck %s --check-prefix=FFN
// RUN: %{fuse} %{examples}/layer_norm_spelled.mlir | fusion-opt -p 'schedule-kernels{l1-bytes=131072}' | filecheck %s --check-prefix=LN

// The conv block: the bias add and the relu run in the convolution's nest, right after its
// reduction (their intermediate is gone); the pad stays materialised. schedule-contractions
// register-tiles it with packed panels (the tile fixed at 4 x 16 here): 16 output channels
// (the vector) by 4 pixels of an output row, accumulated in a local tile over the whole
// rolled (c, ky, kx) reduction; per column tile of 16 channels (the parallel loop) the OIHW
// weights are packed as a [c][ky][kx][16] panel. The bias and relu run on the tile before
// its single store.

// CONV-LABEL: loop.func @fused_conv2d_add_relu
// 2 * 64 * 56 * 56 * 64 * 9 multiply-adds + 2 * 64 * 56 * 56 (bias, relu):
// CONV-SAME:    attributes {fusion.wide_vectors, fusion.register_tiled, fusion.algorithm_flops = 231612416 : i64}
// CONV:         %[[PAD:.*]] = loop.alloc : memref<1x64x58x58xf32>
// CONV:         memref.store %{{.*}}, %[[PAD]]
// CONV:         loop.for %[[OT:.*]] = %c0 to %c64 step %c16 parallel {
// CONV-NEXT:      %[[PANEL:.*]] = loop.alloc {fusion.private} : memref<64x3x3x16xf32>
// CONV:             memref.load %w
// CONV-NEXT:        memref.store %{{.*}}, %[[PANEL]]
// CONV:           loop.for %[[Y:.*]] = %c0 to %c56 step %c1 {
// CONV-NEXT:        loop.for %[[XT:.*]] = %c0 to %c56 step %c4 {
// CONV-NEXT:          %[[ACC:.*]] = loop.alloc {fusion.private} : memref<4x16xf32>
// CONV:               loop.for %[[C:.*]] = %c0 to %c64 step %c1 attributes {fusion.rolled} {
// CONV-NEXT:            loop.for %[[KY:.*]] = %c0 to %c3 step %c1 attributes {fusion.rolled} {
// CONV-NEXT:              loop.for %[[KX:.*]] = %c0 to %c3 step %c1 attributes {fusion.rolled} {
// CONV-NEXT:                loop.for %{{.*}} = %c0 to %c16 step %c1 vectorized {
// CONV-NEXT:                  memref.load %[[PANEL]]
// CONV-COUNT-4:               arith.mulf
// CONV-NOT:                   arith.mulf
// CONV:                     }
// CONV-NEXT:              }
// CONV-NEXT:            }
// CONV-NEXT:          }
// CONV-NEXT:          loop.for %{{.*}} = %c0 to %c16 step %c1 attributes {fusion.scalar} {
// CONV-NEXT:            loop.for %{{.*}} = %c0 to %c4 step %c1 {
// CONV:                   memref.load %[[ACC]]
// CONV:                   memref.load %b
// CONV:                   arith.maximumf

// The matmul of the feed-forward layer: per column tile of 16 (the parallel loop), w's panel
// (768 x 16) is packed contiguously; 4 x 16 tiles of the output accumulate over the whole k
// loop (one vector of the panel shared by four rows per step), the bias and gelu on each tile
// right after its reduction.

// FFN-LABEL: loop.func @fused_matmul_add_gelu
// FFN:         loop.for %[[JT:.*]] = %c0 to %c3072 step %c16 parallel {
// FFN-NEXT:      %[[PANEL:.*]] = loop.alloc {fusion.private} : memref<768x16xf32>
// FFN:           loop.for %[[IT:.*]] = %c0 to %c128 step %c4 {
// FFN-NEXT:        %[[ACC:.*]] = loop.alloc {fusion.private} : memref<4x16xf32>
// FFN:             loop.for %[[K:.*]] = %c0 to %c768 step %c1 attributes {fusion.rolled} {
// FFN-NEXT:          loop.for %[[JJ:.*]] = %c0 to %c16 step %c1 vectorized {
// FFN-NEXT:            memref.load %[[PANEL]][%[[K]], %[[JJ]]]
// FFN-NEXT:            memref.load %x[%[[IT]], %[[K]]]
// FFN-COUNT-4:         arith.mulf
// FFN-NOT:             arith.mulf
// FFN:             loop.for %{{.*}} = %c0 to %c16 step %c1 vectorized {
// FFN:               math.exp
// FFN-NOT:         math.exp
// FFN:             }

// The spelled-out layer norm: each mean is a row reduction followed, in the same row
// iteration, by the elementwise ops that use it; the 512x1 intermediates are gone from the
// first kernel. The sums are lane reductions (legalize-ops): 32 partial sums per row, each
// updated by a vector loop over the lanes into which eight chunks of the row are unrolled,
// for eight rows at once (independent chains, each in the legalization's order); then the
// tree of the lanes, and each row keeps its own elementwise loop. The partial sums, the tree
// and the row sums keep one block of eight rows, private to it (fold-buffers). Eight rows
// (6.4 KiB each: x, d and the partial sums) fit three quarters of the 128 KiB L1 the RUN line
// gives; on a 32 KiB L1 they would be four (unroll-jam-reductions/l1-cap.mlir).

// LN-LABEL: loop.func @fused_reduce_mean_sub
// LN-NOT:     loop.alloc
// LN:         loop.for %[[I:.*]] = %c0 to %c512 step %c8 parallel {
// LN-COUNT-4:   loop.alloc {fusion.private}
// LN-NEXT:      %[[LANES:.*]] = loop.alloc {fusion.private} : memref<8x32xf32>
// LN-NEXT:      %[[SUM:.*]] = loop.alloc {fusion.private} : memref<8x1xf32>
// LN-NOT:       loop.alloc
// LN:           loop.for %[[L:.*]] = %c0 to %c32 step %c1 vectorized {
// LN-NEXT:        memref.store %cst, %[[LANES]][%c0, %[[L]]]
// LN:           loop.for %[[C:.*]] = %c0 to %c24 step %c8 {
// LN-NEXT:        loop.for %[[L:.*]] = %c0 to %c32 step %c1 vectorized {
// LN-COUNT-64:      arith.addf
// LN-NOT:           arith.addf
// LN:             }
// LN-NEXT:      }
// LN:           %[[M:.*]] = arith.divf %{{.*}}, %{{.*}} : f32
// LN-NEXT:      loop.for %[[J:.*]] = %c0 to %c768 step %c1 vectorized {
// LN-NEXT:        %[[X:.*]] = memref.load %x[%[[I]], %[[J]]]
// LN-NEXT:        %[[D:.*]] = arith.subf %[[X]], %[[M]]
// LN-NEXT:        memref.store %[[D]], %d[%[[I]], %[[J]]]
// LN-LABEL: loop.func @fused_reduce_mean_add_sqrt_div_mul_add
// LN-NOT:     loop.alloc
// LN:         loop.for %{{.*}} = %c0 to %c512 step %c8 parallel {
// LN-COUNT-4:   loop.alloc {fusion.private}
// LN-NEXT:      loop.alloc {fusion.private} : memref<8x32xf32>
// LN-NEXT:      loop.alloc {fusion.private} : memref<8x1xf32>
// LN-NOT:       loop.alloc
