// RMSNorm of a 16 x 4096 fp16 block split by columns over 4 tiles: each tile sums the squares of
// its 1024 columns, an inter-tile all-reduce (one group, every tile producing and consuming) adds
// the 4 partial sums on the ring, and each tile normalizes its columns with the full row sums.
#full = affine_map<(d0, d1) -> (d0, d1)>
#rows = affine_map<(d0, d1) -> (d0)>
#all = affine_set<(i)[g] : (i >= 0, -i + 3 >= 0)>
#one = affine_set<(g) : (g == 0)>
func.func @rmsnorm(%x: index, %y: index) attributes {grid = [4]} {
  %id = ktdp.get_compute_tile_id : index
  %c1024 = arith.constant 1024 : index
  %col = arith.muli %id, %c1024 : index
  %vx = ktdp.construct_memory_view %x, sizes: [16, 4096], strides: [4096, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 15 >= 0, d1 >= 0, -d1 + 4095 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<16x4096xf16>
  %vy = ktdp.construct_memory_view %y, sizes: [16, 4096], strides: [4096, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 15 >= 0, d1 >= 0, -d1 + 4095 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<16x4096xf16>
  %tx = ktdp.construct_access_tile %vx[0, %col] {access_tile_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 15 >= 0, d1 >= 0, -d1 + 1023 >= 0)>, access_tile_order = #full} : memref<16x4096xf16> -> !ktdp.access_tile<16x1024xindex>
  %ty = ktdp.construct_access_tile %vy[0, %col] {access_tile_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 15 >= 0, d1 >= 0, -d1 + 1023 >= 0)>, access_tile_order = #full} : memref<16x4096xf16> -> !ktdp.access_tile<16x1024xindex>
  %a = ktdp.load %tx : <16x1024xindex> -> tensor<16x1024xf16>
  %a32 = arith.extf %a : tensor<16x1024xf16> to tensor<16x1024xf32>
  %sq = arith.mulf %a32, %a32 : tensor<16x1024xf32>
  %e0 = tensor.empty() : tensor<16xf32>
  %part = linalg.reduce ins(%sq : tensor<16x1024xf32>) outs(%e0 : tensor<16xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  %f = ktdp.inter_tile_produce producer_tiles_per_group = #all -> <(tensor<16xf32>), groups = #one> {
  ^bb0(%gid: index):
    ktdp.yield_partial %part : tensor<16xf32>
  }
  %zero = arith.constant 0.0 : f32
  %ze = tensor.empty() : tensor<16xf32>
  %zeros = linalg.fill ins(%zero : f32) outs(%ze : tensor<16xf32>) -> tensor<16xf32>
  %ss = ktdp.inter_tile_reduce(%f) consumer_tiles_per_group = #all, identity(%zeros : tensor<16xf32>) : <(tensor<16xf32>), groups = #one> -> tensor<16xf32> {
  ^bb0(%lhs: tensor<16xf32>, %rhs: tensor<16xf32>):
    %s = arith.addf %lhs, %rhs : tensor<16xf32>
    ktdp.yield_reduced %s : tensor<16xf32>
  }
  %n = arith.constant 4096.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %e1 = tensor.empty() : tensor<16x1024xf16>
  %out = linalg.generic {indexing_maps = [#full, #rows, #full], iterator_types = ["parallel", "parallel"]} ins(%a32, %ss : tensor<16x1024xf32>, tensor<16xf32>) outs(%e1 : tensor<16x1024xf16>) {
  ^bb0(%xv: f32, %s: f32, %o: f16):
    %mean = arith.divf %s, %n : f32
    %m = arith.addf %mean, %eps : f32
    %r = math.rsqrt %m : f32
    %v = arith.mulf %xv, %r : f32
    %v16 = arith.truncf %v : f32 to f16
    linalg.yield %v16 : f16
  } -> tensor<16x1024xf16>
  ktdp.store %out, %ty : tensor<16x1024xf16>, <16x1024xindex>
  return
}
