// RUN: ktir-opt %s --split-input-file --verify-diagnostics
// RUN: not ktir-opt %s --split-input-file 2>&1 | filecheck %s

// Invalid data-dependent ops: every verifier rule of dialects/ktir/data.py, each message
// checked by --verify-diagnostics and, with its location, by FileCheck.

// CHECK: data_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.gather_rows' op indices must be integers, not f16
func.func @float_indices(%t: tensor<8x64xf16>, %i: tensor<4xf16>) {
  // expected-error @+1 {{indices must be integers, not f16}}
  %0 = ktir.gather_rows %t[%i] : tensor<8x64xf16>, tensor<4xf16> -> tensor<4x64xf16>
  func.return
}

// -----

// CHECK: data_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.gather_rows' op indices must be integers, not i1
func.func @bool_indices(%t: tensor<8x64xf16>, %i: tensor<4xi1>) {
  // expected-error @+1 {{indices must be integers, not i1}}
  %0 = ktir.gather_rows %t[%i] : tensor<8x64xf16>, tensor<4xi1> -> tensor<4x64xf16>
  func.return
}

// -----

// CHECK: data_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.gather_rows' op result shape [4, 32] does not match the indices' shape followed by a row's [4, 64]
func.func @row_shape(%t: tensor<8x64xf16>, %i: tensor<4xi64>) {
  // expected-error @+1 {{result shape [4, 32] does not match the indices' shape followed by a row's [4, 64]}}
  %0 = ktir.gather_rows %t[%i] : tensor<8x64xf16>, tensor<4xi64> -> tensor<4x32xf16>
  func.return
}

// -----

// CHECK: data_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.gather_rows' op result element type f32 must be f16 (the table's)
func.func @element_type(%t: tensor<8x64xf16>, %i: tensor<4xi64>) {
  // expected-error @+1 {{result element type f32 must be f16 (the table's)}}
  %0 = ktir.gather_rows %t[%i] : tensor<8x64xf16>, tensor<4xi64> -> tensor<4x64xf32>
  func.return
}

// -----

// CHECK: data_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.gather_rows' op the table must have at least one dim (its rows)
func.func @scalar_table(%t: tensor<f16>, %i: tensor<4xi64>) {
  // expected-error @+1 {{the table must have at least one dim (its rows)}}
  %0 = ktir.gather_rows %t[%i] : tensor<f16>, tensor<4xi64> -> tensor<4xf16>
  func.return
}

// -----

// CHECK: data_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.cumsum' op dim 2 is out of range for a rank-2 input
func.func @cumsum_dim(%x: tensor<4x64xf16>) {
  // expected-error @+1 {{dim 2 is out of range for a rank-2 input}}
  %0 = ktir.cumsum %x dim 2 : tensor<4x64xf16> -> tensor<4x64xf16>
  func.return
}

// -----

// CHECK: data_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.cumsum' op ktir.cumsum is not defined on i1 tensors (convert to an integer first)
func.func @cumsum_bool(%x: tensor<4xi1>) {
  // expected-error @+1 {{ktir.cumsum is not defined on i1 tensors (convert to an integer first)}}
  %0 = ktir.cumsum %x dim 0 : tensor<4xi1> -> tensor<4xi1>
  func.return
}

// -----

// CHECK: data_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.cumsum' op result element type i32 must be i64 (the input's)
func.func @cumsum_type(%x: tensor<4xi64>) {
  // expected-error @+1 {{result element type i32 must be i64 (the input's)}}
  %0 = ktir.cumsum %x dim 0 : tensor<4xi64> -> tensor<4xi32>
  func.return
}

// -----

// CHECK: data_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.take_along' op index must have the source's rank 2 (at least 1), not 1
func.func @take_along_rank(%s: tensor<4x32xf16>, %i: tensor<4xi64>) {
  // expected-error @+1 {{index must have the source's rank 2 (at least 1), not 1}}
  %0 = ktir.take_along %s[%i] : tensor<4x32xf16>, tensor<4xi64> -> tensor<4xf16>
  func.return
}

// -----

// CHECK: data_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.take_along' op index shape [8, 2] exceeds the source [4, 32] outside the last dim
func.func @take_along_rows(%s: tensor<4x32xf16>, %i: tensor<8x2xi64>) {
  // expected-error @+1 {{index shape [8, 2] exceeds the source [4, 32] outside the last dim}}
  %0 = ktir.take_along %s[%i] : tensor<4x32xf16>, tensor<8x2xi64> -> tensor<8x2xf16>
  func.return
}

// -----

// CHECK: data_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.take_along' op index must be integers, not f16
func.func @take_along_type(%s: tensor<4x32xf16>, %i: tensor<4x2xf16>) {
  // expected-error @+1 {{index must be integers, not f16}}
  %0 = ktir.take_along %s[%i] : tensor<4x32xf16>, tensor<4x2xf16> -> tensor<4x2xf16>
  func.return
}
