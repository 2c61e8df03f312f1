// ktir-emit-superdsc writes one DSC per graph op of the reference stack, which has no attention
// kernel: ktir.attention is a located error and no file is written.
// RUN: rm -rf %t
// RUN: ktir-opt %s --verify-diagnostics -p 'ktir-emit-superdsc{dir="%t"}'
// RUN: not ls %t

// The input below meets the preconditions of ktir-emit-superdsc (divided); generated once with
//   ktir-opt -p 'ktir-propagate-layouts,ktir-divide-work{policy=default}'
// from test/lit/passes/propagate-layouts/rules.mlir's @attention (see test/lit/Inputs/passes/README.md).

func.func @attention(%q: tensor<1x8x256x64xf16, #ktir.tiled<device_size = [8, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>, %k: tensor<1x2x256x64xf16, #ktir.tiled<device_size = [2, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>, %v: tensor<1x2x256x64xf16, #ktir.tiled<device_size = [2, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>) -> tensor<1x8x256x64xf16, #ktir.tiled<device_size = [8, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %grouped = ktir.reshape %q : tensor<1x8x256x64xf16, #ktir.tiled<device_size = [8, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>> -> tensor<1x2x4x256x64xf16, #ktir.tiled<device_size = [8, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>
  // expected-error @+1 {{has no SuperDSC form (the reference has no attention kernel: two matmuls and a softmax)}}
  %o = ktir.attention %grouped, %k, %v scale 1.250000e-01 causal 0 {ktir.work_division = {b0 = 1 : i64, h = 8 : i64, s = 4 : i64, e = 1 : i64, l = 1 : i64, d = 1 : i64}} : tensor<1x2x4x256x64xf16, #ktir.tiled<device_size = [8, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>, tensor<1x2x256x64xf16, #ktir.tiled<device_size = [2, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>, tensor<1x2x256x64xf16, #ktir.tiled<device_size = [2, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>> -> tensor<1x2x4x256x64xf16, #ktir.tiled<device_size = [8, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>
  %r = ktir.reshape %o : tensor<1x2x4x256x64xf16, #ktir.tiled<device_size = [8, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>> -> tensor<1x8x256x64xf16, #ktir.tiled<device_size = [8, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>
  func.return %r : tensor<1x8x256x64xf16, #ktir.tiled<device_size = [8, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>
}
