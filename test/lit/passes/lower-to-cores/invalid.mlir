// RUN: not ktir-opt %s -p ktir-plan-kernels,ktir-lower-to-cores 2>&1 | filecheck %s

// The input below meets the preconditions of ktir-plan-kernels (which ktir-lower-to-cores needs first); generated once with
//   git show f9d10e6:test/lit/passes/lower-to-cores/invalid.mlir | ktir-opt -p 'ktir-propagate-layouts,ktir-divide-work{policy=default}'
// (see test/lit/Inputs/passes/README.md).

// A softmax row must stay whole on a core: 2 MiB in and 2 MiB out never fit.
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'ktir.softmax' op needs 4,194,304 bytes of LX per core (core 0) for its smallest chunk, more than the 1,677,721 bytes free
func.func @too_big(%x: tensor<1x1048576xf16, #ktir.tiled<device_size = [16384, 1, 64], stride_map = [64, -1, 1]>>) -> tensor<1x1048576xf16, #ktir.tiled<device_size = [16384, 1, 64], stride_map = [64, -1, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %y = ktir.softmax %x dim 1 {ktir.work_division = {d0 = 1 : i64, d1 = 1 : i64}} : tensor<1x1048576xf16, #ktir.tiled<device_size = [16384, 1, 64], stride_map = [64, -1, 1]>> -> tensor<1x1048576xf16, #ktir.tiled<device_size = [16384, 1, 64], stride_map = [64, -1, 1]>>
  func.return %y : tensor<1x1048576xf16, #ktir.tiled<device_size = [16384, 1, 64], stride_map = [64, -1, 1]>>
}
