// RUN: ktir-opt %s -p ktir-emit-ktdp | filecheck %s
// RUN: ktir-opt %s -p ktir-emit-ktdp --print-op-generic | ktir-opt | filecheck %s
// RUN: %python -m ktir.tools.ktdp_roundtrip %s | filecheck %s --check-prefix=ROUNDTRIP

// Causal attention over 512 positions of one head (fp16, head size 128) on 32 cores: each core
// loads the keys and values whole, then runs its 16 queries in a loop of 2 chunks of 8, loading
// each chunk's queries into an LX buffer of two slots and writing its result into another of
// two slots (ktir's planner double-buffers both: chunk k + 1 loads and computes while chunk k's
// result is stored). The chunk's load and the attention routine's call each name ktir's buffer
// and its slots (`ktir.buffer = array<i64: address, slots>`), which the ktdp engine gives them
// (docs/ktdp.md, "Running"); the keys' and values' buffers have one slot and are not named.
// Input generated with
//   ktir.compile(lambda q, k, v: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True),
//                three torch.zeros(1, 1, 512, 128, dtype=torch.float16))
// printed with ktir.ir.diagnostics.module_text

// CHECK:      func.func @k0_attention(%in0: index, %in1: index, %in2: index, %out0: index) attributes {grid = [32 : i64]} {
// CHECK:        %t0 = ktdp.load %tile0 : <1x1x512x2x64xindex> -> tensor<1x1x512x2x64xf16>
// CHECK:        %t3 = ktdp.load %tile1 : <1x1x512x2x64xindex> -> tensor<1x1x512x2x64xf16>
// CHECK:        scf.for %k0 = %lb0 to %ub0 step %step0 {
// CHECK:          %t6 = ktdp.load %tile2 {ktir.buffer = array<i64: 262144, 2>} : <1x1x8x2x64xindex> -> tensor<1x1x8x2x64xf16>
// CHECK:          %r0 = func.call @k0_attention_attention0(%t8, %t2, %t5, %s2, %s4) {ktir.buffer = array<i64: 266240, 2>} : (tensor<1x1x1x8x128xf16>, tensor<1x1x512x128xf16>, tensor<1x1x512x128xf16>, index, index) -> tensor<1x1x1x8x128xf16>
// CHECK:          ktdp.store %t10, %tile3 : tensor<1x1x8x2x64xf16>, <1x1x8x2x64xindex>

// ROUNDTRIP: k0_attention: equal, cycles ktir 26,827 ktdp 26,827
// ROUNDTRIP-NEXT: 1 of 1 kernels written, 1 with equal outputs, 1 with ktir's cycles, 1 with ktir's bytes, compulsory bytes and FLOPs too

