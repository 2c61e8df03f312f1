// RUN: ktir-opt %s --split-input-file --verify-diagnostics
// RUN: not ktir-opt %s --split-input-file 2>&1 | filecheck %s

// The tensor casts of dialects/arith_ext.py: both sides scalars or tensors of one shape, of the
// element kinds the cast converts between.

// CHECK: arith_invalid.mlir:[[# @LINE + 3]]:8: error: 'arith.index_cast' op operand type 'tensor<4xindex>' and result type 'tensor<8xi32>' are not both scalars or tensors of one shape
func.func @shape(%ids: tensor<4xindex>) {
  // expected-error @+1 {{are not both scalars or tensors of one shape}}
  %i = arith.index_cast %ids : tensor<4xindex> to tensor<8xi32>
  return
}

// -----

// CHECK: arith_invalid.mlir:[[# @LINE + 3]]:8: error: 'arith.index_cast' op operand type 'tensor<4xindex>' and result type 'tensor<4xindex>' are cast incompatible
func.func @index_to_index(%ids: tensor<4xindex>) {
  // expected-error @+1 {{are cast incompatible}}
  %i = arith.index_cast %ids : tensor<4xindex> to tensor<4xindex>
  return
}

// -----

// CHECK: arith_invalid.mlir:[[# @LINE + 3]]:8: error: 'arith.sitofp' op operand type 'tensor<4xf32>' and result type 'tensor<4xf16>' are cast incompatible
func.func @float_source(%f: tensor<4xf32>) {
  // expected-error @+1 {{are cast incompatible}}
  %g = arith.sitofp %f : tensor<4xf32> to tensor<4xf16>
  return
}

// -----

// CHECK: arith_invalid.mlir:[[# @LINE + 3]]:8: error: 'arith.index_castui' op operand type 'f32' and result type 'index' are cast incompatible
func.func @float_to_index(%f: f32) {
  // expected-error @+1 {{are cast incompatible}}
  %g = arith.index_castui %f : f32 to index
  return
}
