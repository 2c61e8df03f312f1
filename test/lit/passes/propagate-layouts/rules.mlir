// Every per-op stick rule of ktir-propagate-layouts, and the restickifies they lead to.
// RUN: ktir-opt %s --split-input-file -p ktir-propagate-layouts | filecheck %s
// RUN: ktir-opt %S/../../Inputs/passes/propagate-layouts/rules.mlir --split-input-file -p ktir-insert-restickify,ktir-verify-layouts | filecheck %s --check-prefix=INSERT
// The INSERT line reads this file's IR after ktir-propagate-layouts (the preconditions of
// ktir-insert-restickify), kept in test/lit/Inputs/passes/propagate-layouts/rules.mlir:
// regenerate it when the IR here changes (see test/lit/Inputs/passes/README.md).

// Pointwise: operands and result share a stick; the cheaper side is restickified.
// CHECK-LABEL: func.func @pointwise
// CHECK-SAME: ktir.layout_plan = {cost = 8192 : i64, lower_bound = 8192 : i64, search = "exact"}
// CHECK: %t = ktir.permute %a perm [1, 0] : tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>> -> tensor<64x128xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [8192, 1, 128]>>
// CHECK: %s = ktir.add %t, %x : tensor<64x128xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [8192, 1, 128]>>, tensor<64x128xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [64, 128, 1]>> -> tensor<64x128xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>
// INSERT-LABEL: func.func @pointwise
// INSERT: %t = ktir.permute
// INSERT-NEXT: %[[R:.*]] = ktir.restickify %t : tensor<64x128xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [8192, 1, 128]>> -> tensor<64x128xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>
// INSERT-NEXT: %s = ktir.add %[[R]], %x
func.func @pointwise(%a: tensor<128x64xf16>, %x: tensor<64x128xf16>) -> tensor<64x128xf16> {
  %t = ktir.permute %a perm [1, 0] : tensor<128x64xf16> -> tensor<64x128xf16>
  %s = ktir.add %t, %x : tensor<64x128xf16>, tensor<64x128xf16> -> tensor<64x128xf16>
  func.return %s : tensor<64x128xf16>
}

// -----

// Reducing over the stick gives a sparse result, which broadcasts back along the stick.
// CHECK-LABEL: func.func @reduction
// CHECK-SAME: cost = 0 : i64
// CHECK: ktir.max %x dims [1] keepdim : tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>> -> tensor<128x1xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [-1, 1, -1]>>
// INSERT-LABEL: func.func @reduction
// INSERT-NOT: ktir.restickify
func.func @reduction(%x: tensor<128x64xf16>) -> tensor<128x64xf16> {
  %m = ktir.max %x dims [1] keepdim : tensor<128x64xf16> -> tensor<128x1xf16>
  %d = ktir.sub %x, %m : tensor<128x64xf16>, tensor<128x1xf16> -> tensor<128x64xf16>
  func.return %d : tensor<128x64xf16>
}

// -----

// Matmul: x sticked on K, y and the result on N.
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: cost = 8192 : i64
// CHECK: ktir.matmul %t, %y : tensor<128x64xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [4096, 1, 64]>>, tensor<64x32xf16, #ktir.tiled<device_size = [1, 64, 64], stride_map = [64, 32, 1]>> -> tensor<128x32xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 32, 1]>>
// INSERT-LABEL: func.func @matmul
// INSERT: %[[X:.*]] = ktir.restickify %t : tensor<128x64xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [4096, 1, 64]>> -> tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>
// INSERT-NEXT: ktir.matmul %[[X]], %y
func.func @matmul(%x: tensor<64x128xf16>, %y: tensor<64x32xf16>) -> tensor<128x32xf16> {
  %t = ktir.permute %x perm [1, 0] : tensor<64x128xf16> -> tensor<128x64xf16>
  %m = ktir.matmul %t, %y : tensor<128x64xf16>, tensor<64x32xf16> -> tensor<128x32xf16>
  func.return %m : tensor<128x32xf16>
}

// -----

// Softmax and the norms need the normalized dim on the stick.
// CHECK-LABEL: func.func @softmax
// CHECK-SAME: cost = 8192 : i64
// CHECK: ktir.softmax %t dim 1 : tensor<128x64xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [4096, 1, 64]>> -> tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>
// INSERT-LABEL: func.func @softmax
// INSERT: %[[X:.*]] = ktir.restickify %t
// INSERT-NEXT: ktir.softmax %[[X]] dim 1 : tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>> -> tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>
func.func @softmax(%x: tensor<64x128xf16>) -> tensor<128x64xf16> {
  %t = ktir.permute %x perm [1, 0] : tensor<64x128xf16> -> tensor<128x64xf16>
  %s = ktir.softmax %t dim 1 : tensor<128x64xf16> -> tensor<128x64xf16>
  func.return %s : tensor<128x64xf16>
}

// -----

