// RUN: KTIR_ROUNDTRIP
// RUN: KTIR_GENERIC_ROUNDTRIP

// Round trips of the graph-level structured ops (dialects/ktir/structured.py).

// matmul: 2D x 2D and 3D x 2D (shared weight). bmm: 3D x 3D, 4D x 4D and 3D x 2D.
// CHECK-LABEL: func.func @matmul
// CHECK-NEXT:    %mm = ktir.matmul %x, %w : tensor<16x64xf16>, tensor<64x128xf16> -> tensor<16x128xf16>
// CHECK-NEXT:    %linear = ktir.matmul %x3, %w : tensor<2x16x64xf16>, tensor<64x128xf16> -> tensor<2x16x128xf16>
// CHECK-NEXT:    %mm32 = ktir.matmul %f, %f : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
// CHECK-NEXT:    %bmm3 = ktir.bmm %x3, %y3 : tensor<2x16x64xf16>, tensor<2x64x32xf16> -> tensor<2x16x32xf16>
// CHECK-NEXT:    %bmm4 = ktir.bmm %q, %k : tensor<2x4x16x64xf16>, tensor<2x4x64x16xf16> -> tensor<2x4x16x16xf16>
// CHECK-NEXT:    %bmm32 = ktir.bmm %x3, %w : tensor<2x16x64xf16>, tensor<64x128xf16> -> tensor<2x16x128xf16>
// CHECK-NEXT:    func.return
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "matmul"
// CHECK-GENERIC:         %mm = "ktir.matmul"(%x, %w) : (tensor<16x64xf16>, tensor<64x128xf16>) -> tensor<16x128xf16>
// CHECK-GENERIC:         %bmm4 = "ktir.bmm"(%q, %k) : (tensor<2x4x16x64xf16>, tensor<2x4x64x16xf16>) -> tensor<2x4x16x16xf16>
func.func @matmul(%x: tensor<16x64xf16>, %x3: tensor<2x16x64xf16>, %w: tensor<64x128xf16>, %y3: tensor<2x64x32xf16>,
                  %q: tensor<2x4x16x64xf16>, %k: tensor<2x4x64x16xf16>, %f: tensor<8x8xf32>) {
  %mm = ktir.matmul %x, %w : tensor<16x64xf16>, tensor<64x128xf16> -> tensor<16x128xf16>
  %linear = ktir.matmul %x3, %w : tensor<2x16x64xf16>, tensor<64x128xf16> -> tensor<2x16x128xf16>
  %mm32 = ktir.matmul %f, %f : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  %bmm3 = ktir.bmm %x3, %y3 : tensor<2x16x64xf16>, tensor<2x64x32xf16> -> tensor<2x16x32xf16>
  %bmm4 = ktir.bmm %q, %k : tensor<2x4x16x64xf16>, tensor<2x4x64x16xf16> -> tensor<2x4x16x16xf16>
  %bmm32 = ktir.bmm %x3, %w : tensor<2x16x64xf16>, tensor<64x128xf16> -> tensor<2x16x128xf16>
  func.return
}

// -----

