// REQUIRES: blas
// lower-graph hands each composite to its backend: a blas composite becomes a kernel that
// calls sgemm (per batch, at each operand's batch offset, transposed operands read by
// strides) and applies the epilogue in place with our own loops.
// RUN: fusion-opt %s --split-input-file -p 'fuse-ops-by-pattern{patterns=blas annotate-codegen=true},legalize-ops,annotate-pattern,fuse-ops,fuse-tir,lower-graph' | filecheck %s

func.func @dense(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>, %b: tensor<32xf32>) -> tensor<8x32xf32> {
  %mm = graph.matmul %x, %w : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %y = graph.add %mm, %b : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  func.return %y : tensor<8x32xf32>
}

// CHECK:       loop.func @fused_matmul_add_blas(%x: memref<8x16xf32>, %w: memref<16x32xf32>, %b: memref<32xf32>) outs(%out0: memref<8x32xf32>) {
// CHECK:         loop.gemm "{{[a-z_]*}}cblas_sgemm"(%x[%[[Z:.*]]], %w[%[[Z]]], %out0[%[[Z]]]) {m = 8 : i64, n = 32 : i64, k = 16 : i64, lda = 16 : i64, ldb = 32 : i64, ldc = 32 : i64, trans_a = 0 : i64, trans_b = 0 : i64}
// CHECK:         memref.load %out0
// CHECK:         memref.load %b
// CHECK:         memref.store {{.*}}, %out0
// CHECK-LABEL: loop.func @dense(
// CHECK-NEXT:    loop.call @fused_matmul_add_blas(%x, %w, %b, %y)
// CHECK-NOT:   func.func

// -----

// k = transpose(k3, [1, 2, 0]) is 4x64x128 with strides (64, 1, 256): B is read transposed
// with ldb 256, batch h at offset 64 h; the broadcast batch of a (1x128x64) has stride 0.
func.func @heads(%q: tensor<1x128x64xf32>, %k3: tensor<128x4x64xf32>) -> tensor<4x128x128xf32> {
  %kh = graph.transpose %k3 {perm = array<i64: 1, 2, 0>} : (tensor<128x4x64xf32>) -> tensor<4x64x128xf32>
  %s = graph.matmul %q, %kh : (tensor<1x128x64xf32>, tensor<4x64x128xf32>) -> tensor<4x128x128xf32>
  func.return %s : tensor<4x128x128xf32>
}

// CHECK:       loop.func @fused_transpose_matmul_blas(%k3: memref<128x4x64xf32>, %q: memref<1x128x64xf32>) outs(%out0: memref<4x128x128xf32>) {
// CHECK:         loop.for %[[H:.*]] = %{{.*}} to %{{.*}} step
// CHECK-DAG:       %[[B:.*]] = arith.muli %[[H]], %c64
// CHECK-DAG:       %[[C:.*]] = arith.muli %[[H]], %c16384
// CHECK:           loop.gemm "{{[a-z_]*}}cblas_sgemm"(%q[%{{.*}}], %k3[%[[B]]], %out0[%[[C]]]) {m = 128 : i64, n = 128 : i64, k = 64 : i64, lda = 64 : i64, ldb = 256 : i64, ldc = 128 : i64, trans_a = 0 : i64, trans_b = 1 : i64}
