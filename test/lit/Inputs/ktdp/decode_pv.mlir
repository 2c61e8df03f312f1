// Decode attention's P @ V with grouped-query attention, on 4 tiles. Row-major fp16 buffers:
//   p        8 query heads x 256 context positions: the softmax weights of one decode token
//   v_cache  256 positions x 2 KV heads x 64 (head_dim)
//   out      8 query heads x 64
// Query heads 4 h .. 4 h + 3 share KV head h. Tile t serves query heads 2 t and 2 t + 1, whose KV
// head is t floordiv 2: out[2 t + i, :] = sum_p p[2 t + i, p] v_cache[p, t floordiv 2, :].
// The context loop (scf.for with an fp32 accumulator in iter_args) takes blocks of 64 positions:
// the weights' 2 x 64 block, the value block 64 x 1 x 64 (collapsed to 64 x 64), and a
// linalg.matmul of the fp16 operands into the fp32 accumulator; the sum is rounded to fp16 once.
#full2 = affine_map<(d0, d1) -> (d0, d1)>
#full3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#heads = affine_set<(d0, d1) : (d0 >= 0, -d0 + 1 >= 0, d1 >= 0, -d1 + 63 >= 0)>
#block = affine_set<(d0, d1, d2) : (d0 >= 0, -d0 + 63 >= 0, d1 == 0, d2 >= 0, -d2 + 63 >= 0)>
func.func @decode_pv(%p: index, %v_cache: index, %out: index) attributes {grid = [4]} {
  %t = ktdp.get_compute_tile_id : index
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %head = arith.muli %t, %c2 : index
  %kv = arith.divui %t, %c2 : index
  %vp = ktdp.construct_memory_view %p, sizes: [8, 256], strides: [256, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 7 >= 0, d1 >= 0, -d1 + 255 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<8x256xf16>
  %vv = ktdp.construct_memory_view %v_cache, sizes: [256, 2, 64], strides: [128, 64, 1] {coordinate_set = affine_set<(d0, d1, d2) : (d0 >= 0, -d0 + 255 >= 0, d1 >= 0, -d1 + 1 >= 0, d2 >= 0, -d2 + 63 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<256x2x64xf16>
  %vo = ktdp.construct_memory_view %out, sizes: [8, 64], strides: [64, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 7 >= 0, d1 >= 0, -d1 + 63 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<8x64xf16>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x64xf32>
  %acc0 = linalg.fill ins(%zero : f32) outs(%e : tensor<2x64xf32>) -> tensor<2x64xf32>
  %acc = scf.for %k = %c0 to %c256 step %c64 iter_args(%acc_in = %acc0) -> (tensor<2x64xf32>) {
    %tp = ktdp.construct_access_tile %vp[%head, %k] {access_tile_set = #heads, access_tile_order = #full2} : memref<8x256xf16> -> !ktdp.access_tile<2x64xindex>
    %tv = ktdp.construct_access_tile %vv[%k, %kv, 0] {access_tile_set = #block, access_tile_order = #full3} : memref<256x2x64xf16> -> !ktdp.access_tile<64x1x64xindex>
    %w = ktdp.load %tp : <2x64xindex> -> tensor<2x64xf16>
    %v3 = ktdp.load %tv : <64x1x64xindex> -> tensor<64x1x64xf16>
    %v = tensor.collapse_shape %v3 [[0, 1], [2]] : tensor<64x1x64xf16> into tensor<64x64xf16>
    %r = linalg.matmul ins(%w, %v : tensor<2x64xf16>, tensor<64x64xf16>) outs(%acc_in : tensor<2x64xf32>) -> tensor<2x64xf32>
    scf.yield %r : tensor<2x64xf32>
  }
  %o = arith.truncf %acc : tensor<2x64xf32> to tensor<2x64xf16>
  %to = ktdp.construct_access_tile %vo[%head, 0] {access_tile_set = #heads, access_tile_order = #full2} : memref<8x64xf16> -> !ktdp.access_tile<2x64xindex>
  ktdp.store %o, %to : tensor<2x64xf16>, <2x64xindex>
  return
}