// Reductions over sorted, distinct dims, with and without keepdim; a full reduction gives a
// rank-0 tensor and a rank-0 input reduces over dim 0 (as in PyTorch).
// CHECK-LABEL: func.func @reductions
// CHECK-NEXT:    %sum = ktir.sum %x dims [0, 2] : tensor<2x4x64xf16> -> tensor<4xf16>
// CHECK-NEXT:    %sum_keep = ktir.sum %x dims [0, 2] keepdim : tensor<2x4x64xf16> -> tensor<1x4x1xf16>
// CHECK-NEXT:    %sum_all = ktir.sum %i dims [0] : tensor<16xi64> -> tensor<i64>
// CHECK-NEXT:    %max = ktir.max %x dims [2] : tensor<2x4x64xf16> -> tensor<2x4xf16>
// CHECK-NEXT:    %max_keep = ktir.max %i dims [0] keepdim : tensor<16xi64> -> tensor<1xi64>
// CHECK-NEXT:    %min = ktir.min %x dims [1] : tensor<2x4x64xf16> -> tensor<2x64xf16>
// CHECK-NEXT:    %min_keep = ktir.min %x dims [1, 2] keepdim : tensor<2x4x64xf16> -> tensor<2x1x1xf16>
// CHECK-NEXT:    %mean = ktir.mean %x dims [2] : tensor<2x4x64xf16> -> tensor<2x4xf16>
// CHECK-NEXT:    %mean_keep = ktir.mean %x dims [2] keepdim : tensor<2x4x64xf16> -> tensor<2x4x1xf16>
// CHECK-NEXT:    func.return
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "reductions"
// CHECK-GENERIC:         %sum = "ktir.sum"(%x) <{dims = array<i64: 0, 2>}> : (tensor<2x4x64xf16>) -> tensor<4xf16>
// CHECK-GENERIC:         %sum_keep = "ktir.sum"(%x) <{dims = array<i64: 0, 2>, keepdim}> : (tensor<2x4x64xf16>) -> tensor<1x4x1xf16>
// CHECK-GENERIC:         %max = "ktir.max"(%x) <{dims = array<i64: 2>}> : (tensor<2x4x64xf16>) -> tensor<2x4xf16>
// CHECK-GENERIC:         %min_keep = "ktir.min"(%x) <{dims = array<i64: 1, 2>, keepdim}> : (tensor<2x4x64xf16>) -> tensor<2x1x1xf16>
// CHECK-GENERIC:         %mean_keep = "ktir.mean"(%x) <{dims = array<i64: 2>, keepdim}> : (tensor<2x4x64xf16>) -> tensor<2x4x1xf16>
func.func @reductions(%x: tensor<2x4x64xf16>, %i: tensor<16xi64>) {
  %sum = ktir.sum %x dims [0, 2] : tensor<2x4x64xf16> -> tensor<4xf16>
  %sum_keep = ktir.sum %x dims [0, 2] keepdim : tensor<2x4x64xf16> -> tensor<1x4x1xf16>
  %sum_all = ktir.sum %i dims [0] : tensor<16xi64> -> tensor<i64>
  %max = ktir.max %x dims [2] : tensor<2x4x64xf16> -> tensor<2x4xf16>
  %max_keep = ktir.max %i dims [0] keepdim : tensor<16xi64> -> tensor<1xi64>
  %min = ktir.min %x dims [1] : tensor<2x4x64xf16> -> tensor<2x64xf16>
  %min_keep = ktir.min %x dims [1, 2] keepdim : tensor<2x4x64xf16> -> tensor<2x1x1xf16>
  %mean = ktir.mean %x dims [2] : tensor<2x4x64xf16> -> tensor<2x4xf16>
  %mean_keep = ktir.mean %x dims [2] keepdim : tensor<2x4x64xf16> -> tensor<2x4x1xf16>
  func.return
}

// -----

// attention: grouped (H = 2 key heads, G = 4 query heads each), with an i1 or additive mask,
// a causal limit, or neither. In the generic form the mask is the optional 4th operand.
// CHECK-LABEL: func.func @attention
// CHECK-NEXT:    %gqa = ktir.attention %q, %k, %v scale 1.250000e-01 : tensor<1x2x4x16x64xf16>, tensor<1x2x32x64xf16>, tensor<1x2x32x64xf16> -> tensor<1x2x4x16x64xf16>
// CHECK-NEXT:    %masked = ktir.attention %q, %k, %v mask %keep : tensor<1x1x1x16x32xi1> scale 1.250000e-01 : tensor<1x2x4x16x64xf16>, tensor<1x2x32x64xf16>, tensor<1x2x32x64xf16> -> tensor<1x2x4x16x64xf16>
// CHECK-NEXT:    %additive = ktir.attention %q, %k, %v mask %bias : tensor<16x32xf16> scale 1.250000e-01 : tensor<1x2x4x16x64xf16>, tensor<1x2x32x64xf16>, tensor<1x2x32x64xf16> -> tensor<1x2x4x16x64xf16>
// CHECK-NEXT:    %causal = ktir.attention %q, %k, %v scale 1.250000e-01 causal 16 : tensor<1x2x4x16x64xf16>, tensor<1x2x32x64xf16>, tensor<1x2x32x64xf16> -> tensor<1x2x4x16x64xf16>
// CHECK-NEXT:    func.return
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "attention"
// CHECK-GENERIC:         %gqa = "ktir.attention"(%q, %k, %v) <{scale = 1.250000e-01 : f64}> : (tensor<1x2x4x16x64xf16>, tensor<1x2x32x64xf16>, tensor<1x2x32x64xf16>) -> tensor<1x2x4x16x64xf16>
// CHECK-GENERIC:         %masked = "ktir.attention"(%q, %k, %v, %keep) <{scale = 1.250000e-01 : f64}>
// CHECK-GENERIC:         %causal = "ktir.attention"(%q, %k, %v) <{scale = 1.250000e-01 : f64, causal = 16 : i64}>
func.func @attention(%q: tensor<1x2x4x16x64xf16>, %k: tensor<1x2x32x64xf16>, %v: tensor<1x2x32x64xf16>,
                     %keep: tensor<1x1x1x16x32xi1>, %bias: tensor<16x32xf16>) {
  %gqa = ktir.attention %q, %k, %v scale 0.125 : tensor<1x2x4x16x64xf16>, tensor<1x2x32x64xf16>, tensor<1x2x32x64xf16> -> tensor<1x2x4x16x64xf16>
  %masked = ktir.attention %q, %k, %v mask %keep : tensor<1x1x1x16x32xi1> scale 0.125 : tensor<1x2x4x16x64xf16>, tensor<1x2x32x64xf16>, tensor<1x2x32x64xf16> -> tensor<1x2x4x16x64xf16>
  %additive = ktir.attention %q, %k, %v mask %bias : tensor<16x32xf16> scale 0.125 : tensor<1x2x4x16x64xf16>, tensor<1x2x32x64xf16>, tensor<1x2x32x64xf16> -> tensor<1x2x4x16x64xf16>
  %causal = ktir.attention %q, %k, %v scale 0.125 causal 16 : tensor<1x2x4x16x64xf16>, tensor<1x2x32x64xf16>, tensor<1x2x32x64xf16> -> tensor<1x2x4x16x64xf16>
  func.return
}

