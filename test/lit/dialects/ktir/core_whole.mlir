// RUN: ktir-opt %s | ktir-opt | filecheck %s
// RUN: ktir-opt %s --print-op-generic | ktir-opt | filecheck %s
// RUN: ktir-run %s --quiet --json %t.json && %python -c "import json; r = json.load(open('%t.json')); print(r['kernels'][0]['bytes'])" | filecheck %s --check-prefix=BYTES

// A matmul kernel keeping x's whole slice in LX: one `whole` load of x before the chunk loop,
// then per chunk (N in 2, K in 2) only y's tile; each compute reads its chunk's window of x.
// The x load is also a prefetch: with no kernel before it, an ordinary load.
// x: 4 x 128 (2 sticks of K), y: 128 x 128, on one core in 4 chunks.

builtin.module {
  func.func @f(%x: tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>, %y: tensor<128x128xf16, #ktir.tiled<device_size = [2, 128, 64], stride_map = [64, 128, 1]>>) -> tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>> {
    %r = ktir.kernel "ktir.matmul" cores 1 chunks 4 work_division {m = 1 : i64, n = 1 : i64, k = 1 : i64} tiles [#ktir.tile<extent = [1, 4, 64], starts = [[0, 0, 0]], chunk_starts = [[0, 0, 0], [1, 0, 0], [0, 0, 0], [1, 0, 0]]>, #ktir.tile<extent = [1, 64, 64], starts = [[0, 0, 0]], chunk_starts = [[0, 0, 0], [0, 64, 0], [1, 0, 0], [1, 64, 0]]>, #ktir.tile<extent = [1, 4, 64], starts = [[0, 0, 0]], chunk_starts = [[0, 0, 0], [0, 0, 0], [1, 0, 0], [1, 0, 0]]>](%x, %y) : (tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>, tensor<128x128xf16, #ktir.tiled<device_size = [2, 128, 64], stride_map = [64, 128, 1]>>) -> tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>> {
    ^bb0(%0: tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>, %1: tensor<128x128xf16, #ktir.tiled<device_size = [2, 128, 64], stride_map = [64, 128, 1]>>, %2: tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>):
      %3 = ktir.core_id : index
      %4 = ktir.lx_alloc address 0 : memref<1x2x4x64xf16, "lx">
      %5 = ktir.lx_alloc address 1024 : memref<2x1x64x64xf16, "lx">
      %6 = ktir.lx_alloc address 17408 : memref<1x1x4x64xf32, "lx">
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      ktir.dma_load %0 -> %4[%3, %c0, %c0] tile 0 whole prefetch : tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>> -> memref<1x2x4x64xf16, "lx">
      scf.for %n = %c0 to %c2 step %c1 {
        ktir.lx_fill %6[%c0] value 0 : i64 : memref<1x1x4x64xf32, "lx">
        scf.for %k = %c0 to %c2 step %c1 {
          %n2 = arith.muli %n, %c2 : index
          %chunk = arith.addi %n2, %k : index
          %slot = arith.remui %chunk, %c2 : index
          ktir.dma_load %1 -> %5[%3, %chunk, %slot] tile 1 : tensor<128x128xf16, #ktir.tiled<device_size = [2, 128, 64], stride_map = [64, 128, 1]>> -> memref<2x1x64x64xf16, "lx">
          ktir.compute pt[%3, %chunk, %slot] ins(%4, %5 : memref<1x2x4x64xf16, "lx">, memref<2x1x64x64xf16, "lx">) outs(%6 : memref<1x1x4x64xf32, "lx">) tiles [0, 1, 2] accumulate {
          ^bb0(%a: tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>, %b: tensor<128x128xf16, #ktir.tiled<device_size = [2, 128, 64], stride_map = [64, 128, 1]>>):
            %p = ktir.matmul %a, %b : tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>, tensor<128x128xf16, #ktir.tiled<device_size = [2, 128, 64], stride_map = [64, 128, 1]>> -> tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>
            ktir.yield %p : tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>
          }
        }
        %n3 = arith.muli %n, %c2 : index
        %last = arith.addi %n3, %c1 : index
        ktir.dma_store %6 -> %2[%3, %last, %c0] tile 2 : memref<1x1x4x64xf32, "lx"> -> tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>
      }
      ktir.yield
    }
    func.return %r : tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>
  }
}

// CHECK:      ktir.lx_alloc address 0 : memref<1x2x4x64xf16, "lx">
// CHECK:      ktir.dma_load %{{.*}} tile 0 whole prefetch :
// CHECK:      scf.for
// CHECK:      ktir.dma_load %{{.*}} tile 1 :
// CHECK:      ktir.compute pt

// x (1 KiB) once, y (32 KiB) once, the output (1 KiB) once.
// BYTES: 34816.0
