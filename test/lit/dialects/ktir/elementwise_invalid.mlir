// RUN: ktir-opt %s --split-input-file --verify-diagnostics
// RUN: not ktir-opt %s --split-input-file 2>&1 | filecheck %s

// Invalid graph-level elementwise ops: every verifier rule of dialects/ktir/elementwise.py.
// Each case checks the located message twice: --verify-diagnostics matches the
// expected-error annotation, FileCheck the full `file:line:col: error: '<op>' op ...` text.

// abs, neg, relu, floor and square take integers but not i1.
// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.abs' op ktir.abs is not defined on i1 tensors
func.func @abs_i1(%x: tensor<4xi1>) {
  // expected-error @+1 {{ktir.abs is not defined on i1 tensors}}
  %0 = ktir.abs %x : tensor<4xi1> -> tensor<4xi1>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.neg' op ktir.neg is not defined on i1 tensors
func.func @neg_i1(%x: tensor<4xi1>) {
  // expected-error @+1 {{ktir.neg is not defined on i1 tensors}}
  %0 = ktir.neg %x : tensor<4xi1> -> tensor<4xi1>
  func.return
}

// -----

// Transcendental and fractional unary ops are float-only.
// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.exp' op ktir.exp needs a floating-point input, not i32
func.func @exp_int(%x: tensor<4x64xi32>) {
  // expected-error @+1 {{ktir.exp needs a floating-point input, not i32}}
  %0 = ktir.exp %x : tensor<4x64xi32> -> tensor<4x64xi32>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.log' op ktir.log needs a floating-point input, not i1
func.func @log_i1(%x: tensor<4xi1>) {
  // expected-error @+1 {{ktir.log needs a floating-point input, not i1}}
  %0 = ktir.log %x : tensor<4xi1> -> tensor<4xi1>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.sqrt' op ktir.sqrt needs a floating-point input, not i64
func.func @sqrt_int(%x: tensor<4xi64>) {
  // expected-error @+1 {{ktir.sqrt needs a floating-point input, not i64}}
  %0 = ktir.sqrt %x : tensor<4xi64> -> tensor<4xi64>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.rsqrt' op ktir.rsqrt needs a floating-point input, not i32
func.func @rsqrt_int(%x: tensor<i32>) {
  // expected-error @+1 {{ktir.rsqrt needs a floating-point input, not i32}}
  %0 = ktir.rsqrt %x : tensor<i32> -> tensor<i32>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.reciprocal' op ktir.reciprocal needs a floating-point input, not i32
func.func @reciprocal_int(%x: tensor<4xi32>) {
  // expected-error @+1 {{ktir.reciprocal needs a floating-point input, not i32}}
  %0 = ktir.reciprocal %x : tensor<4xi32> -> tensor<4xi32>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.sigmoid' op ktir.sigmoid needs a floating-point input, not i8
func.func @sigmoid_int(%x: tensor<4xi8>) {
  // expected-error @+1 {{ktir.sigmoid needs a floating-point input, not i8}}
  %0 = ktir.sigmoid %x : tensor<4xi8> -> tensor<4xi8>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.tanh' op ktir.tanh needs a floating-point input, not i32
func.func @tanh_int(%x: tensor<4xi32>) {
  // expected-error @+1 {{ktir.tanh needs a floating-point input, not i32}}
  %0 = ktir.tanh %x : tensor<4xi32> -> tensor<4xi32>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.relu' op ktir.relu is not defined on i1 tensors
func.func @relu_i1(%x: tensor<4xi1>) {
  // expected-error @+1 {{ktir.relu is not defined on i1 tensors}}
  %0 = ktir.relu %x : tensor<4xi1> -> tensor<4xi1>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.gelu' op approximate must be "none" or "tanh", not "erf"
func.func @gelu_approximate(%x: tensor<4x64xf16>) {
  // expected-error @+1 {{approximate must be "none" or "tanh", not "erf"}}
  %0 = ktir.gelu %x {approximate = "erf"} : tensor<4x64xf16> -> tensor<4x64xf16>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.gelu' op ktir.gelu needs a floating-point input, not i32
func.func @gelu_int(%x: tensor<4xi32>) {
  // expected-error @+1 {{ktir.gelu needs a floating-point input, not i32}}
  %0 = ktir.gelu %x {approximate = "tanh"} : tensor<4xi32> -> tensor<4xi32>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.silu' op ktir.silu needs a floating-point input, not i32
func.func @silu_int(%x: tensor<4xi32>) {
  // expected-error @+1 {{ktir.silu needs a floating-point input, not i32}}
  %0 = ktir.silu %x : tensor<4xi32> -> tensor<4xi32>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.softplus' op beta must be non-zero
func.func @softplus_beta_zero(%x: tensor<4x64xf16>) {
  // expected-error @+1 {{beta must be non-zero}}
  %0 = ktir.softplus %x {beta = 0.0 : f64} : tensor<4x64xf16> -> tensor<4x64xf16>
  func.return
}

// -----

// Constant attributes are f64.
// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.softplus' op f32 should be of base attribute f64
func.func @softplus_beta_f32(%x: tensor<4x64xf16>) {
  // expected-error @+1 {{f32 should be of base attribute f64}}
  %0 = ktir.softplus %x {beta = 1.0 : f32} : tensor<4x64xf16> -> tensor<4x64xf16>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.floor' op ktir.floor is not defined on i1 tensors
func.func @floor_i1(%x: tensor<4xi1>) {
  // expected-error @+1 {{ktir.floor is not defined on i1 tensors}}
  %0 = ktir.floor %x : tensor<4xi1> -> tensor<4xi1>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.square' op ktir.square is not defined on i1 tensors
func.func @square_i1(%x: tensor<4xi1>) {
  // expected-error @+1 {{ktir.square is not defined on i1 tensors}}
  %0 = ktir.square %x : tensor<4xi1> -> tensor<4xi1>
  func.return
}

// -----

// The result keeps the input's shape and element type (only its layout may differ).
// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.sqrt' op result element type f32 must be f16 (the input's)
func.func @unary_result_type(%x: tensor<4x64xf16>) {
  // expected-error @+1 {{result element type f32 must be f16 (the input's)}}
  %0 = "ktir.sqrt"(%x) : (tensor<4x64xf16>) -> tensor<4x64xf32>
  func.return
}

// -----

// Graph-level ops need static shapes.
// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.exp' op input must have a static shape (graph-level ktir has no dynamic dims)
func.func @unary_dynamic(%x: tensor<?x4xf16>) {
  // expected-error @+1 {{input must have a static shape (graph-level ktir has no dynamic dims)}}
  %0 = ktir.exp %x : tensor<?x4xf16> -> tensor<?x4xf16>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 4]]:8: error: 'ktir.abs' op operand 'input' at position 0 does not verify:
// CHECK-NEXT: f16 should be of base attribute tensor
func.func @unary_not_tensor(%x: f16) {
  // expected-error @+1 {{operand 'input' at position 0 does not verify:}}
  %0 = "ktir.abs"(%x) : (f16) -> f16
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.logical_not' op result element type f16 must be i1
func.func @logical_not_result_type(%x: tensor<4xi1>) {
  // expected-error @+1 {{result element type f16 must be i1}}
  %0 = ktir.logical_not %x : tensor<4xi1> -> tensor<4xf16>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.logical_not' op result shape [4] does not match the input shape [4, 64]
func.func @logical_not_shape(%x: tensor<4x64xf16>) {
  // expected-error @+1 {{result shape [4] does not match the input shape [4, 64]}}
  %0 = ktir.logical_not %x : tensor<4x64xf16> -> tensor<4xi1>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.convert' op result shape [64, 4] does not match the input shape [4, 64]
func.func @convert_shape(%x: tensor<4x64xf16>) {
  // expected-error @+1 {{result shape [64, 4] does not match the input shape [4, 64]}}
  %0 = ktir.convert %x : tensor<4x64xf16> -> tensor<64x4xf32>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.convert' op result must have a static shape (graph-level ktir has no dynamic dims)
func.func @convert_dynamic(%x: tensor<4x64xf16>) {
  // expected-error @+1 {{result must have a static shape (graph-level ktir has no dynamic dims)}}
  %0 = ktir.convert %x : tensor<4x64xf16> -> tensor<?x64xf32>
  func.return
}

// -----

// (4, 1, 64) + (8, 1) broadcasts to (4, 8, 64).
// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.add' op result shape [4, 1, 64] does not match the broadcast shape [4, 8, 64]
func.func @add_result_shape(%x: tensor<4x1x64xf16>, %y: tensor<8x1xf16>) {
  // expected-error @+1 {{result shape [4, 1, 64] does not match the broadcast shape [4, 8, 64]}}
  %0 = ktir.add %x, %y : tensor<4x1x64xf16>, tensor<8x1xf16> -> tensor<4x1x64xf16>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.sub' op shapes [4, 64], [3, 64] do not broadcast: dim 0 is 4 vs 3
func.func @sub_no_broadcast(%x: tensor<4x64xf16>, %y: tensor<3x64xf16>) {
  // expected-error @+1 {{shapes [4, 64], [3, 64] do not broadcast: dim 0 is 4 vs 3}}
  %0 = ktir.sub %x, %y : tensor<4x64xf16>, tensor<3x64xf16> -> tensor<4x64xf16>
  func.return
}

// -----

// No implicit promotion: the importer inserts ktir.convert.
// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.mul' op rhs has element type f32 but lhs has f16: operands must share one element type
func.func @mul_mixed_types(%x: tensor<4x64xf16>, %y: tensor<64xf32>) {
  // expected-error @+1 {{rhs has element type f32 but lhs has f16: operands must share one element type}}
  %0 = ktir.mul %x, %y : tensor<4x64xf16>, tensor<64xf32> -> tensor<4x64xf16>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.div' op ktir.div needs floating-point operands, not i32
func.func @div_int(%x: tensor<4xi32>, %y: tensor<4xi32>) {
  // expected-error @+1 {{ktir.div needs floating-point operands, not i32}}
  %0 = ktir.div %x, %y : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.maximum' op result element type f32 must be f16 (the operands' element type)
func.func @maximum_result_type(%x: tensor<4xf16>, %y: tensor<4xf16>) {
  // expected-error @+1 {{result element type f32 must be f16 (the operands' element type)}}
  %0 = ktir.maximum %x, %y : tensor<4xf16>, tensor<4xf16> -> tensor<4xf32>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.minimum' op lhs must have a static shape (graph-level ktir has no dynamic dims)
func.func @minimum_dynamic(%x: tensor<?x4xf16>, %y: tensor<4xf16>) {
  // expected-error @+1 {{lhs must have a static shape (graph-level ktir has no dynamic dims)}}
  %0 = ktir.minimum %x, %y : tensor<?x4xf16>, tensor<4xf16> -> tensor<4x4xf16>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.eq' op result element type f16 must be i1 (a comparison)
func.func @eq_not_i1(%x: tensor<4xf16>, %y: tensor<4xf16>) {
  // expected-error @+1 {{result element type f16 must be i1 (a comparison)}}
  %0 = ktir.eq %x, %y : tensor<4xf16>, tensor<4xf16> -> tensor<4xf16>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.ne' op result element type i8 must be i1 (a comparison)
func.func @ne_not_i1(%x: tensor<4xi8>, %y: tensor<4xi8>) {
  // expected-error @+1 {{result element type i8 must be i1 (a comparison)}}
  %0 = ktir.ne %x, %y : tensor<4xi8>, tensor<4xi8> -> tensor<4xi8>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.lt' op rhs has element type bf16 but lhs has f16: operands must share one element type
func.func @lt_mixed_types(%x: tensor<4xf16>, %y: tensor<4xbf16>) {
  // expected-error @+1 {{rhs has element type bf16 but lhs has f16: operands must share one element type}}
  %0 = ktir.lt %x, %y : tensor<4xf16>, tensor<4xbf16> -> tensor<4xi1>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.le' op shapes [2, 3], [2] do not broadcast: dim 1 is 3 vs 2
func.func @le_no_broadcast(%x: tensor<2x3xf16>, %y: tensor<2xf16>) {
  // expected-error @+1 {{shapes [2, 3], [2] do not broadcast: dim 1 is 3 vs 2}}
  %0 = ktir.le %x, %y : tensor<2x3xf16>, tensor<2xf16> -> tensor<2x3xi1>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.gt' op result shape [4, 1] does not match the broadcast shape [4, 8]
func.func @gt_result_shape(%x: tensor<4x1xf16>, %y: tensor<1x8xf16>) {
  // expected-error @+1 {{result shape [4, 1] does not match the broadcast shape [4, 8]}}
  %0 = ktir.gt %x, %y : tensor<4x1xf16>, tensor<1x8xf16> -> tensor<4x1xi1>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.ge' op result element type f32 must be i1 (a comparison)
func.func @ge_not_i1(%x: tensor<f32>, %y: tensor<f32>) {
  // expected-error @+1 {{result element type f32 must be i1 (a comparison)}}
  %0 = ktir.ge %x, %y : tensor<f32>, tensor<f32> -> tensor<f32>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.logical_and' op result element type f16 must be i1 (a comparison)
func.func @logical_and_not_i1(%x: tensor<4xi1>, %y: tensor<4xi1>) {
  // expected-error @+1 {{result element type f16 must be i1 (a comparison)}}
  %0 = ktir.logical_and %x, %y : tensor<4xi1>, tensor<4xi1> -> tensor<4xf16>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.logical_and' op rhs has element type f16 but lhs has i1: operands must share one element type
func.func @logical_and_mixed(%x: tensor<4xi1>, %y: tensor<4xf16>) {
  // expected-error @+1 {{rhs has element type f16 but lhs has i1: operands must share one element type}}
  %0 = ktir.logical_and %x, %y : tensor<4xi1>, tensor<4xf16> -> tensor<4xi1>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.pow' op ktir.pow needs a floating-point input, not i32
func.func @pow_int(%x: tensor<4xi32>) {
  // expected-error @+1 {{ktir.pow needs a floating-point input, not i32}}
  %0 = ktir.pow %x {exponent = 2.0 : f64} : tensor<4xi32> -> tensor<4xi32>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.pow' op result shape [8] does not match the input shape [4]
func.func @pow_result_type(%x: tensor<4xf16>) {
  // expected-error @+1 {{result shape [8] does not match the input shape [4]}}
  %0 = "ktir.pow"(%x) <{exponent = 2.0 : f64}> : (tensor<4xf16>) -> tensor<8xf16>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.pow' op f32 should be of base attribute f64
func.func @pow_exponent_f32(%x: tensor<4xf16>) {
  // expected-error @+1 {{f32 should be of base attribute f64}}
  %0 = "ktir.pow"(%x) <{exponent = 2.0 : f32}> : (tensor<4xf16>) -> tensor<4xf16>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.where' op condition element type f16 must be i1
func.func @where_condition(%c: tensor<4xf16>, %x: tensor<4xf16>) {
  // expected-error @+1 {{condition element type f16 must be i1}}
  %0 = ktir.where %c, %x, %x : tensor<4xf16>, tensor<4xf16>, tensor<4xf16> -> tensor<4xf16>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.where' op rhs has element type f32 but lhs has f16: operands must share one element type
func.func @where_mixed(%c: tensor<4xi1>, %x: tensor<4xf16>, %y: tensor<4xf32>) {
  // expected-error @+1 {{rhs has element type f32 but lhs has f16: operands must share one element type}}
  %0 = ktir.where %c, %x, %y : tensor<4xi1>, tensor<4xf16>, tensor<4xf32> -> tensor<4xf16>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.where' op shapes [3], [4], [4] do not broadcast: dim 0 is 3 vs 4
func.func @where_no_broadcast(%c: tensor<3xi1>, %x: tensor<4xf16>) {
  // expected-error @+1 {{shapes [3], [4], [4] do not broadcast: dim 0 is 3 vs 4}}
  %0 = ktir.where %c, %x, %x : tensor<3xi1>, tensor<4xf16>, tensor<4xf16> -> tensor<4xf16>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.where' op result shape [4, 1, 64] does not match the broadcast shape [4, 8, 64]
func.func @where_result_shape(%c: tensor<8x1xi1>, %x: tensor<4x1x64xf16>, %y: tensor<64xf16>) {
  // expected-error @+1 {{result shape [4, 1, 64] does not match the broadcast shape [4, 8, 64]}}
  %0 = ktir.where %c, %x, %y : tensor<8x1xi1>, tensor<4x1x64xf16>, tensor<64xf16> -> tensor<4x1x64xf16>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.where' op result element type f32 must be f16 (the branches' element type)
func.func @where_result_type(%c: tensor<4xi1>, %x: tensor<4xf16>) {
  // expected-error @+1 {{result element type f32 must be f16 (the branches' element type)}}
  %0 = ktir.where %c, %x, %x : tensor<4xi1>, tensor<4xf16>, tensor<4xf16> -> tensor<4xf32>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.clamp' op clamp needs a min or a max bound
func.func @clamp_no_bound(%x: tensor<4x64xf16>) {
  // expected-error @+1 {{clamp needs a min or a max bound}}
  %0 = ktir.clamp %x : tensor<4x64xf16> -> tensor<4x64xf16>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.clamp' op ktir.clamp is not defined on i1 tensors
func.func @clamp_i1(%x: tensor<4xi1>) {
  // expected-error @+1 {{ktir.clamp is not defined on i1 tensors}}
  %0 = ktir.clamp %x {min = 0.0 : f64} : tensor<4xi1> -> tensor<4xi1>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.clamp' op result element type bf16 must be f16 (the input's)
func.func @clamp_result_type(%x: tensor<4xf16>) {
  // expected-error @+1 {{result element type bf16 must be f16 (the input's)}}
  %0 = "ktir.clamp"(%x) <{max = 1.0 : f64}> : (tensor<4xf16>) -> tensor<4xbf16>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.full' op result must have a static shape (graph-level ktir has no dynamic dims)
func.func @full_dynamic() {
  // expected-error @+1 {{result must have a static shape (graph-level ktir has no dynamic dims)}}
  %0 = ktir.full 0.0 : tensor<?xf16>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 4]]:8: error: 'ktir.full' op result 'result' at position 0 does not verify:
// CHECK-NEXT: f16 should be of base attribute tensor
func.func @full_not_tensor() {
  // expected-error @+1 {{result 'result' at position 0 does not verify:}}
  %0 = "ktir.full"() <{value = 0.0 : f64}> : () -> f16
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.full' op f16 should be of base attribute f64
func.func @full_value_f16() {
  // expected-error @+1 {{f16 should be of base attribute f64}}
  %0 = "ktir.full"() <{value = 1.0 : f16}> : () -> tensor<1xf16>
  func.return
}

// -----

// A decimal integer fills integer tensors only (exactly, even beyond 2**53); a float tensor
// takes a float literal or an f64 bit pattern in hex, as in MLIR.
// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.full' op an integer value fills integer tensors only, not f16 (add a trailing dot, e.g. 1.0, or write the f64 bit pattern in hex)
func.func @full_decimal_integer() {
  // expected-error @+1 {{an integer value fills integer tensors only, not f16}}
  %0 = ktir.full 1 : tensor<1xf16>
  func.return
}

// -----

// A hex value is a 64-bit f64 bit pattern.
// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:18: error: hexadecimal float constant out of range for f64
func.func @full_hex_range() {
  // expected-error @+1 {{hexadecimal float constant out of range for f64}}
  %0 = ktir.full 0x1FFF0000000000000 : tensor<1xf16>
  func.return
}

// -----

// CHECK: error: 'ktir.sub' op ktir.sub is not defined on i1 tensors (as in PyTorch)
func.func @sub_of_masks(%a: tensor<4xi1>, %b: tensor<4xi1>) {
  // expected-error @+1 {{ktir.sub is not defined on i1 tensors (as in PyTorch)}}
  %r = ktir.sub %a, %b : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  func.return
}

// -----

// Unsigned and odd-width integers have no meaning the executor (or PyTorch) shares.
// CHECK: error: 'ktir.gt' op lhs has element type ui8; graph-level ktir supports f16, bf16, f32, f64, f8E4M3FN and signless i1, i8, i16, i32, i64
func.func @unsigned(%a: tensor<2xui8>) {
  // expected-error @+1 {{lhs has element type ui8; graph-level ktir supports f16, bf16, f32, f64, f8E4M3FN and signless i1, i8, i16, i32, i64}}
  %r = ktir.gt %a, %a : tensor<2xui8>, tensor<2xui8> -> tensor<2xi1>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.cos' op ktir.cos needs a floating-point input, not i32
func.func @cos_int(%x: tensor<4xi32>) {
  // expected-error @+1 {{ktir.cos needs a floating-point input, not i32}}
  %0 = ktir.cos %x : tensor<4xi32> -> tensor<4xi32>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.sign' op ktir.sign is not defined on i1 tensors
func.func @sign_i1(%x: tensor<4xi1>) {
  // expected-error @+1 {{ktir.sign is not defined on i1 tensors}}
  %0 = ktir.sign %x : tensor<4xi1> -> tensor<4xi1>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.isnan' op ktir.isnan needs a floating-point input, not i32
func.func @isnan_int(%x: tensor<4xi32>) {
  // expected-error @+1 {{ktir.isnan needs a floating-point input, not i32}}
  %0 = ktir.isnan %x : tensor<4xi32> -> tensor<4xi1>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.isinf' op result element type f16 must be i1
func.func @isinf_result_type(%x: tensor<4xf16>) {
  // expected-error @+1 {{result element type f16 must be i1}}
  %0 = ktir.isinf %x : tensor<4xf16> -> tensor<4xf16>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.isfinite' op result shape [8] does not match the input shape [4]
func.func @isfinite_shape(%x: tensor<4xf16>) {
  // expected-error @+1 {{result shape [8] does not match the input shape [4]}}
  %0 = ktir.isfinite %x : tensor<4xf16> -> tensor<8xi1>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.powf' op ktir.powf needs floating-point operands, not i32
func.func @powf_int(%x: tensor<4xi32>) {
  // expected-error @+1 {{ktir.powf needs floating-point operands, not i32}}
  %0 = ktir.powf %x, %x : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.ceil' op ktir.ceil is not defined on i1 tensors
func.func @ceil_i1(%x: tensor<4xi1>) {
  // expected-error @+1 {{ktir.ceil is not defined on i1 tensors}}
  %0 = ktir.ceil %x : tensor<4xi1> -> tensor<4xi1>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.log1p' op ktir.log1p needs a floating-point input, not i64
func.func @log1p_int(%x: tensor<4xi64>) {
  // expected-error @+1 {{ktir.log1p needs a floating-point input, not i64}}
  %0 = ktir.log1p %x : tensor<4xi64> -> tensor<4xi64>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.sin' op result shape [8] does not match the input shape [4]
func.func @sin_shape(%x: tensor<4xf32>) {
  // expected-error @+1 {{result shape [8] does not match the input shape [4]}}
  %0 = "ktir.sin"(%x) : (tensor<4xf32>) -> tensor<8xf32>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.floordiv' op ktir.floordiv needs integer operands, not f16
func.func @floordiv_float(%x: tensor<4xf16>) {
  // expected-error @+1 {{ktir.floordiv needs integer operands, not f16}}
  %0 = ktir.floordiv %x, %x : tensor<4xf16>, tensor<4xf16> -> tensor<4xf16>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.erf' op ktir.erf needs a floating-point input, not i32
func.func @erf_int(%x: tensor<4xi32>) {
  // expected-error @+1 {{ktir.erf needs a floating-point input, not i32}}
  %0 = ktir.erf %x : tensor<4xi32> -> tensor<4xi32>
  func.return
}

// -----

// CHECK: elementwise_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktir.expm1' op result shape [8] does not match the input shape [4]
func.func @expm1_shape(%x: tensor<4xf32>) {
  // expected-error @+1 {{result shape [8] does not match the input shape [4]}}
  %0 = "ktir.expm1"(%x) : (tensor<4xf32>) -> tensor<8xf32>
  func.return
}
