// RUN: not fusion-opt %s -p 'fold-constants{growth-limit=-1}' 2>&1 | filecheck %s

// A negative growth limit is refused before the pass runs.

// CHECK: error: fold-constants: option 'growth-limit' must be >= 0, got -1

func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  func.return %x : tensor<2xf32>
}
