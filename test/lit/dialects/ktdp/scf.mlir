// RUN: KTIR_ROUNDTRIP
// RUN: KTIR_GENERIC_ROUNDTRIP

// scf.for whose iteration result is one type without parentheses, as upstream MLIR reads it and
// KTIR kernels write it (dialects/scf_ext.py); printed with parentheses, as mlir-opt prints.

// CHECK-LABEL: func.func @loops
// CHECK:         %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (f32) {
// CHECK:         %t, %t_1 = scf.for %i_1 = %c0 to %n step %c1 iter_args(%a = %x, %b = %x) -> (f32, f32) {
// CHECK-GENERIC: %s = "scf.for"(%c0, %n, %c1, %x) ({
func.func @loops(%n: index, %x: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> f32 {
    %y = arith.addf %acc, %x : f32
    scf.yield %y : f32
  }
  %t:2 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x, %b = %x) -> (f32, f32) {
    scf.yield %a, %b : f32, f32
  }
  return %s : f32
}
