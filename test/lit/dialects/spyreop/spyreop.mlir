// RUN: KTIR_ROUNDTRIP
// RUN: KTIR_GENERIC_ROUNDTRIP

// The `spyreop` intrinsics (dialects/spyreop) in upstream KTIR's syntax, custom and generic
// (mlir-interop/spyreop.mlir: the generic form parses with upstream MLIR).

// CHECK-LABEL: func.func @float_intrinsics
// CHECK-NEXT:    %e = spyreop.exp %d : !spyreop.df16
// CHECK-NEXT:    %g = spyreop.gelu %h : f16
// CHECK-NEXT:    %r = spyreop.reciprocal %f : f32
// CHECK-NEXT:    %q = spyreop.rsqrt %d : !spyreop.df16
// CHECK-NEXT:    %s = spyreop.sigmoid %h : f16
// CHECK-NEXT:    %u = spyreop.silu %f : f32
// CHECK-NEXT:    %t = spyreop.sqrt %d : !spyreop.df16
// CHECK-NEXT:    %v = spyreop.realdiv %f, %r : f32
// CHECK-NEXT:    %p = spyreop.softplus %h beta 5.000000e-01 threshold 2.000000e+01 : f16
// CHECK-GENERIC: %e = "spyreop.exp"(%d) : (!spyreop.df16) -> !spyreop.df16
// CHECK-GENERIC: %v = "spyreop.realdiv"(%f, %r) : (f32, f32) -> f32
// CHECK-GENERIC: %p = "spyreop.softplus"(%h) <{beta = 5.000000e-01 : f32, threshold = 2.000000e+01 : f32}> : (f16) -> f16
func.func @float_intrinsics(%h: f16, %d: !spyreop.df16, %f: f32) {
  %e = spyreop.exp %d : !spyreop.df16
  %g = spyreop.gelu %h : f16
  %r = spyreop.reciprocal %f : f32
  %q = spyreop.rsqrt %d : !spyreop.df16
  %s = spyreop.sigmoid %h : f16
  %u = spyreop.silu %f : f32
  %t = spyreop.sqrt %d : !spyreop.df16
  %v = spyreop.realdiv %f, %r : f32
  %p = spyreop.softplus %h beta 0.5 threshold 20.0 : f16
  return
}

// -----

// A comparison is 1.0 or 0.0 of its operands' type; select picks by a non-zero condition.
// CHECK-LABEL: func.func @compare_select
// CHECK-NEXT:    %c = spyreop.compare <lesserequal> %a, %b : !spyreop.df16
// CHECK-NEXT:    %m = spyreop.select %c, %a, %b : !spyreop.df16
// CHECK-NEXT:    %n = spyreop.compare <notequal> %a, %m : !spyreop.df16
// CHECK-GENERIC: %c = "spyreop.compare"(%a, %b) <{predicate = #spyreop.predicate<lesserequal>}> : (!spyreop.df16, !spyreop.df16) -> !spyreop.df16
func.func @compare_select(%a: !spyreop.df16, %b: !spyreop.df16) -> !spyreop.df16 {
  %c = spyreop.compare <lesserequal> %a, %b : !spyreop.df16
  %m = spyreop.select %c, %a, %b : !spyreop.df16
  %n = spyreop.compare <notequal> %a, %m : !spyreop.df16
  return %n : !spyreop.df16
}

// -----