// -----

// softmax, layer_norm (weight and bias each optional) and rms_norm (weight optional).
// In the generic form the layer_norm operands are (input, weight, bias) with segment sizes.
// CHECK-LABEL: func.func @compound
// CHECK-NEXT:    %softmax = ktir.softmax %x dim 2 : tensor<2x4x64xf16> -> tensor<2x4x64xf16>
// CHECK-NEXT:    %softmax0 = ktir.softmax %x dim 0 : tensor<2x4x64xf16> -> tensor<2x4x64xf16>
// CHECK-NEXT:    %ln = ktir.layer_norm %x weight %w : tensor<64xf16> bias %b : tensor<64xf16> normalized_shape [64] {eps = 1.000000e-05 : f64} : tensor<2x4x64xf16> -> tensor<2x4x64xf16>
// CHECK-NEXT:    %ln_plain = ktir.layer_norm %x normalized_shape [64] {eps = 1.000000e-05 : f64} : tensor<2x4x64xf16> -> tensor<2x4x64xf16>
// CHECK-NEXT:    %ln_weight = ktir.layer_norm %x weight %w : tensor<64xf16> normalized_shape [64] {eps = 1.000000e-05 : f64} : tensor<2x4x64xf16> -> tensor<2x4x64xf16>
// CHECK-NEXT:    %ln_bias = ktir.layer_norm %x bias %b : tensor<64xf16> normalized_shape [64] {eps = 1.000000e-05 : f64} : tensor<2x4x64xf16> -> tensor<2x4x64xf16>
// CHECK-NEXT:    %ln_2d = ktir.layer_norm %x weight %w2 : tensor<4x64xf16> bias %w2 : tensor<4x64xf16> normalized_shape [4, 64] {eps = 0.000000e+00 : f64} : tensor<2x4x64xf16> -> tensor<2x4x64xf16>
// CHECK-NEXT:    %rms = ktir.rms_norm %x weight %w : tensor<64xf16> normalized_shape [64] {eps = 1.000000e-06 : f64} : tensor<2x4x64xf16> -> tensor<2x4x64xf16>
// CHECK-NEXT:    %rms_plain = ktir.rms_norm %x normalized_shape [4, 64] {eps = 1.000000e-06 : f64} : tensor<2x4x64xf16> -> tensor<2x4x64xf16>
// CHECK-NEXT:    func.return
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "compound"
// CHECK-GENERIC:         %softmax = "ktir.softmax"(%x) <{dim = 2 : i64}> : (tensor<2x4x64xf16>) -> tensor<2x4x64xf16>
// CHECK-GENERIC:         %ln = "ktir.layer_norm"(%x, %w, %b) <{normalized_shape = array<i64: 64>, eps = 1.000000e-05 : f64, operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<2x4x64xf16>, tensor<64xf16>, tensor<64xf16>) -> tensor<2x4x64xf16>
// CHECK-GENERIC:         %ln_plain = "ktir.layer_norm"(%x) <{normalized_shape = array<i64: 64>, eps = 1.000000e-05 : f64, operandSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<2x4x64xf16>) -> tensor<2x4x64xf16>
// CHECK-GENERIC:         %ln_weight = "ktir.layer_norm"(%x, %w) <{normalized_shape = array<i64: 64>, eps = 1.000000e-05 : f64, operandSegmentSizes = array<i32: 1, 1, 0>}> : (tensor<2x4x64xf16>, tensor<64xf16>) -> tensor<2x4x64xf16>
// CHECK-GENERIC:         %ln_bias = "ktir.layer_norm"(%x, %b) <{normalized_shape = array<i64: 64>, eps = 1.000000e-05 : f64, operandSegmentSizes = array<i32: 1, 0, 1>}> : (tensor<2x4x64xf16>, tensor<64xf16>) -> tensor<2x4x64xf16>
// CHECK-GENERIC:         %rms = "ktir.rms_norm"(%x, %w) <{normalized_shape = array<i64: 64>, eps = 1.000000e-06 : f64}> : (tensor<2x4x64xf16>, tensor<64xf16>) -> tensor<2x4x64xf16>
// CHECK-GENERIC:         %rms_plain = "ktir.rms_norm"(%x) <{normalized_shape = array<i64: 4, 64>, eps = 1.000000e-06 : f64}> : (tensor<2x4x64xf16>) -> tensor<2x4x64xf16>
func.func @compound(%x: tensor<2x4x64xf16>, %w: tensor<64xf16>, %b: tensor<64xf16>, %w2: tensor<4x64xf16>) {
  %softmax = ktir.softmax %x dim 2 : tensor<2x4x64xf16> -> tensor<2x4x64xf16>
  %softmax0 = ktir.softmax %x dim 0 : tensor<2x4x64xf16> -> tensor<2x4x64xf16>
  %ln = ktir.layer_norm %x weight %w : tensor<64xf16> bias %b : tensor<64xf16> normalized_shape [64] {eps = 1.0e-05 : f64} : tensor<2x4x64xf16> -> tensor<2x4x64xf16>
  %ln_plain = ktir.layer_norm %x normalized_shape [64] {eps = 1.0e-05 : f64} : tensor<2x4x64xf16> -> tensor<2x4x64xf16>
  %ln_weight = ktir.layer_norm %x weight %w : tensor<64xf16> normalized_shape [64] {eps = 1.0e-05 : f64} : tensor<2x4x64xf16> -> tensor<2x4x64xf16>
  %ln_bias = ktir.layer_norm %x bias %b : tensor<64xf16> normalized_shape [64] {eps = 1.0e-05 : f64} : tensor<2x4x64xf16> -> tensor<2x4x64xf16>
  %ln_2d = ktir.layer_norm %x weight %w2 : tensor<4x64xf16> bias %w2 : tensor<4x64xf16> normalized_shape [4, 64] {eps = 0.0 : f64} : tensor<2x4x64xf16> -> tensor<2x4x64xf16>
  %rms = ktir.rms_norm %x weight %w : tensor<64xf16> normalized_shape [64] {eps = 1.0e-06 : f64} : tensor<2x4x64xf16> -> tensor<2x4x64xf16>
  %rms_plain = ktir.rms_norm %x normalized_shape [4, 64] {eps = 1.0e-06 : f64} : tensor<2x4x64xf16> -> tensor<2x4x64xf16>
  func.return
}

