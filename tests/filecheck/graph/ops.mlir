// Every op of the graph dialect with its properties: parses in the custom syntax, prints the
// same custom syntax back, and round-trips through the generic form. One function per op family.
// RUN: %{roundtrip} | filecheck %s
// RUN: %{generic-roundtrip} | filecheck %s
// RUN: fusion-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
//
// Printing is a fixed point: printing the printed output again gives identical bytes, in both forms.
// RUN: fusion-opt %s > %t.a && fusion-opt %s | fusion-opt > %t.b && diff %t.a %t.b
// RUN: fusion-opt %s --print-op-generic > %t.c && fusion-opt %t.c --print-op-generic > %t.d && diff %t.c %t.d

func.func @unary(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %relu = graph.relu %x : tensor<4x8xf32>
  %exp = graph.exp %relu : tensor<4x8xf32>
  %log = graph.log %exp : tensor<4x8xf32>
  %sqrt = graph.sqrt %log : tensor<4x8xf32>
  %rsqrt = graph.rsqrt %sqrt : tensor<4x8xf32>
  %tanh = graph.tanh %rsqrt : tensor<4x8xf32>
  %sigmoid = graph.sigmoid %tanh : tensor<4x8xf32>
  %neg = graph.neg %sigmoid : tensor<4x8xf32>
  %abs = graph.abs %neg : tensor<4x8xf32>
  %erf = graph.erf %abs : tensor<4x8xf32>
  %gelu = graph.gelu %erf : tensor<4x8xf32>
  %gelu_tanh = graph.gelu_tanh %gelu : tensor<4x8xf32>
  %silu = graph.silu %gelu_tanh : tensor<4x8xf32>
  %clip = graph.clip %silu {min = 0.0 : f32, max = 6.0 : f32} : tensor<4x8xf32>
  func.return %clip : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @unary(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %relu = graph.relu %x : tensor<4x8xf32>
// CHECK-NEXT:    %exp = graph.exp %relu : tensor<4x8xf32>
// CHECK-NEXT:    %log = graph.log %exp : tensor<4x8xf32>
// CHECK-NEXT:    %sqrt = graph.sqrt %log : tensor<4x8xf32>
// CHECK-NEXT:    %rsqrt = graph.rsqrt %sqrt : tensor<4x8xf32>
// CHECK-NEXT:    %tanh = graph.tanh %rsqrt : tensor<4x8xf32>
// CHECK-NEXT:    %sigmoid = graph.sigmoid %tanh : tensor<4x8xf32>
// CHECK-NEXT:    %neg = graph.neg %sigmoid : tensor<4x8xf32>
// CHECK-NEXT:    %abs = graph.abs %neg : tensor<4x8xf32>
// CHECK-NEXT:    %erf = graph.erf %abs : tensor<4x8xf32>
// CHECK-NEXT:    %gelu = graph.gelu %erf : tensor<4x8xf32>
// CHECK-NEXT:    %gelu_tanh = graph.gelu_tanh %gelu : tensor<4x8xf32>
// CHECK-NEXT:    %silu = graph.silu %gelu_tanh : tensor<4x8xf32>
// CHECK-NEXT:    %clip = graph.clip %silu {min = 0.000000e+00 : f32, max = 6.000000e+00 : f32} : tensor<4x8xf32>
// CHECK-NEXT:    func.return %clip : tensor<4x8xf32>
// CHECK-NEXT:  }

// numpy broadcasting, scalar operands included.
func.func @binary(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %c: tensor<4x1xf32>, %s: tensor<f32>) -> tensor<4x8xf32> {
  %add = graph.add %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %sub = graph.sub %add, %c : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %mul = graph.mul %sub, %s : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %div = graph.div %mul, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %max = graph.max %b, %c : (tensor<8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %min = graph.min %div, %max : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %pow = graph.pow %s, %min : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %pow : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @binary(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %c: tensor<4x1xf32>, %s: tensor<f32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %add = graph.add %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %sub = graph.sub %add, %c : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %mul = graph.mul %sub, %s : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %div = graph.div %mul, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %max = graph.max %b, %c : (tensor<8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %min = graph.min %div, %max : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %pow = graph.pow %s, %min : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %pow : tensor<4x8xf32>
// CHECK-NEXT:  }

// The batch dimensions of matmul broadcast like numpy's.
func.func @matmul(%a: tensor<128x768xf32>, %b: tensor<768x3072xf32>, %x: tensor<2x1x3x4xf32>, %y: tensor<5x4x6xf32>) -> (tensor<128x3072xf32>, tensor<2x5x3x6xf32>) {
  %mm = graph.matmul %a, %b : (tensor<128x768xf32>, tensor<768x3072xf32>) -> tensor<128x3072xf32>
  %batched = graph.matmul %x, %y : (tensor<2x1x3x4xf32>, tensor<5x4x6xf32>) -> tensor<2x5x3x6xf32>
  func.return %mm, %batched : tensor<128x3072xf32>, tensor<2x5x3x6xf32>
}

// CHECK-LABEL: func.func @matmul(%a: tensor<128x768xf32>, %b: tensor<768x3072xf32>, %x: tensor<2x1x3x4xf32>, %y: tensor<5x4x6xf32>) -> (tensor<128x3072xf32>, tensor<2x5x3x6xf32>) {
// CHECK-NEXT:    %mm = graph.matmul %a, %b : (tensor<128x768xf32>, tensor<768x3072xf32>) -> tensor<128x3072xf32>
// CHECK-NEXT:    %batched = graph.matmul %x, %y : (tensor<2x1x3x4xf32>, tensor<5x4x6xf32>) -> tensor<2x5x3x6xf32>
// CHECK-NEXT:    func.return %mm, %batched : tensor<128x3072xf32>, tensor<2x5x3x6xf32>
// CHECK-NEXT:  }

// Padding is (top, left, bottom, right); the second conv is strided, dilated and grouped.
func.func @conv2d(%x: tensor<1x64x56x56xf32>, %w: tensor<64x64x3x3xf32>, %g: tensor<1x4x9x9xf32>, %gw: tensor<8x2x3x3xf32>) -> (tensor<1x64x56x56xf32>, tensor<1x8x5x3xf32>) {
  %same = graph.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32>
  %grouped = graph.conv2d %g, %gw {strides = array<i64: 2, 2>, padding = array<i64: 1, 0, 1, 1>, dilation = array<i64: 1, 2>, groups = 2 : i64} : (tensor<1x4x9x9xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x5x3xf32>
  func.return %same, %grouped : tensor<1x64x56x56xf32>, tensor<1x8x5x3xf32>
}

// CHECK-LABEL: func.func @conv2d(%x: tensor<1x64x56x56xf32>, %w: tensor<64x64x3x3xf32>, %g: tensor<1x4x9x9xf32>, %gw: tensor<8x2x3x3xf32>) -> (tensor<1x64x56x56xf32>, tensor<1x8x5x3xf32>) {
// CHECK-NEXT:    %same = graph.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32>
// CHECK-NEXT:    %grouped = graph.conv2d %g, %gw {strides = array<i64: 2, 2>, padding = array<i64: 1, 0, 1, 1>, dilation = array<i64: 1, 2>, groups = 2 : i64} : (tensor<1x4x9x9xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x5x3xf32>
// CHECK-NEXT:    func.return %same, %grouped : tensor<1x64x56x56xf32>, tensor<1x8x5x3xf32>
// CHECK-NEXT:  }

func.func @pooling(%x: tensor<1x64x112x112xf32>) -> (tensor<1x64x56x56xf32>, tensor<1x64x56x56xf32>, tensor<1x64x56x56xf32>, tensor<1x64x1x1xf32>) {
  %max = graph.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
  %avg = graph.avg_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, count_include_pad = false} : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
  %avg_pad = graph.avg_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, count_include_pad = true} : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
  %global = graph.global_avg_pool2d %x : (tensor<1x64x112x112xf32>) -> tensor<1x64x1x1xf32>
  func.return %max, %avg, %avg_pad, %global : tensor<1x64x56x56xf32>, tensor<1x64x56x56xf32>, tensor<1x64x56x56xf32>, tensor<1x64x1x1xf32>
}

// CHECK-LABEL: func.func @pooling(%x: tensor<1x64x112x112xf32>) -> (tensor<1x64x56x56xf32>, tensor<1x64x56x56xf32>, tensor<1x64x56x56xf32>, tensor<1x64x1x1xf32>) {
// CHECK-NEXT:    %max = graph.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
// CHECK-NEXT:    %avg = graph.avg_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, count_include_pad = false} : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
// CHECK-NEXT:    %avg_pad = graph.avg_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, count_include_pad = true} : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
// CHECK-NEXT:    %global = graph.global_avg_pool2d %x : (tensor<1x64x112x112xf32>) -> tensor<1x64x1x1xf32>
// CHECK-NEXT:    func.return %max, %avg, %avg_pad, %global : tensor<1x64x56x56xf32>, tensor<1x64x56x56xf32>, tensor<1x64x56x56xf32>, tensor<1x64x1x1xf32>
// CHECK-NEXT:  }

func.func @normalization(%x: tensor<1x64x56x56xf32>, %scale: tensor<64xf32>, %bias: tensor<64xf32>, %mean: tensor<64xf32>, %var: tensor<64xf32>, %t: tensor<2x128x256xf32>, %gamma: tensor<128x256xf32>, %beta: tensor<128x256xf32>) -> (tensor<1x64x56x56xf32>, tensor<2x128x256xf32>) {
  %bn = graph.batch_norm %x, %scale, %bias, %mean, %var {epsilon = 1.0e-05 : f32} : (tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x56x56xf32>
  %lrn = graph.lrn %bn {size = 5 : i64, alpha = 1.0e-04 : f32, beta = 0.75 : f32, bias = 1.0 : f32} : (tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
  %ln = graph.layer_norm %t, %gamma, %beta {axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x128x256xf32>, tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<2x128x256xf32>
  func.return %lrn, %ln : tensor<1x64x56x56xf32>, tensor<2x128x256xf32>
}

// CHECK-LABEL: func.func @normalization(%x: tensor<1x64x56x56xf32>, %scale: tensor<64xf32>, %bias: tensor<64xf32>, %mean: tensor<64xf32>, %var: tensor<64xf32>, %t: tensor<2x128x256xf32>, %gamma: tensor<128x256xf32>, %beta: tensor<128x256xf32>) -> (tensor<1x64x56x56xf32>, tensor<2x128x256xf32>) {
// CHECK-NEXT:    %bn = graph.batch_norm %x, %scale, %bias, %mean, %var {epsilon = 1.000000e-05 : f32} : (tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x56x56xf32>
// CHECK-NEXT:    %lrn = graph.lrn %bn {size = 5 : i64, alpha = 1.000000e-04 : f32, beta = 7.500000e-01 : f32, bias = 1.000000e+00 : f32} : (tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
// CHECK-NEXT:    %ln = graph.layer_norm %t, %gamma, %beta {axis = 1 : i64, epsilon = 1.000000e-05 : f32} : (tensor<2x128x256xf32>, tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<2x128x256xf32>
// CHECK-NEXT:    func.return %lrn, %ln : tensor<1x64x56x56xf32>, tensor<2x128x256xf32>
// CHECK-NEXT:  }

func.func @softmax(%x: tensor<4x128x128xf32>) -> tensor<4x128x128xf32> {
  %last = graph.softmax %x {axis = -1 : i64} : (tensor<4x128x128xf32>) -> tensor<4x128x128xf32>
  %first = graph.softmax %last {axis = 0 : i64} : (tensor<4x128x128xf32>) -> tensor<4x128x128xf32>
  func.return %first : tensor<4x128x128xf32>
}

// CHECK-LABEL: func.func @softmax(%x: tensor<4x128x128xf32>) -> tensor<4x128x128xf32> {
// CHECK-NEXT:    %last = graph.softmax %x {axis = -1 : i64} : (tensor<4x128x128xf32>) -> tensor<4x128x128xf32>
// CHECK-NEXT:    %first = graph.softmax %last {axis = 0 : i64} : (tensor<4x128x128xf32>) -> tensor<4x128x128xf32>
// CHECK-NEXT:    func.return %first : tensor<4x128x128xf32>
// CHECK-NEXT:  }

// Negative axes count from the end; empty axes reduce every axis.
func.func @reductions(%x: tensor<4x8x16xf32>) -> (tensor<4x1x16xf32>, tensor<4xf32>, tensor<f32>) {
  %sum = graph.reduce_sum %x {axes = array<i64: 1>, keepdims = true} : (tensor<4x8x16xf32>) -> tensor<4x1x16xf32>
  %mean = graph.reduce_mean %x {axes = array<i64: -1, 1>, keepdims = false} : (tensor<4x8x16xf32>) -> tensor<4xf32>
  %max = graph.reduce_max %x {axes = array<i64>, keepdims = false} : (tensor<4x8x16xf32>) -> tensor<f32>
  func.return %sum, %mean, %max : tensor<4x1x16xf32>, tensor<4xf32>, tensor<f32>
}

// CHECK-LABEL: func.func @reductions(%x: tensor<4x8x16xf32>) -> (tensor<4x1x16xf32>, tensor<4xf32>, tensor<f32>) {
// CHECK-NEXT:    %sum = graph.reduce_sum %x {axes = array<i64: 1>, keepdims = true} : (tensor<4x8x16xf32>) -> tensor<4x1x16xf32>
// CHECK-NEXT:    %mean = graph.reduce_mean %x {axes = array<i64: -1, 1>, keepdims = false} : (tensor<4x8x16xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %max = graph.reduce_max %x {axes = array<i64>, keepdims = false} : (tensor<4x8x16xf32>) -> tensor<f32>
// CHECK-NEXT:    func.return %sum, %mean, %max : tensor<4x1x16xf32>, tensor<4xf32>, tensor<f32>
// CHECK-NEXT:  }

func.func @reshape_broadcast(%x: tensor<128x256xf32>, %b: tensor<1x64x1x1xf32>) -> (tensor<128x4x64xf32>, tensor<2x64x7x7xf32>) {
  %reshaped = graph.reshape %x : (tensor<128x256xf32>) -> tensor<128x4x64xf32>
  %broadcast = graph.broadcast_to %b : (tensor<1x64x1x1xf32>) -> tensor<2x64x7x7xf32>
  func.return %reshaped, %broadcast : tensor<128x4x64xf32>, tensor<2x64x7x7xf32>
}

// CHECK-LABEL: func.func @reshape_broadcast(%x: tensor<128x256xf32>, %b: tensor<1x64x1x1xf32>) -> (tensor<128x4x64xf32>, tensor<2x64x7x7xf32>) {
// CHECK-NEXT:    %reshaped = graph.reshape %x : (tensor<128x256xf32>) -> tensor<128x4x64xf32>
// CHECK-NEXT:    %broadcast = graph.broadcast_to %b : (tensor<1x64x1x1xf32>) -> tensor<2x64x7x7xf32>
// CHECK-NEXT:    func.return %reshaped, %broadcast : tensor<128x4x64xf32>, tensor<2x64x7x7xf32>
// CHECK-NEXT:  }

func.func @transpose(%x: tensor<128x4x64xf32>) -> tensor<4x64x128xf32> {
  %t = graph.transpose %x {perm = array<i64: 1, 2, 0>} : (tensor<128x4x64xf32>) -> tensor<4x64x128xf32>
  func.return %t : tensor<4x64x128xf32>
}

// CHECK-LABEL: func.func @transpose(%x: tensor<128x4x64xf32>) -> tensor<4x64x128xf32> {
// CHECK-NEXT:    %t = graph.transpose %x {perm = array<i64: 1, 2, 0>} : (tensor<128x4x64xf32>) -> tensor<4x64x128xf32>
// CHECK-NEXT:    func.return %t : tensor<4x64x128xf32>
// CHECK-NEXT:  }

func.func @squeeze_expand(%x: tensor<10x1x20x1xf32>) -> (tensor<10x20x1xf32>, tensor<10x20xf32>, tensor<1x10x20x1xf32>) {
  %one = graph.squeeze %x {axes = array<i64: 1>} : (tensor<10x1x20x1xf32>) -> tensor<10x20x1xf32>
  %all = graph.squeeze %x {axes = array<i64>} : (tensor<10x1x20x1xf32>) -> tensor<10x20xf32>
  %expanded = graph.expand_dims %all {axes = array<i64: 0, -1>} : (tensor<10x20xf32>) -> tensor<1x10x20x1xf32>
  func.return %one, %all, %expanded : tensor<10x20x1xf32>, tensor<10x20xf32>, tensor<1x10x20x1xf32>
}

// CHECK-LABEL: func.func @squeeze_expand(%x: tensor<10x1x20x1xf32>) -> (tensor<10x20x1xf32>, tensor<10x20xf32>, tensor<1x10x20x1xf32>) {
// CHECK-NEXT:    %one = graph.squeeze %x {axes = array<i64: 1>} : (tensor<10x1x20x1xf32>) -> tensor<10x20x1xf32>
// CHECK-NEXT:    %all = graph.squeeze %x {axes = array<i64>} : (tensor<10x1x20x1xf32>) -> tensor<10x20xf32>
// CHECK-NEXT:    %expanded = graph.expand_dims %all {axes = array<i64: 0, -1>} : (tensor<10x20xf32>) -> tensor<1x10x20x1xf32>
// CHECK-NEXT:    func.return %one, %all, %expanded : tensor<10x20x1xf32>, tensor<10x20xf32>, tensor<1x10x20x1xf32>
// CHECK-NEXT:  }

func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>, %c: tensor<2x1xf32>) -> tensor<2x9xf32> {
  %joined = graph.concat %a, %b, %c {axis = -1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>, tensor<2x1xf32>) -> tensor<2x9xf32>
  func.return %joined : tensor<2x9xf32>
}

// CHECK-LABEL: func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>, %c: tensor<2x1xf32>) -> tensor<2x9xf32> {
// CHECK-NEXT:    %joined = graph.concat %a, %b, %c {axis = -1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>, tensor<2x1xf32>) -> tensor<2x9xf32>
// CHECK-NEXT:    func.return %joined : tensor<2x9xf32>
// CHECK-NEXT:  }

// An empty section gives an empty tensor.
func.func @split(%x: tensor<2x10xf32>) -> (tensor<2x3xf32>, tensor<2x0xf32>, tensor<2x7xf32>) {
  %first, %empty, %rest = graph.split %x {axis = 1 : i64, sections = array<i64: 3, 0, 7>} : (tensor<2x10xf32>) -> (tensor<2x3xf32>, tensor<2x0xf32>, tensor<2x7xf32>)
  func.return %first, %empty, %rest : tensor<2x3xf32>, tensor<2x0xf32>, tensor<2x7xf32>
}

// CHECK-LABEL: func.func @split(%x: tensor<2x10xf32>) -> (tensor<2x3xf32>, tensor<2x0xf32>, tensor<2x7xf32>) {
// CHECK-NEXT:    %first, %empty, %rest = graph.split %x {axis = 1 : i64, sections = array<i64: 3, 0, 7>} : (tensor<2x10xf32>) -> (tensor<2x3xf32>, tensor<2x0xf32>, tensor<2x7xf32>)
// CHECK-NEXT:    func.return %first, %empty, %rest : tensor<2x3xf32>, tensor<2x0xf32>, tensor<2x7xf32>
// CHECK-NEXT:  }

// numpy slicing: x[1:7:2, -1:0:-2].
func.func @slice(%x: tensor<8x10xf32>) -> tensor<3x5xf32> {
  %s = graph.slice %x {starts = array<i64: 1, -1>, ends = array<i64: 7, 0>, steps = array<i64: 2, -2>} : (tensor<8x10xf32>) -> tensor<3x5xf32>
  func.return %s : tensor<3x5xf32>
}

// CHECK-LABEL: func.func @slice(%x: tensor<8x10xf32>) -> tensor<3x5xf32> {
// CHECK-NEXT:    %s = graph.slice %x {starts = array<i64: 1, -1>, ends = array<i64: 7, 0>, steps = array<i64: 2, -2>} : (tensor<8x10xf32>) -> tensor<3x5xf32>
// CHECK-NEXT:    func.return %s : tensor<3x5xf32>
// CHECK-NEXT:  }

func.func @constant() -> (tensor<f32>, tensor<2x3xf32>, tensor<3xf32>) {
  %scalar = graph.constant dense<1.250000e-01> : tensor<f32>
  %splat = graph.constant dense<1.000000e+00> : tensor<2x3xf32>
  %vector = graph.constant dense<[1.000000e+00, -2.500000e+00, 3.000000e+00]> : tensor<3xf32>
  func.return %scalar, %splat, %vector : tensor<f32>, tensor<2x3xf32>, tensor<3xf32>
}

// CHECK-LABEL: func.func @constant() -> (tensor<f32>, tensor<2x3xf32>, tensor<3xf32>) {
// CHECK-NEXT:    %scalar = graph.constant dense<1.250000e-01> : tensor<f32>
// CHECK-NEXT:    %splat = graph.constant dense<1.000000e+00> : tensor<2x3xf32>
// CHECK-NEXT:    %vector = graph.constant dense<[1.000000e+00, -2.500000e+00, 3.000000e+00]> : tensor<3xf32>
// CHECK-NEXT:    func.return %scalar, %splat, %vector : tensor<f32>, tensor<2x3xf32>, tensor<3xf32>
// CHECK-NEXT:  }

// graph.call_loop calls loop.func kernels (empty bodies suffice: the call checks the signature).
loop.func @relu_kernel(%x: memref<8xf32>) outs(%y: memref<8xf32>) pattern elemwise {
  loop.return
}

// CHECK-LABEL: loop.func @relu_kernel(%x: memref<8xf32>) outs(%y: memref<8xf32>) pattern elemwise {
// CHECK-NEXT:    loop.return
// CHECK-NEXT:  }

loop.func @split_kernel(%x: memref<8xf32>) outs(%lo: memref<4xf32>, %hi: memref<4xf32>) {
  loop.return
}

// CHECK-LABEL: loop.func @split_kernel(%x: memref<8xf32>) outs(%lo: memref<4xf32>, %hi: memref<4xf32>) {
// CHECK-NEXT:    loop.return
// CHECK-NEXT:  }

func.func @call_loop(%x: tensor<8xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %y = graph.call_loop @relu_kernel(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %lo, %hi = graph.call_loop @split_kernel(%y) : (tensor<8xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  func.return %lo, %hi : tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @call_loop(%x: tensor<8xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
// CHECK-NEXT:    %y = graph.call_loop @relu_kernel(%x) : (tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT:    %lo, %hi = graph.call_loop @split_kernel(%y) : (tensor<8xf32>) -> (tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT:    func.return %lo, %hi : tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT:  }

// The generic form spells every parameter as a property (DESIGN.md's interchange contract).
// GENERIC: %{{.*}} = "graph.clip"(%{{.*}}) <{min = 0.000000e+00 : f32, max = 6.000000e+00 : f32}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC: %{{.*}} = "graph.conv2d"(%{{.*}}, %{{.*}}) <{strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64}> : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32>
// GENERIC: %{{.*}} = "graph.conv2d"(%{{.*}}, %{{.*}}) <{strides = array<i64: 2, 2>, padding = array<i64: 1, 0, 1, 1>, dilation = array<i64: 1, 2>, groups = 2 : i64}> : (tensor<1x4x9x9xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x5x3xf32>
// GENERIC: %{{.*}} = "graph.max_pool2d"(%{{.*}}) <{kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}> : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
// GENERIC: %{{.*}} = "graph.avg_pool2d"(%{{.*}}) <{kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, count_include_pad = false}> : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
// GENERIC: %{{.*}} = "graph.avg_pool2d"(%{{.*}}) <{kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, count_include_pad = true}> : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
// GENERIC: %{{.*}} = "graph.batch_norm"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{epsilon = 1.000000e-05 : f32}> : (tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x56x56xf32>
// GENERIC: %{{.*}} = "graph.lrn"(%{{.*}}) <{size = 5 : i64, alpha = 1.000000e-04 : f32, beta = 7.500000e-01 : f32, bias = 1.000000e+00 : f32}> : (tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
// GENERIC: %{{.*}} = "graph.layer_norm"(%{{.*}}, %{{.*}}, %{{.*}}) <{axis = 1 : i64, epsilon = 1.000000e-05 : f32}> : (tensor<2x128x256xf32>, tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<2x128x256xf32>
// GENERIC: %{{.*}} = "graph.softmax"(%{{.*}}) <{axis = -1 : i64}> : (tensor<4x128x128xf32>) -> tensor<4x128x128xf32>
// GENERIC: %{{.*}} = "graph.softmax"(%{{.*}}) <{axis = 0 : i64}> : (tensor<4x128x128xf32>) -> tensor<4x128x128xf32>
// GENERIC: %{{.*}} = "graph.reduce_sum"(%{{.*}}) <{axes = array<i64: 1>, keepdims = true}> : (tensor<4x8x16xf32>) -> tensor<4x1x16xf32>
// GENERIC: %{{.*}} = "graph.reduce_mean"(%{{.*}}) <{axes = array<i64: -1, 1>, keepdims = false}> : (tensor<4x8x16xf32>) -> tensor<4xf32>
// GENERIC: %{{.*}} = "graph.reduce_max"(%{{.*}}) <{axes = array<i64>, keepdims = false}> : (tensor<4x8x16xf32>) -> tensor<f32>
// GENERIC: %{{.*}} = "graph.transpose"(%{{.*}}) <{perm = array<i64: 1, 2, 0>}> : (tensor<128x4x64xf32>) -> tensor<4x64x128xf32>
// GENERIC: %{{.*}} = "graph.squeeze"(%{{.*}}) <{axes = array<i64: 1>}> : (tensor<10x1x20x1xf32>) -> tensor<10x20x1xf32>
// GENERIC: %{{.*}} = "graph.squeeze"(%{{.*}}) <{axes = array<i64>}> : (tensor<10x1x20x1xf32>) -> tensor<10x20xf32>
// GENERIC: %{{.*}} = "graph.expand_dims"(%{{.*}}) <{axes = array<i64: 0, -1>}> : (tensor<10x20xf32>) -> tensor<1x10x20x1xf32>
// GENERIC: %{{.*}} = "graph.concat"(%{{.*}}, %{{.*}}, %{{.*}}) <{axis = -1 : i64}> : (tensor<2x3xf32>, tensor<2x5xf32>, tensor<2x1xf32>) -> tensor<2x9xf32>
// GENERIC: %{{.*}}, %{{.*}}, %{{.*}} = "graph.split"(%{{.*}}) <{axis = 1 : i64, sections = array<i64: 3, 0, 7>}> : (tensor<2x10xf32>) -> (tensor<2x3xf32>, tensor<2x0xf32>, tensor<2x7xf32>)
// GENERIC: %{{.*}} = "graph.slice"(%{{.*}}) <{starts = array<i64: 1, -1>, ends = array<i64: 7, 0>, steps = array<i64: 2, -2>}> : (tensor<8x10xf32>) -> tensor<3x5xf32>
// GENERIC: %{{.*}} = "graph.constant"() <{value = dense<1.250000e-01> : tensor<f32>}> : () -> tensor<f32>
// GENERIC: %{{.*}} = "graph.constant"() <{value = dense<1.000000e+00> : tensor<2x3xf32>}> : () -> tensor<2x3xf32>
// GENERIC: %{{.*}} = "graph.constant"() <{value = dense<[1.000000e+00, -2.500000e+00, 3.000000e+00]> : tensor<3xf32>}> : () -> tensor<3xf32>
// GENERIC: %{{.*}} = "graph.call_loop"(%{{.*}}) <{callee = @relu_kernel}> : (tensor<8xf32>) -> tensor<8xf32>
// GENERIC: %{{.*}}, %{{.*}} = "graph.call_loop"(%{{.*}}) <{callee = @split_kernel}> : (tensor<8xf32>) -> (tensor<4xf32>, tensor<4xf32>)
