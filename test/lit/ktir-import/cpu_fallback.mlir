// Ops on the reference stack's CPU-fallback list become ktir.cpu_fallback with their arguments.
// RUN: ktir-import %inputs/models/fallback.py | filecheck %s
// RUN: ktir-import %inputs/models/fallback.py | ktir-opt --print-op-generic | ktir-opt | filecheck %s

// CHECK:      func.func @forward(%ids: tensor<1x4xi64> {ktir.name = "ids"}, %table: tensor<8x64xf32> {ktir.name = "table"}) -> tensor<1x4x64xf32> {
// Scalars and fills are ktir.full of the tensor's shape.
// CHECK-NEXT:   %[[ONES:.+]] = ktir.full 1 : tensor<1x4xi64>
// CHECK-NEXT:   %[[CS:.+]] = ktir.cpu_fallback "aten::cumsum.default"(%[[ONES]]) {args = [#ktir.operand<0>, 1 : i64]} : (tensor<1x4xi64>) -> tensor<1x4xi64>
// CHECK-NEXT:   %[[EMB:.+]] = ktir.cpu_fallback "aten::embedding.default"(%table, %ids) {args = [#ktir.operand<0>, #ktir.operand<1>]} : (tensor<8x64xf32>, tensor<1x4xi64>) -> tensor<1x4x64xf32>
// CHECK-NEXT:   %[[F:.+]] = ktir.convert %[[CS]] : tensor<1x4xi64> -> tensor<1x4xf32>
// CHECK-NEXT:   %[[SIN:.+]] = ktir.cpu_fallback "aten::sin.default"(%[[F]]) {args = [#ktir.operand<0>]} : (tensor<1x4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT:   %[[U:.+]] = ktir.reshape %[[SIN]] : tensor<1x4xf32> -> tensor<1x4x1xf32>
// CHECK-NEXT:   %[[M:.+]] = ktir.mul %[[EMB]], %[[U]] : tensor<1x4x64xf32>, tensor<1x4x1xf32> -> tensor<1x4x64xf32>
// CHECK-NEXT:   func.return %[[M]] : tensor<1x4x64xf32>
