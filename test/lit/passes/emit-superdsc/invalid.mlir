// ktir-emit-superdsc needs every kernel's ktir.work_division; without one it reports a located
// error and writes no file.
// RUN: rm -rf %t
// RUN: ktir-opt %s --verify-diagnostics -p 'ktir-emit-superdsc{dir="%t"}'
// RUN: not ls %t

// The input below meets the preconditions of ktir-emit-superdsc except the work division under
// test; generated once with
//   git show f9d10e6:test/lit/passes/emit-superdsc/invalid.mlir | ktir-opt -p 'ktir-propagate-layouts'
// (see test/lit/Inputs/passes/README.md).

func.func @f(%x: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  // expected-error @+1 {{'ktir.abs' op has no ktir.work_division; run ktir-divide-work first}}
  %y = ktir.abs %x : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
  func.return %y : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
}
