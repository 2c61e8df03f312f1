// RUN: ktir-opt %s --split-input-file -p 'ktir-divide-work{cores=2 policy=default}' | filecheck %s
// RUN: ktir-opt %s --split-input-file -p 'ktir-divide-work{policy=default}' | filecheck %s --check-prefix=C32

// The input below meets the preconditions of ktir-divide-work; generated once with
//   git show f9d10e6:test/lit/passes/divide-work/divide.mlir | ktir-opt --split-input-file -p 'ktir-propagate-layouts'
// (see test/lit/Inputs/passes/README.md).

// The seed's (4, 64) abs: rows split over 2 cores; on 32 cores only 4 rows exist.
// CHECK-LABEL: func.func @abs
// CHECK: ktir.abs %{{.*}} {ktir.work_division = {d0 = 2 : i64, d1 = 1 : i64}}
// C32-LABEL: func.func @abs
// C32: ktir.abs %{{.*}} {ktir.work_division = {d0 = 4 : i64, d1 = 1 : i64}}
func.func @abs(%x: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %y = ktir.abs %x : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
  func.return %y : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
}

// -----

// Reductions list output dims first, then the reduced ones; reduced dims stay whole.
// C32-LABEL: func.func @sum
// C32: ktir.sum %{{.*}} {ktir.work_division = {d0 = 32 : i64, d1 = 1 : i64}}
func.func @sum(%x: tensor<64x128xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>) -> tensor<64xf16, #ktir.tiled<device_size = [1, 64, 64], stride_map = [-1, 1, -1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %y = ktir.sum %x dims [1] : tensor<64x128xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [64, 128, 1]>> -> tensor<64xf16, #ktir.tiled<device_size = [1, 64, 64], stride_map = [-1, 1, -1]>>
  func.return %y : tensor<64xf16, #ktir.tiled<device_size = [1, 64, 64], stride_map = [-1, 1, -1]>>
}

// -----

// A hint is taken as given; matmul dims are m, n, k.
// C32-LABEL: func.func @hint
// C32: ktir.matmul {{.*}}ktir.work_division = {m = 2 : i64, n = 1 : i64, k = 1 : i64}
func.func @hint(%x: tensor<64x256xf16, #ktir.tiled<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>, %y: tensor<256x128xf16, #ktir.tiled<device_size = [2, 256, 64], stride_map = [64, 128, 1]>>) -> tensor<64x128xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [64, 128, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %r = ktir.matmul %x, %y {ktir.work_division_hint = {m = 2 : i64}} : tensor<64x256xf16, #ktir.tiled<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>, tensor<256x128xf16, #ktir.tiled<device_size = [2, 256, 64], stride_map = [64, 128, 1]>> -> tensor<64x128xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>
  func.return %r : tensor<64x128xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>
}

// -----

// Grouped attention divides like a fused kernel: the most cores, then the least traffic. On 2
// cores each takes one key head and its group of 4 query heads (the heads `h` are the 8 query
// heads, [H, G] flattened); on 32, the 8 query heads and 4 ranges of queries.
// CHECK-LABEL: func.func @attention
// CHECK: ktir.attention {{.*}} {ktir.work_division = {b0 = 1 : i64, h = 2 : i64, s = 1 : i64, e = 1 : i64, l = 1 : i64, d = 1 : i64}}
// C32-LABEL: func.func @attention
// C32: ktir.attention {{.*}} {ktir.work_division = {b0 = 1 : i64, h = 8 : i64, s = 4 : i64, e = 1 : i64, l = 1 : i64, d = 1 : i64}}
func.func @attention(%q: tensor<1x8x256x64xf16, #ktir.tiled<device_size = [8, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>, %k: tensor<1x2x256x64xf16, #ktir.tiled<device_size = [2, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>, %v: tensor<1x2x256x64xf16, #ktir.tiled<device_size = [2, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>) -> tensor<1x8x256x64xf16, #ktir.tiled<device_size = [8, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %grouped = ktir.reshape %q : tensor<1x8x256x64xf16, #ktir.tiled<device_size = [8, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>> -> tensor<1x2x4x256x64xf16, #ktir.tiled<device_size = [8, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>
  %o = ktir.attention %grouped, %k, %v scale 1.250000e-01 causal 0 : tensor<1x2x4x256x64xf16, #ktir.tiled<device_size = [8, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>, tensor<1x2x256x64xf16, #ktir.tiled<device_size = [2, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>, tensor<1x2x256x64xf16, #ktir.tiled<device_size = [2, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>> -> tensor<1x2x4x256x64xf16, #ktir.tiled<device_size = [8, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>
  %r = ktir.reshape %o : tensor<1x2x4x256x64xf16, #ktir.tiled<device_size = [8, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>> -> tensor<1x8x256x64xf16, #ktir.tiled<device_size = [8, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>
  func.return %r : tensor<1x8x256x64xf16, #ktir.tiled<device_size = [8, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>
}
