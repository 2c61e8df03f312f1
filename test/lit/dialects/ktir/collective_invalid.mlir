// RUN: ktir-opt %s --split-input-file --verify-diagnostics
// RUN: not ktir-opt %s --split-input-file 2>&1 | filecheck %s

// Invalid collectives: every verifier rule of dialects/ktir/collective.py, each message
// checked by --verify-diagnostics and, with its location, by FileCheck.

// CHECK: collective_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.all_reduce' op cards must be at least 1, not 0
func.func @no_cards(%x: tensor<8x64xf16>) {
  // expected-error @+1 {{cards must be at least 1, not 0}}
  %0 = ktir.all_reduce %x cards 0 : tensor<8x64xf16> -> tensor<8x64xf16>
  func.return
}

// -----

// CHECK: collective_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.all_reduce' op result shape [8, 32] does not match the input shape [8, 64]
func.func @reduce_shape(%x: tensor<8x64xf16>) {
  // expected-error @+1 {{result shape [8, 32] does not match the input shape [8, 64]}}
  %0 = ktir.all_reduce %x cards 2 : tensor<8x64xf16> -> tensor<8x32xf16>
  func.return
}

// -----

// CHECK: collective_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.all_reduce' op result element type f32 must be f16 (the input's)
func.func @reduce_type(%x: tensor<8x64xf16>) {
  // expected-error @+1 {{result element type f32 must be f16 (the input's)}}
  %0 = ktir.all_reduce %x cards 2 : tensor<8x64xf16> -> tensor<8x64xf32>
  func.return
}

// -----

// CHECK: collective_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.all_reduce' op ktir.all_reduce is not defined on i1 tensors (a sum of booleans)
func.func @reduce_bool(%x: tensor<8xi1>) {
  // expected-error @+1 {{ktir.all_reduce is not defined on i1 tensors (a sum of booleans)}}
  %0 = ktir.all_reduce %x cards 2 : tensor<8xi1> -> tensor<8xi1>
  func.return
}

// -----

// CHECK: collective_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.all_gather' op dim 2 is out of range for a rank-2 input
func.func @gather_dim(%x: tensor<8x64xf16>) {
  // expected-error @+1 {{dim 2 is out of range for a rank-2 input}}
  %0 = ktir.all_gather %x dim 2 cards 2 : tensor<8x64xf16> -> tensor<8x64xf16>
  func.return
}

// -----

// CHECK: collective_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.all_gather' op result shape [8, 64] does not match the input's with dim 1 times 2 cards [8, 128]
func.func @gather_shape(%x: tensor<8x64xf16>) {
  // expected-error @+1 {{result shape [8, 64] does not match the input's with dim 1 times 2 cards [8, 128]}}
  %0 = ktir.all_gather %x dim 1 cards 2 : tensor<8x64xf16> -> tensor<8x64xf16>
  func.return
}

// -----

// CHECK: collective_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.all_gather' op cards must be at least 1, not -1
func.func @gather_cards(%x: tensor<8x64xf16>) {
  // expected-error @+1 {{cards must be at least 1, not -1}}
  %0 = ktir.all_gather %x dim 1 cards -1 : tensor<8x64xf16> -> tensor<8x64xf16>
  func.return
}

// -----

// CHECK: collective_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.all_gather' op result element type f32 must be f16 (the input's)
func.func @gather_type(%x: tensor<8x64xf16>) {
  // expected-error @+1 {{result element type f32 must be f16 (the input's)}}
  %0 = ktir.all_gather %x dim 1 cards 2 : tensor<8x64xf16> -> tensor<8x128xf32>
  func.return
}
