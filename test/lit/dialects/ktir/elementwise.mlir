// RUN: KTIR_ROUNDTRIP
// RUN: KTIR_GENERIC_ROUNDTRIP

// Round trips of the graph-level elementwise ops (dialects/ktir/elementwise.py).

// Unary ops keep the input type: one type in the custom form. abs, neg, relu, floor and square
// also take integer tensors; a rank-0 tensor is a valid operand.
// CHECK-LABEL: func.func @unary
// CHECK-NEXT:    %abs = ktir.abs %x : tensor<4x64xf16> -> tensor<4x64xf16>
// CHECK-NEXT:    %neg = ktir.neg %i : tensor<8xi32> -> tensor<8xi32>
// CHECK-NEXT:    %exp = ktir.exp %x : tensor<4x64xf16> -> tensor<4x64xf16>
// CHECK-NEXT:    %log = ktir.log %x : tensor<4x64xf16> -> tensor<4x64xf16>
// CHECK-NEXT:    %sqrt = ktir.sqrt %x : tensor<4x64xf16> -> tensor<4x64xf16>
// CHECK-NEXT:    %rsqrt = ktir.rsqrt %b : tensor<4x64xbf16> -> tensor<4x64xbf16>
// CHECK-NEXT:    %reciprocal = ktir.reciprocal %s : tensor<f32> -> tensor<f32>
// CHECK-NEXT:    %sigmoid = ktir.sigmoid %x : tensor<4x64xf16> -> tensor<4x64xf16>
// CHECK-NEXT:    %tanh = ktir.tanh %x : tensor<4x64xf16> -> tensor<4x64xf16>
// CHECK-NEXT:    %relu = ktir.relu %i : tensor<8xi32> -> tensor<8xi32>
// CHECK-NEXT:    %gelu = ktir.gelu %x : tensor<4x64xf16> -> tensor<4x64xf16>
// CHECK-NEXT:    %gelu_tanh = ktir.gelu %x {approximate = "tanh"} : tensor<4x64xf16> -> tensor<4x64xf16>
// CHECK-NEXT:    %gelu_none = ktir.gelu %x {approximate = "none"} : tensor<4x64xf16> -> tensor<4x64xf16>
// CHECK-NEXT:    %silu = ktir.silu %x : tensor<4x64xf16> -> tensor<4x64xf16>
// CHECK-NEXT:    %softplus = ktir.softplus %x : tensor<4x64xf16> -> tensor<4x64xf16>
// CHECK-NEXT:    %softplus_beta = ktir.softplus %x {beta = 2.000000e+00 : f64, threshold = 1.000000e+01 : f64} : tensor<4x64xf16> -> tensor<4x64xf16>
// CHECK-NEXT:    %floor = ktir.floor %x : tensor<4x64xf16> -> tensor<4x64xf16>
// CHECK-NEXT:    %floor_int = ktir.floor %i : tensor<8xi32> -> tensor<8xi32>
// CHECK-NEXT:    %square = ktir.square %i : tensor<8xi32> -> tensor<8xi32>
// CHECK-NEXT:    %square_scalar = ktir.square %s : tensor<f32> -> tensor<f32>
// CHECK-NEXT:    func.return
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "unary"
// CHECK-GENERIC:         %abs = "ktir.abs"(%x) : (tensor<4x64xf16>) -> tensor<4x64xf16>
// CHECK-GENERIC:         %reciprocal = "ktir.reciprocal"(%s) : (tensor<f32>) -> tensor<f32>
// CHECK-GENERIC:         %gelu_tanh = "ktir.gelu"(%x) <{approximate = "tanh"}> : (tensor<4x64xf16>) -> tensor<4x64xf16>
// CHECK-GENERIC:         %softplus_beta = "ktir.softplus"(%x) <{beta = 2.000000e+00 : f64, threshold = 1.000000e+01 : f64}> : (tensor<4x64xf16>) -> tensor<4x64xf16>
func.func @unary(%x: tensor<4x64xf16>, %b: tensor<4x64xbf16>, %i: tensor<8xi32>, %s: tensor<f32>) {
  %abs = ktir.abs %x : tensor<4x64xf16> -> tensor<4x64xf16>
  %neg = ktir.neg %i : tensor<8xi32> -> tensor<8xi32>
  %exp = ktir.exp %x : tensor<4x64xf16> -> tensor<4x64xf16>
  %log = ktir.log %x : tensor<4x64xf16> -> tensor<4x64xf16>
  %sqrt = ktir.sqrt %x : tensor<4x64xf16> -> tensor<4x64xf16>
  %rsqrt = ktir.rsqrt %b : tensor<4x64xbf16> -> tensor<4x64xbf16>
  %reciprocal = ktir.reciprocal %s : tensor<f32> -> tensor<f32>
  %sigmoid = ktir.sigmoid %x : tensor<4x64xf16> -> tensor<4x64xf16>
  %tanh = ktir.tanh %x : tensor<4x64xf16> -> tensor<4x64xf16>
  %relu = ktir.relu %i : tensor<8xi32> -> tensor<8xi32>
  %gelu = ktir.gelu %x : tensor<4x64xf16> -> tensor<4x64xf16>
  %gelu_tanh = ktir.gelu %x {approximate = "tanh"} : tensor<4x64xf16> -> tensor<4x64xf16>
  %gelu_none = ktir.gelu %x {approximate = "none"} : tensor<4x64xf16> -> tensor<4x64xf16>
  %silu = ktir.silu %x : tensor<4x64xf16> -> tensor<4x64xf16>
  %softplus = ktir.softplus %x : tensor<4x64xf16> -> tensor<4x64xf16>
  %softplus_beta = ktir.softplus %x {beta = 2.0 : f64, threshold = 10.0 : f64} : tensor<4x64xf16> -> tensor<4x64xf16>
  %floor = ktir.floor %x : tensor<4x64xf16> -> tensor<4x64xf16>
  %floor_int = ktir.floor %i : tensor<8xi32> -> tensor<8xi32>
  %square = ktir.square %i : tensor<8xi32> -> tensor<8xi32>
  %square_scalar = ktir.square %s : tensor<f32> -> tensor<f32>
  func.return
}

