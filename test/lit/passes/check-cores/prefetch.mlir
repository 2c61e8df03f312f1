// RUN: not ktir-opt %s -p ktir-check-cores --split-input-file 2>&1 | filecheck %s

// A prefetch load (`ktir.dma_load ... prefetch`) runs in the previous kernel's time, so it may not
// fill LX that kernel uses, nor read what it writes. From `exp` then a matmul, compiled for one
// core (the matmul's weight is prefetched), with the weight's buffer moved over the exp's.
// CHECK: prefetch.mlir:[[# @LINE + 26]]:7: error: 'ktir.dma_load' op a prefetch load fills LX bytes [512, 16,896), which the previous kernel uses ([512, 1,024))
  func.func @f(%x: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, %w: tensor<64x128xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [64, 128, 1]>> {ktir.parameter = "w"}) -> tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
    %a = ktir.kernel "ktir.exp" cores 1 chunks 1 work_division {d0 = 1 : i64, d1 = 1 : i64} tiles [#ktir.tile<extent = [1, 4, 64], starts = [[0, 0, 0]], chunk_starts = [[0, 0, 0]]>, #ktir.tile<extent = [1, 4, 64], starts = [[0, 0, 0]], chunk_starts = [[0, 0, 0]]>](%x) : (tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> attributes {ktir.lx_address = 0 : i64, ktir.lx_bytes = 512 : i64} {
    ^bb0(%0: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, %1: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>):
      %2 = ktir.core_id : index
      %3 = ktir.lx_alloc address 512 : memref<1x1x4x64xf16, "lx">
      %4 = ktir.lx_alloc address 1024 : memref<1x1x4x64xf16, "lx">
      %5 = ktir.lx_alloc address 0 resident : memref<1x1x4x64xf16, "lx">
      %6 = arith.constant 0 : index
      ktir.dma_load %0 -> %3[%2, %6, %6] tile 0 : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> memref<1x1x4x64xf16, "lx">
      ktir.compute sfu[%2, %6, %6] ins(%3 : memref<1x1x4x64xf16, "lx">) outs(%4 : memref<1x1x4x64xf16, "lx">) tiles [0, 1] {
      ^bb0(%7: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>):
        %a_1 = ktir.exp %7 : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
        ktir.yield %a_1 : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
      }
      ktir.dma_store %4 -> %5[%2, %6, %6] tile 1 : memref<1x1x4x64xf16, "lx"> -> memref<1x1x4x64xf16, "lx">
      ktir.yield
    }
    %y = ktir.kernel "ktir.matmul" cores 1 chunks 1 work_division {m = 1 : i64, n = 1 : i64, k = 1 : i64} tiles [#ktir.tile<extent = [1, 4, 64], starts = [[0, 0, 0]], chunk_starts = [[0, 0, 0]]>, #ktir.tile<extent = [2, 64, 64], starts = [[0, 0, 0]], chunk_starts = [[0, 0, 0]]>, #ktir.tile<extent = [2, 4, 64], starts = [[0, 0, 0]], chunk_starts = [[0, 0, 0]]>](%a, %w) : (tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, tensor<64x128xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>) -> tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>> {
    ^bb0(%0: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, %1: tensor<64x128xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>, %2: tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>):
      %3 = ktir.core_id : index
      %4 = ktir.lx_alloc address 16896 : memref<1x1x4x64xf16, "lx">
      %5 = ktir.lx_alloc address 512 : memref<1x2x64x64xf16, "lx">
      %6 = ktir.lx_alloc address 17408 : memref<1x2x4x64xf16, "lx">
      %7 = ktir.lx_alloc address 0 resident : memref<1x1x4x64xf16, "lx">
      %8 = arith.constant 0 : index
      ktir.dma_load %1 -> %5[%3, %8, %8] tile 1 prefetch : tensor<64x128xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [64, 128, 1]>> -> memref<1x2x64x64xf16, "lx">
      ktir.dma_load %7 -> %4[%3, %8, %8] tile 0 : memref<1x1x4x64xf16, "lx"> -> memref<1x1x4x64xf16, "lx">
      ktir.compute pt[%3, %8, %8] ins(%4, %5 : memref<1x1x4x64xf16, "lx">, memref<1x2x64x64xf16, "lx">) outs(%6 : memref<1x2x4x64xf16, "lx">) tiles [0, 1, 2] {
      ^bb0(%9: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, %10: tensor<64x128xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>):
        %y_1 = ktir.matmul %9, %10 : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, tensor<64x128xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [64, 128, 1]>> -> tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>
        ktir.yield %y_1 : tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>
      }
      ktir.dma_store %6 -> %2[%3, %8, %8] tile 2 : memref<1x2x4x64xf16, "lx"> -> tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>
      ktir.yield
    }
    func.return %y : tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>
  }

