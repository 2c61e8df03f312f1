// RUN: not ktir-opt %s --split-input-file -p ktir-lower-to-cores 2>&1 | filecheck %s

// ktir-lower-to-cores needs each divided op's recorded plan (ktir-plan-kernels), and one that
// fits the op: located errors otherwise.

// CHECK: unplanned.mlir:[[# @LINE + 2]]:8: error: 'ktir.abs' op has no ktir.chunk_plan; run ktir-plan-kernels first
func.func @unplanned(%x: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  %y = ktir.abs %x {ktir.work_division = {d0 = 2 : i64, d1 = 1 : i64}} : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
  func.return %y : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
}

// -----

// CHECK: unplanned.mlir:[[# @LINE + 2]]:8: error: 'ktir.abs' op has no ktir.lx_buffers; run ktir-plan-kernels first
func.func @no_addresses(%x: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  %y = ktir.abs %x {ktir.work_division = {d0 = 2 : i64, d1 = 1 : i64}, ktir.chunk_plan = #ktir.chunk_plan<d0 = 1>} : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
  func.return %y : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
}

// -----

// CHECK: unplanned.mlir:[[# @LINE + 2]]:8: error: 'ktir.abs' op chunk plan cuts k, not dims of ['d0', 'd1']
func.func @unknown_dim(%x: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  %y = ktir.abs %x {ktir.work_division = {d0 = 2 : i64, d1 = 1 : i64}, ktir.chunk_plan = #ktir.chunk_plan<k = 2>, ktir.lx_buffers = #ktir.lx_buffers<in0 = 0, out0 = 256>} : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
  func.return %y : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
}

// -----

// CHECK: unplanned.mlir:[[# @LINE + 2]]:8: error: 'ktir.abs' op LX buffers ['acc', 'in0'] are not the chunk plan's ['in0', 'out0']
func.func @wrong_buffers(%x: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  %y = ktir.abs %x {ktir.work_division = {d0 = 2 : i64, d1 = 1 : i64}, ktir.chunk_plan = #ktir.chunk_plan<d0 = 1>, ktir.lx_buffers = #ktir.lx_buffers<in0 = 0, acc = 256>} : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
  func.return %y : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
}

// -----

// CHECK: unplanned.mlir:[[# @LINE + 2]]:8: error: 'ktir.abs' op 'ktir.prefetch' names inputs [1]; the op has 1 tensor inputs
func.func @prefetch_out_of_range(%x: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  %y = ktir.abs %x {ktir.work_division = {d0 = 2 : i64, d1 = 1 : i64}, ktir.chunk_plan = #ktir.chunk_plan<d0 = 1>, ktir.lx_buffers = #ktir.lx_buffers<in0 = 0, out0 = 256>, ktir.prefetch = #ktir.prefetch<1>} : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
  func.return %y : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
}

// -----

// A plan attribute of the wrong kind.
// CHECK: unplanned.mlir:[[# @LINE + 2]]:8: error: 'ktir.abs' op 'ktir.chunk_plan' must be a #ktir.chunk_plan, not {d0 = 1 : i64}
func.func @wrong_kind(%x: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  %y = ktir.abs %x {ktir.work_division = {d0 = 2 : i64, d1 = 1 : i64}, ktir.chunk_plan = {d0 = 1 : i64}, ktir.lx_buffers = #ktir.lx_buffers<in0 = 0, out0 = 256>} : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
  func.return %y : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
}
