// Every verifier error of the graph dialect, one case per message, written in the generic form.
// Each chunk must fail to verify; the diagnostic gives the position in the whole file (not in
// the chunk), the op's name and the shapes involved.
// RUN: fusion-opt %s --split-input-file --verify-diagnostics | filecheck %s

// numpy broadcasting: the message names both shapes.
func.func @add_shapes(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x3xf32> {
  %y = "graph.add"(%a, %b) : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
// CHECK: {{.*}}invalid.mlir:8:3: error: graph.add: operand shapes 2x3 (lhs) and 4x5 (rhs) are not broadcast-compatible

// -----

// The result shape must be the broadcast shape.
func.func @add_result(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x9xf32> {
  %y = "graph.sub"(%a, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x9xf32>
  func.return %y : tensor<4x9xf32>
}
// CHECK: {{.*}}invalid.mlir:17:3: error: graph.sub: result #0 has shape 4x9, expected 4x8

// -----

// A unary elementwise op has the type of its operand (the reason is on the next line of
// xDSL's message; see errors/result_type_reason.mlir).
func.func @relu_result(%x: tensor<4x8xf32>) -> tensor<4x9xf32> {
  %y = "graph.relu"(%x) : (tensor<4x8xf32>) -> tensor<4x9xf32>
  func.return %y : tensor<4x9xf32>
}
// CHECK: {{.*}}invalid.mlir:27:3: error: graph.relu: result 'result' at position 0 does not verify

// -----

// Dynamic dimensions verify, but static ones must still agree (more: invalid-dynamic.mlir).
func.func @dynamic(%x: tensor<?x8xf32>) -> tensor<?x9xf32> {
  %y = "graph.add"(%x, %x) : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x9xf32>
  func.return %y : tensor<?x9xf32>
}
// CHECK: {{.*}}invalid.mlir:36:3: error: graph.add: result #0 has shape ?x9, expected ?x8

// -----

// Only f32, i64, i32 and i1 tensors, and of those the ones the op accepts.
func.func @f16(%a: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %y = "graph.mul"(%a, %a) : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  func.return %y : tensor<4x8xf16>
}
// CHECK: {{.*}}invalid.mlir:45:3: error: graph.mul: operand #0 must have f32, i64 or i32 elements, got tensor<4x8xf16>

// -----

// Operands are tensors, not buffers.
func.func @memref_operand(%x: memref<4x8xf32>) -> tensor<4x8xf32> {
  %y = "graph.tanh"(%x) : (memref<4x8xf32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}
// CHECK: {{.*}}invalid.mlir:54:3: error: graph.tanh: operand 'input' at position 0 does not verify

// -----

// clip needs both bounds.
func.func @clip_missing(%x: tensor<8xf32>) -> tensor<8xf32> {
  %y = "graph.clip"(%x) <{min = 0.0 : f32}> : (tensor<8xf32>) -> tensor<8xf32>
  func.return %y : tensor<8xf32>
}
// CHECK: {{.*}}invalid.mlir:63:3: error: graph.clip: property 'max' expected in operation 'graph.clip'

// -----

// clip bounds are f32.
func.func @clip_f64(%x: tensor<8xf32>) -> tensor<8xf32> {
  %y = "graph.clip"(%x) <{min = 0.0 : f64, max = 6.0 : f32}> : (tensor<8xf32>) -> tensor<8xf32>
  func.return %y : tensor<8xf32>
}
// CHECK: {{.*}}invalid.mlir:72:3: error: graph.clip: f64 should be of base attribute f32

// -----

// The contracting dimensions of matmul must agree.
func.func @matmul_contracting(%a: tensor<128x768xf32>, %b: tensor<512x3072xf32>) -> tensor<128x3072xf32> {
  %y = "graph.matmul"(%a, %b) : (tensor<128x768xf32>, tensor<512x3072xf32>) -> tensor<128x3072xf32>
  func.return %y : tensor<128x3072xf32>
}
// CHECK: {{.*}}invalid.mlir:81:3: error: graph.matmul: contracting dimensions differ: 128x768 has 768 columns, 512x3072 has 512 rows

// -----

// matmul needs matrices.
func.func @matmul_rank(%a: tensor<768xf32>, %b: tensor<768x3072xf32>) -> tensor<3072xf32> {
  %y = "graph.matmul"(%a, %b) : (tensor<768xf32>, tensor<768x3072xf32>) -> tensor<3072xf32>
  func.return %y : tensor<3072xf32>
}
// CHECK: {{.*}}invalid.mlir:90:3: error: graph.matmul: matmul needs operands of rank >= 2, got 768 and 768x3072

// -----

// Batch dimensions broadcast like numpy's.
func.func @matmul_batch(%a: tensor<2x4x8xf32>, %b: tensor<3x8x5xf32>) -> tensor<2x4x5xf32> {
  %y = "graph.matmul"(%a, %b) : (tensor<2x4x8xf32>, tensor<3x8x5xf32>) -> tensor<2x4x5xf32>
  func.return %y : tensor<2x4x5xf32>
}
// CHECK: {{.*}}invalid.mlir:99:3: error: graph.matmul: batch dimensions of 2x4x8 and 3x8x5 are not broadcast-compatible

// -----

// The weight's input channels must match the input's.
func.func @conv_channels(%x: tensor<1x64x56x56xf32>, %w: tensor<64x32x3x3xf32>) -> tensor<1x64x56x56xf32> {
  %y = "graph.conv2d"(%x, %w) <{strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64}> : (tensor<1x64x56x56xf32>, tensor<64x32x3x3xf32>) -> tensor<1x64x56x56xf32>
  func.return %y : tensor<1x64x56x56xf32>
}
// CHECK: {{.*}}invalid.mlir:108:3: error: graph.conv2d: weight 64x32x3x3 expects 32 input channels (32 per group x 1 groups), input 1x64x56x56 has 64

// -----

// groups must divide the channels.
func.func @conv_groups(%x: tensor<1x64x56x56xf32>, %w: tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32> {
  %y = "graph.conv2d"(%x, %w) <{strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 3 : i64}> : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32>
  func.return %y : tensor<1x64x56x56xf32>
}
// CHECK: {{.*}}invalid.mlir:117:3: error: graph.conv2d: groups = 3 must divide the input channels (64) and the output channels (64)

// -----

// strides has one value per spatial axis.
func.func @conv_strides(%x: tensor<1x64x56x56xf32>, %w: tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32> {
  %y = "graph.conv2d"(%x, %w) <{strides = array<i64: 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64}> : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32>
  func.return %y : tensor<1x64x56x56xf32>
}
// CHECK: {{.*}}invalid.mlir:126:3: error: graph.conv2d: 'strides' needs 2 values, got 1

// -----

// Pooling padding must be smaller than the window.
func.func @pool_padding(%x: tensor<1x64x112x112xf32>) -> tensor<1x64x57x57xf32> {
  %y = "graph.max_pool2d"(%x) <{kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 3, 3, 3, 3>}> : (tensor<1x64x112x112xf32>) -> tensor<1x64x57x57xf32>
  func.return %y : tensor<1x64x57x57xf32>
}
// CHECK: {{.*}}invalid.mlir:135:3: error: graph.max_pool2d: padding [3, 3, 3, 3] must be smaller than the kernel [3, 3]

// -----

// The window must fit the padded input.
func.func @pool_window(%x: tensor<1x64x2x2xf32>) -> tensor<1x64x1x1xf32> {
  %y = "graph.avg_pool2d"(%x) <{kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, count_include_pad = false}> : (tensor<1x64x2x2xf32>) -> tensor<1x64x1x1xf32>
  func.return %y : tensor<1x64x1x1xf32>
}
// CHECK: {{.*}}invalid.mlir:144:3: error: graph.avg_pool2d: window of 3 does not fit an input of 2 padded by 0+0

// -----

// Global pooling needs NCHW.
func.func @global_pool_rank(%x: tensor<64x56x56xf32>) -> tensor<64x1x1xf32> {
  %y = "graph.global_avg_pool2d"(%x) : (tensor<64x56x56xf32>) -> tensor<64x1x1xf32>
  func.return %y : tensor<64x1x1xf32>
}
// CHECK: {{.*}}invalid.mlir:153:3: error: graph.global_avg_pool2d: global pooling needs a rank-4 NCHW input, got 64x56x56

// -----

// Batch-norm parameters have one value per channel.
func.func @batch_norm_param(%x: tensor<1x64x56x56xf32>, %s: tensor<32xf32>, %p: tensor<64xf32>) -> tensor<1x64x56x56xf32> {
  %y = "graph.batch_norm"(%x, %s, %p, %p, %p) <{epsilon = 1.0e-05 : f32}> : (tensor<1x64x56x56xf32>, tensor<32xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x56x56xf32>
  func.return %y : tensor<1x64x56x56xf32>
}
// CHECK: {{.*}}invalid.mlir:162:3: error: graph.batch_norm: scale must have shape 64 (the channels of 1x64x56x56), got 32

// -----

// gamma has the shape of the normalised axes.
func.func @layer_norm_gamma(%x: tensor<128x256xf32>, %g: tensor<128xf32>, %b: tensor<256xf32>) -> tensor<128x256xf32> {
  %y = "graph.layer_norm"(%x, %g, %b) <{axis = -1 : i64, epsilon = 1.0e-05 : f32}> : (tensor<128x256xf32>, tensor<128xf32>, tensor<256xf32>) -> tensor<128x256xf32>
  func.return %y : tensor<128x256xf32>
}
// CHECK: {{.*}}invalid.mlir:171:3: error: graph.layer_norm: gamma must have shape 256 (axes 1.. of 128x256), got 128

// -----

// LRN works across the channels of NCHW.
func.func @lrn_rank(%x: tensor<64x56x56xf32>) -> tensor<64x56x56xf32> {
  %y = "graph.lrn"(%x) <{size = 5 : i64, alpha = 1.0e-04 : f32, beta = 0.75 : f32, bias = 1.0 : f32}> : (tensor<64x56x56xf32>) -> tensor<64x56x56xf32>
  func.return %y : tensor<64x56x56xf32>
}
// CHECK: {{.*}}invalid.mlir:180:3: error: graph.lrn: needs a rank-4 NCHW input, got {{.*}}64{{.*}}56{{.*}}56

// -----

// LRN's window has at least one channel.
func.func @lrn_size(%x: tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32> {
  %y = "graph.lrn"(%x) <{size = 0 : i64, alpha = 1.0e-04 : f32, beta = 0.75 : f32, bias = 1.0 : f32}> : (tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
  func.return %y : tensor<1x64x56x56xf32>
}
// CHECK: {{.*}}invalid.mlir:189:3: error: graph.lrn: size must be >= 1, got 0

// -----

// The softmax axis must exist.
func.func @softmax_axis(%x: tensor<4x8x16xf32>) -> tensor<4x8x16xf32> {
  %y = "graph.softmax"(%x) <{axis = 3 : i64}> : (tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  func.return %y : tensor<4x8x16xf32>
}
// CHECK: {{.*}}invalid.mlir:198:3: error: graph.softmax: axis 3 is out of range for rank 3

// -----

// Reduced axes must exist.
func.func @reduce_axis(%x: tensor<4x8x16xf32>) -> tensor<4x8xf32> {
  %y = "graph.reduce_sum"(%x) <{axes = array<i64: 3>, keepdims = false}> : (tensor<4x8x16xf32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}
// CHECK: {{.*}}invalid.mlir:207:3: error: graph.reduce_sum: axes 3 is out of range for rank 3

// -----

// Each axis is reduced once (-2 is axis 1).
func.func @reduce_repeat(%x: tensor<4x8x16xf32>) -> tensor<4x16xf32> {
  %y = "graph.reduce_max"(%x) <{axes = array<i64: 1, -2>, keepdims = false}> : (tensor<4x8x16xf32>) -> tensor<4x16xf32>
  func.return %y : tensor<4x16xf32>
}
// CHECK: {{.*}}invalid.mlir:216:3: error: graph.reduce_max: axes [1, -2] repeat an axis

// -----

// keepdims keeps the reduced axes as unit axes.
func.func @reduce_keepdims(%x: tensor<512x768xf32>) -> tensor<512xf32> {
  %y = "graph.reduce_mean"(%x) <{axes = array<i64: 1>, keepdims = true}> : (tensor<512x768xf32>) -> tensor<512xf32>
  func.return %y : tensor<512xf32>
}
// CHECK: {{.*}}invalid.mlir:225:3: error: graph.reduce_mean: result #0 has shape 512, expected 512x1

// -----

// A reshape keeps the number of elements.
func.func @reshape_count(%x: tensor<128x256xf32>) -> tensor<128x4x32xf32> {
  %y = "graph.reshape"(%x) : (tensor<128x256xf32>) -> tensor<128x4x32xf32>
  func.return %y : tensor<128x4x32xf32>
}
// CHECK: {{.*}}invalid.mlir:234:3: error: graph.reshape: cannot reshape 128x256 (32768 elements) to 128x4x32 (16384 elements)

// -----

// broadcast_to follows numpy's rules.
func.func @broadcast_to(%x: tensor<2x3xf32>) -> tensor<3x3xf32> {
  %y = "graph.broadcast_to"(%x) : (tensor<2x3xf32>) -> tensor<3x3xf32>
  func.return %y : tensor<3x3xf32>
}
// CHECK: {{.*}}invalid.mlir:243:3: error: graph.broadcast_to: {{.*}}2x3{{.*}}3x3

// -----

// perm must be a permutation of the axes.
func.func @transpose_perm(%x: tensor<128x4x64xf32>) -> tensor<4x64x128xf32> {
  %y = "graph.transpose"(%x) <{perm = array<i64: 1, 2, 2>}> : (tensor<128x4x64xf32>) -> tensor<4x64x128xf32>
  func.return %y : tensor<4x64x128xf32>
}
// CHECK: {{.*}}invalid.mlir:252:3: error: graph.transpose: perm [1, 2, 2] is not a permutation of the 3 axes of 128x4x64

// -----

// Only unit axes can be squeezed.
func.func @squeeze_axis(%x: tensor<10x2x20xf32>) -> tensor<10x20xf32> {
  %y = "graph.squeeze"(%x) <{axes = array<i64: 1>}> : (tensor<10x2x20xf32>) -> tensor<10x20xf32>
  func.return %y : tensor<10x20xf32>
}
// CHECK: {{.*}}invalid.mlir:261:3: error: graph.squeeze: cannot squeeze axis 1 of 10x2x20: its size is 2

// -----

// expand_dims axes are positions in the result.
func.func @expand_axis(%x: tensor<10x20xf32>) -> tensor<10x20x1xf32> {
  %y = "graph.expand_dims"(%x) <{axes = array<i64: 3>}> : (tensor<10x20xf32>) -> tensor<10x20x1xf32>
  func.return %y : tensor<10x20x1xf32>
}
// CHECK: {{.*}}invalid.mlir:270:3: error: graph.expand_dims: axes 3 is out of range for rank 3

// -----

// Concatenated operands agree outside the axis.
func.func @concat_shapes(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>) -> tensor<2x8xf32> {
  %y = "graph.concat"(%a, %b) <{axis = 1 : i64}> : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x8xf32>
  func.return %y : tensor<2x8xf32>
}
// CHECK: {{.*}}invalid.mlir:279:3: error: graph.concat: operand #1 has shape 3x5, which differs from 2x3 outside the concatenation axis 1

// -----

// The sections of a split add up to the axis.
func.func @split_sections(%x: tensor<2x10xf32>) -> (tensor<2x3xf32>, tensor<2x6xf32>) {
  %a, %b = "graph.split"(%x) <{axis = 1 : i64, sections = array<i64: 3, 6>}> : (tensor<2x10xf32>) -> (tensor<2x3xf32>, tensor<2x6xf32>)
  func.return %a, %b : tensor<2x3xf32>, tensor<2x6xf32>
}
// CHECK: {{.*}}invalid.mlir:288:3: error: graph.split: sections [3, 6] must be non-negative and add up to 10, the size of axis 1 of 2x10

// -----

// A split has one result per section.
func.func @split_results(%x: tensor<2x10xf32>) -> tensor<2x3xf32> {
  %a = "graph.split"(%x) <{axis = 1 : i64, sections = array<i64: 3, 7>}> : (tensor<2x10xf32>) -> tensor<2x3xf32>
  func.return %a : tensor<2x3xf32>
}
// CHECK: {{.*}}invalid.mlir:297:3: error: graph.split: expected 2 results, got 1

// -----

// A slice has one start, end and step per axis.
func.func @slice_arity(%x: tensor<8x10xf32>) -> tensor<3xf32> {
  %y = "graph.slice"(%x) <{starts = array<i64: 1>, ends = array<i64: 7>, steps = array<i64: 2>}> : (tensor<8x10xf32>) -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}
// CHECK: {{.*}}invalid.mlir:306:3: error: graph.slice: starts, ends and steps need one entry per axis of 8x10, got 1, 1 and 1

// -----

// Slice steps are not 0.
func.func @slice_step(%x: tensor<8x10xf32>) -> tensor<8x10xf32> {
  %y = "graph.slice"(%x) <{starts = array<i64: 0, 0>, ends = array<i64: 8, 10>, steps = array<i64: 1, 0>}> : (tensor<8x10xf32>) -> tensor<8x10xf32>
  func.return %y : tensor<8x10xf32>
}
// CHECK: {{.*}}invalid.mlir:315:3: error: graph.slice: slice step must not be 0

// -----

// A constant's value has the result type.
func.func @constant_type() -> tensor<2xf32> {
  %c = "graph.constant"() <{value = dense<1.0> : tensor<3xf32>}> : () -> tensor<2xf32>
  func.return %c : tensor<2xf32>
}
// CHECK: {{.*}}invalid.mlir:324:3: error: graph.constant: the value has type tensor<3xf32>, the result tensor<2xf32>

// -----

// Constants have a graph element type too.
func.func @constant_i8() -> tensor<2xi8> {
  %c = "graph.constant"() <{value = dense<1> : tensor<2xi8>}> : () -> tensor<2xi8>
  func.return %c : tensor<2xi8>
}
// CHECK: {{.*}}invalid.mlir:333:3: error: graph.constant: result #0 must have f32, i64, i32 or i1 elements, got tensor<2xi8>

// -----

// call_loop calls a kernel that exists...
func.func @call_unknown(%x: tensor<8xf32>) -> tensor<8xf32> {
  %y = "graph.call_loop"(%x) <{callee = @nowhere}> : (tensor<8xf32>) -> tensor<8xf32>
  func.return %y : tensor<8xf32>
}
// CHECK: {{.*}}invalid.mlir:342:3: error: graph.call_loop: no kernel named @nowhere

// -----

// ... and is a loop.func ...
func.func @call_func(%x: tensor<8xf32>) -> tensor<8xf32> {
  %y = "graph.call_loop"(%x) <{callee = @call_func}> : (tensor<8xf32>) -> tensor<8xf32>
  func.return %y : tensor<8xf32>
}
// CHECK: {{.*}}invalid.mlir:351:3: error: graph.call_loop: @call_func is a func.func, not a loop.func

// -----

// ... with one input buffer per operand ...
"loop.func"() <{sym_name = "halve", function_type = (memref<8xf32>) -> memref<4xf32>}> ({
^bb0(%in: memref<8xf32>, %out: memref<4xf32>):
  "loop.return"() : () -> ()
}) : () -> ()
func.func @call_operands(%x: tensor<8xf32>) -> tensor<4xf32> {
  %y = "graph.call_loop"(%x, %x) <{callee = @halve}> : (tensor<8xf32>, tensor<8xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
// CHECK: {{.*}}invalid.mlir:364:3: error: graph.call_loop: @halve takes 1 operand buffers, got 2 operands

// -----

// ... and one output buffer of the same shape per result.
"loop.func"() <{sym_name = "halve", function_type = (memref<8xf32>) -> memref<4xf32>}> ({
^bb0(%in: memref<8xf32>, %out: memref<4xf32>):
  "loop.return"() : () -> ()
}) : () -> ()
func.func @call_results(%x: tensor<8xf32>) -> tensor<8xf32> {
  %y = "graph.call_loop"(%x) <{callee = @halve}> : (tensor<8xf32>) -> tensor<8xf32>
  func.return %y : tensor<8xf32>
}
// CHECK: {{.*}}invalid.mlir:377:3: error: graph.call_loop: result #0 has type tensor<8xf32>, but @halve expects 4xf32

// -----

// A value used above its definition does not dominate that use (MLIR's message).
func.func @use_before_def(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = "graph.relu"(%y) : (tensor<4xf32>) -> tensor<4xf32>
  %y = "graph.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK: {{.*}}invalid.mlir:386:3: error: graph.relu: operand #0 does not dominate this use

// -----

// An op using its own result.
func.func @self_use(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = "graph.relu"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %a : tensor<4xf32>
}
// CHECK: {{.*}}invalid.mlir:396:3: error: graph.relu: operand #0 does not dominate this use

// -----

// The second operand is the one named.
func.func @second_operand(%x: tensor<4xf32>) -> tensor<4xf32> {
  %s = "graph.add"(%x, %e) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %e = "graph.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %s : tensor<4xf32>
}
// CHECK: {{.*}}invalid.mlir:405:3: error: graph.add: operand #1 does not dominate this use
