// RUN: ktir-opt %s | ktir-opt | filecheck %s
// RUN: ktir-opt %s --print-op-generic | ktir-opt | filecheck %s

// Core-level ops round-trip: a K-split matmul kernel (fill, accumulate into a slot, ring
// reduction, K-partner store) and pointwise kernels passing a resident LX tensor.

builtin.module {
  func.func @f(%x: tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>, %y: tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
    %r = ktir.kernel "ktir.matmul" cores 4 chunks 1 work_division {m = 2 : i64, n = 1 : i64, k = 2 : i64} tiles [#ktir.tile<extent = [1, 2, 64], starts = [[0, 0, 0], [1, 0, 0], [0, 2, 0], [1, 2, 0]], chunk_starts = [[0, 0, 0]]>, #ktir.tile<extent = [1, 64, 64], starts = [[0, 0, 0], [0, 64, 0], [0, 0, 0], [0, 64, 0]], chunk_starts = [[0, 0, 0]]>, #ktir.tile<extent = [1, 2, 64], starts = [[0, 0, 0], [0, 0, 0], [0, 2, 0], [0, 2, 0]], chunk_starts = [[0, 0, 0]]>](%x, %y) : (tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>, tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
    ^bb0(%0: tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>, %1: tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>, %2: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>):
      %3 = ktir.core_id : index
      %4 = ktir.lx_alloc address 8704 : memref<1x1x2x64xf16, "lx">
      %5 = ktir.lx_alloc address 0 : memref<1x1x64x64xf16, "lx">
      %6 = ktir.lx_alloc address 8192 : memref<1x1x2x64xf32, "lx">
      %7 = arith.constant 0 : index
      ktir.lx_fill %6[%7] value 0 : i64 : memref<1x1x2x64xf32, "lx">
      ktir.dma_load %0 -> %4[%3, %7, %7] tile 0 : tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>> -> memref<1x1x2x64xf16, "lx">
      ktir.dma_load %1 -> %5[%3, %7, %7] tile 1 : tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>> -> memref<1x1x64x64xf16, "lx">
      ktir.compute pt[%3, %7, %7] ins(%4, %5 : memref<1x1x2x64xf16, "lx">, memref<1x1x64x64xf16, "lx">) outs(%6 : memref<1x1x2x64xf32, "lx">) tiles [0, 1, 2] accumulate into %7 {
      ^bb0(%8: tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>, %9: tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>):
        %r_1 = ktir.matmul %8, %9 : tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>, tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>> -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
        ktir.yield %r_1 : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
      }
      ktir.ring_reduce %6[%7] group 2 combine add : memref<1x1x2x64xf32, "lx">
      ktir.dma_store %6 -> %2[%3, %7, %7] tile 2 writers 2 : memref<1x1x2x64xf32, "lx"> -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
      ktir.yield
    }
    %a = ktir.kernel "ktir.add" cores 4 chunks 1 work_division {d0 = 4 : i64, d1 = 1 : i64} tiles [#ktir.tile<extent = [1, 1, 64], starts = [[0, 0, 0], [0, 1, 0], [0, 2, 0], [0, 3, 0]], chunk_starts = [[0, 0, 0]]>, #ktir.tile<extent = [1, 1, 64], starts = [[0, 0, 0], [0, 1, 0], [0, 2, 0], [0, 3, 0]], chunk_starts = [[0, 0, 0]]>, #ktir.tile<extent = [1, 1, 64], starts = [[0, 0, 0], [0, 1, 0], [0, 2, 0], [0, 3, 0]], chunk_starts = [[0, 0, 0]]>](%r, %r) : (tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> attributes {ktir.lx_address = 0 : i64, ktir.lx_bytes = 128 : i64} {
    ^bb0(%0: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, %1: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, %2: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>):
      %3 = ktir.core_id : index
      %4 = ktir.lx_alloc address 128 : memref<1x1x1x64xf16, "lx">
      %5 = ktir.lx_alloc address 256 : memref<1x1x1x64xf16, "lx">
      %6 = ktir.lx_alloc address 384 : memref<1x1x1x64xf16, "lx">
      %7 = ktir.lx_alloc address 0 resident : memref<1x1x1x64xf16, "lx">
      %8 = arith.constant 0 : index
      ktir.dma_load %0 -> %4[%3, %8, %8] tile 0 : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> memref<1x1x1x64xf16, "lx">
      ktir.dma_load %1 -> %5[%3, %8, %8] tile 1 : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> memref<1x1x1x64xf16, "lx">
      ktir.compute sfu[%3, %8, %8] ins(%4, %5 : memref<1x1x1x64xf16, "lx">, memref<1x1x1x64xf16, "lx">) outs(%6 : memref<1x1x1x64xf16, "lx">) tiles [0, 1, 2] {
      ^bb0(%9: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, %10: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>):
        %a_1 = ktir.add %10, %10 : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
        ktir.yield %a_1 : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
      }
      ktir.dma_store %6 -> %7[%3, %8, %8] tile 2 : memref<1x1x1x64xf16, "lx"> -> memref<1x1x1x64xf16, "lx">
      ktir.yield
    }
    %e = ktir.kernel "ktir.exp" cores 4 chunks 1 work_division {d0 = 4 : i64, d1 = 1 : i64} tiles [#ktir.tile<extent = [1, 1, 64], starts = [[0, 0, 0], [0, 1, 0], [0, 2, 0], [0, 3, 0]], chunk_starts = [[0, 0, 0]]>, #ktir.tile<extent = [1, 1, 64], starts = [[0, 0, 0], [0, 1, 0], [0, 2, 0], [0, 3, 0]], chunk_starts = [[0, 0, 0]]>](%a) : (tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
    ^bb0(%0: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, %1: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>):
      %2 = ktir.core_id : index
      %3 = ktir.lx_alloc address 128 : memref<1x1x1x64xf16, "lx">
      %4 = ktir.lx_alloc address 256 : memref<1x1x1x64xf16, "lx">
      %5 = ktir.lx_alloc address 0 resident : memref<1x1x1x64xf16, "lx">
      %6 = arith.constant 0 : index
      ktir.dma_load %5 -> %3[%2, %6, %6] tile 0 : memref<1x1x1x64xf16, "lx"> -> memref<1x1x1x64xf16, "lx">
      ktir.compute sfu[%2, %6, %6] ins(%3 : memref<1x1x1x64xf16, "lx">) outs(%4 : memref<1x1x1x64xf16, "lx">) tiles [0, 1] {
      ^bb0(%7: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>):
        %e_1 = ktir.exp %7 : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
        ktir.yield %e_1 : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
      }
      ktir.dma_store %4 -> %1[%2, %6, %6] tile 1 : memref<1x1x1x64xf16, "lx"> -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
      ktir.yield
    }
    func.return %e : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
  }
}


// CHECK:      ktir.kernel "ktir.matmul" cores 4 chunks 1 work_division {m = 2 : i64, n = 1 : i64, k = 2 : i64}
// CHECK-SAME: #ktir.tile<extent = [1, 2, 64], starts = {{\[\[}}0, 0, 0], [1, 0, 0], [0, 2, 0], [1, 2, 0]]
// CHECK:      ktir.core_id : index
// CHECK:      ktir.lx_alloc address {{[0-9]+}} : memref<1x1x2x64xf32, "lx">
// CHECK:      ktir.lx_fill
// CHECK:      ktir.dma_load
// CHECK:      ktir.compute pt
// CHECK-SAME: accumulate into %{{[0-9]+}} {
// CHECK:      ktir.matmul
// CHECK:      ktir.yield
// CHECK:      ktir.ring_reduce {{.*}} group 2 combine add
// CHECK:      ktir.dma_store {{.*}} tile 2 writers 2
// CHECK:      ktir.kernel "ktir.add" cores 4
// CHECK:      ktir.lx_alloc address 0 resident
// CHECK:      ktir.kernel "ktir.exp" cores 4
// CHECK:      ktir.lx_alloc address 0 resident
