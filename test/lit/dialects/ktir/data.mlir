// RUN: KTIR_ROUNDTRIP
// RUN: KTIR_GENERIC_ROUNDTRIP

// Round trips of the data-dependent ops (dialects/ktir/data.py).

// gather_rows: the result is the indices' shape followed by a row's; a 1-D table gathers
// single elements; i32 indices are fine. cumsum keeps its input's type.
// CHECK-LABEL: func.func @data
// CHECK-NEXT:    %rows = ktir.gather_rows %table[%ids] : tensor<256x64xf16>, tensor<1x24xi64> -> tensor<1x24x64xf16>
// CHECK-NEXT:    %elems = ktir.gather_rows %vector[%small] : tensor<100xf32>, tensor<7xi32> -> tensor<7xf32>
// CHECK-NEXT:    %one = ktir.gather_rows %table[%scalar] : tensor<256x64xf16>, tensor<i64> -> tensor<64xf16>
// CHECK-NEXT:    %positions = ktir.cumsum %ids dim 1 : tensor<1x24xi64> -> tensor<1x24xi64>
// CHECK-NEXT:    %running = ktir.cumsum %table dim 0 : tensor<256x64xf16> -> tensor<256x64xf16>
// CHECK-NEXT:    func.return
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "data"
// CHECK-GENERIC:         %rows = "ktir.gather_rows"(%table, %ids) : (tensor<256x64xf16>, tensor<1x24xi64>) -> tensor<1x24x64xf16>
// CHECK-GENERIC:         %positions = "ktir.cumsum"(%ids) <{dim = 1 : i64}> : (tensor<1x24xi64>) -> tensor<1x24xi64>
func.func @data(%table: tensor<256x64xf16>, %ids: tensor<1x24xi64>, %vector: tensor<100xf32>, %small: tensor<7xi32>, %scalar: tensor<i64>) {
  %rows = ktir.gather_rows %table[%ids] : tensor<256x64xf16>, tensor<1x24xi64> -> tensor<1x24x64xf16>
  %elems = ktir.gather_rows %vector[%small] : tensor<100xf32>, tensor<7xi32> -> tensor<7xf32>
  %one = ktir.gather_rows %table[%scalar] : tensor<256x64xf16>, tensor<i64> -> tensor<64xf16>
  %positions = ktir.cumsum %ids dim 1 : tensor<1x24xi64> -> tensor<1x24xi64>
  %running = ktir.cumsum %table dim 0 : tensor<256x64xf16> -> tensor<256x64xf16>
  func.return
}

// -----

// take_along picks along the last dim; the index may be shorter than the source in other dims.
// CHECK-LABEL: func.func @take_along
// CHECK-NEXT:    %picked = ktir.take_along %scores[%index] : tensor<4x16x32xf16>, tensor<4x16x16xi64> -> tensor<4x16x16xf16>
// CHECK-NEXT:    %fewer = ktir.take_along %scores[%first] : tensor<4x16x32xf16>, tensor<2x16x3xi64> -> tensor<2x16x3xf16>
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "take_along"
// CHECK-GENERIC:         %picked = "ktir.take_along"(%scores, %index) : (tensor<4x16x32xf16>, tensor<4x16x16xi64>) -> tensor<4x16x16xf16>
func.func @take_along(%scores: tensor<4x16x32xf16>, %index: tensor<4x16x16xi64>, %first: tensor<2x16x3xi64>) {
  %picked = ktir.take_along %scores[%index] : tensor<4x16x32xf16>, tensor<4x16x16xi64> -> tensor<4x16x16xf16>
  %fewer = ktir.take_along %scores[%first] : tensor<4x16x32xf16>, tensor<2x16x3xi64> -> tensor<2x16x3xf16>
  func.return
}
