// A 192 x 64 fp16 tensor in three pieces, as the RFC's distributed-view copy: rows 0-63 in
// LPDDR5 (%a, row-major), rows 64-127 in core 0's LX stored column by column (%b, strides
// [1, 64]) and rows 128-191 in core 1's LX (%c, row-major). Two tiles copy 96 rows each into
// %out in LPDDR5 and write the rows back doubled: out = [a; b^T; c], then a, b, c *= 2.
#all = affine_set<(d0, d1) : (d0 >= 0, -d0 + 191 >= 0, d1 >= 0, -d1 + 63 >= 0)>
#half = affine_set<(d0, d1) : (d0 >= 0, -d0 + 95 >= 0, d1 >= 0, -d1 + 63 >= 0)>
#full = affine_map<(d0, d1) -> (d0, d1)>
func.func @copy(%a: index, %b: index, %c: index, %out: index) attributes {grid = [2]} {
  %t = ktdp.get_compute_tile_id : index
  %c96 = arith.constant 96 : index
  %row = arith.muli %t, %c96 : index
  %va = ktdp.construct_memory_view %a, sizes: [64, 64], strides: [64, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 63 >= 0, d1 >= 0, -d1 + 63 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<64x64xf16>
  %vb = ktdp.construct_memory_view %b, sizes: [64, 64], strides: [1, 64] {coordinate_set = affine_set<(d0, d1) : (d0 - 64 >= 0, -d0 + 127 >= 0, d1 >= 0, -d1 + 63 >= 0)>, memory_space = #ktdp.memory_space<ct_local, ct_id = 0>} : memref<64x64xf16>
  %vc = ktdp.construct_memory_view %c, sizes: [64, 64], strides: [64, 1] {coordinate_set = affine_set<(d0, d1) : (d0 - 128 >= 0, -d0 + 191 >= 0, d1 >= 0, -d1 + 63 >= 0)>, memory_space = #ktdp.memory_space<ct_local, ct_id = 1>} : memref<64x64xf16>
  %whole = ktdp.construct_distributed_memory_view(%va, %vb, %vc : memref<64x64xf16>, memref<64x64xf16>, memref<64x64xf16>) : memref<192x64xf16>
  %vo = ktdp.construct_memory_view %out, sizes: [192, 64], strides: [64, 1] {coordinate_set = #all, memory_space = #ktdp.memory_space<global>} : memref<192x64xf16>
  %src = ktdp.construct_access_tile %whole[%row, 0] {access_tile_set = #half, access_tile_order = #full} : memref<192x64xf16> -> !ktdp.access_tile<96x64xindex>
  %dst = ktdp.construct_access_tile %vo[%row, 0] {access_tile_set = #half, access_tile_order = #full} : memref<192x64xf16> -> !ktdp.access_tile<96x64xindex>
  %x = ktdp.load %src : <96x64xindex> -> tensor<96x64xf16>
  ktdp.store %x, %dst : tensor<96x64xf16>, <96x64xindex>
  %twice = arith.addf %x, %x : tensor<96x64xf16>
  ktdp.store %twice, %src : tensor<96x64xf16>, <96x64xindex>
  return
}
