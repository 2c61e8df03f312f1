// RUN: ktir-opt %s --split-input-file -p 'ktir-divide-work{policy=dataflow}' | filecheck %s --check-prefix=C32
// RUN: ktir-opt %s --split-input-file -p 'ktir-divide-work{policy=dataflow handoff=false}' | filecheck %s --check-prefix=APART
// RUN: ktir-opt %s --split-input-file -p 'ktir-divide-work{cores=8 policy=dataflow}' | filecheck %s --check-prefix=C8

// The input below meets the preconditions of ktir-divide-work; generated once with
//   ktir-opt MLP.mlir -p 'ktir-propagate-layouts,ktir-insert-restickify,ktir-pad-matmul,ktir-fuse'
// from the graph-level SwiGLU MLPs of `swiglu_mlp` in test/unit/helpers.py (see
// test/lit/Inputs/passes/README.md).

// The LX hand-off (ktir.cores.handoff): on 32 cores SwiGLU (256 tokens, 256 -> 2048) is
// memory-bound, so the down projection takes its M split and its N split as K and reads each
// core's 32 x 512 hidden tile where it was written: SwiGLU's cores take N first
// (`ktir.core_order`) and its result is marked for the scratchpad plan (`ktir.lx_handoff`).
// Without hand-offs the down projection splits M and N and reads the hidden tensor from LPDDR5.
// C32-LABEL: func.func @handed_off
// C32: ktir.fused(%x, %wg, %wu) {ktir.work_division = {m = 8 : i64, n = 4 : i64, k = 1 : i64}, ktir.core_order = ["n", "m", "k"], ktir.lx_handoff}
// C32: ktir.matmul %hid, %wd {ktir.work_division = {m = 8 : i64, n = 1 : i64, k = 4 : i64}}
// APART-LABEL: func.func @handed_off
// APART-NOT: ktir.core_order
// APART-NOT: ktir.lx_handoff
// APART: ktir.matmul %hid, %wd {ktir.work_division = {m = 8 : i64, n = 4 : i64, k = 1 : i64}}
func.func @handed_off(%x: tensor<256x256xf16, #ktir.tiled<device_size = [4, 256, 64], stride_map = [64, 256, 1]>>, %wg: tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>> {ktir.parameter = "wg"}, %wu: tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>> {ktir.parameter = "wu"}, %wd: tensor<2048x256xf16, #ktir.tiled<device_size = [4, 2048, 64], stride_map = [64, 256, 1]>> {ktir.parameter = "wd"}) -> tensor<256x256xf16, #ktir.tiled<device_size = [4, 256, 64], stride_map = [64, 256, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %hid = ktir.fused(%x, %wg, %wu) : (tensor<256x256xf16, #ktir.tiled<device_size = [4, 256, 64], stride_map = [64, 256, 1]>>, tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>>, tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>>) -> tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>> {
  ^bb0(%x_1: tensor<256x256xf16, #ktir.tiled<device_size = [4, 256, 64], stride_map = [64, 256, 1]>>, %wg_1: tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>>, %wu_1: tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>>):
    %g = ktir.matmul %x_1, %wg_1 : tensor<256x256xf16, #ktir.tiled<device_size = [4, 256, 64], stride_map = [64, 256, 1]>>, tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>> -> tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>>
    %u = ktir.matmul %x_1, %wu_1 : tensor<256x256xf16, #ktir.tiled<device_size = [4, 256, 64], stride_map = [64, 256, 1]>>, tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>> -> tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>>
    %a = ktir.silu %g : tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>> -> tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>>
    %hid_1 = ktir.mul %a, %u : tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>>, tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>> -> tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>>
    ktir.yield %hid_1 : tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>>
  }
  %y = ktir.matmul %hid, %wd : tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>>, tensor<2048x256xf16, #ktir.tiled<device_size = [4, 2048, 64], stride_map = [64, 256, 1]>> -> tensor<256x256xf16, #ktir.tiled<device_size = [4, 256, 64], stride_map = [64, 256, 1]>>
  func.return %y : tensor<256x256xf16, #ktir.tiled<device_size = [4, 256, 64], stride_map = [64, 256, 1]>>
}


// -----

