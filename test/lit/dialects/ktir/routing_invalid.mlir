// RUN: ktir-opt %s --split-input-file --verify-diagnostics
// RUN: not ktir-opt %s --split-input-file 2>&1 | filecheck %s

// Invalid routing ops: every verifier rule of dialects/ktir/routing.py, each message checked by
// --verify-diagnostics and, with its location, by FileCheck.

// CHECK: routing_invalid.mlir:[[# @LINE + 3]]:12: error: 'ktir.topk' op k 9 must be in 1..8 (the last dim)
func.func @topk_k(%x: tensor<16x8xf16>) {
  // expected-error @+1 {{k 9 must be in 1..8 (the last dim)}}
  %v, %i = ktir.topk %x k 9 : tensor<16x8xf16> -> tensor<16x9xf16>, tensor<16x9xi64>
  func.return
}

// -----

// CHECK: routing_invalid.mlir:[[# @LINE + 3]]:12: error: 'ktir.topk' op result shape [16, 3] does not match the input's with k last [16, 2]
func.func @topk_shape(%x: tensor<16x8xf16>) {
  // expected-error @+1 {{result shape [16, 3] does not match the input's with k last [16, 2]}}
  %v, %i = ktir.topk %x k 2 : tensor<16x8xf16> -> tensor<16x3xf16>, tensor<16x2xi64>
  func.return
}

// -----

// CHECK: routing_invalid.mlir:[[# @LINE + 3]]:12: error: 'ktir.topk' op indices must be integers, not f16
func.func @topk_indices(%x: tensor<16x8xf16>) {
  // expected-error @+1 {{indices must be integers, not f16}}
  %v, %i = ktir.topk %x k 2 : tensor<16x8xf16> -> tensor<16x2xf16>, tensor<16x2xf16>
  func.return
}

// -----

// CHECK: routing_invalid.mlir:[[# @LINE + 3]]:12: error: 'ktir.sort' op sort needs a tensor of rank 1 or more
func.func @sort_scalar(%x: tensor<f16>) {
  // expected-error @+1 {{sort needs a tensor of rank 1 or more}}
  %v, %i = ktir.sort %x : tensor<f16> -> tensor<f16>, tensor<i64>
  func.return
}

// -----

// CHECK: routing_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.histc' op histc needs a floating-point input, not i64
func.func @histc_int(%x: tensor<32xi64>) {
  // expected-error @+1 {{histc needs a floating-point input, not i64}}
  %0 = ktir.histc %x bins 8 min 0.0 max 7.0 : tensor<32xi64> -> tensor<8xi64>
  func.return
}

// -----

// CHECK: routing_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.histc' op min must be below max
func.func @histc_range(%x: tensor<32xf32>) {
  // expected-error @+1 {{min must be below max}}
  %0 = ktir.histc %x bins 8 min 7.0 max 7.0 : tensor<32xf32> -> tensor<8xf32>
  func.return
}

// -----

// CHECK: routing_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.histc' op result shape [4] does not match one count per bin [8]
func.func @histc_bins(%x: tensor<32xf32>) {
  // expected-error @+1 {{result shape [4] does not match one count per bin [8]}}
  %0 = ktir.histc %x bins 8 min 0.0 max 7.0 : tensor<32xf32> -> tensor<4xf32>
  func.return
}

// -----

// CHECK: routing_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.scatter_rows' op values shape [32] must be one row of dest per index [32, 64]
func.func @scatter_values(%x: tensor<32x64xf16>, %v: tensor<32xf16>, %p: tensor<32xi64>) {
  // expected-error @+1 {{values shape [32] must be one row of dest per index [32, 64]}}
  %0 = ktir.scatter_rows %v into %x[%p] : tensor<32xf16>, tensor<32x64xf16>, tensor<32xi64> -> tensor<32x64xf16>
  func.return
}

// -----

// CHECK: routing_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.scatter_rows' op indices must be one-dimensional, not rank 2
func.func @scatter_rank(%x: tensor<32xi64>, %p: tensor<4x8xi64>) {
  // expected-error @+1 {{indices must be one-dimensional, not rank 2}}
  %0 = ktir.scatter_rows %x into %x[%p] : tensor<32xi64>, tensor<32xi64>, tensor<4x8xi64> -> tensor<32xi64>
  func.return
}

// -----

