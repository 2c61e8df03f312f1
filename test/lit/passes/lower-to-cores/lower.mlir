// RUN: ktir-opt %s --split-input-file -p ktir-lower-to-cores | filecheck %s

// The input below meets the preconditions of ktir-lower-to-cores; generated once with
//   git show f9d10e6:test/lit/passes/lower-to-cores/lower.mlir | ktir-opt --split-input-file -p 'ktir-propagate-layouts,ktir-divide-work{cores=2}'
// (see test/lit/Inputs/passes/README.md).

// The seed's (4, 64) abs on 2 cores: one 256-byte tile per tensor and core.
// CHECK-LABEL: func.func @abs
// CHECK: ktir.kernel "ktir.abs" cores 2 chunks 1 work_division {d0 = 2 : i64, d1 = 1 : i64}
// CHECK-SAME: tiles [#ktir.tile<extent = [1, 2, 64], starts = {{\[\[}}0, 0, 0], [0, 2, 0]], chunk_starts = {{\[\[}}0, 0, 0]]>
// CHECK: %[[CORE:.*]] = ktir.core_id : index
// CHECK: %[[IN:.*]] = ktir.lx_alloc address 0 : memref<1x1x2x64xf16, "lx">
// CHECK: %[[OUT:.*]] = ktir.lx_alloc address 256 : memref<1x1x2x64xf16, "lx">
// CHECK: ktir.dma_load %{{.*}} -> %[[IN]][%[[CORE]],
// CHECK: ktir.compute sfu[%[[CORE]], {{.*}} ins(%[[IN]] : {{.*}} outs(%[[OUT]] : {{.*}} tiles [0, 1]
// CHECK: ktir.abs
// CHECK: ktir.dma_store %[[OUT]] -> {{.*}} tile 1
// CHECK: ktir.yield
func.func @abs(%x: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %y = ktir.abs %x {ktir.work_division = {d0 = 2 : i64, d1 = 1 : i64}} : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
  func.return %y : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
}

// -----

// 1024 x 1024 fp16 on 2 cores: 1 MiB in + 1 MiB out per core does not fit, nor do 2 chunks in two
// slots (2 MiB); 4 chunks would (4 x 256 KiB), and the kernel streams chunks of at most 128 KiB
// per core so that loads overlap compute: 8 chunks. The loop alternates the two slots.
// CHECK-LABEL: func.func @chunked
// CHECK: ktir.kernel "ktir.exp" cores 2 chunks 8
// CHECK: ktir.lx_alloc address {{[0-9]+}} : memref<2x16x64x64xf16, "lx">
// CHECK: scf.for %[[CHUNK:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[SLOT:.*]] = arith.remui %[[CHUNK]]
// CHECK: ktir.dma_load {{.*}}[%{{.*}}, %[[CHUNK]], %[[SLOT]]]
func.func @chunked(%x: tensor<1024x1024xf16, #ktir.tiled<device_size = [16, 1024, 64], stride_map = [64, 1024, 1]>>) -> tensor<1024x1024xf16, #ktir.tiled<device_size = [16, 1024, 64], stride_map = [64, 1024, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %y = ktir.exp %x {ktir.work_division = {d0 = 2 : i64, d1 = 1 : i64}} : tensor<1024x1024xf16, #ktir.tiled<device_size = [16, 1024, 64], stride_map = [64, 1024, 1]>> -> tensor<1024x1024xf16, #ktir.tiled<device_size = [16, 1024, 64], stride_map = [64, 1024, 1]>>
  func.return %y : tensor<1024x1024xf16, #ktir.tiled<device_size = [16, 1024, 64], stride_map = [64, 1024, 1]>>
}
