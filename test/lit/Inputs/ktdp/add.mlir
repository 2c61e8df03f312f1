// RFC 0682's worked example: a 96 x 64 fp16 add on 32 tiles, 3 rows each, one 1 x 64 access
// tile per row per operand, the result of linalg.add stored (not the tensor.empty).
#rows = affine_set<(d0, d1) : (d0 >= 0, -d0 + 95 >= 0, d1 >= 0, -d1 + 63 >= 0)>
#row = affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 63 >= 0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @add(%a: index, %b: index, %c: index) attributes {grid = [32]} {
  %id = ktdp.get_compute_tile_id : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %row = arith.muli %id, %c3 : index
  %va = ktdp.construct_memory_view %a, sizes: [96, 64], strides: [64, 1] {coordinate_set = #rows, memory_space = #ktdp.memory_space<global>} : memref<96x64xf16>
  %vb = ktdp.construct_memory_view %b, sizes: [96, 64], strides: [64, 1] {coordinate_set = #rows, memory_space = #ktdp.memory_space<global>} : memref<96x64xf16>
  %vc = ktdp.construct_memory_view %c, sizes: [96, 64], strides: [64, 1] {coordinate_set = #rows, memory_space = #ktdp.memory_space<global>} : memref<96x64xf16>
  scf.for %i = %c0 to %c3 step %c1 {
    %ta = ktdp.construct_access_tile %va[%row + %i, 0] {access_tile_set = #row, access_tile_order = #id2} : memref<96x64xf16> -> !ktdp.access_tile<1x64xindex>
    %tb = ktdp.construct_access_tile %vb[%row + %i, 0] {access_tile_set = #row, access_tile_order = #id2} : memref<96x64xf16> -> !ktdp.access_tile<1x64xindex>
    %tc = ktdp.construct_access_tile %vc[%row + %i, 0] {access_tile_set = #row, access_tile_order = #id2} : memref<96x64xf16> -> !ktdp.access_tile<1x64xindex>
    %x = ktdp.load %ta : <1x64xindex> -> tensor<1x64xf16>
    %y = ktdp.load %tb : <1x64xindex> -> tensor<1x64xf16>
    %e = tensor.empty() : tensor<1x64xf16>
    %sum = linalg.add ins(%x, %y : tensor<1x64xf16>, tensor<1x64xf16>) outs(%e : tensor<1x64xf16>) -> tensor<1x64xf16>
    ktdp.store %sum, %tc : tensor<1x64xf16>, <1x64xindex>
  }
  return
}
