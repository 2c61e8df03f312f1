// An indirect gather and scatter on 4 tiles: tile t reads the 8 rows of a 512 x 64 fp16 table
// that ids[t, :] names (ind(...) subscripts) and writes them, scaled by 2, to the rows of out
// that dest[t, :] names: out[dest[t, p], q] = 2 * table[ids[t, p], q].
#full = affine_map<(d0, d1) -> (d0, d1)>
#space = affine_set<(d0, d1) : (d0 >= 0, -d0 + 7 >= 0, d1 >= 0, -d1 + 63 >= 0)>
func.func @gather(%table: index, %ids: index, %dest: index, %out: index) attributes {grid = [4]} {
  %t = ktdp.get_compute_tile_id : index
  %vt = ktdp.construct_memory_view %table, sizes: [512, 64], strides: [64, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 511 >= 0, d1 >= 0, -d1 + 63 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<512x64xf16>
  %vi = ktdp.construct_memory_view %ids, sizes: [4, 8], strides: [8, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 3 >= 0, d1 >= 0, -d1 + 7 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<4x8xi32>
  %vd = ktdp.construct_memory_view %dest, sizes: [4, 8], strides: [8, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 3 >= 0, d1 >= 0, -d1 + 7 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<4x8xi32>
  %vo = ktdp.construct_memory_view %out, sizes: [32, 64], strides: [64, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 31 >= 0, d1 >= 0, -d1 + 63 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<32x64xf16>
  %src = ktdp.construct_indirect_access_tile intermediate_variables(%p, %q) %vt[ind(%vi[%t, %p]), (%q)] {variables_space_order = #full, variables_space_set = #space} : memref<512x64xf16>, memref<4x8xi32> -> !ktdp.access_tile<8x64xindex>
  %dst = ktdp.construct_indirect_access_tile intermediate_variables(%p, %q) %vo[ind(%vd[%t, %p]), (%q)] {variables_space_order = #full, variables_space_set = #space} : memref<32x64xf16>, memref<4x8xi32> -> !ktdp.access_tile<8x64xindex>
  %rows = ktdp.load %src : <8x64xindex> -> tensor<8x64xf16>
  %twice = arith.addf %rows, %rows : tensor<8x64xf16>
  ktdp.store %twice, %dst : tensor<8x64xf16>, <8x64xindex>
  return
}