// CHECK: routing_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.scatter_rows' op dim 4 is out of range for dest of rank 4
func.func @scatter_dim_range(%c: tensor<1x8x64x128xf16>, %v: tensor<1x8x1x128xf16>, %p: tensor<1xi64>) {
  // expected-error @+1 {{dim 4 is out of range for dest of rank 4}}
  %0 = ktir.scatter_rows %v into %c[%p] dim 4 : tensor<1x8x1x128xf16>, tensor<1x8x64x128xf16>, tensor<1xi64> -> tensor<1x8x64x128xf16>
  func.return
}

// -----

// CHECK: routing_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.scatter_rows' op values shape [1, 8, 64, 1] must be one row of dest per index [1, 8, 1, 128]
func.func @scatter_dim_values(%c: tensor<1x8x64x128xf16>, %v: tensor<1x8x64x1xf16>, %p: tensor<1xi64>) {
  // expected-error @+1 {{values shape [1, 8, 64, 1] must be one row of dest per index [1, 8, 1, 128]}}
  %0 = ktir.scatter_rows %v into %c[%p] dim 2 : tensor<1x8x64x1xf16>, tensor<1x8x64x128xf16>, tensor<1xi64> -> tensor<1x8x64x128xf16>
  func.return
}

// -----

// CHECK: routing_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.scatter_rows' op an in_place scatter's dest must have no other use (its memory is reused)
func.func @scatter_in_place_reused(%c: tensor<1x8x64x128xf16>, %v: tensor<1x8x1x128xf16>, %p: tensor<1xi64>) -> tensor<1x8x64x128xf16> {
  // expected-error @+1 {{an in_place scatter's dest must have no other use (its memory is reused)}}
  %0 = ktir.scatter_rows %v into %c[%p] dim 2 in_place : tensor<1x8x1x128xf16>, tensor<1x8x64x128xf16>, tensor<1xi64> -> tensor<1x8x64x128xf16>
  func.return %c : tensor<1x8x64x128xf16>
}

// -----

// CHECK: routing_invalid.mlir:[[# @LINE + 2]]:1: error: 'func.func' op argument 0 is updated in place by result 0, whose type tensor<1x8x64x64xf16> is not the argument's tensor<1x8x64x128xf16>
// expected-error @below {{argument 0 is updated in place by result 0, whose type tensor<1x8x64x64xf16> is not the argument's tensor<1x8x64x128xf16>}}
func.func @updated_by_type(%c: tensor<1x8x64x128xf16> {ktir.updated_by = 0 : i64}, %d: tensor<1x8x64x64xf16>) -> tensor<1x8x64x64xf16> {
  func.return %d : tensor<1x8x64x64xf16>
}

// -----

// CHECK: routing_invalid.mlir:[[# @LINE + 2]]:1: error: 'func.func' op argument 0: ktir.updated_by must name one of the 1 results
// expected-error @below {{argument 0: ktir.updated_by must name one of the 1 results}}
func.func @updated_by_range(%c: tensor<4xf16> {ktir.updated_by = 3 : i64}) -> tensor<4xf16> {
  func.return %c : tensor<4xf16>
}

// -----

// CHECK: routing_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.grouped_matmul' op x has K = 32 but the experts' weights take 64
func.func @grouped_k(%x: tensor<16x32xf16>, %w: tensor<4x64x128xf16>, %o: tensor<4xi64>) {
  // expected-error @+1 {{x has K = 32 but the experts' weights take 64}}
  %0 = ktir.grouped_matmul %x, %w, %o : tensor<16x32xf16>, tensor<4x64x128xf16>, tensor<4xi64> -> tensor<16x128xf16>
  func.return
}

// -----

// CHECK: routing_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.grouped_matmul' op offsets must hold one count per expert (4), not shape [8]
func.func @grouped_offsets(%x: tensor<16x64xf16>, %w: tensor<4x64x128xf16>, %o: tensor<8xi64>) {
  // expected-error @+1 {{offsets must hold one count per expert (4), not shape [8]}}
  %0 = ktir.grouped_matmul %x, %w, %o : tensor<16x64xf16>, tensor<4x64x128xf16>, tensor<8xi64> -> tensor<16x128xf16>
  func.return
}

// -----

// CHECK: routing_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.grouped_matmul' op weights element type f32 must be f16 (x's)
func.func @grouped_types(%x: tensor<16x64xf16>, %w: tensor<4x64x128xf32>, %o: tensor<4xi64>) {
  // expected-error @+1 {{weights element type f32 must be f16 (x's)}}
  %0 = ktir.grouped_matmul %x, %w, %o : tensor<16x64xf16>, tensor<4x64x128xf32>, tensor<4xi64> -> tensor<16x128xf16>
  func.return
}
