// RUN: ktir-opt %s --split-input-file -p ktir-plan-kernels,ktir-lower-to-cores | filecheck %s

// The input below meets the preconditions of ktir-plan-kernels (which ktir-lower-to-cores needs first); generated once with
//   git show f9d10e6:test/lit/passes/lower-to-cores/lower.mlir | ktir-opt --split-input-file -p 'ktir-propagate-layouts,ktir-divide-work{cores=2 policy=default}'
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
// slots (2 MiB); 4 chunks would (4 x 256 KiB), and the kernel streams chunks of at most 16 KiB
// per core so that loads overlap compute: 64 chunks of 8 rows. The loop alternates the two slots.
// CHECK-LABEL: func.func @chunked
// CHECK: ktir.kernel "ktir.exp" cores 2 chunks 64
// CHECK: ktir.lx_alloc address {{[0-9]+}} : memref<2x16x8x64xf16, "lx">
// CHECK: scf.for %[[CHUNK:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[SLOT:.*]] = arith.remui %[[CHUNK]]
// CHECK: ktir.dma_load {{.*}}[%{{.*}}, %[[CHUNK]], %[[SLOT]]]
func.func @chunked(%x: tensor<1024x1024xf16, #ktir.tiled<device_size = [16, 1024, 64], stride_map = [64, 1024, 1]>>) -> tensor<1024x1024xf16, #ktir.tiled<device_size = [16, 1024, 64], stride_map = [64, 1024, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %y = ktir.exp %x {ktir.work_division = {d0 = 2 : i64, d1 = 1 : i64}} : tensor<1024x1024xf16, #ktir.tiled<device_size = [16, 1024, 64], stride_map = [64, 1024, 1]>> -> tensor<1024x1024xf16, #ktir.tiled<device_size = [16, 1024, 64], stride_map = [64, 1024, 1]>>
  func.return %y : tensor<1024x1024xf16, #ktir.tiled<device_size = [16, 1024, 64], stride_map = [64, 1024, 1]>>
}

// -----

// Grouped attention (2 key heads, 4 query heads each) on 2 cores: a core per key head runs its
// group's 4 query heads. Its key and value tiles are the same for every chunk of queries, so
// they are loaded once, before the loop; the queries stream in 8 chunks of 32 rows (16 KiB).
// CHECK-LABEL: func.func @attention
// CHECK: ktir.kernel "ktir.attention" cores 2 chunks 8 work_division {b0 = 1 : i64, h = 2 : i64, s = 1 : i64, e = 1 : i64, l = 1 : i64, d = 1 : i64}
// CHECK-SAME: tiles [#ktir.tile<extent = [4, 32, 1, 1, 64], starts = {{\[\[}}0, 0, 0, 0, 0], [4, 0, 0, 0, 0]], chunk_starts = {{\[\[}}0, 0, 0, 0, 0], [0, 32, 0, 0, 0],{{.*}}>, #ktir.tile<extent = [1, 256, 1, 1, 64], starts = {{\[\[}}0, 0, 0, 0, 0], [1, 0, 0, 0, 0]]
// CHECK: ktir.dma_load %{{.*}} tile 1
// CHECK-NEXT: ktir.dma_load %{{.*}} tile 2
// CHECK: scf.for
// CHECK: ktir.dma_load %{{.*}} tile 0
// CHECK-NEXT: ktir.compute pt
// CHECK: ktir.attention %{{.*}}, %{{.*}}, %{{.*}} scale 1.250000e-01 causal 0
func.func @attention(%q: tensor<1x8x256x64xf16, #ktir.tiled<device_size = [8, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>, %k: tensor<1x2x256x64xf16, #ktir.tiled<device_size = [2, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>, %v: tensor<1x2x256x64xf16, #ktir.tiled<device_size = [2, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>) -> tensor<1x8x256x64xf16, #ktir.tiled<device_size = [8, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %grouped = ktir.reshape %q : tensor<1x8x256x64xf16, #ktir.tiled<device_size = [8, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>> -> tensor<1x2x4x256x64xf16, #ktir.tiled<device_size = [8, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>
  %o = ktir.attention %grouped, %k, %v scale 1.250000e-01 causal 0 {ktir.work_division = {b0 = 1 : i64, h = 2 : i64, s = 1 : i64, e = 1 : i64, l = 1 : i64, d = 1 : i64}} : tensor<1x2x4x256x64xf16, #ktir.tiled<device_size = [8, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>, tensor<1x2x256x64xf16, #ktir.tiled<device_size = [2, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>, tensor<1x2x256x64xf16, #ktir.tiled<device_size = [2, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>> -> tensor<1x2x4x256x64xf16, #ktir.tiled<device_size = [8, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>
  %r = ktir.reshape %o : tensor<1x2x4x256x64xf16, #ktir.tiled<device_size = [8, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>> -> tensor<1x8x256x64xf16, #ktir.tiled<device_size = [8, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>
  func.return %r : tensor<1x8x256x64xf16, #ktir.tiled<device_size = [8, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>
}

