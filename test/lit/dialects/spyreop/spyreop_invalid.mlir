// RUN: ktir-opt %s --split-input-file --verify-diagnostics
// RUN: not ktir-opt %s --split-input-file 2>&1 | filecheck %s

// Invalid `spyreop` ops (dialects/spyreop): each message checked by --verify-diagnostics and,
// with its location, by FileCheck.

// CHECK: spyreop_invalid.mlir:[[# @LINE + 3]]:8: error: 'spyreop.exp' op operand #0 must be f16, !spyreop.df16 or f32, but got 'i32'
func.func @exp_integer(%x: i32) {
  // expected-error @+1 {{operand #0 must be f16, !spyreop.df16 or f32, but got 'i32'}}
  %e = spyreop.exp %x : i32
  return
}

// -----

// gelu has no f32 form upstream.
// CHECK: spyreop_invalid.mlir:[[# @LINE + 3]]:8: error: 'spyreop.gelu' op operand #0 must be f16 or !spyreop.df16, but got 'f32'
func.func @gelu_f32(%x: f32) {
  // expected-error @+1 {{operand #0 must be f16 or !spyreop.df16, but got 'f32'}}
  %g = spyreop.gelu %x : f32
  return
}

// -----

// CHECK: spyreop_invalid.mlir:[[# @LINE + 3]]:8: error: 'spyreop.exx2_fused' op result must be !spyreop.fp32_fused for a f32 operand
func.func @exx2_fused_pair(%x: f32) {
  // expected-error @+1 {{result must be !spyreop.fp32_fused for a f32 operand}}
  %p = spyreop.exx2_fused %x : f32 -> !spyreop.fp16_fused
  return
}

// -----

// CHECK: spyreop_invalid.mlir:[[# @LINE + 3]]:8: error: 'spyreop.layernormscale_fused' op operand #0 must be a fused pair type, but got 'f16'
func.func @scale_fused_scalar(%x: f16) {
  // expected-error @+1 {{operand #0 must be a fused pair type, but got 'f16'}}
  %s = spyreop.layernormscale_fused %x : f16 -> f16
  return
}

// -----

// CHECK: spyreop_invalid.mlir:[[# @LINE + 3]]:8: error: 'spyreop.layernormscale_fused' op result must be !spyreop.df16 for a !spyreop.df16_fused operand
func.func @scale_fused_result(%p: !spyreop.df16_fused) {
  // expected-error @+1 {{result must be !spyreop.df16 for a !spyreop.df16_fused operand}}
  %s = spyreop.layernormscale_fused %p : !spyreop.df16_fused -> f16
  return
}

// -----

// CHECK: spyreop_invalid.mlir:[[# @LINE + 3]]:8: error: 'spyreop.softplus' op attribute 'beta' must be non-zero
func.func @softplus_beta(%x: f16) {
  // expected-error @+1 {{attribute 'beta' must be non-zero}}
  %s = spyreop.softplus %x beta 0.0 threshold 20.0 : f16
  return
}

// -----

// CHECK: spyreop_invalid.mlir:[[# @LINE + 3]]:8: error: 'spyreop.addi32toi32' op operand #0 must be i32, but got 'i64'
func.func @add_width(%a: i64, %b: i64) {
  // expected-error @+1 {{operand #0 must be i32, but got 'i64'}}
  %s = "spyreop.addi32toi32"(%a, %b) : (i64, i64) -> i32
  return
}

// -----

// CHECK: spyreop_invalid.mlir:[[# @LINE + 3]]:8: error: 'spyreop.realdiv' op operand #0 must be f16, !spyreop.df16 or f32, but got 'index'
func.func @realdiv_index(%a: index) {
  // expected-error @+1 {{operand #0 must be f16, !spyreop.df16 or f32, but got 'index'}}
  %q = spyreop.realdiv %a, %a : index
  return
}

// -----

// CHECK: spyreop_invalid.mlir:[[# @LINE + 3]]:8: error: 'spyreop.slice_reduction' op requires the same type for all operands and results, but got tensor<64xf16> and tensor<32xf32>
func.func @slice_reduction_type(%v: tensor<64xf16>) {
  // expected-error @+1 {{requires the same type for all operands and results, but got tensor<64xf16> and tensor<32xf32>}}
  %r = spyreop.slice_reduction %v {reduction_kind = #spyreop.reduction_kind<max>, reduction_scope = #spyreop.reduction_scope<across_slice>} : tensor<64xf16> -> tensor<32xf32>
  return
}

// -----

// CHECK: spyreop_invalid.mlir:[[# @LINE + 3]]:77: error: Expected `add`, `sub`, `max`, `min`, `mul`, or `abs_max`.
func.func @slice_reduction_kind(%v: tensor<64xf16>) {
  // expected-error @+1 {{Expected `add`, `sub`, `max`, `min`, `mul`, or `abs_max`.}}
  %r = spyreop.slice_reduction %v {reduction_kind = #spyreop.reduction_kind<sum>, reduction_scope = #spyreop.reduction_scope<in_slice>} : tensor<64xf16> -> tensor<64xf16>
  return
}