// -----

// Views: permute, reshape (including to and from rank 0), expand.
// CHECK-LABEL: func.func @views
// CHECK-NEXT:    %permute = ktir.permute %x perm [2, 0, 1] : tensor<2x4x64xf16> -> tensor<64x2x4xf16>
// CHECK-NEXT:    %transpose = ktir.permute %m perm [1, 0] : tensor<4x64xf16> -> tensor<64x4xf16>
// CHECK-NEXT:    %permute0 = ktir.permute %s perm [] : tensor<f32> -> tensor<f32>
// CHECK-NEXT:    %reshape = ktir.reshape %x : tensor<2x4x64xf16> -> tensor<8x64xf16>
// CHECK-NEXT:    %unsqueeze = ktir.reshape %s : tensor<f32> -> tensor<1x1xf32>
// CHECK-NEXT:    %squeeze = ktir.reshape %o : tensor<1x64xf16> -> tensor<64xf16>
// CHECK-NEXT:    %expand = ktir.expand %o : tensor<1x64xf16> -> tensor<3x4x64xf16>
// CHECK-NEXT:    %expand_same = ktir.expand %m : tensor<4x64xf16> -> tensor<4x64xf16>
// CHECK-NEXT:    func.return
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "views"
// CHECK-GENERIC:         %permute = "ktir.permute"(%x) <{perm = array<i64: 2, 0, 1>}> : (tensor<2x4x64xf16>) -> tensor<64x2x4xf16>
// CHECK-GENERIC:         %permute0 = "ktir.permute"(%s) <{perm = array<i64>}> : (tensor<f32>) -> tensor<f32>
// CHECK-GENERIC:         %reshape = "ktir.reshape"(%x) : (tensor<2x4x64xf16>) -> tensor<8x64xf16>
// CHECK-GENERIC:         %expand = "ktir.expand"(%o) : (tensor<1x64xf16>) -> tensor<3x4x64xf16>
func.func @views(%x: tensor<2x4x64xf16>, %m: tensor<4x64xf16>, %o: tensor<1x64xf16>, %s: tensor<f32>) {
  %permute = ktir.permute %x perm [2, 0, 1] : tensor<2x4x64xf16> -> tensor<64x2x4xf16>
  %transpose = ktir.permute %m perm [1, 0] : tensor<4x64xf16> -> tensor<64x4xf16>
  %permute0 = ktir.permute %s perm [] : tensor<f32> -> tensor<f32>
  %reshape = ktir.reshape %x : tensor<2x4x64xf16> -> tensor<8x64xf16>
  %unsqueeze = ktir.reshape %s : tensor<f32> -> tensor<1x1xf32>
  %squeeze = ktir.reshape %o : tensor<1x64xf16> -> tensor<64xf16>
  %expand = ktir.expand %o : tensor<1x64xf16> -> tensor<3x4x64xf16>
  %expand_same = ktir.expand %m : tensor<4x64xf16> -> tensor<4x64xf16>
  func.return
}