// A constant takes whatever stick its consumer wants, for free.
// CHECK-LABEL: func.func @constant
// CHECK-SAME: cost = 0 : i64
// CHECK: ktir.full 1.000000e+00 : tensor<128x128xf16, #ktir.tiled<device_size = [2, 128, 64], stride_map = [8192, 1, 128]>>
// INSERT-LABEL: func.func @constant
// INSERT-NOT: ktir.restickify
func.func @constant(%x: tensor<128x128xf16>) -> tensor<128x128xf16> {
  %t = ktir.permute %x perm [1, 0] : tensor<128x128xf16> -> tensor<128x128xf16>
  %c = ktir.full 1.0 : tensor<128x128xf16>
  %s = ktir.add %c, %t : tensor<128x128xf16>, tensor<128x128xf16> -> tensor<128x128xf16>
  func.return %s : tensor<128x128xf16>
}

// -----

// A reshape that splits sticks (64 -> 4 x 16) copies; one that keeps them is free.
// CHECK-LABEL: func.func @views
// CHECK-SAME: cost = 512 : i64
// CHECK: %a = ktir.reshape %x : tensor<8x64xf16, #ktir.tiled<device_size = [1, 8, 64], stride_map = [64, 64, 1]>> -> tensor<8x4x16xf16, #ktir.tiled<device_size = [4, 1, 8, 64], stride_map = [16, 64, 64, 1]>>
// CHECK: %b = ktir.reshape %y : tensor<8x128xf16, #ktir.tiled<device_size = [2, 8, 64], stride_map = [64, 128, 1]>> -> tensor<8x2x64xf16, #ktir.tiled<device_size = [2, 8, 64], stride_map = [64, 128, 1]>>
func.func @views(%x: tensor<8x64xf16>, %y: tensor<8x128xf16>) -> (tensor<8x4x16xf16>, tensor<8x2x64xf16>) {
  %a = ktir.reshape %x : tensor<8x64xf16> -> tensor<8x4x16xf16>
  %b = ktir.reshape %y : tensor<8x128xf16> -> tensor<8x2x64xf16>
  func.return %a, %b : tensor<8x4x16xf16>, tensor<8x2x64xf16>
}

// -----

// Copy accepts any layout; cpu_fallback results get the default layout.
// CHECK-LABEL: func.func @copy_and_fallback
// CHECK-SAME: cost = 0 : i64
// CHECK: ktir.copy %t : tensor<64x128xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [8192, 1, 128]>> -> tensor<64x128xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>
// CHECK: ktir.cpu_fallback "aten::abs.default"(%x) {args = [#ktir.operand<0>]} : (tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>) -> tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>
// INSERT-LABEL: func.func @copy_and_fallback
// INSERT-NOT: ktir.restickify
func.func @copy_and_fallback(%x: tensor<128x64xf16>) -> (tensor<64x128xf16>, tensor<128x64xf16>) {
  %t = ktir.permute %x perm [1, 0] : tensor<128x64xf16> -> tensor<64x128xf16>
  %c = ktir.copy %t : tensor<64x128xf16> -> tensor<64x128xf16>
  %f = ktir.cpu_fallback "aten::abs.default"(%x) {args = [#ktir.operand<0>]} : (tensor<128x64xf16>) -> tensor<128x64xf16>
  func.return %c, %f : tensor<64x128xf16>, tensor<128x64xf16>
}

// -----

// Attention: q and k on their head size D, v and the result on E; the grouped query is a view
// of the [B, H * G, S, D] one (no restickify, no copy).
// CHECK-LABEL: func.func @attention
// CHECK-SAME: cost = 0 : i64
// CHECK: %grouped = ktir.reshape %q : tensor<1x8x256x64xf16, #ktir.tiled<device_size = [8, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>> -> tensor<1x2x4x256x64xf16, #ktir.tiled<device_size = [8, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>
// CHECK: ktir.attention %grouped, %k, %v scale 1.250000e-01 causal 0 : tensor<1x2x4x256x64xf16, #ktir.tiled<device_size = [8, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>, tensor<1x2x256x64xf16, #ktir.tiled<device_size = [2, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>
// INSERT-LABEL: func.func @attention
// INSERT-NOT: ktir.restickify
func.func @attention(%q: tensor<1x8x256x64xf16>, %k: tensor<1x2x256x64xf16>, %v: tensor<1x2x256x64xf16>) -> tensor<1x8x256x64xf16> {
  %grouped = ktir.reshape %q : tensor<1x8x256x64xf16> -> tensor<1x2x4x256x64xf16>
  %o = ktir.attention %grouped, %k, %v scale 0.125 causal 0 : tensor<1x2x4x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16> -> tensor<1x2x4x256x64xf16>
  %r = ktir.reshape %o : tensor<1x2x4x256x64xf16> -> tensor<1x8x256x64xf16>
  func.return %r : tensor<1x8x256x64xf16>
}
