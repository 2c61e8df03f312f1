// A scale row placed in core 0's LX (ct_local, ct_id = 0) at element 0, read by every tile to
// scale its row of x in device memory: what `--place NAME=OFFSET@lxC` is for.
#row = affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 63 >= 0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @scale(%x: index, %y: index) attributes {grid = [4]} {
  %id = ktdp.get_compute_tile_id : index
  %c0 = arith.constant 0 : index
  %vs = ktdp.construct_memory_view %c0, sizes: [1, 64], strides: [64, 1] {coordinate_set = #row, memory_space = #ktdp.memory_space<ct_local, ct_id = 0>} : memref<1x64xf16>
  %vx = ktdp.construct_memory_view %x, sizes: [4, 64], strides: [64, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 3 >= 0, d1 >= 0, -d1 + 63 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<4x64xf16>
  %vy = ktdp.construct_memory_view %y, sizes: [4, 64], strides: [64, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 3 >= 0, d1 >= 0, -d1 + 63 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<4x64xf16>
  %ts = ktdp.construct_access_tile %vs[0, 0] {access_tile_set = #row, access_tile_order = #id2} : memref<1x64xf16> -> !ktdp.access_tile<1x64xindex>
  %tx = ktdp.construct_access_tile %vx[%id, 0] {access_tile_set = #row, access_tile_order = #id2} : memref<4x64xf16> -> !ktdp.access_tile<1x64xindex>
  %ty = ktdp.construct_access_tile %vy[%id, 0] {access_tile_set = #row, access_tile_order = #id2} : memref<4x64xf16> -> !ktdp.access_tile<1x64xindex>
  %s = ktdp.load %ts : <1x64xindex> -> tensor<1x64xf16>
  %a = ktdp.load %tx : <1x64xindex> -> tensor<1x64xf16>
  %e = tensor.empty() : tensor<1x64xf16>
  %p = linalg.mul ins(%a, %s : tensor<1x64xf16>, tensor<1x64xf16>) outs(%e : tensor<1x64xf16>) -> tensor<1x64xf16>
  ktdp.store %p, %ty : tensor<1x64xf16>, <1x64xindex>
  return
}