// -----

// logical_not gives i1 from any element type; convert changes only the element type.
// CHECK-LABEL: func.func @not_and_convert
// CHECK-NEXT:    %not_mask = ktir.logical_not %m : tensor<4x64xi1> -> tensor<4x64xi1>
// CHECK-NEXT:    %not_float = ktir.logical_not %x : tensor<4x64xf16> -> tensor<4x64xi1>
// CHECK-NEXT:    %up = ktir.convert %x : tensor<4x64xf16> -> tensor<4x64xf32>
// CHECK-NEXT:    %to_int = ktir.convert %x : tensor<4x64xf16> -> tensor<4x64xi64>
// CHECK-NEXT:    %to_mask = ktir.convert %x : tensor<4x64xf16> -> tensor<4x64xi1>
// CHECK-NEXT:    %same = ktir.convert %s : tensor<f16> -> tensor<f16>
// CHECK-NEXT:    func.return
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "not_and_convert"
// CHECK-GENERIC:         %not_float = "ktir.logical_not"(%x) : (tensor<4x64xf16>) -> tensor<4x64xi1>
// CHECK-GENERIC:         %up = "ktir.convert"(%x) : (tensor<4x64xf16>) -> tensor<4x64xf32>
func.func @not_and_convert(%x: tensor<4x64xf16>, %m: tensor<4x64xi1>, %s: tensor<f16>) {
  %not_mask = ktir.logical_not %m : tensor<4x64xi1> -> tensor<4x64xi1>
  %not_float = ktir.logical_not %x : tensor<4x64xf16> -> tensor<4x64xi1>
  %up = ktir.convert %x : tensor<4x64xf16> -> tensor<4x64xf32>
  %to_int = ktir.convert %x : tensor<4x64xf16> -> tensor<4x64xi64>
  %to_mask = ktir.convert %x : tensor<4x64xf16> -> tensor<4x64xi1>
  %same = ktir.convert %s : tensor<f16> -> tensor<f16>
  func.return
}

// -----

