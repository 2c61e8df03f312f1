// The placed inter-tile deliveries on 4 tiles, each producing its row of x (1x64):
// - gather over axis 0: every tile receives all four rows (4x64) and stores them at rows 4i..4i+3 of g;
// - reduce_scatter over axis 1: tile i receives columns 16i..16i+15 of the rows' sum, stored there in rs;
// - all_to_all, split over axis 1, concat over axis 0: tile i receives columns 16i..16i+15 of every
//   row (4x16), stored there in a (so a equals x);
// - scatter over axis 1 from tile 0: tile i receives columns 16i..16i+15 of x's row 0, stored there in s;
// - reduce with producer_dependency_per_consumer (p <= c): tile c receives rows 0..c summed, a
//   prefix sum, stored at row c of pre.
#all = affine_set<(i)[g] : (i >= 0, -i + 3 >= 0)>
#first = affine_set<(i)[g] : (i == 0)>
#one = affine_set<(g) : (g == 0)>
#rows4 = affine_set<(d0, d1) : (d0 >= 0, -d0 + 3 >= 0, d1 >= 0, -d1 + 63 >= 0)>
#rows16 = affine_set<(d0, d1) : (d0 >= 0, -d0 + 15 >= 0, d1 >= 0, -d1 + 63 >= 0)>
#row1 = affine_set<(d0, d1) : (d0 >= 0, -d0 >= 0, d1 >= 0, -d1 + 63 >= 0)>
#row = affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 63 >= 0)>
#block = affine_set<(d0, d1) : (d0 >= 0, -d0 + 3 >= 0, d1 >= 0, -d1 + 63 >= 0)>
#quarter = affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 15 >= 0)>
#column = affine_set<(d0, d1) : (d0 >= 0, -d0 + 3 >= 0, d1 >= 0, -d1 + 15 >= 0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @placed(%x: index, %g: index, %rs: index, %a: index, %s: index, %pre: index) attributes {grid = [4]} {
  %id = ktdp.get_compute_tile_id : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %at = arith.muli %id, %c4 : index
  %col = arith.muli %id, %c16 : index
  %zero = arith.constant dense<0.0> : tensor<1x64xf32>
  %vx = ktdp.construct_memory_view %x, sizes: [4, 64], strides: [64, 1] {coordinate_set = #rows4, memory_space = #ktdp.memory_space<global>} : memref<4x64xf32>
  %vg = ktdp.construct_memory_view %g, sizes: [16, 64], strides: [64, 1] {coordinate_set = #rows16, memory_space = #ktdp.memory_space<global>} : memref<16x64xf32>
  %vrs = ktdp.construct_memory_view %rs, sizes: [1, 64], strides: [64, 1] {coordinate_set = #row1, memory_space = #ktdp.memory_space<global>} : memref<1x64xf32>
  %va = ktdp.construct_memory_view %a, sizes: [4, 64], strides: [64, 1] {coordinate_set = #rows4, memory_space = #ktdp.memory_space<global>} : memref<4x64xf32>
  %vs = ktdp.construct_memory_view %s, sizes: [1, 64], strides: [64, 1] {coordinate_set = #row1, memory_space = #ktdp.memory_space<global>} : memref<1x64xf32>
  %tx = ktdp.construct_access_tile %vx[%id, 0] {access_tile_set = #row, access_tile_order = #id2} : memref<4x64xf32> -> !ktdp.access_tile<1x64xindex>
  %mine = ktdp.load %tx : <1x64xindex> -> tensor<1x64xf32>

  %f1 = ktdp.inter_tile_produce producer_tiles_per_group = #all -> <(tensor<1x64xf32>), groups = #one> {
  ^bb0(%gid: index):
    ktdp.yield_partial %mine : tensor<1x64xf32>
  }
  %gathered = ktdp.inter_tile_gather(%f1) consumer_tiles_per_group = #all, gather_dimensions = [0] : <(tensor<1x64xf32>), groups = #one> -> tensor<4x64xf32>
  %tg = ktdp.construct_access_tile %vg[%at, 0] {access_tile_set = #block, access_tile_order = #id2} : memref<16x64xf32> -> !ktdp.access_tile<4x64xindex>
  ktdp.store %gathered, %tg : tensor<4x64xf32>, <4x64xindex>

  %f2 = ktdp.inter_tile_produce producer_tiles_per_group = #all -> <(tensor<1x64xf32>), groups = #one> {
  ^bb0(%gid: index):
    ktdp.yield_partial %mine : tensor<1x64xf32>
  }
  %summed = ktdp.inter_tile_reduce_scatter(%f2) consumer_tiles_per_group = #all, scatter_dimensions = [1], identity(%zero : tensor<1x64xf32>) : <(tensor<1x64xf32>), groups = #one> -> tensor<1x16xf32> {
  ^bb0(%lhs: tensor<1x64xf32>, %rhs: tensor<1x64xf32>):
    %sum = arith.addf %lhs, %rhs : tensor<1x64xf32>
    ktdp.yield_reduced %sum : tensor<1x64xf32>
  }
  %trs = ktdp.construct_access_tile %vrs[0, %col] {access_tile_set = #quarter, access_tile_order = #id2} : memref<1x64xf32> -> !ktdp.access_tile<1x16xindex>
  ktdp.store %summed, %trs : tensor<1x16xf32>, <1x16xindex>

  %f3 = ktdp.inter_tile_produce producer_tiles_per_group = #all -> <(tensor<1x64xf32>), groups = #one> {
  ^bb0(%gid: index):
    ktdp.yield_partial %mine : tensor<1x64xf32>
  }
  %exchanged = ktdp.inter_tile_all_to_all(%f3) consumer_tiles_per_group = #all, split_dimensions = [1], concat_dimensions = [0] : <(tensor<1x64xf32>), groups = #one> -> tensor<4x16xf32>
  %ta = ktdp.construct_access_tile %va[0, %col] {access_tile_set = #column, access_tile_order = #id2} : memref<4x64xf32> -> !ktdp.access_tile<4x16xindex>
  ktdp.store %exchanged, %ta : tensor<4x16xf32>, <4x16xindex>

  %f4 = ktdp.inter_tile_produce producer_tiles_per_group = #first -> <(tensor<1x64xf32>), groups = #one> {
  ^bb0(%gid: index):
    ktdp.yield_partial %mine : tensor<1x64xf32>
  }
  %part = ktdp.inter_tile_scatter(%f4) consumer_tiles_per_group = #all, scatter_dimensions = [1] : <(tensor<1x64xf32>), groups = #one> -> tensor<1x16xf32>
  %ts = ktdp.construct_access_tile %vs[0, %col] {access_tile_set = #quarter, access_tile_order = #id2} : memref<1x64xf32> -> !ktdp.access_tile<1x16xindex>
  ktdp.store %part, %ts : tensor<1x16xf32>, <1x16xindex>

  %f5 = ktdp.inter_tile_produce producer_tiles_per_group = #all -> <(tensor<1x64xf32>), groups = #one> {
  ^bb0(%gid: index):
    ktdp.yield_partial %mine : tensor<1x64xf32>
  }
  %prefix = ktdp.inter_tile_reduce(%f5) consumer_tiles_per_group = #all, producer_dependency_per_consumer = affine_set<(p)[c] : (c - p >= 0)>, identity(%zero : tensor<1x64xf32>) : <(tensor<1x64xf32>), groups = #one> -> tensor<1x64xf32> {
  ^bb0(%lhs: tensor<1x64xf32>, %rhs: tensor<1x64xf32>):
    %sum = arith.addf %lhs, %rhs : tensor<1x64xf32>
    ktdp.yield_reduced %sum : tensor<1x64xf32>
  }
  %vpre = ktdp.construct_memory_view %pre, sizes: [4, 64], strides: [64, 1] {coordinate_set = #rows4, memory_space = #ktdp.memory_space<global>} : memref<4x64xf32>
  %tpre = ktdp.construct_access_tile %vpre[%id, 0] {access_tile_set = #row, access_tile_order = #id2} : memref<4x64xf32> -> !ktdp.access_tile<1x64xindex>
  ktdp.store %prefix, %tpre : tensor<1x64xf32>, <1x64xindex>
  return
}

// A gather whose result type does not hold its four rows.
func.func @short_result(%x: index) attributes {grid = [4]} {
  %id = ktdp.get_compute_tile_id : index
  %vx = ktdp.construct_memory_view %x, sizes: [4, 64], strides: [64, 1] {coordinate_set = #rows4, memory_space = #ktdp.memory_space<global>} : memref<4x64xf32>
  %tx = ktdp.construct_access_tile %vx[%id, 0] {access_tile_set = #row, access_tile_order = #id2} : memref<4x64xf32> -> !ktdp.access_tile<1x64xindex>
  %mine = ktdp.load %tx : <1x64xindex> -> tensor<1x64xf32>
  %f = ktdp.inter_tile_produce producer_tiles_per_group = #all -> <(tensor<1x64xf32>), groups = #one> {
  ^bb0(%gid: index):
    ktdp.yield_partial %mine : tensor<1x64xf32>
  }
  %gathered = ktdp.inter_tile_gather(%f) consumer_tiles_per_group = #all, gather_dimensions = [0] : <(tensor<1x64xf32>), groups = #one> -> tensor<2x64xf32>
  return
}

// A scatter into 3 consumers of 64 columns: no equal parts.
func.func @uneven_scatter(%x: index) attributes {grid = [4]} {
  %id = ktdp.get_compute_tile_id : index
  %vx = ktdp.construct_memory_view %x, sizes: [4, 64], strides: [64, 1] {coordinate_set = #rows4, memory_space = #ktdp.memory_space<global>} : memref<4x64xf32>
  %tx = ktdp.construct_access_tile %vx[%id, 0] {access_tile_set = #row, access_tile_order = #id2} : memref<4x64xf32> -> !ktdp.access_tile<1x64xindex>
  %mine = ktdp.load %tx : <1x64xindex> -> tensor<1x64xf32>
  %f = ktdp.inter_tile_produce producer_tiles_per_group = #first -> <(tensor<1x64xf32>), groups = #one> {
  ^bb0(%gid: index):
    ktdp.yield_partial %mine : tensor<1x64xf32>
  }
  %part = ktdp.inter_tile_scatter(%f) consumer_tiles_per_group = affine_set<(i)[g] : (i >= 0, -i + 2 >= 0)>, scatter_dimensions = [1] : <(tensor<1x64xf32>), groups = #one> -> tensor<1x16xf32>
  return
}
