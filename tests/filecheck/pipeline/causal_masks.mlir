// The masks of a causal language model end to end from graph ops: the padding mask cast to
// booleans, broadcast and cut to its lower triangle (trilu is elementwise: one kernel with
// the select of the scores), softmax with its NaN guard (is_nan elementwise after it), and
// position ids from a cumsum of the mask (a reduction: comm_reduce) and the last position
// (arg_max, a reduction kept apart, as the cumsum feeds two kernels).
// RUN: fusion-opt %s -p legalize-ops,annotate-pattern | filecheck %s --check-prefix=KIND
// RUN: %{fuse} %s | filecheck %s

func.func @main(%mask: tensor<2x8xi64>, %scores: tensor<2x8x8xf32>) -> (tensor<2x8x8xf32>, tensor<2x8xi64>, tensor<2xi64>) {
  %b = graph.cast %mask : (tensor<2x8xi64>) -> tensor<2x8xi1>
  %r = graph.reshape %b : (tensor<2x8xi1>) -> tensor<2x1x8xi1>
  %x = graph.broadcast_to %r : (tensor<2x1x8xi1>) -> tensor<2x8x8xi1>
  %c = graph.trilu %x {upper = false, k = 0 : i64} : (tensor<2x8x8xi1>) -> tensor<2x8x8xi1>
  %neg = graph.constant dense<-3.0e38> : tensor<f32>
  %s = graph.where %c, %scores, %neg : (tensor<2x8x8xi1>, tensor<2x8x8xf32>, tensor<f32>) -> tensor<2x8x8xf32>
  %p = graph.softmax %s {axis = -1 : i64} : (tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %nan = graph.is_nan %p : (tensor<2x8x8xf32>) -> tensor<2x8x8xi1>
  %zero = graph.constant dense<0.0> : tensor<f32>
  %q = graph.where %nan, %zero, %p : (tensor<2x8x8xi1>, tensor<f32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %pos = graph.cumsum %mask {axis = 1 : i64, exclusive = false, reverse = false} : (tensor<2x8xi64>) -> tensor<2x8xi64>
  %one = graph.constant dense<1> : tensor<i64>
  %pid = graph.sub %pos, %one : (tensor<2x8xi64>, tensor<i64>) -> tensor<2x8xi64>
  %last = graph.arg_max %pos {axis = 1 : i64, keepdims = false, select_last_index = false} : (tensor<2x8xi64>) -> tensor<2xi64>
  func.return %q, %pid, %last : tensor<2x8x8xf32>, tensor<2x8xi64>, tensor<2xi64>
}

// KIND: loop.func @trilu({{.*}}) pattern elemwise {
// KIND: loop.func @is_nan({{.*}}) pattern elemwise {
// KIND: loop.func @cumsum({{.*}}) pattern comm_reduce {
// KIND: loop.func @arg_max({{.*}}) pattern out_ewise_fusable {

// CHECK-LABEL: loop.func @fused_cast_reshape_broadcast_to_trilu_where(
// CHECK-LABEL: loop.func @fused_softmax_is_nan_where(
// CHECK-LABEL: func.func @main(
// CHECK:         graph.call_loop @fused_cast_reshape_broadcast_to_trilu_where(
// CHECK:         graph.call_loop @fused_softmax_is_nan_where(
// CHECK:         graph.call_loop @cumsum(
// CHECK:         graph.call_loop @sub(
// CHECK:         graph.call_loop @arg_max(
// CHECK-NOT:     graph.call_loop