// Arithmetic binary ops broadcast NumPy-style: (4, 1, 64) with (8, 1) is (4, 8, 64); a rank-0
// operand broadcasts against anything; a size-1 `ktir.full` is how scalars appear.
// CHECK-LABEL: func.func @arithmetic
// CHECK-NEXT:    %add = ktir.add %x, %y : tensor<4x1x64xf16>, tensor<8x1xf16> -> tensor<4x8x64xf16>
// CHECK-NEXT:    %sub = ktir.sub %y, %x : tensor<8x1xf16>, tensor<4x1x64xf16> -> tensor<4x8x64xf16>
// CHECK-NEXT:    %mul = ktir.mul %x, %s : tensor<4x1x64xf16>, tensor<f16> -> tensor<4x1x64xf16>
// CHECK-NEXT:    %div = ktir.div %x, %one : tensor<4x1x64xf16>, tensor<1xf16> -> tensor<4x1x64xf16>
// CHECK-NEXT:    %maximum = ktir.maximum %i, %j : tensor<3x1xi32>, tensor<1x5xi32> -> tensor<3x5xi32>
// CHECK-NEXT:    %minimum = ktir.minimum %s, %s : tensor<f16>, tensor<f16> -> tensor<f16>
// CHECK-NEXT:    %add_int = ktir.add %i, %i : tensor<3x1xi32>, tensor<3x1xi32> -> tensor<3x1xi32>
// CHECK-NEXT:    func.return
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "arithmetic"
// CHECK-GENERIC:         %add = "ktir.add"(%x, %y) : (tensor<4x1x64xf16>, tensor<8x1xf16>) -> tensor<4x8x64xf16>
// CHECK-GENERIC:         %minimum = "ktir.minimum"(%s, %s) : (tensor<f16>, tensor<f16>) -> tensor<f16>
func.func @arithmetic(%x: tensor<4x1x64xf16>, %y: tensor<8x1xf16>, %s: tensor<f16>, %one: tensor<1xf16>,
                      %i: tensor<3x1xi32>, %j: tensor<1x5xi32>) {
  %add = ktir.add %x, %y : tensor<4x1x64xf16>, tensor<8x1xf16> -> tensor<4x8x64xf16>
  %sub = ktir.sub %y, %x : tensor<8x1xf16>, tensor<4x1x64xf16> -> tensor<4x8x64xf16>
  %mul = ktir.mul %x, %s : tensor<4x1x64xf16>, tensor<f16> -> tensor<4x1x64xf16>
  %div = ktir.div %x, %one : tensor<4x1x64xf16>, tensor<1xf16> -> tensor<4x1x64xf16>
  %maximum = ktir.maximum %i, %j : tensor<3x1xi32>, tensor<1x5xi32> -> tensor<3x5xi32>
  %minimum = ktir.minimum %s, %s : tensor<f16>, tensor<f16> -> tensor<f16>
  %add_int = ktir.add %i, %i : tensor<3x1xi32>, tensor<3x1xi32> -> tensor<3x1xi32>
  func.return
}

// -----

// Comparisons and logical_and broadcast too and give i1.
// CHECK-LABEL: func.func @comparisons
// CHECK-NEXT:    %eq = ktir.eq %x, %y : tensor<4x1x64xf16>, tensor<8x1xf16> -> tensor<4x8x64xi1>
// CHECK-NEXT:    %ne = ktir.ne %x, %s : tensor<4x1x64xf16>, tensor<f16> -> tensor<4x1x64xi1>
// CHECK-NEXT:    %lt = ktir.lt %i, %i : tensor<16xi64>, tensor<16xi64> -> tensor<16xi1>
// CHECK-NEXT:    %le = ktir.le %s, %s : tensor<f16>, tensor<f16> -> tensor<i1>
// CHECK-NEXT:    %gt = ktir.gt %y, %x : tensor<8x1xf16>, tensor<4x1x64xf16> -> tensor<4x8x64xi1>
// CHECK-NEXT:    %ge = ktir.ge %x, %x : tensor<4x1x64xf16>, tensor<4x1x64xf16> -> tensor<4x1x64xi1>
// CHECK-NEXT:    %and = ktir.logical_and %eq, %gt : tensor<4x8x64xi1>, tensor<4x8x64xi1> -> tensor<4x8x64xi1>
// CHECK-NEXT:    %and_float = ktir.logical_and %x, %y : tensor<4x1x64xf16>, tensor<8x1xf16> -> tensor<4x8x64xi1>
// CHECK-NEXT:    func.return
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "comparisons"
// CHECK-GENERIC:         %eq = "ktir.eq"(%x, %y) : (tensor<4x1x64xf16>, tensor<8x1xf16>) -> tensor<4x8x64xi1>
// CHECK-GENERIC:         %and = "ktir.logical_and"(%eq, %gt) : (tensor<4x8x64xi1>, tensor<4x8x64xi1>) -> tensor<4x8x64xi1>
func.func @comparisons(%x: tensor<4x1x64xf16>, %y: tensor<8x1xf16>, %s: tensor<f16>, %i: tensor<16xi64>) {
  %eq = ktir.eq %x, %y : tensor<4x1x64xf16>, tensor<8x1xf16> -> tensor<4x8x64xi1>
  %ne = ktir.ne %x, %s : tensor<4x1x64xf16>, tensor<f16> -> tensor<4x1x64xi1>
  %lt = ktir.lt %i, %i : tensor<16xi64>, tensor<16xi64> -> tensor<16xi1>
  %le = ktir.le %s, %s : tensor<f16>, tensor<f16> -> tensor<i1>
  %gt = ktir.gt %y, %x : tensor<8x1xf16>, tensor<4x1x64xf16> -> tensor<4x8x64xi1>
  %ge = ktir.ge %x, %x : tensor<4x1x64xf16>, tensor<4x1x64xf16> -> tensor<4x1x64xi1>
  %and = ktir.logical_and %eq, %gt : tensor<4x8x64xi1>, tensor<4x8x64xi1> -> tensor<4x8x64xi1>
  %and_float = ktir.logical_and %x, %y : tensor<4x1x64xf16>, tensor<8x1xf16> -> tensor<4x8x64xi1>
  func.return
}

