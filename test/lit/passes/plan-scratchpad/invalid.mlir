// RUN: not ktir-opt %s --split-input-file -p ktir-plan-scratchpad 2>&1 | filecheck %s

// The input below meets the preconditions of ktir-plan-scratchpad but for its core order; made
// from test/lit/passes/plan-scratchpad/handoff.mlir by dropping `k` from `ktir.core_order`.

// A core order must list each dim of the op's work division once: a located error, not a guess.
// CHECK: invalid.mlir:[[# @LINE + 2]]:10: error: 'ktir.fused' op 'ktir.core_order' must list each dim of its work division once, not ["n", "m"]
func.func @bad_core_order(%x: tensor<256x256xf16, #ktir.tiled<device_size = [4, 256, 64], stride_map = [64, 256, 1]>>, %wg: tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>> {ktir.parameter = "wg"}, %wu: tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>> {ktir.parameter = "wu"}, %wd: tensor<2048x256xf16, #ktir.tiled<device_size = [4, 2048, 64], stride_map = [64, 256, 1]>> {ktir.parameter = "wd"}) -> tensor<256x256xf16, #ktir.tiled<device_size = [4, 256, 64], stride_map = [64, 256, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %hid = ktir.fused(%x, %wg, %wu) {ktir.work_division = {m = 8 : i64, n = 4 : i64, k = 1 : i64}, ktir.core_order = ["n", "m"], ktir.lx_handoff} : (tensor<256x256xf16, #ktir.tiled<device_size = [4, 256, 64], stride_map = [64, 256, 1]>>, tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>>, tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>>) -> tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>> {
  ^bb0(%x_1: tensor<256x256xf16, #ktir.tiled<device_size = [4, 256, 64], stride_map = [64, 256, 1]>>, %wg_1: tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>>, %wu_1: tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>>):
    %g = ktir.matmul %x_1, %wg_1 : tensor<256x256xf16, #ktir.tiled<device_size = [4, 256, 64], stride_map = [64, 256, 1]>>, tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>> -> tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>>
    %u = ktir.matmul %x_1, %wu_1 : tensor<256x256xf16, #ktir.tiled<device_size = [4, 256, 64], stride_map = [64, 256, 1]>>, tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>> -> tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>>
    %a = ktir.silu %g : tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>> -> tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>>
    %hid_1 = ktir.mul %a, %u : tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>>, tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>> -> tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>>
    ktir.yield %hid_1 : tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>>
  }
  %y = ktir.matmul %hid, %wd {ktir.work_division = {m = 8 : i64, n = 1 : i64, k = 4 : i64}} : tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>>, tensor<2048x256xf16, #ktir.tiled<device_size = [4, 2048, 64], stride_map = [64, 256, 1]>> -> tensor<256x256xf16, #ktir.tiled<device_size = [4, 256, 64], stride_map = [64, 256, 1]>>
  func.return %y : tensor<256x256xf16, #ktir.tiled<device_size = [4, 256, 64], stride_map = [64, 256, 1]>>
}


// -----

// A work division needing more cores than the target has: located, before any buffer is built.
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'ktir.exp' op 'ktir.work_division' needs 64 cores, more than the target's 32
func.func @too_many_cores(%x: tensor<1024x1024xf16, #ktir.tiled<device_size = [16, 1024, 64], stride_map = [64, 1024, 1]>>) -> tensor<1024x1024xf16, #ktir.tiled<device_size = [16, 1024, 64], stride_map = [64, 1024, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %y = ktir.exp %x {ktir.work_division = {d0 = 64 : i64, d1 = 1 : i64}} : tensor<1024x1024xf16, #ktir.tiled<device_size = [16, 1024, 64], stride_map = [64, 1024, 1]>> -> tensor<1024x1024xf16, #ktir.tiled<device_size = [16, 1024, 64], stride_map = [64, 1024, 1]>>
  %z = ktir.exp %y {ktir.work_division = {d0 = 32 : i64, d1 = 1 : i64}} : tensor<1024x1024xf16, #ktir.tiled<device_size = [16, 1024, 64], stride_map = [64, 1024, 1]>> -> tensor<1024x1024xf16, #ktir.tiled<device_size = [16, 1024, 64], stride_map = [64, 1024, 1]>>
  func.return %z : tensor<1024x1024xf16, #ktir.tiled<device_size = [16, 1024, 64], stride_map = [64, 1024, 1]>>
}
