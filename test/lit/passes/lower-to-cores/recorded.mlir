// RUN: ktir-opt %s --split-input-file -p ktir-lower-to-cores | filecheck %s

// ktir-lower-to-cores builds what the IR records and decides nothing: the plans below are
// written by hand (ktir-plan-kernels would choose otherwise), and the kernels follow them. The
// plan attributes do not reach core-level IR.

// The seed's (4, 64) abs on 2 cores fits whole (the planner records d0 = 1, buffers at 0 and
// 256); forced into 2 chunks of one row, two slots per buffer, at addresses 4096 and 8192.
// CHECK-LABEL: func.func @forced_chunks
// CHECK-NOT: ktir.chunk_plan
// CHECK-NOT: ktir.lx_buffers
// CHECK: ktir.kernel "ktir.abs" cores 2 chunks 2 work_division {d0 = 2 : i64, d1 = 1 : i64}
// CHECK-SAME: tiles [#ktir.tile<extent = [1, 1, 64], starts = {{\[\[}}0, 0, 0], [0, 2, 0]], chunk_starts = {{\[\[}}0, 0, 0], [0, 1, 0]]>
// CHECK: %[[IN:.*]] = ktir.lx_alloc address 4096 : memref<2x1x1x64xf16, "lx">
// CHECK: %[[OUT:.*]] = ktir.lx_alloc address 8192 : memref<2x1x1x64xf16, "lx">
// CHECK: scf.for %[[CHUNK:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[SLOT:.*]] = arith.remui %[[CHUNK]]
// CHECK: ktir.dma_load %{{.*}} -> %[[IN]][%{{.*}}, %[[CHUNK]], %[[SLOT]]] tile 0
// CHECK: ktir.dma_store %[[OUT]] -> %{{.*}}[%{{.*}}, %[[CHUNK]], %[[SLOT]]] tile 1
func.func @forced_chunks(%x: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  %y = ktir.abs %x {ktir.work_division = {d0 = 2 : i64, d1 = 1 : i64}, ktir.chunk_plan = #ktir.chunk_plan<d0 = 2>, ktir.lx_buffers = #ktir.lx_buffers<in0 = 4096, out0 = 8192>} : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
  func.return %y : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
}

// -----

// The input of prefetch.mlir with a hand-written plan: the matmul in 16 chunks of 256 columns
// (the planner chooses 32) and its weight's buffer at 524288, its first load a prefetch.
// CHECK-LABEL: func.func @forced_prefetch
// CHECK-NOT: ktir.prefetch =
// CHECK: ktir.kernel "ktir.exp" cores 2 chunks 4
// CHECK-NOT: prefetch
// CHECK: ktir.kernel "ktir.matmul" cores 2 chunks 16
// CHECK: ktir.lx_alloc address 131072 : memref<2x16x32x64xf16, "lx">
// CHECK: %[[W:.*]] = ktir.lx_alloc address 524288 : memref<2x4x1024x64xf16, "lx">
// CHECK: ktir.lx_alloc address 262144 : memref<2x4x32x64xf16, "lx">
// CHECK: ktir.dma_load %{{.*}} -> %[[W]][{{.*}}] tile 1 prefetch :
// CHECK: scf.for
// CHECK-NOT: prefetch
// CHECK: ktir.yield
func.func @forced_prefetch(%x: tensor<64x1024xf16, #ktir.tiled<device_size = [16, 64, 64], stride_map = [64, 1024, 1]>>, %w: tensor<1024x4096xf16, #ktir.tiled<device_size = [64, 1024, 64], stride_map = [64, 4096, 1]>> {ktir.parameter = "w"}) -> tensor<64x4096xf16, #ktir.tiled<device_size = [64, 64, 64], stride_map = [64, 4096, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %a = ktir.exp %x {ktir.work_division = {d0 = 2 : i64, d1 = 1 : i64}, ktir.lx_address = 0 : i64, ktir.lx_bytes = 65536 : i64, ktir.chunk_plan = #ktir.chunk_plan<d0 = 4, d1 = 1>, ktir.lx_buffers = #ktir.lx_buffers<in0 = 65536, out0 = 98304>} : tensor<64x1024xf16, #ktir.tiled<device_size = [16, 64, 64], stride_map = [64, 1024, 1]>> -> tensor<64x1024xf16, #ktir.tiled<device_size = [16, 64, 64], stride_map = [64, 1024, 1]>>
  %y = ktir.matmul %a, %w {ktir.work_division = {m = 2 : i64, n = 1 : i64, k = 1 : i64}, ktir.chunk_plan = #ktir.chunk_plan<m = 1, n = 16, k = 1>, ktir.lx_buffers = #ktir.lx_buffers<in0 = 131072, in1 = 524288, out0 = 262144>, ktir.prefetch = #ktir.prefetch<1>} : tensor<64x1024xf16, #ktir.tiled<device_size = [16, 64, 64], stride_map = [64, 1024, 1]>>, tensor<1024x4096xf16, #ktir.tiled<device_size = [64, 1024, 64], stride_map = [64, 4096, 1]>> -> tensor<64x4096xf16, #ktir.tiled<device_size = [64, 64, 64], stride_map = [64, 4096, 1]>>
  func.return %y : tensor<64x4096xf16, #ktir.tiled<device_size = [64, 64, 64], stride_map = [64, 4096, 1]>>
}
