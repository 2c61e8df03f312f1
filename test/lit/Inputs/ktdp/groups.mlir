// Two groups of two tiles, each all-reducing its rows of x into y (tiles 0, 1 hold rows 0 + 1;
// tiles 2, 3 rows 2 + 3). The groups' set has inequalities: ktir prints it as a `#set` alias,
// which upstream MLIR reads inside the future's type (it cannot read it in place).
#pairs = affine_set<(i)[g] : (i - 2 * g >= 0, -i + 2 * g + 1 >= 0)>
#two = affine_set<(g) : (g >= 0, -g + 1 >= 0)>
#rows = affine_set<(d0, d1) : (d0 >= 0, -d0 + 3 >= 0, d1 >= 0, -d1 + 63 >= 0)>
#row = affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 63 >= 0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @pair_sums(%x: index, %y: index) attributes {grid = [4]} {
  %t = ktdp.get_compute_tile_id : index
  %zero = arith.constant dense<0.0> : tensor<1x64xf32>
  %vx = ktdp.construct_memory_view %x, sizes: [4, 64], strides: [64, 1] {coordinate_set = #rows, memory_space = #ktdp.memory_space<global>} : memref<4x64xf32>
  %vy = ktdp.construct_memory_view %y, sizes: [4, 64], strides: [64, 1] {coordinate_set = #rows, memory_space = #ktdp.memory_space<global>} : memref<4x64xf32>
  %tx = ktdp.construct_access_tile %vx[%t, 0] {access_tile_set = #row, access_tile_order = #id2} : memref<4x64xf32> -> !ktdp.access_tile<1x64xindex>
  %ty = ktdp.construct_access_tile %vy[%t, 0] {access_tile_set = #row, access_tile_order = #id2} : memref<4x64xf32> -> !ktdp.access_tile<1x64xindex>
  %mine = ktdp.load %tx : <1x64xindex> -> tensor<1x64xf32>
  %f = ktdp.inter_tile_produce producer_tiles_per_group = #pairs -> <(tensor<1x64xf32>), groups = #two> {
  ^bb0(%gid: index):
    ktdp.yield_partial %mine : tensor<1x64xf32>
  }
  %sum = ktdp.inter_tile_reduce(%f) consumer_tiles_per_group = #pairs, identity(%zero : tensor<1x64xf32>) : <(tensor<1x64xf32>), groups = #two> -> tensor<1x64xf32> {
  ^bb0(%lhs: tensor<1x64xf32>, %rhs: tensor<1x64xf32>):
    %s = arith.addf %lhs, %rhs : tensor<1x64xf32>
    ktdp.yield_reduced %s : tensor<1x64xf32>
  }
  ktdp.store %sum, %ty : tensor<1x64xf32>, <1x64xindex>
  return
}
