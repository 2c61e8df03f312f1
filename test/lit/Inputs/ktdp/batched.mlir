// Batched attention scores on one tile, with the named ops xDSL lacks: s = (q @ k) / n with
// linalg.batch_matmul and linalg.div over 2 heads of 8 x 16 by 16 x 64, then the row sums of
// s in the short form of linalg.reduce: out[h, i] = sum_j s[h, i, j].
#q = affine_set<(d0, d1, d2) : (d0 >= 0, -d0 + 1 >= 0, d1 >= 0, -d1 + 7 >= 0, d2 >= 0, -d2 + 15 >= 0)>
#k = affine_set<(d0, d1, d2) : (d0 >= 0, -d0 + 1 >= 0, d1 >= 0, -d1 + 15 >= 0, d2 >= 0, -d2 + 63 >= 0)>
#o = affine_set<(d0, d1) : (d0 >= 0, -d0 + 1 >= 0, d1 >= 0, -d1 + 7 >= 0)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @batched(%q: index, %k: index, %n: index, %out: index) {
  %vq = ktdp.construct_memory_view %q, sizes: [2, 8, 16], strides: [128, 16, 1] {coordinate_set = #q, memory_space = #ktdp.memory_space<global>} : memref<2x8x16xf32>
  %vk = ktdp.construct_memory_view %k, sizes: [2, 16, 64], strides: [1024, 64, 1] {coordinate_set = #k, memory_space = #ktdp.memory_space<global>} : memref<2x16x64xf32>
  %vn = ktdp.construct_memory_view %n, sizes: [2, 8, 64], strides: [512, 64, 1] {coordinate_set = affine_set<(d0, d1, d2) : (d0 >= 0, -d0 + 1 >= 0, d1 >= 0, -d1 + 7 >= 0, d2 >= 0, -d2 + 63 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<2x8x64xf32>
  %vo = ktdp.construct_memory_view %out, sizes: [2, 8], strides: [8, 1] {coordinate_set = #o, memory_space = #ktdp.memory_space<global>} : memref<2x8xf32>
  %tq = ktdp.construct_access_tile %vq[0, 0, 0] {access_tile_set = #q, access_tile_order = #id3} : memref<2x8x16xf32> -> !ktdp.access_tile<2x8x16xindex>
  %tk = ktdp.construct_access_tile %vk[0, 0, 0] {access_tile_set = #k, access_tile_order = #id3} : memref<2x16x64xf32> -> !ktdp.access_tile<2x16x64xindex>
  %tn = ktdp.construct_access_tile %vn[0, 0, 0] {access_tile_set = affine_set<(d0, d1, d2) : (d0 >= 0, -d0 + 1 >= 0, d1 >= 0, -d1 + 7 >= 0, d2 >= 0, -d2 + 63 >= 0)>, access_tile_order = #id3} : memref<2x8x64xf32> -> !ktdp.access_tile<2x8x64xindex>
  %to = ktdp.construct_access_tile %vo[0, 0] {access_tile_set = #o, access_tile_order = #id2} : memref<2x8xf32> -> !ktdp.access_tile<2x8xindex>
  %a = ktdp.load %tq : <2x8x16xindex> -> tensor<2x8x16xf32>
  %b = ktdp.load %tk : <2x16x64xindex> -> tensor<2x16x64xf32>
  %d = ktdp.load %tn : <2x8x64xindex> -> tensor<2x8x64xf32>
  %e = tensor.empty() : tensor<2x8x64xf32>
  %s = linalg.batch_matmul ins(%a, %b : tensor<2x8x16xf32>, tensor<2x16x64xf32>) outs(%e : tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  %t = linalg.div ins(%s, %d : tensor<2x8x64xf32>, tensor<2x8x64xf32>) outs(%e : tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  %e2 = tensor.empty() : tensor<2x8xf32>
  %r = linalg.reduce { arith.addf } ins(%t : tensor<2x8x64xf32>) outs(%e2 : tensor<2x8xf32>) dimensions = [2]
  ktdp.store %r, %to : tensor<2x8xf32>, <2x8xindex>
  return
}
