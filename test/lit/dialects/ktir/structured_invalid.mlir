// RUN: ktir-opt %s --split-input-file --verify-diagnostics
// RUN: not ktir-opt %s --split-input-file 2>&1 | filecheck %s

// Invalid graph-level structured ops: every verifier rule of dialects/ktir/structured.py.
// Each case checks the located message twice: --verify-diagnostics matches the
// expected-error annotation, FileCheck the full `file:line:col: error: '<op>' op ...` text.

// Batched operands are ktir.bmm.
// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.matmul' op ktir.matmul takes 2D x 2D, 3D x 2D, not 3D x 3D
func.func @matmul_3x3(%x: tensor<2x4x64xf16>, %y: tensor<2x64x8xf16>) {
  // expected-error @+1 {{ktir.matmul takes 2D x 2D, 3D x 2D, not 3D x 3D}}
  %0 = ktir.matmul %x, %y : tensor<2x4x64xf16>, tensor<2x64x8xf16> -> tensor<2x4x8xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.matmul' op ktir.matmul takes 2D x 2D, 3D x 2D, not 1D x 2D
func.func @matmul_1d(%x: tensor<64xf16>, %y: tensor<64x8xf16>) {
  // expected-error @+1 {{ktir.matmul takes 2D x 2D, 3D x 2D, not 1D x 2D}}
  %0 = ktir.matmul %x, %y : tensor<64xf16>, tensor<64x8xf16> -> tensor<8xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.matmul' op contraction dims differ: x has K = 64, y has K = 32
func.func @matmul_k(%x: tensor<16x64xf16>, %y: tensor<32x8xf16>) {
  // expected-error @+1 {{contraction dims differ: x has K = 64, y has K = 32}}
  %0 = ktir.matmul %x, %y : tensor<16x64xf16>, tensor<32x8xf16> -> tensor<16x8xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.matmul' op result shape [16, 64] does not match x @ y, which is [16, 128]
func.func @matmul_result_shape(%x: tensor<16x64xf16>, %y: tensor<64x128xf16>) {
  // expected-error @+1 {{result shape [16, 64] does not match x @ y, which is [16, 128]}}
  %0 = ktir.matmul %x, %y : tensor<16x64xf16>, tensor<64x128xf16> -> tensor<16x64xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.matmul' op ktir.matmul needs a floating-point x, not i32
func.func @matmul_int(%x: tensor<4x4xi32>) {
  // expected-error @+1 {{ktir.matmul needs a floating-point x, not i32}}
  %0 = ktir.matmul %x, %x : tensor<4x4xi32>, tensor<4x4xi32> -> tensor<4x4xi32>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.matmul' op y has element type f32 but x has f16: operands must share one element type
func.func @matmul_mixed(%x: tensor<4x4xf16>, %y: tensor<4x4xf32>) {
  // expected-error @+1 {{y has element type f32 but x has f16: operands must share one element type}}
  %0 = ktir.matmul %x, %y : tensor<4x4xf16>, tensor<4x4xf32> -> tensor<4x4xf32>
  func.return
}

// -----

// Accumulation is fp32 inside the op; the result keeps the operands' type.
// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.matmul' op result element type f32 must be f16 (the operands' element type)
func.func @matmul_result_type(%x: tensor<4x4xf16>) {
  // expected-error @+1 {{result element type f32 must be f16 (the operands' element type)}}
  %0 = ktir.matmul %x, %x : tensor<4x4xf16>, tensor<4x4xf16> -> tensor<4x4xf32>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.bmm' op ktir.bmm takes 3D x 3D, 4D x 4D, 3D x 2D, not 2D x 2D
func.func @bmm_2x2(%x: tensor<4x64xf16>, %y: tensor<64x8xf16>) {
  // expected-error @+1 {{ktir.bmm takes 3D x 3D, 4D x 4D, 3D x 2D, not 2D x 2D}}
  %0 = ktir.bmm %x, %y : tensor<4x64xf16>, tensor<64x8xf16> -> tensor<4x8xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.bmm' op ktir.bmm takes 3D x 3D, 4D x 4D, 3D x 2D, not 4D x 3D
func.func @bmm_4x3(%x: tensor<2x3x4x64xf16>, %y: tensor<3x64x8xf16>) {
  // expected-error @+1 {{ktir.bmm takes 3D x 3D, 4D x 4D, 3D x 2D, not 4D x 3D}}
  %0 = ktir.bmm %x, %y : tensor<2x3x4x64xf16>, tensor<3x64x8xf16> -> tensor<2x3x4x8xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.bmm' op batch dims differ: [2] vs [3]
func.func @bmm_batch(%x: tensor<2x4x64xf16>, %y: tensor<3x64x8xf16>) {
  // expected-error @+1 {{batch dims differ: [2] vs [3]}}
  %0 = ktir.bmm %x, %y : tensor<2x4x64xf16>, tensor<3x64x8xf16> -> tensor<2x4x8xf16>
  func.return
}

// -----

// Batch dims must be equal: bmm does not broadcast them.
// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.bmm' op batch dims differ: [2, 3] vs [2, 1]
func.func @bmm_batch_4d(%x: tensor<2x3x4x64xf16>, %y: tensor<2x1x64x8xf16>) {
  // expected-error @+1 {{batch dims differ: [2, 3] vs [2, 1]}}
  %0 = ktir.bmm %x, %y : tensor<2x3x4x64xf16>, tensor<2x1x64x8xf16> -> tensor<2x3x4x8xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.bmm' op contraction dims differ: x has K = 64, y has K = 32
func.func @bmm_k(%x: tensor<2x4x64xf16>, %y: tensor<2x32x8xf16>) {
  // expected-error @+1 {{contraction dims differ: x has K = 64, y has K = 32}}
  %0 = ktir.bmm %x, %y : tensor<2x4x64xf16>, tensor<2x32x8xf16> -> tensor<2x4x8xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.bmm' op x must have a static shape (graph-level ktir has no dynamic dims)
func.func @bmm_dynamic(%x: tensor<?x4x64xf16>, %y: tensor<2x64x8xf16>) {
  // expected-error @+1 {{x must have a static shape (graph-level ktir has no dynamic dims)}}
  %0 = ktir.bmm %x, %y : tensor<?x4x64xf16>, tensor<2x64x8xf16> -> tensor<2x4x8xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.sum' op dims [2, 0] must be sorted
func.func @sum_unsorted(%x: tensor<2x4x64xf16>) {
  // expected-error @+1 {{dims [2, 0] must be sorted}}
  %0 = ktir.sum %x dims [2, 0] : tensor<2x4x64xf16> -> tensor<4xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.sum' op dims [1, 1] repeat a dim
func.func @sum_repeated(%x: tensor<2x4x64xf16>) {
  // expected-error @+1 {{dims [1, 1] repeat a dim}}
  %0 = ktir.sum %x dims [1, 1] : tensor<2x4x64xf16> -> tensor<2x64xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.sum' op dim 3 is out of range for rank 3
func.func @sum_out_of_range(%x: tensor<2x4x64xf16>) {
  // expected-error @+1 {{dim 3 is out of range for rank 3}}
  %0 = ktir.sum %x dims [3] : tensor<2x4x64xf16> -> tensor<2x4x64xf16>
  func.return
}

// -----

// dims are normalized (non-negative) in the IR.
// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.sum' op dim -1 is out of range for rank 3
func.func @sum_negative(%x: tensor<2x4x64xf16>) {
  // expected-error @+1 {{dim -1 is out of range for rank 3}}
  %0 = ktir.sum %x dims [-1] : tensor<2x4x64xf16> -> tensor<2x4xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.sum' op dims must name at least one dim
func.func @sum_empty(%x: tensor<2x4x64xf16>) {
  // expected-error @+1 {{dims must name at least one dim}}
  %0 = ktir.sum %x dims [] : tensor<2x4x64xf16> -> tensor<2x4x64xf16>
  func.return
}

// -----

// Without keepdim the reduced dims are dropped.
// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.sum' op result shape [2, 4, 1] does not match the reduced shape [2, 4]
func.func @sum_keepdim_shape(%x: tensor<2x4x64xf16>) {
  // expected-error @+1 {{result shape [2, 4, 1] does not match the reduced shape [2, 4]}}
  %0 = ktir.sum %x dims [2] : tensor<2x4x64xf16> -> tensor<2x4x1xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.max' op result element type f32 must be f16 (the input's)
func.func @max_result_type(%x: tensor<2x4x64xf16>) {
  // expected-error @+1 {{result element type f32 must be f16 (the input's)}}
  %0 = ktir.max %x dims [2] : tensor<2x4x64xf16> -> tensor<2x4xf32>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.min' op result shape [2, 64] does not match the reduced shape [2, 1, 64]
func.func @min_keepdim_shape(%x: tensor<2x4x64xf16>) {
  // expected-error @+1 {{result shape [2, 64] does not match the reduced shape [2, 1, 64]}}
  %0 = ktir.min %x dims [1] keepdim : tensor<2x4x64xf16> -> tensor<2x64xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.mean' op ktir.mean needs a floating-point input, not i64
func.func @mean_int(%x: tensor<16xi64>) {
  // expected-error @+1 {{ktir.mean needs a floating-point input, not i64}}
  %0 = ktir.mean %x dims [0] : tensor<16xi64> -> tensor<i64>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.sum' op input must have a static shape (graph-level ktir has no dynamic dims)
func.func @sum_dynamic(%x: tensor<?x4xf16>) {
  // expected-error @+1 {{input must have a static shape (graph-level ktir has no dynamic dims)}}
  %0 = ktir.sum %x dims [1] : tensor<?x4xf16> -> tensor<?xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.attention' op ktir.attention takes q [B, H, G, S, D], k [B, H, L, D], v [B, H, L, E]; got ranks 4, 4, 4
func.func @attention_rank(%q: tensor<1x8x16x64xf16>, %k: tensor<1x2x32x64xf16>, %v: tensor<1x2x32x64xf16>) {
  // expected-error @+1 {{ktir.attention takes q [B, H, G, S, D], k [B, H, L, D], v [B, H, L, E]; got ranks 4, 4, 4}}
  %0 = ktir.attention %q, %k, %v scale 0.125 : tensor<1x8x16x64xf16>, tensor<1x2x32x64xf16>, tensor<1x2x32x64xf16> -> tensor<1x8x16x64xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.attention' op q, k and v must agree on [B, H]: [1, 2], [1, 4], [1, 2]
func.func @attention_heads(%q: tensor<1x2x4x16x64xf16>, %k: tensor<1x4x32x64xf16>, %v: tensor<1x2x32x64xf16>) {
  // expected-error @+1 {{q, k and v must agree on [B, H]: [1, 2], [1, 4], [1, 2]}}
  %0 = ktir.attention %q, %k, %v scale 0.125 : tensor<1x2x4x16x64xf16>, tensor<1x4x32x64xf16>, tensor<1x2x32x64xf16> -> tensor<1x2x4x16x64xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.attention' op q and k must have the same head size D: 64 vs 32
func.func @attention_head_size(%q: tensor<1x2x4x16x64xf16>, %k: tensor<1x2x32x32xf16>, %v: tensor<1x2x32x64xf16>) {
  // expected-error @+1 {{q and k must have the same head size D: 64 vs 32}}
  %0 = ktir.attention %q, %k, %v scale 0.125 : tensor<1x2x4x16x64xf16>, tensor<1x2x32x32xf16>, tensor<1x2x32x64xf16> -> tensor<1x2x4x16x64xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.attention' op k and v must have the same key count L: 32 vs 16
func.func @attention_keys(%q: tensor<1x2x4x16x64xf16>, %k: tensor<1x2x32x64xf16>, %v: tensor<1x2x16x64xf16>) {
  // expected-error @+1 {{k and v must have the same key count L: 32 vs 16}}
  %0 = ktir.attention %q, %k, %v scale 0.125 : tensor<1x2x4x16x64xf16>, tensor<1x2x32x64xf16>, tensor<1x2x16x64xf16> -> tensor<1x2x4x16x64xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.attention' op the mask [16, 16] must broadcast to the scores [1, 2, 4, 16, 32]
func.func @attention_mask_shape(%q: tensor<1x2x4x16x64xf16>, %k: tensor<1x2x32x64xf16>, %v: tensor<1x2x32x64xf16>, %m: tensor<16x16xi1>) {
  // expected-error @+1 {{the mask [16, 16] must broadcast to the scores [1, 2, 4, 16, 32]}}
  %0 = ktir.attention %q, %k, %v mask %m : tensor<16x16xi1> scale 0.125 : tensor<1x2x4x16x64xf16>, tensor<1x2x32x64xf16>, tensor<1x2x32x64xf16> -> tensor<1x2x4x16x64xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.attention' op the mask must be i1 or have q's element type
func.func @attention_mask_type(%q: tensor<1x2x4x16x64xf16>, %k: tensor<1x2x32x64xf16>, %v: tensor<1x2x32x64xf16>, %m: tensor<16x32xf32>) {
  // expected-error @+1 {{the mask must be i1 or have q's element type}}
  %0 = ktir.attention %q, %k, %v mask %m : tensor<16x32xf32> scale 0.125 : tensor<1x2x4x16x64xf16>, tensor<1x2x32x64xf16>, tensor<1x2x32x64xf16> -> tensor<1x2x4x16x64xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.attention' op k has element type f32 but q has f16: operands must share one element type
func.func @attention_dtypes(%q: tensor<1x2x4x16x64xf16>, %k: tensor<1x2x32x64xf32>, %v: tensor<1x2x32x64xf16>) {
  // expected-error @+1 {{k has element type f32 but q has f16: operands must share one element type}}
  %0 = ktir.attention %q, %k, %v scale 0.125 : tensor<1x2x4x16x64xf16>, tensor<1x2x32x64xf32>, tensor<1x2x32x64xf16> -> tensor<1x2x4x16x64xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.attention' op result shape [1, 8, 16, 64] does not match [B, H, G, S, E], which is [1, 2, 4, 16, 64]
func.func @attention_result(%q: tensor<1x2x4x16x64xf16>, %k: tensor<1x2x32x64xf16>, %v: tensor<1x2x32x64xf16>) {
  // expected-error @+1 {{result shape [1, 8, 16, 64] does not match [B, H, G, S, E], which is [1, 2, 4, 16, 64]}}
  %0 = ktir.attention %q, %k, %v scale 0.125 : tensor<1x2x4x16x64xf16>, tensor<1x2x32x64xf16>, tensor<1x2x32x64xf16> -> tensor<1x8x16x64xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.softmax' op dim 3 is out of range for rank 3
func.func @softmax_dim(%x: tensor<2x4x64xf16>) {
  // expected-error @+1 {{dim 3 is out of range for rank 3}}
  %0 = ktir.softmax %x dim 3 : tensor<2x4x64xf16> -> tensor<2x4x64xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.softmax' op dim -1 is out of range for rank 3
func.func @softmax_negative_dim(%x: tensor<2x4x64xf16>) {
  // expected-error @+1 {{dim -1 is out of range for rank 3}}
  %0 = ktir.softmax %x dim -1 : tensor<2x4x64xf16> -> tensor<2x4x64xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.softmax' op ktir.softmax needs a floating-point input, not i32
func.func @softmax_int(%x: tensor<4xi32>) {
  // expected-error @+1 {{ktir.softmax needs a floating-point input, not i32}}
  %0 = ktir.softmax %x dim 0 : tensor<4xi32> -> tensor<4xi32>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.softmax' op result element type f32 must be f16 (the input's)
func.func @softmax_result_type(%x: tensor<4x64xf16>) {
  // expected-error @+1 {{result element type f32 must be f16 (the input's)}}
  %0 = "ktir.softmax"(%x) <{dim = 1 : i64}> : (tensor<4x64xf16>) -> tensor<4x64xf32>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.layer_norm' op normalized_shape [4] must be a non-empty suffix of the input shape [2, 4, 64]
func.func @layer_norm_not_suffix(%x: tensor<2x4x64xf16>) {
  // expected-error @+1 {{normalized_shape [4] must be a non-empty suffix of the input shape [2, 4, 64]}}
  %0 = ktir.layer_norm %x normalized_shape [4] {eps = 1.0e-05 : f64} : tensor<2x4x64xf16> -> tensor<2x4x64xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.layer_norm' op normalized_shape [] must be a non-empty suffix of the input shape [2, 4, 64]
func.func @layer_norm_empty(%x: tensor<2x4x64xf16>) {
  // expected-error @+1 {{normalized_shape [] must be a non-empty suffix of the input shape [2, 4, 64]}}
  %0 = ktir.layer_norm %x normalized_shape [] {eps = 1.0e-05 : f64} : tensor<2x4x64xf16> -> tensor<2x4x64xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.layer_norm' op normalized_shape [1, 4, 64] must be a non-empty suffix of the input shape [4, 64]
func.func @layer_norm_too_long(%x: tensor<4x64xf16>) {
  // expected-error @+1 {{normalized_shape [1, 4, 64] must be a non-empty suffix of the input shape [4, 64]}}
  %0 = ktir.layer_norm %x normalized_shape [1, 4, 64] {eps = 1.0e-05 : f64} : tensor<4x64xf16> -> tensor<4x64xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.layer_norm' op weight shape [32] must equal normalized_shape [64]
func.func @layer_norm_weight(%x: tensor<2x4x64xf16>, %w: tensor<32xf16>) {
  // expected-error @+1 {{weight shape [32] must equal normalized_shape [64]}}
  %0 = ktir.layer_norm %x weight %w : tensor<32xf16> normalized_shape [64] {eps = 1.0e-05 : f64} : tensor<2x4x64xf16> -> tensor<2x4x64xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.layer_norm' op bias shape [4, 64] must equal normalized_shape [64]
func.func @layer_norm_bias(%x: tensor<2x4x64xf16>, %w: tensor<64xf16>, %b: tensor<4x64xf16>) {
  // expected-error @+1 {{bias shape [4, 64] must equal normalized_shape [64]}}
  %0 = ktir.layer_norm %x weight %w : tensor<64xf16> bias %b : tensor<4x64xf16> normalized_shape [64] {eps = 1.0e-05 : f64} : tensor<2x4x64xf16> -> tensor<2x4x64xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.layer_norm' op weight has element type f32 but input has f16: operands must share one element type
func.func @layer_norm_weight_type(%x: tensor<2x4x64xf16>, %w: tensor<64xf32>) {
  // expected-error @+1 {{weight has element type f32 but input has f16: operands must share one element type}}
  %0 = ktir.layer_norm %x weight %w : tensor<64xf32> normalized_shape [64] {eps = 1.0e-05 : f64} : tensor<2x4x64xf16> -> tensor<2x4x64xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.layer_norm' op eps must be non-negative
func.func @layer_norm_eps(%x: tensor<2x4x64xf16>) {
  // expected-error @+1 {{eps must be non-negative}}
  %0 = ktir.layer_norm %x normalized_shape [64] {eps = -1.0e-05 : f64} : tensor<2x4x64xf16> -> tensor<2x4x64xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.layer_norm' op ktir.layer_norm needs a floating-point input, not i32
func.func @layer_norm_int(%x: tensor<4x64xi32>) {
  // expected-error @+1 {{ktir.layer_norm needs a floating-point input, not i32}}
  %0 = ktir.layer_norm %x normalized_shape [64] {eps = 1.0e-05 : f64} : tensor<4x64xi32> -> tensor<4x64xi32>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.rms_norm' op weight shape [4, 64] must equal normalized_shape [64]
func.func @rms_norm_weight(%x: tensor<2x4x64xf16>, %w: tensor<4x64xf16>) {
  // expected-error @+1 {{weight shape [4, 64] must equal normalized_shape [64]}}
  %0 = ktir.rms_norm %x weight %w : tensor<4x64xf16> normalized_shape [64] {eps = 1.0e-06 : f64} : tensor<2x4x64xf16> -> tensor<2x4x64xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.rms_norm' op eps must be non-negative
func.func @rms_norm_eps(%x: tensor<2x4x64xf16>) {
  // expected-error @+1 {{eps must be non-negative}}
  %0 = ktir.rms_norm %x normalized_shape [64] {eps = -1.0 : f64} : tensor<2x4x64xf16> -> tensor<2x4x64xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.rms_norm' op normalized_shape [2, 4] must be a non-empty suffix of the input shape [2, 4, 64]
func.func @rms_norm_not_suffix(%x: tensor<2x4x64xf16>) {
  // expected-error @+1 {{normalized_shape [2, 4] must be a non-empty suffix of the input shape [2, 4, 64]}}
  %0 = ktir.rms_norm %x normalized_shape [2, 4] {eps = 1.0e-06 : f64} : tensor<2x4x64xf16> -> tensor<2x4x64xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.permute' op perm [0, 0] is not a permutation of the 2 dims
func.func @permute_repeat(%x: tensor<4x64xf16>) {
  // expected-error @+1 {{perm [0, 0] is not a permutation of the 2 dims}}
  %0 = ktir.permute %x perm [0, 0] : tensor<4x64xf16> -> tensor<4x64xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.permute' op perm [2, 0, 1] is not a permutation of the 2 dims
func.func @permute_rank(%x: tensor<4x64xf16>) {
  // expected-error @+1 {{perm [2, 0, 1] is not a permutation of the 2 dims}}
  %0 = ktir.permute %x perm [2, 0, 1] : tensor<4x64xf16> -> tensor<64x4xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.permute' op result shape [4, 64] does not match the permuted shape [64, 4]
func.func @permute_result(%x: tensor<4x64xf16>) {
  // expected-error @+1 {{result shape [4, 64] does not match the permuted shape [64, 4]}}
  %0 = ktir.permute %x perm [1, 0] : tensor<4x64xf16> -> tensor<4x64xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.permute' op result element type f32 must be f16 (the input's)
func.func @permute_type(%x: tensor<4x64xf16>) {
  // expected-error @+1 {{result element type f32 must be f16 (the input's)}}
  %0 = ktir.permute %x perm [1, 0] : tensor<4x64xf16> -> tensor<64x4xf32>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.reshape' op cannot reshape [4, 64] (256 elements) to [4, 60] (240 elements)
func.func @reshape_count(%x: tensor<4x64xf16>) {
  // expected-error @+1 {{cannot reshape [4, 64] (256 elements) to [4, 60] (240 elements)}}
  %0 = ktir.reshape %x : tensor<4x64xf16> -> tensor<4x60xf16>
  func.return
}

// -----

// reshape is not a bitcast.
// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.reshape' op result element type i16 must be f16 (the input's)
func.func @reshape_type(%x: tensor<4x64xf16>) {
  // expected-error @+1 {{result element type i16 must be f16 (the input's)}}
  %0 = ktir.reshape %x : tensor<4x64xf16> -> tensor<256xi16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.reshape' op result must have a static shape (graph-level ktir has no dynamic dims)
func.func @reshape_dynamic(%x: tensor<4x64xf16>) {
  // expected-error @+1 {{result must have a static shape (graph-level ktir has no dynamic dims)}}
  %0 = ktir.reshape %x : tensor<4x64xf16> -> tensor<?xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.expand' op cannot expand dim 0 of size 2 to 4
func.func @expand_size(%x: tensor<2x64xf16>) {
  // expected-error @+1 {{cannot expand dim 0 of size 2 to 4}}
  %0 = ktir.expand %x : tensor<2x64xf16> -> tensor<4x64xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.expand' op cannot expand rank 2 to the lower rank 1
func.func @expand_rank(%x: tensor<1x64xf16>) {
  // expected-error @+1 {{cannot expand rank 2 to the lower rank 1}}
  %0 = ktir.expand %x : tensor<1x64xf16> -> tensor<64xf16>
  func.return
}

// -----

// New dims are leading: (4, 1) aligns with the last two dims of (4, 8, 2).
// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.expand' op cannot expand dim 0 of size 4 to 8
func.func @expand_trailing(%x: tensor<4x1xf16>) {
  // expected-error @+1 {{cannot expand dim 0 of size 4 to 8}}
  %0 = ktir.expand %x : tensor<4x1xf16> -> tensor<4x8x2xf16>
  func.return
}

// -----

// Bounds are clamped and normalized by the importer: 0 <= start <= end <= size.
// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.slice' op slice [0:65] is outside [0, 64] or reversed
func.func @slice_end(%x: tensor<4x64xf16>) {
  // expected-error @+1 {{slice [0:65] is outside [0, 64] or reversed}}
  %0 = ktir.slice %x dim 1 start 0 end 65 step 1 : tensor<4x64xf16> -> tensor<4x65xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.slice' op slice [-1:64] is outside [0, 64] or reversed
func.func @slice_negative_start(%x: tensor<4x64xf16>) {
  // expected-error @+1 {{slice [-1:64] is outside [0, 64] or reversed}}
  %0 = ktir.slice %x dim 1 start -1 end 64 step 1 : tensor<4x64xf16> -> tensor<4x1xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.slice' op slice [8:4] is outside [0, 64] or reversed
func.func @slice_reversed(%x: tensor<4x64xf16>) {
  // expected-error @+1 {{slice [8:4] is outside [0, 64] or reversed}}
  %0 = ktir.slice %x dim 1 start 8 end 4 step 1 : tensor<4x64xf16> -> tensor<4x0xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.slice' op slice step must be positive, not 0
func.func @slice_step_zero(%x: tensor<4x64xf16>) {
  // expected-error @+1 {{slice step must be positive, not 0}}
  %0 = ktir.slice %x dim 1 start 0 end 64 step 0 : tensor<4x64xf16> -> tensor<4x64xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.slice' op result shape [4, 22] does not match the sliced shape [4, 21]
func.func @slice_result(%x: tensor<4x64xf16>) {
  // expected-error @+1 {{result shape [4, 22] does not match the sliced shape [4, 21]}}
  %0 = ktir.slice %x dim 1 start 1 end 64 step 3 : tensor<4x64xf16> -> tensor<4x22xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.slice' op dim 2 is out of range for rank 2
func.func @slice_dim(%x: tensor<4x64xf16>) {
  // expected-error @+1 {{dim 2 is out of range for rank 2}}
  %0 = ktir.slice %x dim 2 start 0 end 1 step 1 : tensor<4x64xf16> -> tensor<4x64xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.slice' op ktir.slice needs an input of rank >= 1
func.func @slice_rank0(%x: tensor<f16>) {
  // expected-error @+1 {{ktir.slice needs an input of rank >= 1}}
  %0 = ktir.slice %x dim 0 start 0 end 1 step 1 : tensor<f16> -> tensor<f16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.cat' op input 1 of shape [4, 32] does not match [4, 64] outside dim 0
func.func @cat_dims(%x: tensor<4x64xf16>, %y: tensor<4x32xf16>) {
  // expected-error @+1 {{input 1 of shape [4, 32] does not match [4, 64] outside dim 0}}
  %0 = ktir.cat %x, %y dim 0 : tensor<4x64xf16>, tensor<4x32xf16> -> tensor<8x64xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.cat' op input 1 of shape [64] does not match [4, 64] outside dim 0
func.func @cat_rank(%x: tensor<4x64xf16>, %y: tensor<64xf16>) {
  // expected-error @+1 {{input 1 of shape [64] does not match [4, 64] outside dim 0}}
  %0 = ktir.cat %x, %y dim 0 : tensor<4x64xf16>, tensor<64xf16> -> tensor<5x64xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.cat' op input 1 has element type f32 but input 0 has f16: operands must share one element type
func.func @cat_types(%x: tensor<4x64xf16>, %y: tensor<4x64xf32>) {
  // expected-error @+1 {{input 1 has element type f32 but input 0 has f16: operands must share one element type}}
  %0 = ktir.cat %x, %y dim 0 : tensor<4x64xf16>, tensor<4x64xf32> -> tensor<8x64xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.cat' op dim 2 is out of range for rank 2
func.func @cat_dim(%x: tensor<4x64xf16>) {
  // expected-error @+1 {{dim 2 is out of range for rank 2}}
  %0 = ktir.cat %x, %x dim 2 : tensor<4x64xf16>, tensor<4x64xf16> -> tensor<4x64xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.cat' op result shape [8, 64] does not match the concatenated shape [4, 128]
func.func @cat_result(%x: tensor<4x64xf16>) {
  // expected-error @+1 {{result shape [8, 64] does not match the concatenated shape [4, 128]}}
  %0 = ktir.cat %x, %x dim 1 : tensor<4x64xf16>, tensor<4x64xf16> -> tensor<8x64xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.cat' op result element type f32 must be f16 (the inputs')
func.func @cat_result_type(%x: tensor<4x64xf16>) {
  // expected-error @+1 {{result element type f32 must be f16 (the inputs')}}
  %0 = ktir.cat %x dim 0 : tensor<4x64xf16> -> tensor<4x64xf32>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.cat' op ktir.cat needs at least one input
func.func @cat_none() {
  // expected-error @+1 {{ktir.cat needs at least one input}}
  %0 = "ktir.cat"() <{dim = 0 : i64}> : () -> tensor<4xf16>
  func.return
}

// -----

// As in PyTorch, rank-0 tensors cannot be concatenated.
// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.cat' op cat needs inputs of rank >= 1
func.func @cat_rank0(%x: tensor<f16>) {
  // expected-error @+1 {{cat needs inputs of rank >= 1}}
  %0 = ktir.cat %x, %x dim 0 : tensor<f16>, tensor<f16> -> tensor<2xf16>
  func.return
}

// -----

// Negative padding (cropping) is a ktir.slice.
// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.pad' op padding amounts must be non-negative
func.func @pad_negative(%x: tensor<4x60xf16>) {
  // expected-error @+1 {{padding amounts must be non-negative}}
  %0 = ktir.pad %x low [0, -1] high [0, 4] {value = 0.0 : f64} : tensor<4x60xf16> -> tensor<4x63xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.pad' op low and high padding need one entry per dim (2)
func.func @pad_count(%x: tensor<4x60xf16>) {
  // expected-error @+1 {{low and high padding need one entry per dim (2)}}
  %0 = ktir.pad %x low [0] high [4] {value = 0.0 : f64} : tensor<4x60xf16> -> tensor<4x64xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.pad' op result shape [4, 64] does not match the padded shape [5, 64]
func.func @pad_result(%x: tensor<4x60xf16>) {
  // expected-error @+1 {{result shape [4, 64] does not match the padded shape [5, 64]}}
  %0 = ktir.pad %x low [1, 0] high [0, 4] {value = 0.0 : f64} : tensor<4x60xf16> -> tensor<4x64xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.pad' op f32 should be of base attribute f64
func.func @pad_value_f32(%x: tensor<4x60xf16>) {
  // expected-error @+1 {{f32 should be of base attribute f64}}
  %0 = "ktir.pad"(%x) <{low = array<i64: 0, 0>, high = array<i64: 0, 4>, value = 0.0 : f32}> : (tensor<4x60xf16>) -> tensor<4x64xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.copy' op result shape [64, 4] does not match the input shape [4, 64]
func.func @copy_shape(%x: tensor<4x64xf16>) {
  // expected-error @+1 {{result shape [64, 4] does not match the input shape [4, 64]}}
  %0 = ktir.copy %x : tensor<4x64xf16> -> tensor<64x4xf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.copy' op result element type f32 must be f16 (the input's)
func.func @copy_type(%x: tensor<4x64xf16>) {
  // expected-error @+1 {{result element type f32 must be f16 (the input's)}}
  %0 = ktir.copy %x : tensor<4x64xf16> -> tensor<4x64xf32>
  func.return
}

// -----

// A relayout never changes the host shape or element type.
// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.restickify' op result shape [64, 4] does not match the input shape [4, 64]
func.func @restickify_shape(%x: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) {
  // expected-error @+1 {{result shape [64, 4] does not match the input shape [4, 64]}}
  %0 = ktir.restickify %x : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<64x4xf16, #ktir.tiled<device_size = [1, 64, 64], stride_map = [4, 4, 1]>>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.restickify' op result element type bf16 must be f16 (the input's)
func.func @restickify_type(%x: tensor<4x64xf16>) {
  // expected-error @+1 {{result element type bf16 must be f16 (the input's)}}
  %0 = ktir.restickify %x : tensor<4x64xf16> -> tensor<4x64xbf16>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.cpu_fallback' op aten must name an op as "aten::<name>.<overload>", not "cumsum"
func.func @cpu_fallback_name(%x: tensor<16xi64>) {
  // expected-error @+1 {{aten must name an op as "aten::<name>.<overload>", not "cumsum"}}
  %0 = ktir.cpu_fallback "cumsum"(%x) {args = [#ktir.operand<0>, 0 : i64]} : (tensor<16xi64>) -> tensor<16xi64>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.cpu_fallback' op aten must name an op as "aten::<name>.<overload>", not "aten::cumsum default"
func.func @cpu_fallback_name_space(%x: tensor<16xi64>) {
  // expected-error @+1 {{aten must name an op as "aten::<name>.<overload>", not "aten::cumsum default"}}
  %0 = ktir.cpu_fallback "aten::cumsum default"(%x) {args = [#ktir.operand<0>, 0 : i64]} : (tensor<16xi64>) -> tensor<16xi64>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.cpu_fallback' op #ktir.operand<1> refers past the 1 operand(s)
func.func @cpu_fallback_ref(%x: tensor<16xi64>) {
  // expected-error @+1 {{#ktir.operand<1> refers past the 1 operand(s)}}
  %0 = ktir.cpu_fallback "aten::cumsum.default"(%x) {args = [#ktir.operand<1>, 0 : i64]} : (tensor<16xi64>) -> tensor<16xi64>
  func.return
}

// -----

// References are found inside kwargs and nested arrays too.
// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.cpu_fallback' op #ktir.operand<3> refers past the 1 operand(s)
func.func @cpu_fallback_ref_kwargs(%x: tensor<16xi64>) {
  // expected-error @+1 {{#ktir.operand<3> refers past the 1 operand(s)}}
  %0 = ktir.cpu_fallback "aten::tril.default"(%x) {args = [#ktir.operand<0>], kwargs = {diagonal = [#ktir.operand<3>]}} : (tensor<16xi64>) -> tensor<16xi64>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.cpu_fallback' op operand 1 is not referenced by args or kwargs
func.func @cpu_fallback_unused(%x: tensor<16xi64>, %y: tensor<16xi64>) {
  // expected-error @+1 {{operand 1 is not referenced by args or kwargs}}
  %0 = ktir.cpu_fallback "aten::cumsum.default"(%x, %y) {args = [#ktir.operand<0>, 0 : i64]} : (tensor<16xi64>, tensor<16xi64>) -> tensor<16xi64>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:3: error: 'ktir.cpu_fallback' op ktir.cpu_fallback must produce at least one tensor
func.func @cpu_fallback_no_outputs(%x: tensor<16xi64>) {
  // expected-error @+1 {{ktir.cpu_fallback must produce at least one tensor}}
  ktir.cpu_fallback "aten::cumsum.default"(%x) {args = [#ktir.operand<0>, 0 : i64]} : (tensor<16xi64>) -> ()
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.cpu_fallback' op value 1 must have a static shape (graph-level ktir has no dynamic dims)
func.func @cpu_fallback_dynamic(%x: tensor<16xi64>) {
  // expected-error @+1 {{value 1 must have a static shape (graph-level ktir has no dynamic dims)}}
  %0 = ktir.cpu_fallback "aten::cumsum.default"(%x) {args = [#ktir.operand<0>, 0 : i64]} : (tensor<16xi64>) -> tensor<?xi64>
  func.return
}

// -----

// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.cpu_fallback' op property 'args' expected in operation 'ktir.cpu_fallback'
func.func @cpu_fallback_no_args(%x: tensor<16xi64>) {
  // expected-error @+1 {{property 'args' expected in operation 'ktir.cpu_fallback'}}
  %0 = ktir.cpu_fallback "aten::cumsum.default"(%x) : (tensor<16xi64>) -> tensor<16xi64>
  func.return
}

// -----

// Operand references are non-negative.
// CHECK: structured_invalid.mlir:[[# @LINE + 3]]:74: error: Expected integer literal
func.func @cpu_fallback_negative_ref() {
  // expected-error @+1 {{Expected integer literal}}
  %0 = ktir.cpu_fallback "aten::arange.default"() {args = [#ktir.operand<-1>]} : () -> tensor<16xi64>
  func.return
}

// -----

// The overload is part of the name: PyTorch resolves ops by name and overload.
// CHECK: error: 'ktir.cpu_fallback' op aten must name an op as "aten::<name>.<overload>", not "aten::cumsum"
func.func @fallback_without_overload(%x: tensor<16xi64>) {
  // expected-error @+1 {{aten must name an op as "aten::<name>.<overload>", not "aten::cumsum"}}
  %r = ktir.cpu_fallback "aten::cumsum"(%x) {args = [#ktir.operand<0>, 0 : i64]} : (tensor<16xi64>) -> tensor<16xi64>
  func.return
}

// -----

// CHECK: error: 'ktir.rms_norm' op eps must be non-negative
func.func @nan_eps(%x: tensor<4x64xf16>) {
  // expected-error @+1 {{eps must be non-negative}}
  %r = ktir.rms_norm %x normalized_shape [64] {eps = 0x7FF8000000000000 : f64} : tensor<4x64xf16> -> tensor<4x64xf16>
  func.return
}

// -----

// CHECK: error: 'ktir.sum' op ktir.sum of i1 is a count: convert the mask to an integer type first
func.func @sum_of_mask(%m: tensor<4x64xi1>) {
  // expected-error @+1 {{ktir.sum of i1 is a count: convert the mask to an integer type first}}
  %r = ktir.sum %m dims [1] : tensor<4x64xi1> -> tensor<4xi1>
  func.return
}

// -----

// CHECK: error: 'ktir.sum' op a rank-0 tensor has no dim to reduce
func.func @reduce_scalar(%s: tensor<f32>) {
  // expected-error @+1 {{a rank-0 tensor has no dim to reduce}}
  %r = ktir.sum %s dims [0] : tensor<f32> -> tensor<f32>
  func.return
}

// -----

// CHECK: error: 'ktir.fused' op the yielded value must have the result's type
func.func @fused_wrong_result(%x: tensor<4x64xf16>) {
  // expected-error @+1 {{the yielded value must have the result's type}}
  %y = ktir.fused(%x) : (tensor<4x64xf16>) -> tensor<4x64xf32> {
  ^bb0(%a: tensor<4x64xf16>):
    %s = ktir.silu %a : tensor<4x64xf16> -> tensor<4x64xf16>
    ktir.yield %s : tensor<4x64xf16>
  }
  func.return
}

// -----

// CHECK: error: 'ktir.fused' op 'ktir.cpu_fallback' cannot be fused: the body holds graph-level ktir ops
func.func @fused_host_op(%x: tensor<16xi64>) {
  // expected-error @+1 {{'ktir.cpu_fallback' cannot be fused}}
  %y = ktir.fused(%x) : (tensor<16xi64>) -> tensor<16xi64> {
  ^bb0(%a: tensor<16xi64>):
    %c = ktir.cpu_fallback "aten::cumsum.default"(%a) {args = [#ktir.operand<0>, 0 : i64]} : (tensor<16xi64>) -> tensor<16xi64>
    ktir.yield %c : tensor<16xi64>
  }
  func.return
}