// -----

// Data movement: slice (strided, and empty), cat of one and three inputs, pad, copy.
// CHECK-LABEL: func.func @data_movement
// CHECK-NEXT:    %slice = ktir.slice %x dim 2 start 1 end 64 step 3 : tensor<2x4x64xf16> -> tensor<2x4x21xf16>
// CHECK-NEXT:    %slice_empty = ktir.slice %m dim 0 start 2 end 2 step 1 : tensor<4x64xf16> -> tensor<0x64xf16>
// CHECK-NEXT:    %cat1 = ktir.cat %m dim 0 : tensor<4x64xf16> -> tensor<4x64xf16>
// CHECK-NEXT:    %cat3 = ktir.cat %m, %o, %m dim 0 : tensor<4x64xf16>, tensor<1x64xf16>, tensor<4x64xf16> -> tensor<9x64xf16>
// CHECK-NEXT:    %cat_last = ktir.cat %m, %m dim 1 : tensor<4x64xf16>, tensor<4x64xf16> -> tensor<4x128xf16>
// CHECK-NEXT:    %pad = ktir.pad %v low [1, 0] high [0, 4] {value = -1.000000e+00 : f64} : tensor<4x60xf16> -> tensor<5x64xf16>
// CHECK-NEXT:    %pad_lowest = ktir.pad %v low [0, 0] high [0, 4] {value = -6.550400e+04 : f64} : tensor<4x60xf16> -> tensor<4x64xf16>
// CHECK-NEXT:    %copy = ktir.copy %m : tensor<4x64xf16> -> tensor<4x64xf16>
// CHECK-NEXT:    func.return
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "data_movement"
// CHECK-GENERIC:         %slice = "ktir.slice"(%x) <{dim = 2 : i64, start = 1 : i64, end = 64 : i64, step = 3 : i64}> : (tensor<2x4x64xf16>) -> tensor<2x4x21xf16>
// CHECK-GENERIC:         %cat1 = "ktir.cat"(%m) <{dim = 0 : i64}> : (tensor<4x64xf16>) -> tensor<4x64xf16>
// CHECK-GENERIC:         %cat3 = "ktir.cat"(%m, %o, %m) <{dim = 0 : i64}> : (tensor<4x64xf16>, tensor<1x64xf16>, tensor<4x64xf16>) -> tensor<9x64xf16>
// CHECK-GENERIC:         %pad = "ktir.pad"(%v) <{low = array<i64: 1, 0>, high = array<i64: 0, 4>, value = -1.000000e+00 : f64}> : (tensor<4x60xf16>) -> tensor<5x64xf16>
// CHECK-GENERIC:         %copy = "ktir.copy"(%m) : (tensor<4x64xf16>) -> tensor<4x64xf16>
func.func @data_movement(%x: tensor<2x4x64xf16>, %m: tensor<4x64xf16>, %o: tensor<1x64xf16>, %v: tensor<4x60xf16>) {
  %slice = ktir.slice %x dim 2 start 1 end 64 step 3 : tensor<2x4x64xf16> -> tensor<2x4x21xf16>
  %slice_empty = ktir.slice %m dim 0 start 2 end 2 step 1 : tensor<4x64xf16> -> tensor<0x64xf16>
  %cat1 = ktir.cat %m dim 0 : tensor<4x64xf16> -> tensor<4x64xf16>
  %cat3 = ktir.cat %m, %o, %m dim 0 : tensor<4x64xf16>, tensor<1x64xf16>, tensor<4x64xf16> -> tensor<9x64xf16>
  %cat_last = ktir.cat %m, %m dim 1 : tensor<4x64xf16>, tensor<4x64xf16> -> tensor<4x128xf16>
  %pad = ktir.pad %v low [1, 0] high [0, 4] {value = -1.0 : f64} : tensor<4x60xf16> -> tensor<5x64xf16>
  %pad_lowest = ktir.pad %v low [0, 0] high [0, 4] {value = -65504.0 : f64} : tensor<4x60xf16> -> tensor<4x64xf16>
  %copy = ktir.copy %m : tensor<4x64xf16> -> tensor<4x64xf16>
  func.return
}

