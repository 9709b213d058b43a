// RUN: %{fuse} %s | fusion-opt -p 'normalize-kernels,reuse-outputs,fuse-loops,clean-up-kernels,reorder-reductions,unroll-jam-reductions{l1-bytes=32768}' | filecheck %s --check-prefix=L1-32K
// RUN: %{fuse} %s | fusion-opt -p 'normalize-kernels,reuse-outputs,fuse-loops,clean-up-kernels,reorder-reductions,unroll-jam-reductions{l1-bytes=65536}' | filecheck %s --check-prefix=L1-64K

// Softmax over rows of 512 passes over each row four times (max, exp, sum, scaling): the rows
// of one jammed iteration stay in L1 between the passes only while they fit. A row walks
// 4.3 KiB (2 KiB of x, 2 KiB of the output, which holds the exps, and the lanes of its two
// sums), so three quarters of a 32 KiB L1 hold 5 rows: the rows are jammed by 4 (the largest
// divisor of 512 within 5), not the default 8, which 64 KiB holds.
//
// A row sum reads each element once (its remainder nest reads the rest of the row): it is
// not capped, whatever the cache (lane-reduction.mlir keeps 8 rows on any host).

func.func @main(%x: tensor<512x512xf32>, %y: tensor<64x776xf32>) -> (tensor<512x512xf32>, tensor<64xf32>) {
  %s = "graph.softmax"(%x) <{axis = 1 : i64}> : (tensor<512x512xf32>) -> tensor<512x512xf32>
  %r = graph.reduce_sum %y {axes = array<i64: 1>, keepdims = false} : (tensor<64x776xf32>) -> tensor<64xf32>
  func.return %s, %r : tensor<512x512xf32>, tensor<64xf32>
}

// L1-32K-LABEL: loop.func @softmax(
// L1-32K:         loop.for %{{.*}} = %c0 to %c512 step %c4 {
// L1-32K-LABEL: loop.func @reduce_sum(
// L1-32K:         loop.for %{{.*}} = %c0 to %c64 step %c8 {

// L1-64K-LABEL: loop.func @softmax(
// L1-64K:         loop.for %{{.*}} = %c0 to %c512 step %c8 {
// L1-64K-LABEL: loop.func @reduce_sum(
// L1-64K:         loop.for %{{.*}} = %c0 to %c64 step %c8 {