// -----

// A matmul with a fused epilogue (SwiGLU's silu(x @ w) * up) over 16 output tiles: two
// accumulators, both zeroed before the loop; tile n accumulates into slot n % 2. The loop is
// software-pipelined: tile 0 accumulates first; then iteration n loads tile n's epilogue input,
// accumulates tile n + 1, and runs tile n's epilogue and store, zeroing its slot for tile n + 2;
// the last tile finishes after the loop. The DMA queue never waits for an epilogue, and the PE
// arrays accumulate one tile while the SFU runs the previous tile's epilogue.
// CHECK-LABEL: func.func @swiglu
// CHECK: ktir.kernel "ktir.fused"
// CHECK: %[[ACC:.*]] = ktir.lx_alloc address {{[0-9]+}} : memref<2x1x256x64xf32, "lx">
// CHECK: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK: ktir.lx_fill %[[ACC]][%[[ZERO]]] value 0
// CHECK-NEXT: arith.constant 1 : index
// CHECK-NEXT: ktir.lx_fill %[[ACC]][%{{.*}}] value 0
// CHECK: scf.for
// CHECK: ktir.compute pt{{.*}} outs(%[[ACC]] : {{.*}}) tiles [0, 1, 3] accumulate into
// CHECK: scf.for %[[N:.*]] = %[[ZERO]] to
// CHECK: %[[SLOT:.*]] = arith.remui %[[N]], %{{.*}} : index
// CHECK-NEXT: ktir.dma_load {{.*}}[%{{.*}}, %{{.*}}, %[[SLOT]]] tile 2
// CHECK-NEXT: %[[NEXT:.*]] = arith.addi %[[N]], %{{.*}} : index
// CHECK-NEXT: %[[NEXT_SLOT:.*]] = arith.remui %[[NEXT]], %{{.*}} : index
// CHECK: ktir.compute pt{{.*}} outs(%[[ACC]] : {{.*}}) tiles [0, 1, 3] accumulate into %[[NEXT_SLOT]]
// CHECK: ktir.compute sfu{{.*}} ins(%[[ACC]], {{.*}}) outs(
// CHECK: ktir.dma_store {{.*}} tile 3
// CHECK-NEXT: ktir.lx_fill %[[ACC]][%[[SLOT]]] value 0
// CHECK: ktir.dma_load {{.*}} tile 2
// CHECK: ktir.compute sfu{{.*}} ins(%[[ACC]], {{.*}}) outs(
// CHECK: ktir.dma_store {{.*}} tile 3
func.func @swiglu(%x: tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>>, %w: tensor<2048x2048xf16, #ktir.tiled<device_size = [32, 2048, 64], stride_map = [64, 2048, 1]>> {ktir.parameter = "w"}, %up: tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>>) -> tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %y = ktir.fused(%x, %w, %up) {ktir.work_division = {m = 1 : i64, n = 2 : i64, k = 1 : i64}} : (tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>>, tensor<2048x2048xf16, #ktir.tiled<device_size = [32, 2048, 64], stride_map = [64, 2048, 1]>>, tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>>) -> tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>> {
  ^bb0(%x_1: tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>>, %w_1: tensor<2048x2048xf16, #ktir.tiled<device_size = [32, 2048, 64], stride_map = [64, 2048, 1]>>, %up_1: tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>>):
    %gate = ktir.matmul %x_1, %w_1 : tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>>, tensor<2048x2048xf16, #ktir.tiled<device_size = [32, 2048, 64], stride_map = [64, 2048, 1]>> -> tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>>
    %act = ktir.silu %gate : tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>> -> tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>>
    %y_1 = ktir.mul %act, %up_1 : tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>>, tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>> -> tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>>
    ktir.yield %y_1 : tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>>
  }
  func.return %y : tensor<256x2048xf16, #ktir.tiled<device_size = [32, 256, 64], stride_map = [64, 2048, 1]>>
}
