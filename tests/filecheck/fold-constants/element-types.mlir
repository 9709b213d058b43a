// RUN: fusion-opt %s -p fold-constants | filecheck %s

// Integer and boolean ops of constants fold to constants of their element types (exact,
// wrapping as numpy's; i1 elements as `true`/`false`); a gather of constants too.

// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %[[M:.*]] = graph.constant dense<[true, false, true]> : tensor<3xi1>
// CHECK-NEXT:    %[[T:.*]] = graph.constant dense<[-2147483648, -2, -4]> : tensor<3xi32>
// CHECK-NEXT:    %[[G:.*]] = graph.constant dense<[3, 2147483647, -2, 3]> : tensor<4xi64>
// CHECK-NEXT:    func.return %[[M]], %[[T]], %[[G]] : tensor<3xi1>, tensor<3xi32>, tensor<4xi64>
func.func @main() -> (tensor<3xi1>, tensor<3xi32>, tensor<4xi64>) {
  %c = graph.constant dense<[2147483647, -2, 3]> : tensor<3xi64>
  %d = graph.constant dense<[1, 0, -7]> : tensor<3xi64>
  %m = graph.less %d, %c : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi1>
  %s = graph.add %c, %d : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %t = graph.cast %s : (tensor<3xi64>) -> tensor<3xi32>
  %ids = graph.constant dense<[2, -3, 1, 7]> : tensor<4xi64>
  %g = graph.gather %c, %ids {axis = 0 : i64} : (tensor<3xi64>, tensor<4xi64>) -> tensor<4xi64>
  func.return %m, %t, %g : tensor<3xi1>, tensor<3xi32>, tensor<4xi64>
}