// -----

// copy and restickify may change the #ktir.tiled encoding (graph-level verifiers ignore it):
// here the stick moves from dim 1 to dim 0.
// CHECK-LABEL: func.func @relayout
// CHECK-NEXT:    %restick = ktir.restickify %t : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x64xf16, #ktir.tiled<device_size = [64, 1, 64], stride_map = [1, -1, 64]>>
// CHECK-NEXT:    %restick_plain = ktir.restickify %m : tensor<4x64xf16> -> tensor<4x64xf16>
// CHECK-NEXT:    %copy_tiled = ktir.copy %m : tensor<4x64xf16> -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
// CHECK-NEXT:    func.return
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "relayout"
// CHECK-GENERIC:         %restick = "ktir.restickify"(%t) : (tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #ktir.tiled<device_size = [64, 1, 64], stride_map = [1, -1, 64]>>
func.func @relayout(%t: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, %m: tensor<4x64xf16>) {
  %restick = ktir.restickify %t : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x64xf16, #ktir.tiled<device_size = [64, 1, 64], stride_map = [1, -1, 64]>>
  %restick_plain = ktir.restickify %m : tensor<4x64xf16> -> tensor<4x64xf16>
  %copy_tiled = ktir.copy %m : tensor<4x64xf16> -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
  func.return
}

// -----

