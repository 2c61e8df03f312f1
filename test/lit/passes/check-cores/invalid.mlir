// RUN: not ktir-opt %s -p ktir-check-cores 2>&1 | filecheck %s

// The seed's abs kernel with its output buffer moved past the end of the usable LX.
// CHECK: invalid.mlir:[[# @LINE + 6]]:10: error: 'ktir.lx_alloc' op at 1,677,696 + 256 bytes overruns the 1,677,721 usable bytes of LX on every core (core 0: live 512 bytes)
func.func @f(%x: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  %y = ktir.kernel "ktir.abs" cores 2 chunks 1 work_division {d0 = 2 : i64, d1 = 1 : i64} tiles [#ktir.tile<extent = [1, 2, 64], starts = [[0, 0, 0], [0, 2, 0]], chunk_starts = [[0, 0, 0]]>, #ktir.tile<extent = [1, 2, 64], starts = [[0, 0, 0], [0, 2, 0]], chunk_starts = [[0, 0, 0]]>](%x) : (tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  ^bb0(%0: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, %1: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>):
    %2 = ktir.core_id : index
    %3 = ktir.lx_alloc address 0 : memref<1x1x2x64xf16, "lx">
    %4 = ktir.lx_alloc address 1677696 : memref<1x1x2x64xf16, "lx">
    %5 = arith.constant 0 : index
    ktir.dma_load %0 -> %3[%2, %5, %5] tile 0 : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> memref<1x1x2x64xf16, "lx">
    ktir.dma_store %4 -> %1[%2, %5, %5] tile 1 : memref<1x1x2x64xf16, "lx"> -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
    ktir.yield
  }
  return %y : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
}
