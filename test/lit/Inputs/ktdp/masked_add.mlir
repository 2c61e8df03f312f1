// A masked vector add (as Triton writes it, and upstream's dynamic copies): 2 tiles of 24
// elements over 32-element views; tile 1's access tile reaches 16 elements past the views'
// sizes, which their coordinate_set leaves out: its loads read them as 0 and its store skips
// them (the array after z keeps its values).
#all = affine_set<(d0) : (d0 >= 0, -d0 + 31 >= 0)>
#block = affine_set<(d0) : (d0 >= 0, -d0 + 23 >= 0)>
#id = affine_map<(d0) -> (d0)>
func.func @masked_add(%x: index, %y: index, %z: index) attributes {grid = [2]} {
  %t = ktdp.get_compute_tile_id : index
  %c24 = arith.constant 24 : index
  %start = arith.muli %t, %c24 : index
  %vx = ktdp.construct_memory_view %x, sizes: [32], strides: [1] {coordinate_set = #all, memory_space = #ktdp.memory_space<global>} : memref<32xf32>
  %vy = ktdp.construct_memory_view %y, sizes: [32], strides: [1] {coordinate_set = #all, memory_space = #ktdp.memory_space<global>} : memref<32xf32>
  %vz = ktdp.construct_memory_view %z, sizes: [32], strides: [1] {coordinate_set = #all, memory_space = #ktdp.memory_space<global>} : memref<32xf32>
  %tx = ktdp.construct_access_tile %vx[%start] {access_tile_set = #block, access_tile_order = #id} : memref<32xf32> -> !ktdp.access_tile<24xindex>
  %ty = ktdp.construct_access_tile %vy[%start] {access_tile_set = #block, access_tile_order = #id} : memref<32xf32> -> !ktdp.access_tile<24xindex>
  %tz = ktdp.construct_access_tile %vz[%start] {access_tile_set = #block, access_tile_order = #id} : memref<32xf32> -> !ktdp.access_tile<24xindex>
  %a = ktdp.load %tx : <24xindex> -> tensor<24xf32>
  %b = ktdp.load %ty : <24xindex> -> tensor<24xf32>
  %s = arith.addf %a, %b : tensor<24xf32>
  ktdp.store %s, %tz : tensor<24xf32>, <24xindex>
  return
}