// -----

// pow has a constant f64 exponent; where broadcasts all three operands; clamp takes either
// bound or both (printed as lossless f64).
// CHECK-LABEL: func.func @pow_where_clamp
// CHECK-NEXT:    %pow = ktir.pow %x {exponent = 2.000000e+00 : f64} : tensor<4x1x64xf16> -> tensor<4x1x64xf16>
// CHECK-NEXT:    %pow_half = ktir.pow %s {exponent = 5.000000e-01 : f64} : tensor<f32> -> tensor<f32>
// CHECK-NEXT:    %where = ktir.where %m, %x, %y : tensor<8x1xi1>, tensor<4x1x64xf16>, tensor<64xf16> -> tensor<4x8x64xf16>
// CHECK-NEXT:    %where_scalar = ktir.where %c, %s, %s : tensor<i1>, tensor<f32>, tensor<f32> -> tensor<f32>
// CHECK-NEXT:    %clamp = ktir.clamp %x {min = -1.000000e+00 : f64, max = 1.000000e+00 : f64} : tensor<4x1x64xf16> -> tensor<4x1x64xf16>
// CHECK-NEXT:    %clamp_min = ktir.clamp %x {min = 0.000000e+00 : f64} : tensor<4x1x64xf16> -> tensor<4x1x64xf16>
// CHECK-NEXT:    %clamp_max = ktir.clamp %i {max = 6.000000e+00 : f64} : tensor<16xi64> -> tensor<16xi64>
// CHECK-NEXT:    %clamp_exact = ktir.clamp %s {min = 0.123456789 : f64} : tensor<f32> -> tensor<f32>
// CHECK-NEXT:    func.return
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "pow_where_clamp"
// CHECK-GENERIC:         %pow = "ktir.pow"(%x) <{exponent = 2.000000e+00 : f64}> : (tensor<4x1x64xf16>) -> tensor<4x1x64xf16>
// CHECK-GENERIC:         %where = "ktir.where"(%m, %x, %y) : (tensor<8x1xi1>, tensor<4x1x64xf16>, tensor<64xf16>) -> tensor<4x8x64xf16>
// CHECK-GENERIC:         %clamp = "ktir.clamp"(%x) <{min = -1.000000e+00 : f64, max = 1.000000e+00 : f64}> : (tensor<4x1x64xf16>) -> tensor<4x1x64xf16>
// CHECK-GENERIC:         %clamp_max = "ktir.clamp"(%i) <{max = 6.000000e+00 : f64}> : (tensor<16xi64>) -> tensor<16xi64>
func.func @pow_where_clamp(%x: tensor<4x1x64xf16>, %y: tensor<64xf16>, %m: tensor<8x1xi1>, %c: tensor<i1>,
                           %s: tensor<f32>, %i: tensor<16xi64>) {
  %pow = ktir.pow %x {exponent = 2.0 : f64} : tensor<4x1x64xf16> -> tensor<4x1x64xf16>
  %pow_half = ktir.pow %s {exponent = 0.5 : f64} : tensor<f32> -> tensor<f32>
  %where = ktir.where %m, %x, %y : tensor<8x1xi1>, tensor<4x1x64xf16>, tensor<64xf16> -> tensor<4x8x64xf16>
  %where_scalar = ktir.where %c, %s, %s : tensor<i1>, tensor<f32>, tensor<f32> -> tensor<f32>
  %clamp = ktir.clamp %x {min = -1.0 : f64, max = 1.0 : f64} : tensor<4x1x64xf16> -> tensor<4x1x64xf16>
  %clamp_min = ktir.clamp %x {min = 0.0 : f64} : tensor<4x1x64xf16> -> tensor<4x1x64xf16>
  %clamp_max = ktir.clamp %i {max = 6.0 : f64} : tensor<16xi64> -> tensor<16xi64>
  %clamp_exact = ktir.clamp %s {min = 0.123456789 : f64} : tensor<f32> -> tensor<f32>
  func.return
}

