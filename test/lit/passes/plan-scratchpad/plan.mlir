// RUN: ktir-opt %s -p ktir-plan-scratchpad | filecheck %s
// RUN: ktir-opt %s -p 'ktir-plan-scratchpad{solver=bestfit}' | filecheck %s

// The input below meets the preconditions of ktir-plan-scratchpad; generated once with
//   git show f9d10e6:test/lit/passes/plan-scratchpad/plan.mlir | ktir-opt -p 'ktir-propagate-layouts,ktir-divide-work{policy=default}'
// (see test/lit/Inputs/passes/README.md).

// add and exp stay in LX (2 rows of 256 fp16 = 1,024 bytes per core); exp writes over add,
// which dies there; the returned abs stays in device memory.
// CHECK: %a = ktir.add {{.*}}ktir.lx_address = 0 : i64, ktir.lx_bytes = 1024 : i64
// CHECK: %e = ktir.exp {{.*}}ktir.lx_address = 0 : i64, ktir.lx_bytes = 1024 : i64
// CHECK: %r = ktir.abs
// CHECK-NOT: lx_address
// CHECK-SAME: work_division
func.func @f(%x: tensor<64x256xf16, #ktir.tiled<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>, %y: tensor<64x256xf16, #ktir.tiled<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>) -> tensor<64x256xf16, #ktir.tiled<device_size = [4, 64, 64], stride_map = [64, 256, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %a = ktir.add %x, %y {ktir.work_division = {d0 = 32 : i64, d1 = 1 : i64}} : tensor<64x256xf16, #ktir.tiled<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>, tensor<64x256xf16, #ktir.tiled<device_size = [4, 64, 64], stride_map = [64, 256, 1]>> -> tensor<64x256xf16, #ktir.tiled<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>
  %e = ktir.exp %a {ktir.work_division = {d0 = 32 : i64, d1 = 1 : i64}} : tensor<64x256xf16, #ktir.tiled<device_size = [4, 64, 64], stride_map = [64, 256, 1]>> -> tensor<64x256xf16, #ktir.tiled<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>
  %r = ktir.abs %e {ktir.work_division = {d0 = 32 : i64, d1 = 1 : i64}} : tensor<64x256xf16, #ktir.tiled<device_size = [4, 64, 64], stride_map = [64, 256, 1]>> -> tensor<64x256xf16, #ktir.tiled<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>
  func.return %r : tensor<64x256xf16, #ktir.tiled<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>
}
