// A conv2d whose weight expects 32 input channels on a 64-channel input, through plain
// fusion-opt: `file:line:col: error:` naming both shapes, a non-zero exit status, no traceback.
// RUN: not fusion-opt %s 2>&1 | filecheck %s

func.func @main(%x: tensor<1x64x56x56xf32>, %w: tensor<64x32x3x3xf32>) -> tensor<1x64x56x56xf32> {
  %y = graph.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x64x56x56xf32>, tensor<64x32x3x3xf32>) -> tensor<1x64x56x56xf32>
  func.return %y : tensor<1x64x56x56xf32>
}

// CHECK-NOT: Traceback
// CHECK:      {{.*}}conv_channels.mlir:6:3: error: graph.conv2d: weight 64x32x3x3 expects 32 input channels (32 per group x 1 groups), input 1x64x56x56 has 64
// CHECK-NEXT: %y = graph.conv2d %x, %w
// CHECK-NEXT: {{^  \^$}}
// CHECK-NOT: Traceback