// -----

// full: the value is an f64 printed losslessly; infinities and NaN are f64 bit patterns in
// hex (lower case when printed); negative values and -0.0 keep their sign.
// CHECK-LABEL: func.func @full
// CHECK-NEXT:    %scalar = ktir.full 1.250000e-01 : tensor<1xf16>
// CHECK-NEXT:    %neg_inf = ktir.full 0xfff0000000000000 : tensor<16x16xf16>
// CHECK-NEXT:    %inf = ktir.full 0x7ff0000000000000 : tensor<1xf32>
// CHECK-NEXT:    %nan = ktir.full 0x7ff8000000000000 : tensor<1xf32>
// CHECK-NEXT:    %negative = ktir.full -3.500000e+00 : tensor<2x3xf32>
// CHECK-NEXT:    %neg_zero = ktir.full -0.000000e+00 : tensor<1xf16>
// CHECK-NEXT:    %tenth = ktir.full 1.000000e-01 : tensor<1xbf16>
// CHECK-NEXT:    %third = ktir.full 0.33333333333333331 : tensor<1xf32>
// CHECK-NEXT:    %rank0 = ktir.full 1.000000e+00 : tensor<i1>
// CHECK-NEXT:    %ints = ktir.full 7.000000e+00 {tag} : tensor<4xi64>
// CHECK-NEXT:    func.return
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "full"
// CHECK-GENERIC:         %scalar = "ktir.full"() <{value = 1.250000e-01 : f64}> : () -> tensor<1xf16>
// CHECK-GENERIC:         %neg_inf = "ktir.full"() <{value = 0xfff0000000000000 : f64}> : () -> tensor<16x16xf16>
// CHECK-GENERIC:         %negative = "ktir.full"() <{value = -3.500000e+00 : f64}> : () -> tensor<2x3xf32>
// CHECK-GENERIC:         %ints = "ktir.full"() <{value = 7.000000e+00 : f64}> {tag} : () -> tensor<4xi64>
func.func @full() {
  %scalar = ktir.full 0.125 : tensor<1xf16>
  %neg_inf = ktir.full 0xFFF0000000000000 : tensor<16x16xf16>
  %inf = ktir.full 0x7FF0000000000000 : tensor<1xf32>
  %nan = ktir.full 0x7FF8000000000000 : tensor<1xf32>
  %negative = ktir.full -3.5 : tensor<2x3xf32>
  %neg_zero = ktir.full -0.0 : tensor<1xf16>
  %tenth = ktir.full 0.1 : tensor<1xbf16>
  %third = ktir.full 0.3333333333333333 : tensor<1xf32>
  %rank0 = ktir.full 1.0 : tensor<i1>
  %ints = ktir.full 7.0 {tag} : tensor<4xi64>
  func.return
}

// -----

