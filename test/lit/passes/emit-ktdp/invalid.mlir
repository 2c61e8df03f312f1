// RUN: not ktir-opt %s -p ktir-emit-ktdp --split-input-file 2>&1 | filecheck %s

// A payload op the emitter has no linalg form for is located, and nothing is printed: the MLP
// of mlp.mlir with its GELU replaced by an erf.
// CHECK: invalid.mlir:[[# @LINE + 23]]:21: error: 'ktir.erf' op ktir-emit-ktdp does not write 'ktir.erf' payloads yet
// CHECK-NOT: func.func @k
builtin.module {
  func.func @forward(%x: tensor<16x64xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 64, 1]>> {ktir.name = "x"}, %p_fc1_weight: tensor<256x64xf16, #ktir.tiled<device_size = [4, 64, 64], stride_map = [4096, 1, 64]>> {ktir.name = "p_fc1_weight", ktir.parameter = "fc1.weight"}, %p_fc1_bias: tensor<256xf16, #ktir.tiled<device_size = [4, 64], stride_map = [64, 1]>> {ktir.name = "p_fc1_bias", ktir.parameter = "fc1.bias"}, %p_fc2_weight: tensor<32x256xf16, #ktir.tiled<device_size = [1, 256, 64], stride_map = [16384, 1, 256]>> {ktir.name = "p_fc2_weight", ktir.parameter = "fc2.weight"}, %p_fc2_bias: tensor<32xf16, #ktir.tiled<device_size = [1, 64], stride_map = [64, 1]>> {ktir.name = "p_fc2_bias", ktir.parameter = "fc2.bias"}) -> tensor<16x32xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 32, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
    %linear = ktir.permute %p_fc1_weight perm [1, 0] : tensor<256x64xf16, #ktir.tiled<device_size = [4, 64, 64], stride_map = [4096, 1, 64]>> -> tensor<64x256xf16, #ktir.tiled<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>
    %gelu = ktir.kernel "ktir.fused" cores 32 chunks 1 work_division {m = 8 : i64, n = 4 : i64, k = 1 : i64} tiles [#ktir.tile<extent = [1, 2, 64], starts = [[0, 0, 0], [0, 2, 0], [0, 4, 0], [0, 6, 0], [0, 8, 0], [0, 10, 0], [0, 12, 0], [0, 14, 0], [0, 0, 0], [0, 2, 0], [0, 4, 0], [0, 6, 0], [0, 8, 0], [0, 10, 0], [0, 12, 0], [0, 14, 0], [0, 0, 0], [0, 2, 0], [0, 4, 0], [0, 6, 0], [0, 8, 0], [0, 10, 0], [0, 12, 0], [0, 14, 0], [0, 0, 0], [0, 2, 0], [0, 4, 0], [0, 6, 0], [0, 8, 0], [0, 10, 0], [0, 12, 0], [0, 14, 0]], chunk_starts = [[0, 0, 0]]>, #ktir.tile<extent = [1, 64, 64], starts = [[0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0], [1, 0, 0], [1, 0, 0], [1, 0, 0], [1, 0, 0], [1, 0, 0], [1, 0, 0], [1, 0, 0], [1, 0, 0], [2, 0, 0], [2, 0, 0], [2, 0, 0], [2, 0, 0], [2, 0, 0], [2, 0, 0], [2, 0, 0], [2, 0, 0], [3, 0, 0], [3, 0, 0], [3, 0, 0], [3, 0, 0], [3, 0, 0], [3, 0, 0], [3, 0, 0], [3, 0, 0]], chunk_starts = [[0, 0, 0]]>, #ktir.tile<extent = [1, 64], starts = [[0, 0], [0, 0], [0, 0], [0, 0], [0, 0], [0, 0], [0, 0], [0, 0], [1, 0], [1, 0], [1, 0], [1, 0], [1, 0], [1, 0], [1, 0], [1, 0], [2, 0], [2, 0], [2, 0], [2, 0], [2, 0], [2, 0], [2, 0], [2, 0], [3, 0], [3, 0], [3, 0], [3, 0], [3, 0], [3, 0], [3, 0], [3, 0]], chunk_starts = [[0, 0]]>, #ktir.tile<extent = [1, 2, 64], starts = [[0, 0, 0], [0, 2, 0], [0, 4, 0], [0, 6, 0], [0, 8, 0], [0, 10, 0], [0, 12, 0], [0, 14, 0], [1, 0, 0], [1, 2, 0], [1, 4, 0], [1, 6, 0], [1, 8, 0], [1, 10, 0], [1, 12, 0], [1, 14, 0], [2, 0, 0], [2, 2, 0], [2, 4, 0], [2, 6, 0], [2, 8, 0], [2, 10, 0], [2, 12, 0], [2, 14, 0], [3, 0, 0], [3, 2, 0], [3, 4, 0], [3, 6, 0], [3, 8, 0], [3, 10, 0], [3, 12, 0], [3, 14, 0]], chunk_starts = [[0, 0, 0]]>](%x, %linear, %p_fc1_bias) : (tensor<16x64xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 64, 1]>>, tensor<64x256xf16, #ktir.tiled<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>, tensor<256xf16, #ktir.tiled<device_size = [4, 64], stride_map = [64, 1]>>) -> tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>> {
    ^bb0(%0: tensor<16x64xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 64, 1]>>, %1: tensor<64x256xf16, #ktir.tiled<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>, %2: tensor<256xf16, #ktir.tiled<device_size = [4, 64], stride_map = [64, 1]>>, %3: tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>):
      %4 = ktir.core_id : index
      %5 = ktir.lx_alloc address 8704 : memref<1x1x2x64xf16, "lx">
      %6 = ktir.lx_alloc address 0 : memref<1x1x64x64xf16, "lx">
      %7 = ktir.lx_alloc address 9216 : memref<1x1x64xf16, "lx">
      %8 = ktir.lx_alloc address 8192 : memref<1x512xi8, "lx">
      %9 = ktir.lx_alloc address 8960 : memref<1x1x2x64xf16, "lx">
      %10 = arith.constant 0 : index
      ktir.dma_load %0 -> %5[%4, %10, %10] tile 0 : tensor<16x64xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 64, 1]>> -> memref<1x1x2x64xf16, "lx">
      ktir.dma_load %1 -> %6[%4, %10, %10] tile 1 : tensor<64x256xf16, #ktir.tiled<device_size = [4, 64, 64], stride_map = [64, 256, 1]>> -> memref<1x1x64x64xf16, "lx">
      ktir.dma_load %2 -> %7[%4, %10, %10] tile 2 : tensor<256xf16, #ktir.tiled<device_size = [4, 64], stride_map = [64, 1]>> -> memref<1x1x64xf16, "lx">
      ktir.compute pt[%4, %10, %10] ins(%5, %6, %7 : memref<1x1x2x64xf16, "lx">, memref<1x1x64x64xf16, "lx">, memref<1x1x64xf16, "lx">) outs(%9 : memref<1x1x2x64xf16, "lx">) tiles [0, 1, 2, 3] {
      ^bb0(%11: tensor<16x64xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 64, 1]>>, %12: tensor<64x256xf16, #ktir.tiled<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>, %13: tensor<256xf16, #ktir.tiled<device_size = [4, 64], stride_map = [64, 1]>>):
        %gelu_1 = ktir.fused(%11, %12, %13) : (tensor<16x64xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 64, 1]>>, tensor<64x256xf16, #ktir.tiled<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>, tensor<256xf16, #ktir.tiled<device_size = [4, 64], stride_map = [64, 1]>>) -> tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>> {
        ^bb0(%x_1: tensor<16x64xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 64, 1]>>, %linear_1: tensor<64x256xf16, #ktir.tiled<device_size = [4, 64, 64], stride_map = [64, 256, 1]>>, %p_fc1_bias_1: tensor<256xf16, #ktir.tiled<device_size = [4, 64], stride_map = [64, 1]>>):
          %linear_2 = ktir.matmul %x_1, %linear_1 : tensor<16x64xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 64, 1]>>, tensor<64x256xf16, #ktir.tiled<device_size = [4, 64, 64], stride_map = [64, 256, 1]>> -> tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>
          %linear_3 = ktir.add %linear_2, %p_fc1_bias_1 : tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>, tensor<256xf16, #ktir.tiled<device_size = [4, 64], stride_map = [64, 1]>> -> tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>
          %gelu_2 = ktir.erf %linear_3 : tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>> -> tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>
          ktir.yield %gelu_2 : tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>
        }
        ktir.yield %gelu_1 : tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>
      }
      ktir.dma_store %9 -> %3[%4, %10, %10] tile 3 : memref<1x1x2x64xf16, "lx"> -> tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>
      ktir.yield
    }
    %linear_1 = ktir.permute %p_fc2_weight perm [1, 0] : tensor<32x256xf16, #ktir.tiled<device_size = [1, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<256x32xf16, #ktir.tiled<device_size = [1, 256, 64], stride_map = [64, 32, 1]>>
    %linear_2 = ktir.kernel "ktir.fused" cores 8 chunks 1 work_division {m = 8 : i64, n = 1 : i64, k = 1 : i64} tiles [#ktir.tile<extent = [4, 2, 64], starts = [[0, 0, 0], [0, 2, 0], [0, 4, 0], [0, 6, 0], [0, 8, 0], [0, 10, 0], [0, 12, 0], [0, 14, 0]], chunk_starts = [[0, 0, 0]]>, #ktir.tile<extent = [1, 256, 64], starts = [[0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0]], chunk_starts = [[0, 0, 0]]>, #ktir.tile<extent = [1, 64], starts = [[0, 0], [0, 0], [0, 0], [0, 0], [0, 0], [0, 0], [0, 0], [0, 0]], chunk_starts = [[0, 0]]>, #ktir.tile<extent = [1, 2, 64], starts = [[0, 0, 0], [0, 2, 0], [0, 4, 0], [0, 6, 0], [0, 8, 0], [0, 10, 0], [0, 12, 0], [0, 14, 0]], chunk_starts = [[0, 0, 0]]>](%gelu, %linear_1, %p_fc2_bias) : (tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>, tensor<256x32xf16, #ktir.tiled<device_size = [1, 256, 64], stride_map = [64, 32, 1]>>, tensor<32xf16, #ktir.tiled<device_size = [1, 64], stride_map = [64, 1]>>) -> tensor<16x32xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 32, 1]>> {
    ^bb0(%0: tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>, %1: tensor<256x32xf16, #ktir.tiled<device_size = [1, 256, 64], stride_map = [64, 32, 1]>>, %2: tensor<32xf16, #ktir.tiled<device_size = [1, 64], stride_map = [64, 1]>>, %3: tensor<16x32xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 32, 1]>>):
      %4 = ktir.core_id : index
      %5 = ktir.lx_alloc address 0 : memref<1x4x2x64xf16, "lx">
      %6 = ktir.lx_alloc address 1644928 : memref<1x1x256x64xf16, "lx">
      %7 = ktir.lx_alloc address 1644800 : memref<1x1x64xf16, "lx">
      %8 = ktir.lx_alloc address 1024 : memref<1x256xi8, "lx">
      %9 = ktir.lx_alloc address 1280 : memref<1x1x2x64xf16, "lx">
      %10 = arith.constant 0 : index
      ktir.dma_load %1 -> %6[%4, %10, %10] tile 1 prefetch : tensor<256x32xf16, #ktir.tiled<device_size = [1, 256, 64], stride_map = [64, 32, 1]>> -> memref<1x1x256x64xf16, "lx">
      ktir.dma_load %2 -> %7[%4, %10, %10] tile 2 prefetch : tensor<32xf16, #ktir.tiled<device_size = [1, 64], stride_map = [64, 1]>> -> memref<1x1x64xf16, "lx">
      ktir.dma_load %0 -> %5[%4, %10, %10] tile 0 : tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>> -> memref<1x4x2x64xf16, "lx">
      ktir.compute pt[%4, %10, %10] ins(%5, %6, %7 : memref<1x4x2x64xf16, "lx">, memref<1x1x256x64xf16, "lx">, memref<1x1x64xf16, "lx">) outs(%9 : memref<1x1x2x64xf16, "lx">) tiles [0, 1, 2, 3] {
      ^bb0(%11: tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>, %12: tensor<256x32xf16, #ktir.tiled<device_size = [1, 256, 64], stride_map = [64, 32, 1]>>, %13: tensor<32xf16, #ktir.tiled<device_size = [1, 64], stride_map = [64, 1]>>):
        %linear_3 = ktir.fused(%11, %12, %13) : (tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>, tensor<256x32xf16, #ktir.tiled<device_size = [1, 256, 64], stride_map = [64, 32, 1]>>, tensor<32xf16, #ktir.tiled<device_size = [1, 64], stride_map = [64, 1]>>) -> tensor<16x32xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 32, 1]>> {
        ^bb0(%gelu_1: tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>, %linear_4: tensor<256x32xf16, #ktir.tiled<device_size = [1, 256, 64], stride_map = [64, 32, 1]>>, %p_fc2_bias_1: tensor<32xf16, #ktir.tiled<device_size = [1, 64], stride_map = [64, 1]>>):
          %linear_5 = ktir.matmul %gelu_1, %linear_4 : tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>, tensor<256x32xf16, #ktir.tiled<device_size = [1, 256, 64], stride_map = [64, 32, 1]>> -> tensor<16x32xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 32, 1]>>
          %linear_6 = ktir.add %linear_5, %p_fc2_bias_1 : tensor<16x32xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 32, 1]>>, tensor<32xf16, #ktir.tiled<device_size = [1, 64], stride_map = [64, 1]>> -> tensor<16x32xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 32, 1]>>
          ktir.yield %linear_6 : tensor<16x32xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 32, 1]>>
        }
        ktir.yield %linear_3 : tensor<16x32xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 32, 1]>>
      }
      ktir.dma_store %9 -> %3[%4, %10, %10] tile 3 : memref<1x1x2x64xf16, "lx"> -> tensor<16x32xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 32, 1]>>
      ktir.yield
    }
    func.return %linear_2 : tensor<16x32xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 32, 1]>>
  }
}

// -----

// Graph-level IR has no kernel to write.
// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: the module has no ktir.kernel: run ktir-lower-to-cores (or ktir-compile) first
func.func @f(%x: tensor<4x64xf16>) -> tensor<4x64xf16> {
  %y = ktir.abs %x : tensor<4x64xf16> -> tensor<4x64xf16>
  func.return %y : tensor<4x64xf16>
}
