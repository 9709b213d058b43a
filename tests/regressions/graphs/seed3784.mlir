// bench/fuzz.py graph seeds 2786, 3784 and 5364: gelu far in its negative tail (inputs in
// [-1, 1] mapped to [-5.1, -3.9]). gelu computed as 0.5 x (1 + erf(x / sqrt 2)) cancels there
// in float32 (4.6e-4 off at x = -3.9); it is now x Phi(x) with Phi(-|x|) = erfc(|x|/sqrt 2)/2.
builtin.module {
  func.func @main(%x0: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %scale = graph.constant dense<0.6> : tensor<2x8xf32>
    %shift = graph.constant dense<-4.5> : tensor<2x8xf32>
    %v0 = graph.mul %x0, %scale : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %v1 = graph.add %v0, %shift : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %v2 = graph.gelu %v1 : tensor<2x8xf32>
    func.return %v2 : tensor<2x8xf32>
  }
}