// -----

// The matmul's x as a prefetch from device memory: the exp writes it.
// CHECK: prefetch.mlir:[[# @LINE + 27]]:7: error: 'ktir.dma_load' op a prefetch load reads a tensor the previous kernel writes
  func.func @f(%x: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, %w: tensor<64x128xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [64, 128, 1]>> {ktir.parameter = "w"}) -> tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
    %a = ktir.kernel "ktir.exp" cores 1 chunks 1 work_division {d0 = 1 : i64, d1 = 1 : i64} tiles [#ktir.tile<extent = [1, 4, 64], starts = [[0, 0, 0]], chunk_starts = [[0, 0, 0]]>, #ktir.tile<extent = [1, 4, 64], starts = [[0, 0, 0]], chunk_starts = [[0, 0, 0]]>](%x) : (tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> attributes {ktir.lx_address = 0 : i64, ktir.lx_bytes = 512 : i64} {
    ^bb0(%0: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, %1: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>):
      %2 = ktir.core_id : index
      %3 = ktir.lx_alloc address 512 : memref<1x1x4x64xf16, "lx">
      %4 = ktir.lx_alloc address 1024 : memref<1x1x4x64xf16, "lx">
      %5 = ktir.lx_alloc address 0 resident : memref<1x1x4x64xf16, "lx">
      %6 = arith.constant 0 : index
      ktir.dma_load %0 -> %3[%2, %6, %6] tile 0 : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> memref<1x1x4x64xf16, "lx">
      ktir.compute sfu[%2, %6, %6] ins(%3 : memref<1x1x4x64xf16, "lx">) outs(%4 : memref<1x1x4x64xf16, "lx">) tiles [0, 1] {
      ^bb0(%7: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>):
        %a_1 = ktir.exp %7 : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
        ktir.yield %a_1 : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
      }
      ktir.dma_store %4 -> %5[%2, %6, %6] tile 1 : memref<1x1x4x64xf16, "lx"> -> memref<1x1x4x64xf16, "lx">
      ktir.yield
    }
    %y = ktir.kernel "ktir.matmul" cores 1 chunks 1 work_division {m = 1 : i64, n = 1 : i64, k = 1 : i64} tiles [#ktir.tile<extent = [1, 4, 64], starts = [[0, 0, 0]], chunk_starts = [[0, 0, 0]]>, #ktir.tile<extent = [2, 64, 64], starts = [[0, 0, 0]], chunk_starts = [[0, 0, 0]]>, #ktir.tile<extent = [2, 4, 64], starts = [[0, 0, 0]], chunk_starts = [[0, 0, 0]]>](%a, %w) : (tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, tensor<64x128xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>) -> tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>> {
    ^bb0(%0: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, %1: tensor<64x128xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>, %2: tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>):
      %3 = ktir.core_id : index
      %4 = ktir.lx_alloc address 1536 : memref<1x1x4x64xf16, "lx">
      %5 = ktir.lx_alloc address 1661312 : memref<1x2x64x64xf16, "lx">
      %6 = ktir.lx_alloc address 512 : memref<1x2x4x64xf16, "lx">
      %7 = ktir.lx_alloc address 0 resident : memref<1x1x4x64xf16, "lx">
      %8 = arith.constant 0 : index
      ktir.dma_load %1 -> %5[%3, %8, %8] tile 1 prefetch : tensor<64x128xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [64, 128, 1]>> -> memref<1x2x64x64xf16, "lx">
      ktir.dma_load %0 -> %4[%3, %8, %8] tile 0 prefetch : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> memref<1x1x4x64xf16, "lx">
      ktir.compute pt[%3, %8, %8] ins(%4, %5 : memref<1x1x4x64xf16, "lx">, memref<1x2x64x64xf16, "lx">) outs(%6 : memref<1x2x4x64xf16, "lx">) tiles [0, 1, 2] {
      ^bb0(%9: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, %10: tensor<64x128xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>):
        %y_1 = ktir.matmul %9, %10 : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, tensor<64x128xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [64, 128, 1]>> -> tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>
        ktir.yield %y_1 : tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>
      }
      ktir.dma_store %6 -> %2[%3, %8, %8] tile 2 : memref<1x2x4x64xf16, "lx"> -> tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>
      ktir.yield
    }
    func.return %y : tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>
  }
