// RUN: ktir-opt %s --split-input-file -p ktir-plan-scratchpad | filecheck %s

// The input below meets the preconditions of ktir-plan-scratchpad; generated once with
//   ktir-opt MLP.mlir -p 'ktir-propagate-layouts,ktir-insert-restickify,ktir-pad-matmul,ktir-fuse,ktir-divide-work{policy=dataflow}'
// from the graph-level SwiGLU MLP of `swiglu_mlp` in test/unit/helpers.py (see
// test/lit/Inputs/passes/README.md).

// A result ktir-divide-work hands off (`ktir.lx_handoff`) stays in LX though its op, a fused
// kernel, is not one the reference keeps: each core holds its 32 x 512 fp16 tile (32,768 bytes),
// which the down projection's cores read where it was written.
// CHECK-LABEL: func.func @handed_off
// CHECK: ktir.fused(%x, %wg, %wu) {{{.*}}ktir.lx_handoff, ktir.lx_address = 0 : i64, ktir.lx_bytes = 32768 : i64}
func.func @handed_off(%x: tensor<256x256xf16, #ktir.tiled<device_size = [4, 256, 64], stride_map = [64, 256, 1]>>, %wg: tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>> {ktir.parameter = "wg"}, %wu: tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>> {ktir.parameter = "wu"}, %wd: tensor<2048x256xf16, #ktir.tiled<device_size = [4, 2048, 64], stride_map = [64, 256, 1]>> {ktir.parameter = "wd"}) -> tensor<256x256xf16, #ktir.tiled<device_size = [4, 256, 64], stride_map = [64, 256, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %hid = ktir.fused(%x, %wg, %wu) {ktir.work_division = {m = 8 : i64, n = 4 : i64, k = 1 : i64}, ktir.core_order = ["n", "m", "k"], ktir.lx_handoff} : (tensor<256x256xf16, #ktir.tiled<device_size = [4, 256, 64], stride_map = [64, 256, 1]>>, tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>>, tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>>) -> tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>> {
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

// The same program unmarked: the fused kernel's result goes to device memory.
// CHECK-LABEL: func.func @not_marked
// CHECK-NOT: ktir.lx_address
// CHECK: func.return
func.func @not_marked(%x: tensor<256x256xf16, #ktir.tiled<device_size = [4, 256, 64], stride_map = [64, 256, 1]>>, %wg: tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>> {ktir.parameter = "wg"}, %wu: tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>> {ktir.parameter = "wu"}, %wd: tensor<2048x256xf16, #ktir.tiled<device_size = [4, 2048, 64], stride_map = [64, 256, 1]>> {ktir.parameter = "wd"}) -> tensor<256x256xf16, #ktir.tiled<device_size = [4, 256, 64], stride_map = [64, 256, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %hid = ktir.fused(%x, %wg, %wu) {ktir.work_division = {m = 8 : i64, n = 4 : i64, k = 1 : i64}, ktir.core_order = ["n", "m", "k"]} : (tensor<256x256xf16, #ktir.tiled<device_size = [4, 256, 64], stride_map = [64, 256, 1]>>, tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>>, tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>>) -> tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>> {
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