// ceil and sign also take integer tensors; log1p, cos and sin are float-only; the float class
// tests give i1; powf broadcasts like the other binary ops (a size-1 scalar base below).
// CHECK-LABEL: func.func @more_unary
// CHECK-NEXT:    %ceil = ktir.ceil %x : tensor<4x64xf16> -> tensor<4x64xf16>
// CHECK-NEXT:    %ceil_int = ktir.ceil %i : tensor<8xi32> -> tensor<8xi32>
// CHECK-NEXT:    %sign = ktir.sign %i : tensor<8xi32> -> tensor<8xi32>
// CHECK-NEXT:    %log1p = ktir.log1p %x : tensor<4x64xf16> -> tensor<4x64xf16>
// CHECK-NEXT:    %cos = ktir.cos %f : tensor<4x64xf32> -> tensor<4x64xf32>
// CHECK-NEXT:    %sin = ktir.sin %f : tensor<4x64xf32> -> tensor<4x64xf32>
// CHECK-NEXT:    %inf = ktir.isinf %x : tensor<4x64xf16> -> tensor<4x64xi1>
// CHECK-NEXT:    %nan = ktir.isnan %x : tensor<4x64xf16> -> tensor<4x64xi1>
// CHECK-NEXT:    %finite = ktir.isfinite %x : tensor<4x64xf16> -> tensor<4x64xi1>
// CHECK-NEXT:    %powf = ktir.powf %x, %x : tensor<4x64xf16>, tensor<4x64xf16> -> tensor<4x64xf16>
// CHECK-NEXT:    %alibi = ktir.powf %base, %x : tensor<1xf16>, tensor<4x64xf16> -> tensor<4x64xf16>
// CHECK-NEXT:    func.return
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "more_unary"
// CHECK-GENERIC:         %cos = "ktir.cos"(%f) : (tensor<4x64xf32>) -> tensor<4x64xf32>
// CHECK-GENERIC:         %finite = "ktir.isfinite"(%x) : (tensor<4x64xf16>) -> tensor<4x64xi1>
// CHECK-GENERIC:         %alibi = "ktir.powf"(%base, %x) : (tensor<1xf16>, tensor<4x64xf16>) -> tensor<4x64xf16>
func.func @more_unary(%x: tensor<4x64xf16>, %f: tensor<4x64xf32>, %i: tensor<8xi32>, %base: tensor<1xf16>) {
  %ceil = ktir.ceil %x : tensor<4x64xf16> -> tensor<4x64xf16>
  %ceil_int = ktir.ceil %i : tensor<8xi32> -> tensor<8xi32>
  %sign = ktir.sign %i : tensor<8xi32> -> tensor<8xi32>
  %log1p = ktir.log1p %x : tensor<4x64xf16> -> tensor<4x64xf16>
  %cos = ktir.cos %f : tensor<4x64xf32> -> tensor<4x64xf32>
  %sin = ktir.sin %f : tensor<4x64xf32> -> tensor<4x64xf32>
  %inf = ktir.isinf %x : tensor<4x64xf16> -> tensor<4x64xi1>
  %nan = ktir.isnan %x : tensor<4x64xf16> -> tensor<4x64xi1>
  %finite = ktir.isfinite %x : tensor<4x64xf16> -> tensor<4x64xi1>
  %powf = ktir.powf %x, %x : tensor<4x64xf16>, tensor<4x64xf16> -> tensor<4x64xf16>
  %alibi = ktir.powf %base, %x : tensor<1xf16>, tensor<4x64xf16> -> tensor<4x64xf16>
  func.return
}

// -----

// floordiv is integer floor division with broadcasting.
// CHECK-LABEL: func.func @floordiv
// CHECK-NEXT:    %q = ktir.floordiv %i, %two : tensor<8xi64>, tensor<1xi64> -> tensor<8xi64>
func.func @floordiv(%i: tensor<8xi64>, %two: tensor<1xi64>) {
  %q = ktir.floordiv %i, %two : tensor<8xi64>, tensor<1xi64> -> tensor<8xi64>
  func.return
}

// -----

// CHECK-LABEL: func.func @erf_expm1
// CHECK-NEXT:    %erf = ktir.erf %x : tensor<4x64xf16> -> tensor<4x64xf16>
// CHECK-NEXT:    %expm1 = ktir.expm1 %x : tensor<4x64xf16> -> tensor<4x64xf16>
func.func @erf_expm1(%x: tensor<4x64xf16>) {
  %erf = ktir.erf %x : tensor<4x64xf16> -> tensor<4x64xf16>
  %expm1 = ktir.expm1 %x : tensor<4x64xf16> -> tensor<4x64xf16>
  func.return
}
