// Ops on the reference stack's CPU-fallback list become ktir.cpu_fallback with their arguments
// (tril decomposes into aranges, which the importer leaves to the host; ktir.compile folds them).
// RUN: ktir-import %inputs/models/fallback.py -o %t.mlir
// RUN: filecheck %s < %t.mlir
// RUN: ktir-opt %t.mlir --print-op-generic | ktir-opt | filecheck %s

// CHECK:      func.func @forward(%x: tensor<4x64xf32> {ktir.name = "x"}, %mask: tensor<4xi64> {ktir.name = "mask"}) -> tensor<4xi64> {
// CHECK-NEXT:   %arange = ktir.cpu_fallback "aten::arange.start_step"() {args = [0 : i64, 64 : i64]} : () -> tensor<64xi64>
// CHECK:        %where = ktir.where
// CHECK-NEXT:   %argmax = ktir.cpu_fallback "aten::argmax.default"(%where) {args = [#ktir.operand<0>, 1 : i64]} : (tensor<4x64xf32>) -> tensor<4xi64>
// CHECK-NEXT:   %bitwise_xor = ktir.cpu_fallback "aten::bitwise_xor.Tensor"(%argmax, %mask) {args = [#ktir.operand<0>, #ktir.operand<1>]} : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
// CHECK-NEXT:   func.return %bitwise_xor : tensor<4xi64>
