// RUN: ktir-opt %s -p ktir-plan-kernels,ktir-lower-to-cores | filecheck %s

// Prefetch: the matmul's first weight tile reads a parameter, which the exp before it does not
// write, so its load is a `prefetch` at the top of the kernel, in LX the exp leaves free (placed
// from the top of LX); the chunk loop's first iteration is peeled and does not load it again.
// Its x is the exp's result (kept in LX by the scratchpad plan): loaded per chunk, never
// prefetched. Input generated with
//   ktir-opt exp_then_matmul.mlir -p 'ktir-propagate-layouts,ktir-insert-restickify,ktir-pad-matmul,ktir-fuse,ktir-divide-work{cores=2 policy=default},ktir-plan-scratchpad'

builtin.module {
  func.func @exp_then_matmul(%x: tensor<64x1024xf16, #ktir.tiled<device_size = [16, 64, 64], stride_map = [64, 1024, 1]>>, %w: tensor<1024x4096xf16, #ktir.tiled<device_size = [64, 1024, 64], stride_map = [64, 4096, 1]>> {ktir.parameter = "w"}) -> tensor<64x4096xf16, #ktir.tiled<device_size = [64, 64, 64], stride_map = [64, 4096, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
    %a = ktir.exp %x {ktir.work_division = {d0 = 2 : i64, d1 = 1 : i64}, ktir.lx_address = 0 : i64, ktir.lx_bytes = 65536 : i64} : tensor<64x1024xf16, #ktir.tiled<device_size = [16, 64, 64], stride_map = [64, 1024, 1]>> -> tensor<64x1024xf16, #ktir.tiled<device_size = [16, 64, 64], stride_map = [64, 1024, 1]>>
    %y = ktir.matmul %a, %w {ktir.work_division = {m = 2 : i64, n = 1 : i64, k = 1 : i64}} : tensor<64x1024xf16, #ktir.tiled<device_size = [16, 64, 64], stride_map = [64, 1024, 1]>>, tensor<1024x4096xf16, #ktir.tiled<device_size = [64, 1024, 64], stride_map = [64, 4096, 1]>> -> tensor<64x4096xf16, #ktir.tiled<device_size = [64, 64, 64], stride_map = [64, 4096, 1]>>
    func.return %y : tensor<64x4096xf16, #ktir.tiled<device_size = [64, 64, 64], stride_map = [64, 4096, 1]>>
  }
}


// CHECK:      ktir.kernel "ktir.exp" cores 2 chunks 4
// CHECK-NOT:  prefetch
// CHECK:      ktir.kernel "ktir.matmul" cores 2 chunks 32
// CHECK:      %[[W:.*]] = ktir.lx_alloc address 1153408 : memref<2x2x1024x64xf16, "lx">
// CHECK:      %[[X:.*]] = ktir.lx_alloc address 0 resident
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT: ktir.dma_load %{{.*}} -> %[[W]][%{{.*}}, %[[ZERO]], %[[ZERO]]] tile 1 prefetch :
// CHECK:      ktir.dma_load %[[X]] -> %{{.*}} tile 0 :
// CHECK-NOT:  ktir.dma_load {{.*}} tile 1
// CHECK:      ktir.compute pt
// CHECK:      scf.for %{{.*}} = %[[ONE:.*]] to
// CHECK:        ktir.dma_load %[[X]] -> %{{.*}} tile 0 :
// CHECK-NEXT:   ktir.dma_load %{{.*}} -> %[[W]][{{.*}}] tile 1 :
