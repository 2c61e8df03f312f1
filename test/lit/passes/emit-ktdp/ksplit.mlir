// RUN: ktir-opt %s -p ktir-emit-ktdp | filecheck %s
// RUN: ktir-opt %s -p ktir-emit-ktdp --print-op-generic | ktir-opt | filecheck %s
// RUN: %python -m ktir.tools.ktdp_roundtrip %s | filecheck %s --check-prefix=ROUNDTRIP

// The MLP of the model zoo as `ktir.compile` plans it for the card (`spyre`): its second
// kernel (Linear 256 -> 32 and the bias on 16 rows) splits K over pairs of cores. Each core
// zeroes an fp32 accumulator (`ktir.lx_fill`: a linalg.fill of the output tile in whole
// sticks), adds its 2 x 128 @ 128 x 64 product into it (an accumulating compute: a
// linalg.matmul whose outs is the accumulator), the pair's partial sums are added on the ring
// into its first core (`ktir.ring_reduce`: an inter_tile_produce and an inter_tile_reduce whose
// consumer is tile 2g), and that core alone adds the bias (reading the sum rounded to fp16, as
// ktir does) and stores (`writers 2`: an scf.if on id mod 2 == 0). The zero and the ring's sum
// name the accumulator's LX buffer of one slot (`ktir.buffer`: ktir writes both in place, so a
// next output tile's zero would wait for this one's store). The round trip gives ktir's
// outputs bit for bit and its cycles, bytes and FLOPs.
// Input generated with
//   ktir.compile(MLP(), (x,)) of test/unit/model_zoo.py, printed with ktir.ir.diagnostics.module_text

// Sets print as aliases (upstream MLIR reads the eight groups' set only so, inside the future's type):
// CHECK-DAG:  #[[PRODUCERS:set[0-9]*]] = affine_set<(d0)[s0] : (d0 - s0 * 2 >= 0, -d0 + s0 * 2 + 1 >= 0)>
// CHECK-DAG:  #[[GROUPS:set[0-9]*]] = affine_set<(d0) : (d0 >= 0, -d0 + 7 >= 0)>
// CHECK-DAG:  #[[CONSUMER:set[0-9]*]] = affine_set<(d0)[s0] : (d0 - s0 * 2 == 0)>
// CHECK:      func.func @k1_fused(%in0: index, %in1: index, %in2: index, %out0: index) attributes {grid = [16 : i64]} {
// CHECK:        %tile0 = ktdp.construct_access_tile %vin1[0, %id mod 2 * 128, 0]
// CHECK:        %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:   %[[EMPTY:.+]] = tensor.empty() : tensor<2x64xf32>
// CHECK-NEXT:   %[[ACC:.+]] = linalg.fill {ktir.buffer = array<i64: 512, 1>} ins(%[[ZERO]] : f32) outs(%[[EMPTY]] : tensor<2x64xf32>) -> tensor<2x64xf32>
// CHECK:        %tile1 = ktdp.construct_access_tile %vin0[%id mod 2 * 2, %id floordiv 2 * 2, 0]
// CHECK:        %[[SUM:.+]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x128xf16>, tensor<128x64xf16>) outs(%[[ACC]] : tensor<2x64xf32>) -> tensor<2x64xf32>
// CHECK-NEXT:   %[[FUTURE:.+]] = ktdp.inter_tile_produce producer_tiles_per_group = #[[PRODUCERS]] -> <(tensor<2x64xf32>), groups = #[[GROUPS]]> {
// CHECK-NEXT:   ^bb0(%{{.*}}: index):
// CHECK-NEXT:     ktdp.yield_partial %[[SUM]] : tensor<2x64xf32>
// CHECK:        %[[IDENTITY:.+]] = arith.constant dense<-0.000000e+00> : tensor<2x64xf32>
// CHECK-NEXT:   %[[REDUCED:.+]] = ktdp.inter_tile_reduce(%[[FUTURE]]) consumer_tiles_per_group = #[[CONSUMER]], identity(%[[IDENTITY]] : tensor<2x64xf32>) {ktir.buffer = array<i64: 512, 1>}
// CHECK:          arith.addf %{{.*}}, %{{.*}} : tensor<2x64xf32>
// CHECK:        %[[HELD:.+]] = tensor.extract_slice %[[REDUCED]][0, 0] [2, 32] [1, 1] : tensor<2x64xf32> to tensor<2x32xf32>
// CHECK-NEXT:   func.call @k1_fused_fused0(%[[HELD]], %{{.*}}) : (tensor<2x32xf32>, tensor<32xf16>) -> tensor<2x32xf16>
// CHECK:        %[[WRITES:.+]] = arith.cmpi eq, %{{.*}}, %{{.*}} : index
// CHECK-NEXT:   scf.if %[[WRITES]] {
// CHECK-NEXT:     ktdp.store %{{.*}}, %tile3 : tensor<1x2x64xf16>, <1x2x64xindex>
// CHECK-NEXT:   }
// CHECK-NEXT:   func.return
// CHECK:      func.func private @k1_fused_fused0(%p0: tensor<2x32xf32>, %p1: tensor<32xf16>) -> tensor<2x32xf16> attributes {ktir.routine = "ktir.fused"} {
// CHECK:        ^bb0(%[[A:.+]]: f32, %{{.*}}: f16, %{{.*}}: f16):
// CHECK-NEXT:     %[[ROUNDED:.+]] = arith.truncf %[[A]] : f32 to f16
// CHECK-NEXT:     arith.extf %[[ROUNDED]] : f16 to f32