// cpu_fallback: #ktir.operand<i> stands for operand i in args and kwargs (nested in arrays
// and dictionaries too); other arguments are integers, booleans, floats, strings, `none` and
// element types; several results and no operands are allowed.
// CHECK-LABEL: func.func @cpu_fallback
// CHECK-NEXT:    %cumsum = ktir.cpu_fallback "aten::cumsum.default"(%i) {args = [#ktir.operand<0>, 0 : i64]} : (tensor<16xi64>) -> tensor<16xi64>
// CHECK-NEXT:    %values, %indices = ktir.cpu_fallback "aten::max.dim"(%x) {args = [#ktir.operand<0>, 1 : i64, false]} : (tensor<4x64xf16>) -> (tensor<4xf16>, tensor<4xi64>)
// CHECK-NEXT:    %embedding = ktir.cpu_fallback "aten::embedding.default"(%table, %ids) {args = [#ktir.operand<0>, #ktir.operand<1>], kwargs = {padding_idx = -1 : i64, scale_grad_by_freq = false, sparse = false}} : (tensor<100x64xf16>, tensor<2x8xi64>) -> tensor<2x8x64xf16>
// CHECK-NEXT:    %arange = ktir.cpu_fallback "aten::arange.start_step"() {args = [0 : i64, 16 : i64, 1 : i64], kwargs = {dtype = i64, layout = none, device = "cpu", pin_memory = none}} : () -> tensor<16xi64>
// CHECK-NEXT:    %cat = ktir.cpu_fallback "aten::cat.default"(%x, %x) {args = {{\[\[}}#ktir.operand<0>, #ktir.operand<1>], -2 : i64]} : (tensor<4x64xf16>, tensor<4x64xf16>) -> tensor<8x64xf16>
// CHECK-NEXT:    %index = ktir.cpu_fallback "aten::index.Tensor"(%x, %i) {args = [#ktir.operand<0>, [none, #ktir.operand<1>]]} : (tensor<4x64xf16>, tensor<16xi64>) -> tensor<4x16xf16>
// CHECK-NEXT:    %to = ktir.cpu_fallback "aten::_to_copy.default"(%x) {args = [], kwargs = {self = #ktir.operand<0>, dtype = f32, scale = 2.500000e+00 : f64}} : (tensor<4x64xf16>) -> tensor<4x64xf32>
// CHECK-NEXT:    func.return
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "cpu_fallback"
// CHECK-GENERIC:         %cumsum = "ktir.cpu_fallback"(%i) <{aten = "aten::cumsum.default", args = [#ktir.operand<0>, 0 : i64]}> : (tensor<16xi64>) -> tensor<16xi64>
// CHECK-GENERIC:         %values, %indices = "ktir.cpu_fallback"(%x) <{aten = "aten::max.dim", args = [#ktir.operand<0>, 1 : i64, false]}> : (tensor<4x64xf16>) -> (tensor<4xf16>, tensor<4xi64>)
// CHECK-GENERIC:         %embedding = "ktir.cpu_fallback"(%table, %ids) <{aten = "aten::embedding.default", args = [#ktir.operand<0>, #ktir.operand<1>], kwargs = {padding_idx = -1 : i64, scale_grad_by_freq = false, sparse = false}}> : (tensor<100x64xf16>, tensor<2x8xi64>) -> tensor<2x8x64xf16>
// CHECK-GENERIC:         %arange = "ktir.cpu_fallback"() <{aten = "aten::arange.start_step", args = [0 : i64, 16 : i64, 1 : i64], kwargs = {dtype = i64, layout = none, device = "cpu", pin_memory = none}}> : () -> tensor<16xi64>
func.func @cpu_fallback(%x: tensor<4x64xf16>, %i: tensor<16xi64>, %ids: tensor<2x8xi64>, %table: tensor<100x64xf16>) {
  %cumsum = ktir.cpu_fallback "aten::cumsum.default"(%i) {args = [#ktir.operand<0>, 0 : i64]} : (tensor<16xi64>) -> tensor<16xi64>
  %values, %indices = ktir.cpu_fallback "aten::max.dim"(%x) {args = [#ktir.operand<0>, 1 : i64, false]} : (tensor<4x64xf16>) -> (tensor<4xf16>, tensor<4xi64>)
  %embedding = ktir.cpu_fallback "aten::embedding.default"(%table, %ids) {args = [#ktir.operand<0>, #ktir.operand<1>], kwargs = {padding_idx = -1 : i64, scale_grad_by_freq = false, sparse = false}} : (tensor<100x64xf16>, tensor<2x8xi64>) -> tensor<2x8x64xf16>
  %arange = ktir.cpu_fallback "aten::arange.start_step"() {args = [0 : i64, 16 : i64, 1 : i64], kwargs = {dtype = i64, layout = none, device = "cpu", pin_memory = none}} : () -> tensor<16xi64>
  %cat = ktir.cpu_fallback "aten::cat.default"(%x, %x) {args = [[#ktir.operand<0>, #ktir.operand<1>], -2 : i64]} : (tensor<4x64xf16>, tensor<4x64xf16>) -> tensor<8x64xf16>
  %index = ktir.cpu_fallback "aten::index.Tensor"(%x, %i) {args = [#ktir.operand<0>, [none, #ktir.operand<1>]]} : (tensor<4x64xf16>, tensor<16xi64>) -> tensor<4x16xf16>
  %to = ktir.cpu_fallback "aten::_to_copy.default"(%x) {args = [], kwargs = {self = #ktir.operand<0>, dtype = f32, scale = 2.5 : f64}} : (tensor<4x64xf16>) -> tensor<4x64xf32>
  func.return
}

// -----

// #ktir.operand is an ordinary attribute: it parses and prints anywhere.
// CHECK-LABEL: func.func @operand_attr
// CHECK-SAME:    attributes {refs = [#ktir.operand<0>, #ktir.operand<12>], ref = #ktir.operand<3>}
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "operand_attr", function_type = () -> ()}> ({
// CHECK-GENERIC-NEXT:    "func.return"() : () -> ()
// CHECK-GENERIC-NEXT:  }) {refs = [#ktir.operand<0>, #ktir.operand<12>], ref = #ktir.operand<3>} : () -> ()
func.func @operand_attr() attributes {refs = [#ktir.operand<0>, #ktir.operand<12>], ref = #ktir.operand<3>} {
  func.return
}

// -----

// Float properties print in the attribute dictionary, so hex values (infinities, NaN, large
// whole numbers) round-trip too.
// CHECK-LABEL: func.func @hex_float_properties
// CHECK-NEXT: ktir.pad %x low [0, 0] high [0, 4] {value = 0xfff0000000000000 : f64} : tensor<4x60xf16> -> tensor<4x64xf16>
// CHECK-NEXT: ktir.clamp %x {min = 0xfff0000000000000 : f64, max = 0x4132D68700000000 : f64} : tensor<4x60xf16> -> tensor<4x60xf16>
// CHECK-NEXT: ktir.pow %x {exponent = 0x7ff8000000000000 : f64} : tensor<4x60xf16> -> tensor<4x60xf16>
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "hex_float_properties"
// CHECK-GENERIC: "ktir.pad"(%{{.*}}) <{low = array<i64: 0, 0>, high = array<i64: 0, 4>, value = 0xfff0000000000000 : f64}>
func.func @hex_float_properties(%x: tensor<4x60xf16>) {
  %p = ktir.pad %x low [0, 0] high [0, 4] {value = 0xFFF0000000000000 : f64} : tensor<4x60xf16> -> tensor<4x64xf16>
  %c = ktir.clamp %x {min = 0xFFF0000000000000 : f64, max = 1234567.0 : f64} : tensor<4x60xf16> -> tensor<4x60xf16>
  %q = ktir.pow %x {exponent = 0x7FF8000000000000 : f64} : tensor<4x60xf16> -> tensor<4x60xf16>
  func.return
}

// fused: graph ops run as one kernel; the body's arguments are the inputs.
// CHECK-LABEL: func.func @fused
// CHECK-NEXT: %y = ktir.fused(%x, %w) : (tensor<4x64xf16>, tensor<64xf16>) -> tensor<4x64xf16> {
// CHECK-NEXT: ^{{.*}}(%a: tensor<4x64xf16>, %b: tensor<64xf16>):
// CHECK-NEXT: %s = ktir.silu %a : tensor<4x64xf16> -> tensor<4x64xf16>
// CHECK-NEXT: %m = ktir.mul %s, %b : tensor<4x64xf16>, tensor<64xf16> -> tensor<4x64xf16>
// CHECK-NEXT: ktir.yield %m : tensor<4x64xf16>
// CHECK-NEXT: }
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "fused"
// CHECK-GENERIC: "ktir.fused"(%{{.*}}, %{{.*}}) ({
func.func @fused(%x: tensor<4x64xf16>, %w: tensor<64xf16>) -> tensor<4x64xf16> {
  %y = ktir.fused(%x, %w) : (tensor<4x64xf16>, tensor<64xf16>) -> tensor<4x64xf16> {
  ^bb0(%a: tensor<4x64xf16>, %b: tensor<64xf16>):
    %s = ktir.silu %a : tensor<4x64xf16> -> tensor<4x64xf16>
    %m = ktir.mul %s, %b : tensor<4x64xf16>, tensor<64xf16> -> tensor<4x64xf16>
    ktir.yield %m : tensor<4x64xf16>
  }
  func.return %y : tensor<4x64xf16>
}
