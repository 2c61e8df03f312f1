// RUN: ktir-opt %s -p 'ktir-compile{cores=2 fuse=false}' | filecheck %s
// RUN: ktir-opt %s -p 'ktir-compile{cores=2}' | filecheck %s --check-prefix=FUSED

// The whole pipeline on graph-level IR: layouts, work division, scratchpad, kernels. By
// default add and exp fuse into one kernel; without fusion add's result stays in LX for exp.
// FUSED: ktir.kernel "ktir.fused" cores 2 chunks 1 work_division {d0 = 2 : i64, d1 = 1 : i64}
// FUSED: ktir.compute sfu
// FUSED: ktir.fused
// FUSED-NEXT: ^{{.*}}:
// FUSED-NEXT: ktir.add
// FUSED-NEXT: ktir.exp
// CHECK: func.func @f(%x: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>)
// CHECK: ktir.kernel "ktir.add" cores 2 chunks 1 work_division {d0 = 2 : i64, d1 = 1 : i64}
// CHECK-SAME: ktir.lx_address = 0 : i64
// CHECK: ktir.kernel "ktir.exp" cores 2
// CHECK: ktir.lx_alloc address 0 resident
// CHECK: func.return
func.func @f(%x: tensor<4x64xf16>) -> tensor<4x64xf16> {
  %a = ktir.add %x, %x : tensor<4x64xf16>, tensor<4x64xf16> -> tensor<4x64xf16>
  %e = ktir.exp %a : tensor<4x64xf16> -> tensor<4x64xf16>
  return %e : tensor<4x64xf16>
}
