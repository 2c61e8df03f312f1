// RUN: ktir-opt %s -p ktir-emit-ktdp | filecheck %s
// RUN: ktir-opt %s -p ktir-emit-ktdp --print-op-generic | ktir-opt | filecheck %s
// RUN: %python -m ktir.tools.ktdp_roundtrip %s | filecheck %s --check-prefix=ROUNDTRIP

// A K-split matmul (16 x 16384 @ 16384 x 64 fp16, K over groups of 4 cores) whose cores each
// walk their K range in a loop of 2 chunks, loading an x tile and a y tile per chunk into
// LX buffers of two slots (ktir's planner double-buffers them: chunk k + 1 loads while chunk k
// multiplies). Each load names ktir's buffer and its slots (`ktir.buffer = array<i64: address,
// slots>`), and the ktdp engine gives the loads into one buffer its slots in turn, whatever
// else the loop holds (docs/ktdp.md, "Running").
// Input generated with
//   ktir.compile(torch.nn.Linear(16384, 64, bias=False).half(), (torch.zeros(16, 16384, dtype=torch.float16),))
// printed with ktir.ir.diagnostics.module_text

// CHECK:      func.func @k0_matmul(%in0: index, %in1: index, %out0: index) attributes {grid = [32 : i64]} {
// CHECK:        scf.for %k0 = %lb0 to %ub0 step %step0 iter_args(%a0 = %t0) -> (tensor<2x64xf32>) {
// CHECK:          ktdp.load %tile0 {ktir.buffer = array<i64: 524288, 2>} : <2x32x64xindex> -> tensor<2x32x64xf16>
// CHECK:          ktdp.load %tile1 {ktir.buffer = array<i64: 0, 2>} : <1x2048x64xindex> -> tensor<1x2048x64xf16>
// CHECK:          linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x2048xf16>, tensor<2048x64xf16>) outs(%a0 : tensor<2x64xf32>) -> tensor<2x64xf32>

// ROUNDTRIP: k0_matmul: equal, cycles ktir 30,072 ktdp 30,072
// ROUNDTRIP-NEXT: 1 of 1 kernels written, 1 with equal outputs, 1 with ktir's cycles, 1 with ktir's bytes, compulsory bytes and FLOPs too

