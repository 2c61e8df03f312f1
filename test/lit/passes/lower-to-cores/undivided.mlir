// RUN: not ktir-opt %s -p ktir-plan-kernels,ktir-lower-to-cores 2>&1 | filecheck %s

// CHECK: undivided.mlir:[[# @LINE + 2]]:8: error: 'ktir.abs' op has no ktir.work_division; run ktir-divide-work first
func.func @undivided(%x: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  %y = ktir.abs %x : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
  return %y : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
}
