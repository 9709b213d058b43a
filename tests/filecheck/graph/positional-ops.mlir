// The positional ops (gather_nd, trilu, cumsum, arg_max, arg_min) and is_nan: parse in the
// custom syntax, print it back, and round-trip through the generic form, where every
// parameter is a property.
// RUN: %{roundtrip} | filecheck %s
// RUN: %{generic-roundtrip} | filecheck %s
// RUN: fusion-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

func.func @positional(%x: tensor<3x5xf32>, %m: tensor<2x8xi1>, %ids: tensor<2x8x2xi64>, %n: tensor<4x6xi64>)
    -> (tensor<3x5xf32>, tensor<3x5xi1>, tensor<2x8xi1>, tensor<4x6xi64>, tensor<3xi64>, tensor<1x5xi64>) {
  %a = graph.trilu %x {upper = false, k = -1 : i64} : (tensor<3x5xf32>) -> tensor<3x5xf32>
  %b = graph.is_nan %x : (tensor<3x5xf32>) -> tensor<3x5xi1>
  %c = graph.gather_nd %m, %ids {batch_dims = 0 : i64} : (tensor<2x8xi1>, tensor<2x8x2xi64>) -> tensor<2x8xi1>
  %d = graph.cumsum %n {axis = 1 : i64, exclusive = true, reverse = false} : (tensor<4x6xi64>) -> tensor<4x6xi64>
  %e = graph.arg_max %x {axis = 1 : i64, keepdims = false, select_last_index = true} : (tensor<3x5xf32>) -> tensor<3xi64>
  %f = graph.arg_min %x {axis = 0 : i64, keepdims = true, select_last_index = false} : (tensor<3x5xf32>) -> tensor<1x5xi64>
  func.return %a, %b, %c, %d, %e, %f : tensor<3x5xf32>, tensor<3x5xi1>, tensor<2x8xi1>, tensor<4x6xi64>, tensor<3xi64>, tensor<1x5xi64>
}

// CHECK-LABEL: func.func @positional(
// CHECK-NEXT:    %{{.*}} = graph.trilu %{{.*}} {upper = false, k = -1 : i64} : (tensor<3x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT:    %{{.*}} = graph.is_nan %{{.*}} : (tensor<3x5xf32>) -> tensor<3x5xi1>
// CHECK-NEXT:    %{{.*}} = graph.gather_nd %{{.*}}, %{{.*}} {batch_dims = 0 : i64} : (tensor<2x8xi1>, tensor<2x8x2xi64>) -> tensor<2x8xi1>
// CHECK-NEXT:    %{{.*}} = graph.cumsum %{{.*}} {axis = 1 : i64, exclusive = true, reverse = false} : (tensor<4x6xi64>) -> tensor<4x6xi64>
// CHECK-NEXT:    %{{.*}} = graph.arg_max %{{.*}} {axis = 1 : i64, keepdims = false, select_last_index = true} : (tensor<3x5xf32>) -> tensor<3xi64>
// CHECK-NEXT:    %{{.*}} = graph.arg_min %{{.*}} {axis = 0 : i64, keepdims = true, select_last_index = false} : (tensor<3x5xf32>) -> tensor<1x5xi64>

// GENERIC: "graph.trilu"(%{{.*}}) <{upper = false, k = -1 : i64}>
// GENERIC: "graph.is_nan"(%{{.*}}) : (tensor<3x5xf32>) -> tensor<3x5xi1>
// GENERIC: "graph.gather_nd"(%{{.*}}, %{{.*}}) <{batch_dims = 0 : i64}>
// GENERIC: "graph.cumsum"(%{{.*}}) <{axis = 1 : i64, exclusive = true, reverse = false}>
// GENERIC: "graph.arg_max"(%{{.*}}) <{axis = 1 : i64, keepdims = false, select_last_index = true}>
// GENERIC: "graph.arg_min"(%{{.*}}) <{axis = 0 : i64, keepdims = true, select_last_index = false}>