builtin.module {
  func.func @forward(%input: tensor<16x16384xf16, #ktir.tiled<device_size = [256, 16, 64], stride_map = [64, 16384, 1]>> {ktir.name = "input"}, %p_weight: tensor<64x16384xf16, #ktir.tiled<device_size = [1, 16384, 64], stride_map = [1048576, 1, 16384]>> {ktir.name = "p_weight", ktir.parameter = "weight"}) -> tensor<16x64xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 64, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
    %linear = ktir.permute %p_weight perm [1, 0] : tensor<64x16384xf16, #ktir.tiled<device_size = [1, 16384, 64], stride_map = [1048576, 1, 16384]>> -> tensor<16384x64xf16, #ktir.tiled<device_size = [1, 16384, 64], stride_map = [64, 64, 1]>>
    %linear_1 = ktir.kernel "ktir.matmul" cores 32 chunks 2 work_division {m = 8 : i64, n = 1 : i64, k = 4 : i64} tiles [#ktir.tile<extent = [32, 2, 64], starts = [[0, 0, 0], [64, 0, 0], [128, 0, 0], [192, 0, 0], [0, 2, 0], [64, 2, 0], [128, 2, 0], [192, 2, 0], [0, 4, 0], [64, 4, 0], [128, 4, 0], [192, 4, 0], [0, 6, 0], [64, 6, 0], [128, 6, 0], [192, 6, 0], [0, 8, 0], [64, 8, 0], [128, 8, 0], [192, 8, 0], [0, 10, 0], [64, 10, 0], [128, 10, 0], [192, 10, 0], [0, 12, 0], [64, 12, 0], [128, 12, 0], [192, 12, 0], [0, 14, 0], [64, 14, 0], [128, 14, 0], [192, 14, 0]], chunk_starts = [[0, 0, 0], [32, 0, 0]]>, #ktir.tile<extent = [1, 2048, 64], starts = [[0, 0, 0], [0, 4096, 0], [0, 8192, 0], [0, 12288, 0], [0, 0, 0], [0, 4096, 0], [0, 8192, 0], [0, 12288, 0], [0, 0, 0], [0, 4096, 0], [0, 8192, 0], [0, 12288, 0], [0, 0, 0], [0, 4096, 0], [0, 8192, 0], [0, 12288, 0], [0, 0, 0], [0, 4096, 0], [0, 8192, 0], [0, 12288, 0], [0, 0, 0], [0, 4096, 0], [0, 8192, 0], [0, 12288, 0], [0, 0, 0], [0, 4096, 0], [0, 8192, 0], [0, 12288, 0], [0, 0, 0], [0, 4096, 0], [0, 8192, 0], [0, 12288, 0]], chunk_starts = [[0, 0, 0], [0, 2048, 0]]>, #ktir.tile<extent = [1, 2, 64], starts = [[0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 2, 0], [0, 2, 0], [0, 2, 0], [0, 2, 0], [0, 4, 0], [0, 4, 0], [0, 4, 0], [0, 4, 0], [0, 6, 0], [0, 6, 0], [0, 6, 0], [0, 6, 0], [0, 8, 0], [0, 8, 0], [0, 8, 0], [0, 8, 0], [0, 10, 0], [0, 10, 0], [0, 10, 0], [0, 10, 0], [0, 12, 0], [0, 12, 0], [0, 12, 0], [0, 12, 0], [0, 14, 0], [0, 14, 0], [0, 14, 0], [0, 14, 0]], chunk_starts = [[0, 0, 0], [0, 0, 0]]>](%input, %linear) : (tensor<16x16384xf16, #ktir.tiled<device_size = [256, 16, 64], stride_map = [64, 16384, 1]>>, tensor<16384x64xf16, #ktir.tiled<device_size = [1, 16384, 64], stride_map = [64, 64, 1]>>) -> tensor<16x64xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 64, 1]>> {
    ^bb0(%0: tensor<16x16384xf16, #ktir.tiled<device_size = [256, 16, 64], stride_map = [64, 16384, 1]>>, %1: tensor<16384x64xf16, #ktir.tiled<device_size = [1, 16384, 64], stride_map = [64, 64, 1]>>, %2: tensor<16x64xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 64, 1]>>):
      %3 = ktir.core_id : index
      %4 = ktir.lx_alloc address 524288 : memref<2x32x2x64xf16, "lx">
      %5 = ktir.lx_alloc address 0 : memref<2x1x2048x64xf16, "lx">
      %6 = ktir.lx_alloc address 540672 : memref<1x1x2x64xf32, "lx">
      %7 = arith.constant 0 : index
      ktir.lx_fill %6[%7] value 0 : i64 : memref<1x1x2x64xf32, "lx">
      %8 = arith.constant 2 : index
      %9 = arith.constant 1 : index
      scf.for %10 = %7 to %8 step %9 {
        %11 = arith.constant 2 : index
        %12 = arith.muli %7, %11 : index
        %13 = arith.addi %12, %10 : index
        %14 = arith.remui %13, %11 : index
        ktir.dma_load %0 -> %4[%3, %13, %14] tile 0 : tensor<16x16384xf16, #ktir.tiled<device_size = [256, 16, 64], stride_map = [64, 16384, 1]>> -> memref<2x32x2x64xf16, "lx">
        ktir.dma_load %1 -> %5[%3, %13, %14] tile 1 : tensor<16384x64xf16, #ktir.tiled<device_size = [1, 16384, 64], stride_map = [64, 64, 1]>> -> memref<2x1x2048x64xf16, "lx">
        ktir.compute pt[%3, %13, %14] ins(%4, %5 : memref<2x32x2x64xf16, "lx">, memref<2x1x2048x64xf16, "lx">) outs(%6 : memref<1x1x2x64xf32, "lx">) tiles [0, 1, 2] accumulate {
        ^bb0(%15: tensor<16x16384xf16, #ktir.tiled<device_size = [256, 16, 64], stride_map = [64, 16384, 1]>>, %16: tensor<16384x64xf16, #ktir.tiled<device_size = [1, 16384, 64], stride_map = [64, 64, 1]>>):
          %linear_2 = ktir.matmul %15, %16 : tensor<16x16384xf16, #ktir.tiled<device_size = [256, 16, 64], stride_map = [64, 16384, 1]>>, tensor<16384x64xf16, #ktir.tiled<device_size = [1, 16384, 64], stride_map = [64, 64, 1]>> -> tensor<16x64xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 64, 1]>>
          ktir.yield %linear_2 : tensor<16x64xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 64, 1]>>
        }
      }
      ktir.ring_reduce %6[%7] group 4 combine add : memref<1x1x2x64xf32, "lx">
      %17 = arith.muli %7, %8 : index
      %18 = arith.addi %17, %9 : index
      ktir.dma_store %6 -> %2[%3, %18, %7] tile 2 writers 4 : memref<1x1x2x64xf32, "lx"> -> tensor<16x64xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 64, 1]>>
      ktir.yield
    }
    func.return %linear_1 : tensor<16x64xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 64, 1]>>
  }
}
