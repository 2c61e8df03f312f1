// The input of the INSERT RUN line of test/lit/passes/propagate-layouts/rules.mlir: that file's
// IR after ktir-propagate-layouts, i.e. meeting the preconditions of ktir-insert-restickify.
// Generated with (see ../README.md)
//   ktir-opt test/lit/passes/propagate-layouts/rules.mlir --split-input-file -p ktir-propagate-layouts | unwrap

func.func @pointwise(%a: tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>, %x: tensor<64x128xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>) -> tensor<64x128xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [64, 128, 1]>> attributes {ktir.layout_plan = {cost = 8192 : i64, lower_bound = 8192 : i64, search = "exact"}} {
  %t = ktir.permute %a perm [1, 0] : tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>> -> tensor<64x128xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [8192, 1, 128]>>
  %s = ktir.add %t, %x : tensor<64x128xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [8192, 1, 128]>>, tensor<64x128xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [64, 128, 1]>> -> tensor<64x128xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>
  func.return %s : tensor<64x128xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>
}

// -----
func.func @reduction(%x: tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>) -> tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %m = ktir.max %x dims [1] keepdim : tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>> -> tensor<128x1xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [-1, 1, -1]>>
  %d = ktir.sub %x, %m : tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>, tensor<128x1xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [-1, 1, -1]>> -> tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>
  func.return %d : tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>
}

// -----
func.func @matmul(%x: tensor<64x128xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>, %y: tensor<64x32xf16, #ktir.tiled<device_size = [1, 64, 64], stride_map = [64, 32, 1]>>) -> tensor<128x32xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 32, 1]>> attributes {ktir.layout_plan = {cost = 8192 : i64, lower_bound = 8192 : i64, search = "exact"}} {
  %t = ktir.permute %x perm [1, 0] : tensor<64x128xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [64, 128, 1]>> -> tensor<128x64xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [4096, 1, 64]>>
  %m = ktir.matmul %t, %y : tensor<128x64xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [4096, 1, 64]>>, tensor<64x32xf16, #ktir.tiled<device_size = [1, 64, 64], stride_map = [64, 32, 1]>> -> tensor<128x32xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 32, 1]>>
  func.return %m : tensor<128x32xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 32, 1]>>
}

// -----
func.func @softmax(%x: tensor<64x128xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>) -> tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>> attributes {ktir.layout_plan = {cost = 8192 : i64, lower_bound = 8192 : i64, search = "exact"}} {
  %t = ktir.permute %x perm [1, 0] : tensor<64x128xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [64, 128, 1]>> -> tensor<128x64xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [4096, 1, 64]>>
  %s = ktir.softmax %t dim 1 : tensor<128x64xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [4096, 1, 64]>> -> tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>
  func.return %s : tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>
}

// -----
func.func @constant(%x: tensor<128x128xf16, #ktir.tiled<device_size = [2, 128, 64], stride_map = [64, 128, 1]>>) -> tensor<128x128xf16, #ktir.tiled<device_size = [2, 128, 64], stride_map = [8192, 1, 128]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %t = ktir.permute %x perm [1, 0] : tensor<128x128xf16, #ktir.tiled<device_size = [2, 128, 64], stride_map = [64, 128, 1]>> -> tensor<128x128xf16, #ktir.tiled<device_size = [2, 128, 64], stride_map = [8192, 1, 128]>>
  %c = ktir.full 1.000000e+00 : tensor<128x128xf16, #ktir.tiled<device_size = [2, 128, 64], stride_map = [8192, 1, 128]>>
  %s = ktir.add %c, %t : tensor<128x128xf16, #ktir.tiled<device_size = [2, 128, 64], stride_map = [8192, 1, 128]>>, tensor<128x128xf16, #ktir.tiled<device_size = [2, 128, 64], stride_map = [8192, 1, 128]>> -> tensor<128x128xf16, #ktir.tiled<device_size = [2, 128, 64], stride_map = [8192, 1, 128]>>
  func.return %s : tensor<128x128xf16, #ktir.tiled<device_size = [2, 128, 64], stride_map = [8192, 1, 128]>>
}

// -----
func.func @views(%x: tensor<8x64xf16, #ktir.tiled<device_size = [1, 8, 64], stride_map = [64, 64, 1]>>, %y: tensor<8x128xf16, #ktir.tiled<device_size = [2, 8, 64], stride_map = [64, 128, 1]>>) -> (tensor<8x4x16xf16, #ktir.tiled<device_size = [4, 1, 8, 64], stride_map = [16, 64, 64, 1]>>, tensor<8x2x64xf16, #ktir.tiled<device_size = [2, 8, 64], stride_map = [64, 128, 1]>>) attributes {ktir.layout_plan = {cost = 512 : i64, lower_bound = 512 : i64, search = "exact"}} {
  %a = ktir.reshape %x : tensor<8x64xf16, #ktir.tiled<device_size = [1, 8, 64], stride_map = [64, 64, 1]>> -> tensor<8x4x16xf16, #ktir.tiled<device_size = [4, 1, 8, 64], stride_map = [16, 64, 64, 1]>>
  %b = ktir.reshape %y : tensor<8x128xf16, #ktir.tiled<device_size = [2, 8, 64], stride_map = [64, 128, 1]>> -> tensor<8x2x64xf16, #ktir.tiled<device_size = [2, 8, 64], stride_map = [64, 128, 1]>>
  func.return %a, %b : tensor<8x4x16xf16, #ktir.tiled<device_size = [4, 1, 8, 64], stride_map = [16, 64, 64, 1]>>, tensor<8x2x64xf16, #ktir.tiled<device_size = [2, 8, 64], stride_map = [64, 128, 1]>>
}

// -----
func.func @copy_and_fallback(%x: tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>) -> (tensor<64x128xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>, tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>) attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %t = ktir.permute %x perm [1, 0] : tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>> -> tensor<64x128xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [8192, 1, 128]>>
  %c = ktir.copy %t : tensor<64x128xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [8192, 1, 128]>> -> tensor<64x128xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>
  %f = ktir.cpu_fallback "aten::abs.default"(%x) {args = [#ktir.operand<0>]} : (tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>) -> tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>
  func.return %c, %f : tensor<64x128xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>, tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>
}

// -----
func.func @attention(%q: tensor<1x8x256x64xf16, #ktir.tiled<device_size = [8, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>, %k: tensor<1x2x256x64xf16, #ktir.tiled<device_size = [2, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>, %v: tensor<1x2x256x64xf16, #ktir.tiled<device_size = [2, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>) -> tensor<1x8x256x64xf16, #ktir.tiled<device_size = [8, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %grouped = ktir.reshape %q : tensor<1x8x256x64xf16, #ktir.tiled<device_size = [8, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>> -> tensor<1x2x4x256x64xf16, #ktir.tiled<device_size = [8, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>
  %o = ktir.attention %grouped, %k, %v scale 1.250000e-01 causal 0 : tensor<1x2x4x256x64xf16, #ktir.tiled<device_size = [8, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>, tensor<1x2x256x64xf16, #ktir.tiled<device_size = [2, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>, tensor<1x2x256x64xf16, #ktir.tiled<device_size = [2, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>> -> tensor<1x2x4x256x64xf16, #ktir.tiled<device_size = [8, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>
  %r = ktir.reshape %o : tensor<1x2x4x256x64xf16, #ktir.tiled<device_size = [8, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>> -> tensor<1x8x256x64xf16, #ktir.tiled<device_size = [8, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>
  func.return %r : tensor<1x8x256x64xf16, #ktir.tiled<device_size = [8, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>
}

