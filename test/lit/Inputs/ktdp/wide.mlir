// One tile holds x, exp(x) and their sum, 1 MiB each, at once: 3 MiB of live tensors at the
// add, more than a 2 MiB LX holds (a 4 MiB one runs it): y = x + exp(x) over 512 x 1024 fp16.
func.func @wide(%x: index, %y: index) {
  %v = ktdp.construct_memory_view %x, sizes: [512, 1024], strides: [1024, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 511 >= 0, d1 >= 0, -d1 + 1023 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<512x1024xf16>
  %w = ktdp.construct_memory_view %y, sizes: [512, 1024], strides: [1024, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 511 >= 0, d1 >= 0, -d1 + 1023 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<512x1024xf16>
  %t = ktdp.construct_access_tile %v[0, 0] {access_tile_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 511 >= 0, d1 >= 0, -d1 + 1023 >= 0)>, access_tile_order = affine_map<(d0, d1) -> (d0, d1)>} : memref<512x1024xf16> -> !ktdp.access_tile<512x1024xindex>
  %u = ktdp.construct_access_tile %w[0, 0] {access_tile_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 511 >= 0, d1 >= 0, -d1 + 1023 >= 0)>, access_tile_order = affine_map<(d0, d1) -> (d0, d1)>} : memref<512x1024xf16> -> !ktdp.access_tile<512x1024xindex>
  %a = ktdp.load %t : <512x1024xindex> -> tensor<512x1024xf16>
  %e = math.exp %a : tensor<512x1024xf16>
  %s = arith.addf %a, %e : tensor<512x1024xf16>
  ktdp.store %s, %u : tensor<512x1024xf16>, <512x1024xindex>
  return
}