// ROUNDTRIP: k0_fused: equal, cycles ktir 2,668 ktdp 2,668
// ROUNDTRIP-NEXT: k1_fused: equal, cycles ktir 2,454 ktdp 2,454
// ROUNDTRIP-NEXT: 2 of 2 kernels written, 2 with equal outputs, 2 with ktir's cycles, 2 with ktir's bytes, compulsory bytes and FLOPs too
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
          %gelu_2 = ktir.gelu %linear_3 : tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>> -> tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>
          ktir.yield %gelu_2 : tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>
        }
        ktir.yield %gelu_1 : tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>
      }
      ktir.dma_store %9 -> %3[%4, %10, %10] tile 3 : memref<1x1x2x64xf16, "lx"> -> tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>
      ktir.yield
    }
    %linear_1 = ktir.permute %p_fc2_weight perm [1, 0] : tensor<32x256xf16, #ktir.tiled<device_size = [1, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<256x32xf16, #ktir.tiled<device_size = [1, 256, 64], stride_map = [64, 32, 1]>>
    %linear_2 = ktir.kernel "ktir.fused" cores 16 chunks 1 work_division {m = 8 : i64, n = 1 : i64, k = 2 : i64} tiles [#ktir.tile<extent = [2, 2, 64], starts = [[0, 0, 0], [2, 0, 0], [0, 2, 0], [2, 2, 0], [0, 4, 0], [2, 4, 0], [0, 6, 0], [2, 6, 0], [0, 8, 0], [2, 8, 0], [0, 10, 0], [2, 10, 0], [0, 12, 0], [2, 12, 0], [0, 14, 0], [2, 14, 0]], chunk_starts = [[0, 0, 0]]>, #ktir.tile<extent = [1, 128, 64], starts = [[0, 0, 0], [0, 128, 0], [0, 0, 0], [0, 128, 0], [0, 0, 0], [0, 128, 0], [0, 0, 0], [0, 128, 0], [0, 0, 0], [0, 128, 0], [0, 0, 0], [0, 128, 0], [0, 0, 0], [0, 128, 0], [0, 0, 0], [0, 128, 0]], chunk_starts = [[0, 0, 0]]>, #ktir.tile<extent = [1, 64], starts = [[0, 0], [0, 0], [0, 0], [0, 0], [0, 0], [0, 0], [0, 0], [0, 0], [0, 0], [0, 0], [0, 0], [0, 0], [0, 0], [0, 0], [0, 0], [0, 0]], chunk_starts = [[0, 0]]>, #ktir.tile<extent = [1, 2, 64], starts = [[0, 0, 0], [0, 0, 0], [0, 2, 0], [0, 2, 0], [0, 4, 0], [0, 4, 0], [0, 6, 0], [0, 6, 0], [0, 8, 0], [0, 8, 0], [0, 10, 0], [0, 10, 0], [0, 12, 0], [0, 12, 0], [0, 14, 0], [0, 14, 0]], chunk_starts = [[0, 0, 0]]>](%gelu, %linear_1, %p_fc2_bias) : (tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>, tensor<256x32xf16, #ktir.tiled<device_size = [1, 256, 64], stride_map = [64, 32, 1]>>, tensor<32xf16, #ktir.tiled<device_size = [1, 64], stride_map = [64, 1]>>) -> tensor<16x32xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 32, 1]>> {
    ^bb0(%0: tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>, %1: tensor<256x32xf16, #ktir.tiled<device_size = [1, 256, 64], stride_map = [64, 32, 1]>>, %2: tensor<32xf16, #ktir.tiled<device_size = [1, 64], stride_map = [64, 1]>>, %3: tensor<16x32xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 32, 1]>>):
      %4 = ktir.core_id : index
      %5 = ktir.lx_alloc address 0 : memref<1x2x2x64xf16, "lx">
      %6 = ktir.lx_alloc address 1661312 : memref<1x1x128x64xf16, "lx">
      %7 = ktir.lx_alloc address 1536 : memref<1x1x64xf16, "lx">
      %8 = ktir.lx_alloc address 1024 : memref<1x256xi8, "lx">
      %9 = ktir.lx_alloc address 512 : memref<1x1x2x64xf32, "lx">
      %10 = ktir.lx_alloc address 1280 : memref<1x1x2x64xf16, "lx">
      %11 = arith.constant 0 : index
      ktir.dma_load %1 -> %6[%4, %11, %11] tile 1 prefetch : tensor<256x32xf16, #ktir.tiled<device_size = [1, 256, 64], stride_map = [64, 32, 1]>> -> memref<1x1x128x64xf16, "lx">
      ktir.lx_fill %9[%11] value 0 : i64 : memref<1x1x2x64xf32, "lx">
      ktir.dma_load %0 -> %5[%4, %11, %11] tile 0 : tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>> -> memref<1x2x2x64xf16, "lx">
      ktir.compute pt[%4, %11, %11] ins(%5, %6 : memref<1x2x2x64xf16, "lx">, memref<1x1x128x64xf16, "lx">) outs(%9 : memref<1x1x2x64xf32, "lx">) tiles [0, 1, 3] accumulate {
      ^bb0(%12: tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>, %13: tensor<256x32xf16, #ktir.tiled<device_size = [1, 256, 64], stride_map = [64, 32, 1]>>):
        %linear_3 = ktir.matmul %12, %13 : tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>, tensor<256x32xf16, #ktir.tiled<device_size = [1, 256, 64], stride_map = [64, 32, 1]>> -> tensor<16x32xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 32, 1]>>
        ktir.yield %linear_3 : tensor<16x32xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 32, 1]>>
      }
      ktir.ring_reduce %9[%11] group 2 combine add : memref<1x1x2x64xf32, "lx">
      ktir.dma_load %2 -> %7[%4, %11, %11] tile 2 : tensor<32xf16, #ktir.tiled<device_size = [1, 64], stride_map = [64, 1]>> -> memref<1x1x64xf16, "lx">
      ktir.compute sfu[%4, %11, %11] ins(%9, %7 : memref<1x1x2x64xf32, "lx">, memref<1x1x64xf16, "lx">) outs(%10 : memref<1x1x2x64xf16, "lx">) tiles [3, 2, 3] {
      ^bb0(%14: tensor<16x32xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 32, 1]>>, %15: tensor<32xf16, #ktir.tiled<device_size = [1, 64], stride_map = [64, 1]>>):
        %16 = ktir.fused(%14, %15) : (tensor<16x32xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 32, 1]>>, tensor<32xf16, #ktir.tiled<device_size = [1, 64], stride_map = [64, 1]>>) -> tensor<16x32xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 32, 1]>> {
        ^bb0(%17: tensor<16x32xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 32, 1]>>, %18: tensor<32xf16, #ktir.tiled<device_size = [1, 64], stride_map = [64, 1]>>):
          %linear_4 = ktir.add %17, %18 : tensor<16x32xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 32, 1]>>, tensor<32xf16, #ktir.tiled<device_size = [1, 64], stride_map = [64, 1]>> -> tensor<16x32xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 32, 1]>>
          ktir.yield %linear_4 : tensor<16x32xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 32, 1]>>
        }
        ktir.yield %16 : tensor<16x32xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 32, 1]>>
      }
      ktir.dma_store %10 -> %3[%4, %11, %11] tile 3 writers 2 : memref<1x1x2x64xf16, "lx"> -> tensor<16x32xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 32, 1]>>
      ktir.yield
    }
    func.return %linear_2 : tensor<16x32xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 32, 1]>>
  }
}
