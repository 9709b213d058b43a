// bench/fuzz.py graph seed 8381 (95 ops; this is the op it failed on): gelu_tanh far in its
// negative tail (inputs in [-1, 1] mapped to [-6.6, -5.4]). 0.5 x (1 + tanh(u)) cancels there
// in float32 (it gave -0 against the reference's -1.8e-8); it is now x sigmoid(2u), the same
// function.
builtin.module {
  func.func @main(%x0: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %scale = graph.constant dense<0.6> : tensor<2x8xf32>
    %shift = graph.constant dense<-6.0> : tensor<2x8xf32>
    %v0 = graph.mul %x0, %scale : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %v1 = graph.add %v0, %shift : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %v2 = graph.gelu_tanh %v1 : tensor<2x8xf32>
    func.return %v2 : tensor<2x8xf32>
  }
}
