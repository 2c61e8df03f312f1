// ct_local memory without a ct_id: each tile's own scratchpad. Each of 4 tiles copies its row of
// x into its LX at element 0, doubles it there, and stores it back at its row of y: the four
// tiles' scratchpads hold four different rows at the same address.
#rows = affine_set<(d0, d1) : (d0 >= 0, -d0 + 3 >= 0, d1 >= 0, -d1 + 63 >= 0)>
#row = affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 63 >= 0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @own_lx(%x: index, %y: index) attributes {grid = [4]} {
  %t = ktdp.get_compute_tile_id : index
  %c0 = arith.constant 0 : index
  %vx = ktdp.construct_memory_view %x, sizes: [4, 64], strides: [64, 1] {coordinate_set = #rows, memory_space = #ktdp.memory_space<global>} : memref<4x64xf32>
  %vy = ktdp.construct_memory_view %y, sizes: [4, 64], strides: [64, 1] {coordinate_set = #rows, memory_space = #ktdp.memory_space<global>} : memref<4x64xf32>
  %vl = ktdp.construct_memory_view %c0, sizes: [1, 64], strides: [64, 1] {coordinate_set = #row, memory_space = #ktdp.memory_space<ct_local>} : memref<1x64xf32>
  %tx = ktdp.construct_access_tile %vx[%t, 0] {access_tile_set = #row, access_tile_order = #id2} : memref<4x64xf32> -> !ktdp.access_tile<1x64xindex>
  %ty = ktdp.construct_access_tile %vy[%t, 0] {access_tile_set = #row, access_tile_order = #id2} : memref<4x64xf32> -> !ktdp.access_tile<1x64xindex>
  %tl = ktdp.construct_access_tile %vl[0, 0] {access_tile_set = #row, access_tile_order = #id2} : memref<1x64xf32> -> !ktdp.access_tile<1x64xindex>
  %a = ktdp.load %tx : <1x64xindex> -> tensor<1x64xf32>
  ktdp.store %a, %tl : tensor<1x64xf32>, <1x64xindex>
  %l = ktdp.load %tl : <1x64xindex> -> tensor<1x64xf32>
  %d = arith.addf %l, %l : tensor<1x64xf32>
  ktdp.store %d, %tl : tensor<1x64xf32>, <1x64xindex>
  %back = ktdp.load %tl : <1x64xindex> -> tensor<1x64xf32>
  ktdp.store %back, %ty : tensor<1x64xf32>, <1x64xindex>
  return
}
