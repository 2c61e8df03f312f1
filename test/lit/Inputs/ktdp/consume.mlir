// inter_tile_consume on 4 tiles: tile 0's row broadcast to every tile, then routed in one group
// of 4 producers by producer_dependency_per_consumer: tile c receives tile 3 - c's row. Each tile
// stores what it received at its own row. (groups.mlir has a group set with inequalities.)
#all = affine_set<(i)[g] : (i >= 0, -i + 3 >= 0)>
#first = affine_set<(i)[g] : (i == 0)>
#one = affine_set<(g) : (g == 0)>
#mirror = affine_set<(p)[c] : (p + c - 3 == 0)>
#rows = affine_set<(d0, d1) : (d0 >= 0, -d0 + 3 >= 0, d1 >= 0, -d1 + 63 >= 0)>
#row = affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 63 >= 0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @consume(%x: index, %y: index, %z: index) attributes {grid = [4]} {
  %id = ktdp.get_compute_tile_id : index
  %vx = ktdp.construct_memory_view %x, sizes: [4, 64], strides: [64, 1] {coordinate_set = #rows, memory_space = #ktdp.memory_space<global>} : memref<4x64xf32>
  %vy = ktdp.construct_memory_view %y, sizes: [4, 64], strides: [64, 1] {coordinate_set = #rows, memory_space = #ktdp.memory_space<global>} : memref<4x64xf32>
  %vz = ktdp.construct_memory_view %z, sizes: [4, 64], strides: [64, 1] {coordinate_set = #rows, memory_space = #ktdp.memory_space<global>} : memref<4x64xf32>
  %tx = ktdp.construct_access_tile %vx[%id, 0] {access_tile_set = #row, access_tile_order = #id2} : memref<4x64xf32> -> !ktdp.access_tile<1x64xindex>
  %ty = ktdp.construct_access_tile %vy[%id, 0] {access_tile_set = #row, access_tile_order = #id2} : memref<4x64xf32> -> !ktdp.access_tile<1x64xindex>
  %tz = ktdp.construct_access_tile %vz[%id, 0] {access_tile_set = #row, access_tile_order = #id2} : memref<4x64xf32> -> !ktdp.access_tile<1x64xindex>
  %mine = ktdp.load %tx : <1x64xindex> -> tensor<1x64xf32>
  %f = ktdp.inter_tile_produce producer_tiles_per_group = #first -> <(tensor<1x64xf32>), groups = #one> {
  ^bb0(%gid: index):
    ktdp.yield_partial %mine : tensor<1x64xf32>
  }
  %broadcast = ktdp.inter_tile_consume(%f) consumer_tiles_per_group = #all : <(tensor<1x64xf32>), groups = #one> -> tensor<1x64xf32>
  ktdp.store %broadcast, %ty : tensor<1x64xf32>, <1x64xindex>
  %h = ktdp.inter_tile_produce producer_tiles_per_group = #all -> <(tensor<1x64xf32>), groups = #one> {
  ^bb0(%gid: index):
    ktdp.yield_partial %mine : tensor<1x64xf32>
  }
  %partner = ktdp.inter_tile_consume(%h) consumer_tiles_per_group = #all, producer_dependency_per_consumer = #mirror : <(tensor<1x64xf32>), groups = #one> -> tensor<1x64xf32>
  ktdp.store %partner, %tz : tensor<1x64xf32>, <1x64xindex>
  return
}

// Two producers in a group and no dependency set: a consumer with two sources.
func.func @two_sources(%x: index) attributes {grid = [2]} {
  %id = ktdp.get_compute_tile_id : index
  %vx = ktdp.construct_memory_view %x, sizes: [2, 64], strides: [64, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 1 >= 0, d1 >= 0, -d1 + 63 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<2x64xf32>
  %tx = ktdp.construct_access_tile %vx[%id, 0] {access_tile_set = #row, access_tile_order = #id2} : memref<2x64xf32> -> !ktdp.access_tile<1x64xindex>
  %mine = ktdp.load %tx : <1x64xindex> -> tensor<1x64xf32>
  %f = ktdp.inter_tile_produce producer_tiles_per_group = affine_set<(i)[g] : (i >= 0, -i + 1 >= 0)> -> <(tensor<1x64xf32>), groups = #one> {
  ^bb0(%gid: index):
    ktdp.yield_partial %mine : tensor<1x64xf32>
  }
  %r = ktdp.inter_tile_consume(%f) consumer_tiles_per_group = affine_set<(i)[g] : (i >= 0, -i + 1 >= 0)> : <(tensor<1x64xf32>), groups = #one> -> tensor<1x64xf32>
  ktdp.store %r, %tx : tensor<1x64xf32>, <1x64xindex>
  return
}