builtin.module {
  func.func @forward(%q: tensor<1x1x512x128xf16, #ktir.tiled<device_size = [1, 512, 2, 1, 64], stride_map = [-1, 128, 64, -1, 1]>> {ktir.name = "q"}, %k: tensor<1x1x512x128xf16, #ktir.tiled<device_size = [1, 512, 2, 1, 64], stride_map = [-1, 128, 64, -1, 1]>> {ktir.name = "k"}, %v: tensor<1x1x512x128xf16, #ktir.tiled<device_size = [1, 512, 2, 1, 64], stride_map = [-1, 128, 64, -1, 1]>> {ktir.name = "v"}) -> tensor<1x1x512x128xf16, #ktir.tiled<device_size = [1, 512, 2, 1, 64], stride_map = [-1, 128, 64, -1, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
    %scaled_dot_product_attention = ktir.reshape %q : tensor<1x1x512x128xf16, #ktir.tiled<device_size = [1, 512, 2, 1, 64], stride_map = [-1, 128, 64, -1, 1]>> -> tensor<1x1x1x512x128xf16, #ktir.tiled<device_size = [1, 512, 2, 1, 64], stride_map = [-1, 128, 64, -1, 1]>>
    %scaled_dot_product_attention_1 = ktir.kernel "ktir.attention" cores 32 chunks 2 work_division {b0 = 1 : i64, h = 1 : i64, s = 32 : i64, e = 1 : i64, l = 1 : i64, d = 1 : i64} tiles [#ktir.tile<extent = [1, 8, 2, 1, 64], starts = [[0, 0, 0, 0, 0], [0, 16, 0, 0, 0], [0, 32, 0, 0, 0], [0, 48, 0, 0, 0], [0, 64, 0, 0, 0], [0, 80, 0, 0, 0], [0, 96, 0, 0, 0], [0, 112, 0, 0, 0], [0, 128, 0, 0, 0], [0, 144, 0, 0, 0], [0, 160, 0, 0, 0], [0, 176, 0, 0, 0], [0, 192, 0, 0, 0], [0, 208, 0, 0, 0], [0, 224, 0, 0, 0], [0, 240, 0, 0, 0], [0, 256, 0, 0, 0], [0, 272, 0, 0, 0], [0, 288, 0, 0, 0], [0, 304, 0, 0, 0], [0, 320, 0, 0, 0], [0, 336, 0, 0, 0], [0, 352, 0, 0, 0], [0, 368, 0, 0, 0], [0, 384, 0, 0, 0], [0, 400, 0, 0, 0], [0, 416, 0, 0, 0], [0, 432, 0, 0, 0], [0, 448, 0, 0, 0], [0, 464, 0, 0, 0], [0, 480, 0, 0, 0], [0, 496, 0, 0, 0]], chunk_starts = [[0, 0, 0, 0, 0], [0, 8, 0, 0, 0]]>, #ktir.tile<extent = [1, 512, 2, 1, 64], starts = [[0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0]], chunk_starts = [[0, 0, 0, 0, 0], [0, 0, 0, 0, 0]]>, #ktir.tile<extent = [1, 512, 2, 1, 64], starts = [[0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0]], chunk_starts = [[0, 0, 0, 0, 0], [0, 0, 0, 0, 0]]>, #ktir.tile<extent = [1, 8, 2, 1, 64], starts = [[0, 0, 0, 0, 0], [0, 16, 0, 0, 0], [0, 32, 0, 0, 0], [0, 48, 0, 0, 0], [0, 64, 0, 0, 0], [0, 80, 0, 0, 0], [0, 96, 0, 0, 0], [0, 112, 0, 0, 0], [0, 128, 0, 0, 0], [0, 144, 0, 0, 0], [0, 160, 0, 0, 0], [0, 176, 0, 0, 0], [0, 192, 0, 0, 0], [0, 208, 0, 0, 0], [0, 224, 0, 0, 0], [0, 240, 0, 0, 0], [0, 256, 0, 0, 0], [0, 272, 0, 0, 0], [0, 288, 0, 0, 0], [0, 304, 0, 0, 0], [0, 320, 0, 0, 0], [0, 336, 0, 0, 0], [0, 352, 0, 0, 0], [0, 368, 0, 0, 0], [0, 384, 0, 0, 0], [0, 400, 0, 0, 0], [0, 416, 0, 0, 0], [0, 432, 0, 0, 0], [0, 448, 0, 0, 0], [0, 464, 0, 0, 0], [0, 480, 0, 0, 0], [0, 496, 0, 0, 0]], chunk_starts = [[0, 0, 0, 0, 0], [0, 8, 0, 0, 0]]>](%scaled_dot_product_attention, %k, %v) : (tensor<1x1x1x512x128xf16, #ktir.tiled<device_size = [1, 512, 2, 1, 64], stride_map = [-1, 128, 64, -1, 1]>>, tensor<1x1x512x128xf16, #ktir.tiled<device_size = [1, 512, 2, 1, 64], stride_map = [-1, 128, 64, -1, 1]>>, tensor<1x1x512x128xf16, #ktir.tiled<device_size = [1, 512, 2, 1, 64], stride_map = [-1, 128, 64, -1, 1]>>) -> tensor<1x1x1x512x128xf16, #ktir.tiled<device_size = [1, 512, 2, 1, 64], stride_map = [-1, 128, 64, -1, 1]>> {
    ^bb0(%0: tensor<1x1x1x512x128xf16, #ktir.tiled<device_size = [1, 512, 2, 1, 64], stride_map = [-1, 128, 64, -1, 1]>>, %1: tensor<1x1x512x128xf16, #ktir.tiled<device_size = [1, 512, 2, 1, 64], stride_map = [-1, 128, 64, -1, 1]>>, %2: tensor<1x1x512x128xf16, #ktir.tiled<device_size = [1, 512, 2, 1, 64], stride_map = [-1, 128, 64, -1, 1]>>, %3: tensor<1x1x1x512x128xf16, #ktir.tiled<device_size = [1, 512, 2, 1, 64], stride_map = [-1, 128, 64, -1, 1]>>):
      %4 = ktir.core_id : index
      %5 = ktir.lx_alloc address 262144 : memref<2x1x8x2x1x64xf16, "lx">
      %6 = ktir.lx_alloc address 0 : memref<1x1x512x2x1x64xf16, "lx">
      %7 = ktir.lx_alloc address 131072 : memref<1x1x512x2x1x64xf16, "lx">
      %8 = ktir.lx_alloc address 266240 : memref<2x1x8x2x1x64xf16, "lx">
      %9 = arith.constant 0 : index
      ktir.dma_load %1 -> %6[%4, %9, %9] tile 1 : tensor<1x1x512x128xf16, #ktir.tiled<device_size = [1, 512, 2, 1, 64], stride_map = [-1, 128, 64, -1, 1]>> -> memref<1x1x512x2x1x64xf16, "lx">
      ktir.dma_load %2 -> %7[%4, %9, %9] tile 2 : tensor<1x1x512x128xf16, #ktir.tiled<device_size = [1, 512, 2, 1, 64], stride_map = [-1, 128, 64, -1, 1]>> -> memref<1x1x512x2x1x64xf16, "lx">
      %10 = arith.constant 2 : index
      %11 = arith.constant 1 : index
      scf.for %12 = %9 to %10 step %11 {
        %13 = arith.constant 2 : index
        %14 = arith.remui %12, %13 : index
        ktir.dma_load %0 -> %5[%4, %12, %14] tile 0 : tensor<1x1x1x512x128xf16, #ktir.tiled<device_size = [1, 512, 2, 1, 64], stride_map = [-1, 128, 64, -1, 1]>> -> memref<2x1x8x2x1x64xf16, "lx">
        ktir.compute pt[%4, %12, %14] ins(%5, %6, %7 : memref<2x1x8x2x1x64xf16, "lx">, memref<1x1x512x2x1x64xf16, "lx">, memref<1x1x512x2x1x64xf16, "lx">) outs(%8 : memref<2x1x8x2x1x64xf16, "lx">) tiles [0, 1, 2, 3] {
        ^bb0(%15: tensor<1x1x1x512x128xf16, #ktir.tiled<device_size = [1, 512, 2, 1, 64], stride_map = [-1, 128, 64, -1, 1]>>, %16: tensor<1x1x512x128xf16, #ktir.tiled<device_size = [1, 512, 2, 1, 64], stride_map = [-1, 128, 64, -1, 1]>>, %17: tensor<1x1x512x128xf16, #ktir.tiled<device_size = [1, 512, 2, 1, 64], stride_map = [-1, 128, 64, -1, 1]>>):
          %scaled_dot_product_attention_2 = ktir.attention %15, %16, %17 scale 0.088388347648318433 causal 0 : tensor<1x1x1x512x128xf16, #ktir.tiled<device_size = [1, 512, 2, 1, 64], stride_map = [-1, 128, 64, -1, 1]>>, tensor<1x1x512x128xf16, #ktir.tiled<device_size = [1, 512, 2, 1, 64], stride_map = [-1, 128, 64, -1, 1]>>, tensor<1x1x512x128xf16, #ktir.tiled<device_size = [1, 512, 2, 1, 64], stride_map = [-1, 128, 64, -1, 1]>> -> tensor<1x1x1x512x128xf16, #ktir.tiled<device_size = [1, 512, 2, 1, 64], stride_map = [-1, 128, 64, -1, 1]>>
          ktir.yield %scaled_dot_product_attention_2 : tensor<1x1x1x512x128xf16, #ktir.tiled<device_size = [1, 512, 2, 1, 64], stride_map = [-1, 128, 64, -1, 1]>>
        }
        ktir.dma_store %8 -> %3[%4, %12, %14] tile 3 : memref<2x1x8x2x1x64xf16, "lx"> -> tensor<1x1x1x512x128xf16, #ktir.tiled<device_size = [1, 512, 2, 1, 64], stride_map = [-1, 128, 64, -1, 1]>>
      }
      ktir.yield
    }
    %scaled_dot_product_attention_2 = ktir.reshape %scaled_dot_product_attention_1 : tensor<1x1x1x512x128xf16, #ktir.tiled<device_size = [1, 512, 2, 1, 64], stride_map = [-1, 128, 64, -1, 1]>> -> tensor<1x1x512x128xf16, #ktir.tiled<device_size = [1, 512, 2, 1, 64], stride_map = [-1, 128, 64, -1, 1]>>
    func.return %scaled_dot_product_attention_2 : tensor<1x1x512x128xf16, #ktir.tiled<device_size = [1, 512, 2, 1, 64], stride_map = [-1, 128, 64, -1, 1]>>
  }
}
