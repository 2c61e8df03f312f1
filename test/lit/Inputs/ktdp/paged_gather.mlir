// A paged-cache gather on 8 tiles: the cache holds 64 pages of 16 positions x 128 fp16; tile t
// copies positions [32 t, 32 t + 32) of one sequence, page by page through its block table:
// out[p, d] = cache[table[p floordiv 16], p mod 16, d] with p = 32 t + j.
#space = affine_set<(d0, d1) : (d0 >= 0, -d0 + 31 >= 0, d1 >= 0, -d1 + 127 >= 0)>
#full = affine_map<(d0, d1) -> (d0, d1)>
func.func @paged(%cache: index, %table: index, %out: index) attributes {grid = [8]} {
  %t = ktdp.get_compute_tile_id : index
  %c32 = arith.constant 32 : index
  %first = arith.muli %t, %c32 : index
  %vc = ktdp.construct_memory_view %cache, sizes: [64, 16, 128], strides: [2048, 128, 1] {coordinate_set = affine_set<(d0, d1, d2) : (d0 >= 0, -d0 + 63 >= 0, d1 >= 0, -d1 + 15 >= 0, d2 >= 0, -d2 + 127 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<64x16x128xf16>
  %vt = ktdp.construct_memory_view %table, sizes: [16], strides: [1] {coordinate_set = affine_set<(d0) : (d0 >= 0, -d0 + 15 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<16xi32>
  %vo = ktdp.construct_memory_view %out, sizes: [256, 128], strides: [128, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 255 >= 0, d1 >= 0, -d1 + 127 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<256x128xf16>
  %src = ktdp.construct_indirect_access_tile intermediate_variables(%j, %d) %vc[ind(%vt[(%first + %j) floordiv 16]), ((%first + %j) mod 16), (%d)] {variables_space_order = #full, variables_space_set = #space} : memref<64x16x128xf16>, memref<16xi32> -> !ktdp.access_tile<32x128xindex>
  %dst = ktdp.construct_access_tile %vo[%first, 0] {access_tile_set = #space, access_tile_order = #full} : memref<256x128xf16> -> !ktdp.access_tile<32x128xindex>
  %rows = ktdp.load %src : <32x128xindex> -> tensor<32x128xf16>
  ktdp.store %rows, %dst : tensor<32x128xf16>, <32x128xindex>
  return
}