// On 8 cores SwiGLU (128 tokens, 512 -> 1024) is compute-bound: its store hides under its PE
// work, so keeping its result in LX would save no time and the down projection's K split would
// cost some. Nothing is handed off.
// C8-LABEL: func.func @compute_bound
// C8-NOT: ktir.core_order
// C8-NOT: ktir.lx_handoff
// C8: ktir.matmul %hid, %wd {ktir.work_division = {m = 2 : i64, n = 4 : i64, k = 1 : i64}}
func.func @compute_bound(%x: tensor<128x512xf16, #ktir.tiled<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>, %wg: tensor<512x1024xf16, #ktir.tiled<device_size = [16, 512, 64], stride_map = [64, 1024, 1]>> {ktir.parameter = "wg"}, %wu: tensor<512x1024xf16, #ktir.tiled<device_size = [16, 512, 64], stride_map = [64, 1024, 1]>> {ktir.parameter = "wu"}, %wd: tensor<1024x512xf16, #ktir.tiled<device_size = [8, 1024, 64], stride_map = [64, 512, 1]>> {ktir.parameter = "wd"}) -> tensor<128x512xf16, #ktir.tiled<device_size = [8, 128, 64], stride_map = [64, 512, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %hid = ktir.fused(%x, %wg, %wu) : (tensor<128x512xf16, #ktir.tiled<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>, tensor<512x1024xf16, #ktir.tiled<device_size = [16, 512, 64], stride_map = [64, 1024, 1]>>, tensor<512x1024xf16, #ktir.tiled<device_size = [16, 512, 64], stride_map = [64, 1024, 1]>>) -> tensor<128x1024xf16, #ktir.tiled<device_size = [16, 128, 64], stride_map = [64, 1024, 1]>> {
  ^bb0(%x_1: tensor<128x512xf16, #ktir.tiled<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>, %wg_1: tensor<512x1024xf16, #ktir.tiled<device_size = [16, 512, 64], stride_map = [64, 1024, 1]>>, %wu_1: tensor<512x1024xf16, #ktir.tiled<device_size = [16, 512, 64], stride_map = [64, 1024, 1]>>):
    %g = ktir.matmul %x_1, %wg_1 : tensor<128x512xf16, #ktir.tiled<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>, tensor<512x1024xf16, #ktir.tiled<device_size = [16, 512, 64], stride_map = [64, 1024, 1]>> -> tensor<128x1024xf16, #ktir.tiled<device_size = [16, 128, 64], stride_map = [64, 1024, 1]>>
    %u = ktir.matmul %x_1, %wu_1 : tensor<128x512xf16, #ktir.tiled<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>, tensor<512x1024xf16, #ktir.tiled<device_size = [16, 512, 64], stride_map = [64, 1024, 1]>> -> tensor<128x1024xf16, #ktir.tiled<device_size = [16, 128, 64], stride_map = [64, 1024, 1]>>
    %a = ktir.silu %g : tensor<128x1024xf16, #ktir.tiled<device_size = [16, 128, 64], stride_map = [64, 1024, 1]>> -> tensor<128x1024xf16, #ktir.tiled<device_size = [16, 128, 64], stride_map = [64, 1024, 1]>>
    %hid_1 = ktir.mul %a, %u : tensor<128x1024xf16, #ktir.tiled<device_size = [16, 128, 64], stride_map = [64, 1024, 1]>>, tensor<128x1024xf16, #ktir.tiled<device_size = [16, 128, 64], stride_map = [64, 1024, 1]>> -> tensor<128x1024xf16, #ktir.tiled<device_size = [16, 128, 64], stride_map = [64, 1024, 1]>>
    ktir.yield %hid_1 : tensor<128x1024xf16, #ktir.tiled<device_size = [16, 128, 64], stride_map = [64, 1024, 1]>>
  }
  %y = ktir.matmul %hid, %wd : tensor<128x1024xf16, #ktir.tiled<device_size = [16, 128, 64], stride_map = [64, 1024, 1]>>, tensor<1024x512xf16, #ktir.tiled<device_size = [8, 1024, 64], stride_map = [64, 512, 1]>> -> tensor<128x512xf16, #ktir.tiled<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>
  func.return %y : tensor<128x512xf16, #ktir.tiled<device_size = [8, 128, 64], stride_map = [64, 512, 1]>>
}

