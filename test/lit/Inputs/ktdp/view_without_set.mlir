// Views without coordinate_set, as the peer interpreter ktir-cpu's kernels write them: each
// covers the full index space of its sizes. Each of 2 tiles doubles its row of x into y.
#row = affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 3 >= 0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @double(%x: index, %y: index) attributes {grid = [2]} {
  %t = ktdp.get_compute_tile_id : index
  %vx = ktdp.construct_memory_view %x, sizes: [2, 4], strides: [4, 1] {memory_space = #ktdp.memory_space<global>} : memref<2x4xf32>
  %vy = ktdp.construct_memory_view %y, sizes: [2, 4], strides: [4, 1] {memory_space = #ktdp.memory_space<global>} : memref<2x4xf32>
  %tx = ktdp.construct_access_tile %vx[%t, 0] {access_tile_set = #row, access_tile_order = #id2} : memref<2x4xf32> -> !ktdp.access_tile<1x4xindex>
  %ty = ktdp.construct_access_tile %vy[%t, 0] {access_tile_set = #row, access_tile_order = #id2} : memref<2x4xf32> -> !ktdp.access_tile<1x4xindex>
  %a = ktdp.load %tx : <1x4xindex> -> tensor<1x4xf32>
  %b = arith.addf %a, %a : tensor<1x4xf32>
  ktdp.store %b, %ty : tensor<1x4xf32>, <1x4xindex>
  return
}
