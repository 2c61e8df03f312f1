// RUN: not ktir-opt %s --split-input-file -p ktir-plan-kernels 2>&1 | filecheck %s

// The planner's located errors: an op that would run a kernel but was not divided, and a
// kernel whose tiles cannot fit in LX however it is chunked (inputs from
// test/lit/passes/lower-to-cores/undivided.mlir and invalid.mlir).

// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'ktir.abs' op has no ktir.work_division; run ktir-divide-work first
func.func @undivided(%x: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  %y = ktir.abs %x : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
  return %y : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
}

// -----

// A softmax row must stay whole on a core: 2 MiB in and 2 MiB out never fit.
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'ktir.softmax' op needs 4,194,304 bytes of LX per core (core 0) for its smallest chunk, more than the 1,677,721 bytes free
func.func @too_big(%x: tensor<1x1048576xf16, #ktir.tiled<device_size = [16384, 1, 64], stride_map = [64, -1, 1]>>) -> tensor<1x1048576xf16, #ktir.tiled<device_size = [16384, 1, 64], stride_map = [64, -1, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %y = ktir.softmax %x dim 1 {ktir.work_division = {d0 = 1 : i64, d1 = 1 : i64}} : tensor<1x1048576xf16, #ktir.tiled<device_size = [16384, 1, 64], stride_map = [64, -1, 1]>> -> tensor<1x1048576xf16, #ktir.tiled<device_size = [16384, 1, 64], stride_map = [64, -1, 1]>>
  func.return %y : tensor<1x1048576xf16, #ktir.tiled<device_size = [16384, 1, 64], stride_map = [64, -1, 1]>>
}

// -----

// A hand-written work division is checked before anything is built from it: a dim cut into more
// slices than it has positions (a fuzzer's 2^40 once ran out of memory building the cores' slices).
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'ktir.exp' op 'ktir.work_division' cuts 'd0' into 1099511627776 slices; a dim of 1024 takes 1 to 1024
func.func @too_many_slices(%x: tensor<1024x1024xf16, #ktir.tiled<device_size = [16, 1024, 64], stride_map = [64, 1024, 1]>>) -> tensor<1024x1024xf16, #ktir.tiled<device_size = [16, 1024, 64], stride_map = [64, 1024, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %y = ktir.exp %x {ktir.work_division = {d0 = 1099511627776 : i64, d1 = 1 : i64}} : tensor<1024x1024xf16, #ktir.tiled<device_size = [16, 1024, 64], stride_map = [64, 1024, 1]>> -> tensor<1024x1024xf16, #ktir.tiled<device_size = [16, 1024, 64], stride_map = [64, 1024, 1]>>
  func.return %y : tensor<1024x1024xf16, #ktir.tiled<device_size = [16, 1024, 64], stride_map = [64, 1024, 1]>>
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'ktir.exp' op 'ktir.work_division' cuts 'd1' into 0 slices; a dim of 1024 takes 1 to 1024
func.func @no_slices(%x: tensor<1024x1024xf16, #ktir.tiled<device_size = [16, 1024, 64], stride_map = [64, 1024, 1]>>) -> tensor<1024x1024xf16, #ktir.tiled<device_size = [16, 1024, 64], stride_map = [64, 1024, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %y = ktir.exp %x {ktir.work_division = {d0 = 2 : i64, d1 = 0 : i64}} : tensor<1024x1024xf16, #ktir.tiled<device_size = [16, 1024, 64], stride_map = [64, 1024, 1]>> -> tensor<1024x1024xf16, #ktir.tiled<device_size = [16, 1024, 64], stride_map = [64, 1024, 1]>>
  func.return %y : tensor<1024x1024xf16, #ktir.tiled<device_size = [16, 1024, 64], stride_map = [64, 1024, 1]>>
}

// -----

// A division needing more cores than the target has (Spyre: 32).
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'ktir.exp' op 'ktir.work_division' needs 64 cores, more than the target's 32
func.func @too_many_cores(%x: tensor<1024x1024xf16, #ktir.tiled<device_size = [16, 1024, 64], stride_map = [64, 1024, 1]>>) -> tensor<1024x1024xf16, #ktir.tiled<device_size = [16, 1024, 64], stride_map = [64, 1024, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %y = ktir.exp %x {ktir.work_division = {d0 = 64 : i64, d1 = 1 : i64}} : tensor<1024x1024xf16, #ktir.tiled<device_size = [16, 1024, 64], stride_map = [64, 1024, 1]>> -> tensor<1024x1024xf16, #ktir.tiled<device_size = [16, 1024, 64], stride_map = [64, 1024, 1]>>
  func.return %y : tensor<1024x1024xf16, #ktir.tiled<device_size = [16, 1024, 64], stride_map = [64, 1024, 1]>>
}
