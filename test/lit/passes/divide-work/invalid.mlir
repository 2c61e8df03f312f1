// RUN: not ktir-opt %s -p 'ktir-divide-work{policy=default}' 2>&1 | filecheck %s

// The input below meets the preconditions of ktir-divide-work; generated once with
//   git show f9d10e6:test/lit/passes/divide-work/invalid.mlir | ktir-opt -p 'ktir-propagate-layouts'
// (see test/lit/Inputs/passes/README.md).

// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'ktir.matmul' op invalid ktir.work_division_hint: hint m = 3 does not divide the dim's 64 cuttable unit(s)
func.func @bad_hint(%x: tensor<64x256xf16, #ktir.tiled<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>, %y: tensor<256x128xf16, #ktir.tiled<device_size = [2, 256, 64], stride_map = [64, 128, 1]>>) -> tensor<64x128xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [64, 128, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %r = ktir.matmul %x, %y {ktir.work_division_hint = {m = 3 : i64}} : tensor<64x256xf16, #ktir.tiled<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>, tensor<256x128xf16, #ktir.tiled<device_size = [2, 256, 64], stride_map = [64, 128, 1]>> -> tensor<64x128xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>
  func.return %r : tensor<64x128xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>
}
