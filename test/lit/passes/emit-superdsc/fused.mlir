// ktir-emit-superdsc writes one DSC per graph op; a ktir.fused kernel has no such form, so it
// is a located error and no file is written.
// RUN: rm -rf %t
// RUN: ktir-opt %s --verify-diagnostics -p 'ktir-emit-superdsc{dir="%t"}'
// RUN: not ls %t

// The input below meets the preconditions of ktir-emit-superdsc (divided); generated once with
//   ktir-opt -p 'ktir-propagate-layouts,ktir-insert-restickify,ktir-pad-matmul,ktir-fuse,ktir-divide-work{policy=default}'
// from silu(x) * w (see test/lit/Inputs/passes/README.md).

func.func @f(%x: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, %w: tensor<64xf16, #ktir.tiled<device_size = [1, 64], stride_map = [64, 1]>>) -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  // expected-error @+1 {{has no SuperDSC form (SuperDSC describes one graph op per kernel); export without ktir-fuse}}
  %m = ktir.fused(%x, %w) {ktir.work_division = {d0 = 4 : i64, d1 = 1 : i64}} : (tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, tensor<64xf16, #ktir.tiled<device_size = [1, 64], stride_map = [64, 1]>>) -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  ^bb0(%x_1: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, %w_1: tensor<64xf16, #ktir.tiled<device_size = [1, 64], stride_map = [64, 1]>>):
    %s = ktir.silu %x_1 : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
    %m_1 = ktir.mul %s, %w_1 : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, tensor<64xf16, #ktir.tiled<device_size = [1, 64], stride_map = [64, 1]>> -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
    ktir.yield %m_1 : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
  }
  func.return %m : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
}