// The LayerNorm parts, apart and through a fused pair.
// CHECK-LABEL: func.func @layer_norm_parts
// CHECK-NEXT:    %mean, %squares = spyreop.exx2 %x : f32
// CHECK-NEXT:    %scale = spyreop.layernormscale %mean squares %squares : f32
// CHECK-NEXT:    %y = spyreop.layernormnorm %x squares %squares scale %scale weight %w bias %b : f32
// CHECK-NEXT:    %pair = spyreop.exx2_fused %x : f32 -> !spyreop.fp32_fused
// CHECK-NEXT:    %scale2 = spyreop.layernormscale_fused %pair : !spyreop.fp32_fused -> f32
// CHECK-GENERIC: %mean, %squares = "spyreop.exx2"(%x) : (f32) -> (f32, f32)
// CHECK-GENERIC: %pair = "spyreop.exx2_fused"(%x) : (f32) -> !spyreop.fp32_fused
func.func @layer_norm_parts(%x: f32, %w: f32, %b: f32) -> f32 {
  %mean, %squares = spyreop.exx2 %x : f32
  %scale = spyreop.layernormscale %mean squares %squares : f32
  %y = spyreop.layernormnorm %x squares %squares scale %scale weight %w bias %b : f32
  %pair = spyreop.exx2_fused %x : f32 -> !spyreop.fp32_fused
  %scale2 = spyreop.layernormscale_fused %pair : !spyreop.fp32_fused -> f32
  return %scale2 : f32
}

// -----

// Integer and address arithmetic take no type: it is in the op's name.
// CHECK-LABEL: func.func @integers
// CHECK-NEXT:    %s = spyreop.addi32toi32 %i, %j
// CHECK-NEXT:    %p = spyreop.muli32toi32 %s, %j
// CHECK-NEXT:    %a = spyreop.idx32toaddr %i base %p stride %j
// CHECK-NEXT:    %w = spyreop.addi64toi64 %k, %k
// CHECK-GENERIC: %a = "spyreop.idx32toaddr"(%i, %p, %j) : (i32, i32, i32) -> i32
func.func @integers(%i: i32, %j: i32, %k: i64) -> i32 {
  %s = spyreop.addi32toi32 %i, %j
  %p = spyreop.muli32toi32 %s, %j
  %a = spyreop.idx32toaddr %i base %p stride %j
  %w = spyreop.addi64toi64 %k, %k
  return %a : i32
}

// -----

// CHECK-LABEL: func.func @slice_reductions
// CHECK-NEXT:    %r = spyreop.slice_reduction %v {reduction_kind = #spyreop.reduction_kind<abs_max>, reduction_scope = #spyreop.reduction_scope<in_slice>} : tensor<64xf16> -> tensor<64xf16>
// CHECK-NEXT:    %s = spyreop.slice_reduction %r {reduction_kind = #spyreop.reduction_kind<add>, reduction_scope = #spyreop.reduction_scope<across_slice>} : tensor<64xf16> -> tensor<64xf16>
// CHECK-GENERIC: "spyreop.slice_reduction"(%v) <{reduction_kind = #spyreop.reduction_kind<abs_max>, reduction_scope = #spyreop.reduction_scope<in_slice>}>
func.func @slice_reductions(%v: tensor<64xf16>) -> tensor<64xf16> {
  %r = spyreop.slice_reduction %v {reduction_kind = #spyreop.reduction_kind<abs_max>, reduction_scope = #spyreop.reduction_scope<in_slice>} : tensor<64xf16> -> tensor<64xf16>
  %s = spyreop.slice_reduction %r {reduction_kind = #spyreop.reduction_kind<add>, reduction_scope = #spyreop.reduction_scope<across_slice>} : tensor<64xf16> -> tensor<64xf16>
  return %s : tensor<64xf16>
}

// -----

// As producers write them: inside a linalg.generic body.
// CHECK-LABEL: func.func @in_a_body
// CHECK:         ^bb0(%in: f16, %out: f16):
// CHECK-NEXT:      %e = spyreop.exp %in : f16
// CHECK-NEXT:      linalg.yield %e : f16
#id = affine_map<(d0) -> (d0)>
func.func @in_a_body(%x: tensor<64xf16>) -> tensor<64xf16> {
  %init = tensor.empty() : tensor<64xf16>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<64xf16>) outs(%init : tensor<64xf16>) {
  ^bb0(%in: f16, %out: f16):
    %e = spyreop.exp %in : f16
    linalg.yield %e : f16
  } -> tensor<64xf16>
  return %r : tensor<64xf16>
}
