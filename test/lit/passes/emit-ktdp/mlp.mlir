// RUN: ktir-opt %s -p ktir-emit-ktdp | filecheck %s
// RUN: ktir-opt %s -p ktir-emit-ktdp | ktir-opt | filecheck %s
// RUN: ktir-opt %s -p ktir-emit-ktdp --print-op-generic | ktir-opt | filecheck %s

// The MLP of the model zoo (Linear 64 -> 256, GELU, Linear 256 -> 32 on 16 rows of fp16), as
// `ktir.compile` lowers it: two fused kernels. Each becomes a ktdp function in the emitter's
// form, each fused payload a routine function (GELU a routine within it), which ktir's ktdp
// reader reads back (custom and generic form).
// Input generated with
//   ktir.compile(MLP(), (x,)) of test/unit/model_zoo.py, printed with ktir.ir.diagnostics.module_text

// Maps and sets print as #map / #set aliases, defined first (the names are FileCheck variables).
// CHECK-DAG:  #[[VIEW:set[0-9]*]] = affine_set<(d0, d1, d2) : (d0 >= 0, -d0 >= 0, d1 >= 0, -d1 + 15 >= 0, d2 >= 0, -d2 + 63 >= 0)>
// CHECK-DAG:  #[[IDENTITY:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG:  #[[ROWS:set[0-9]*]] = affine_set<(d0, d1, d2) : (d0 >= 0, -d0 >= 0, d1 >= 0, -d1 + 1 >= 0, d2 >= 0, -d2 + 63 >= 0)>
// CHECK-DAG:  #[[SWAP:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d1, d0, d2)>
// CHECK:      func.func @k0_fused(%in0: index, %in1: index, %in2: index, %out0: index) attributes {grid = [32 : i64]} {
// CHECK-NEXT:   %id = ktdp.get_compute_tile_id : index
// CHECK-NEXT:   %vin0 = ktdp.construct_memory_view %in0, sizes: [1, 16, 64], strides: [1024, 64, 1] {coordinate_set = #[[VIEW]], memory_space = #ktdp.memory_space<global>} : memref<1x16x64xf16>
// CHECK:        %tile0 = ktdp.construct_access_tile %vin0[0, %id mod 8 * 2, 0] {access_tile_order = #[[IDENTITY]], access_tile_set = #[[ROWS]]} : memref<1x16x64xf16> -> !ktdp.access_tile<1x2x64xindex>
// CHECK-NEXT:   %t0 = ktdp.load %tile0 : <1x2x64xindex> -> tensor<1x2x64xf16>
// CHECK:        %tile1 = ktdp.construct_access_tile %vin1[%id floordiv 8, 0, 0] {access_tile_order = #[[SWAP]]
// CHECK:        %r0 = func.call @k0_fused_fused0(%t2, %t5, %t7) : (tensor<2x64xf16>, tensor<64x64xf16>, tensor<64xf16>) -> tensor<2x64xf16>
// CHECK:        %tile3 = ktdp.construct_access_tile %vout0[%id floordiv 8, %id mod 8 * 2, 0]
// CHECK:        ktdp.store %t9, %tile3 : tensor<2x1x64xf16>, <2x1x64xindex>
// CHECK-NEXT:   func.return
// CHECK:      func.func private @k0_fused_fused0(%p0: tensor<2x64xf16>, %p1: tensor<64x64xf16>, %p2: tensor<64xf16>) -> tensor<2x64xf16> attributes {ktir.routine = "ktir.fused"} {
// CHECK:        linalg.matmul ins(%p0, %p1 : tensor<2x64xf16>, tensor<64x64xf16>) outs(%{{.*}} : tensor<2x64xf16>) -> tensor<2x64xf16>
// CHECK:        %r0 = func.call @k0_fused_gelu1(%t1) : (tensor<2x64xf16>) -> tensor<2x64xf16>
// CHECK-NEXT:   func.return %r0 : tensor<2x64xf16>
// CHECK:      func.func private @k0_fused_gelu1(%p0: tensor<2x64xf16>) -> tensor<2x64xf16> attributes {ktir.routine = "ktir.gelu"} {
// CHECK:        math.erf %{{.*}} : f32
// CHECK:        func.return %t0 : tensor<2x64xf16>
// CHECK:      func.func @k1_fused(%in0: index, %in1: index, %in2: index, %out0: index) attributes {grid = [8 : i64]} {
// No ktir op or attribute is left but the `ktir.routine` names. FileCheck's POSIX regexes have no
// lookahead: the alternatives match every `ktir.` name that does not begin with `routi`.
// CHECK-NOT:  {{#ktir\.|ktir\.([a-qs-z_]|r[a-np-z_]|ro[a-tv-z_]|rou[a-su-z_]|rout[a-hj-z_])[a-z_]* }}
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
