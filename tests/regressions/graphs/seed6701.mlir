// bench/fuzz.py graph seed 6701, shrunk: lrn of size 1 is v / (1 + 1e-4 v^2)^0.75, so
// lrn(v) - v (about -7.5e-5 v^3) cancels: one ulp of lrn(v) is many ulps of the difference.
// The unfused build differed from the reference by up to 6e-8 on results of 1e-8 to 3e-5;
// the checker now allows twice each element's rounding spread (`reference_and_spread`).
builtin.module {
  func.func @main(%x0: tensor<2x4x6x5xf32>, %x1: tensor<4x1x1x1xf32>) -> tensor<2x4x4x3xf32> {
    %v0 = graph.conv2d %x0, %x1 {strides = array<i64: 2, 2>, padding = array<i64: 1, 0, 1, 1>, dilation = array<i64: 1, 1>, groups = 4 : i64} : (tensor<2x4x6x5xf32>, tensor<4x1x1x1xf32>) -> tensor<2x4x4x3xf32>
    %v1 = graph.lrn %v0 {size = 1 : i64, alpha = 1.000000e-04 : f32, beta = 7.500000e-01 : f32, bias = 1.000000e+00 : f32} : (tensor<2x4x4x3xf32>) -> tensor<2x4x4x3xf32>
    %v2 = graph.sub %v1, %v0 : (tensor<2x4x4x3xf32>, tensor<2x4x4x3xf32>) -> tensor<2x4x4x3xf32>
    func.return %v2 : tensor<2x4x4x3xf32>
  }
}
