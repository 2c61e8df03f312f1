// spyreop intrinsics inside linalg.generic bodies, as torch-spyre's emitter writes them: on 2
// tiles, one 1 x 64 row each, y = gelu(x), z = x / sigmoid(x) where x > 0 else softplus(x).
#rows = affine_set<(d0, d1) : (d0 >= 0, -d0 + 1 >= 0, d1 >= 0, -d1 + 63 >= 0)>
#row = affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 63 >= 0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @intrinsics(%x: index, %y: index, %z: index) attributes {grid = [2]} {
  %id = ktdp.get_compute_tile_id : index
  %vx = ktdp.construct_memory_view %x, sizes: [2, 64], strides: [64, 1] {coordinate_set = #rows, memory_space = #ktdp.memory_space<global>} : memref<2x64xf16>
  %vy = ktdp.construct_memory_view %y, sizes: [2, 64], strides: [64, 1] {coordinate_set = #rows, memory_space = #ktdp.memory_space<global>} : memref<2x64xf16>
  %vz = ktdp.construct_memory_view %z, sizes: [2, 64], strides: [64, 1] {coordinate_set = #rows, memory_space = #ktdp.memory_space<global>} : memref<2x64xf32>
  %tx = ktdp.construct_access_tile %vx[%id, 0] {access_tile_set = #row, access_tile_order = #id2} : memref<2x64xf16> -> !ktdp.access_tile<1x64xindex>
  %ty = ktdp.construct_access_tile %vy[%id, 0] {access_tile_set = #row, access_tile_order = #id2} : memref<2x64xf16> -> !ktdp.access_tile<1x64xindex>
  %tz = ktdp.construct_access_tile %vz[%id, 0] {access_tile_set = #row, access_tile_order = #id2} : memref<2x64xf32> -> !ktdp.access_tile<1x64xindex>
  %in = ktdp.load %tx : <1x64xindex> -> tensor<1x64xf16>
  %e16 = tensor.empty() : tensor<1x64xf16>
  %g = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%in : tensor<1x64xf16>) outs(%e16 : tensor<1x64xf16>) {
  ^bb0(%a: f16, %o: f16):
    %r = spyreop.gelu %a : f16
    linalg.yield %r : f16
  } -> tensor<1x64xf16>
  ktdp.store %g, %ty : tensor<1x64xf16>, <1x64xindex>
  %e32 = tensor.empty() : tensor<1x64xf32>
  %w = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%in : tensor<1x64xf16>) outs(%e32 : tensor<1x64xf32>) {
  ^bb0(%a: f16, %o: f32):
    %f = arith.extf %a : f16 to f32
    %zero = arith.constant 0.0 : f32
    %s = spyreop.sigmoid %f : f32
    %q = spyreop.realdiv %f, %s : f32
    %p = spyreop.softplus %a beta 1.0 threshold 20.0 : f16
    %pf = arith.extf %p : f16 to f32
    %positive = spyreop.compare <greaterthan> %f, %zero : f32
    %r = spyreop.select %positive, %q, %pf : f32
    linalg.yield %r : f32
  } -> tensor<1x64xf32>
  ktdp.store %w, %tz : tensor<1x64xf32>, <1x64xindex>
  return
}

// The LayerNorm parts are read but not run (their arithmetic is not documented upstream).
func.func @undocumented(%x: index, %y: index) attributes {grid = [1]} {
  %vx = ktdp.construct_memory_view %x, sizes: [1, 64], strides: [64, 1] {coordinate_set = #row, memory_space = #ktdp.memory_space<global>} : memref<1x64xf32>
  %tx = ktdp.construct_access_tile %vx[0, 0] {access_tile_set = #row, access_tile_order = #id2} : memref<1x64xf32> -> !ktdp.access_tile<1x64xindex>
  %in = ktdp.load %tx : <1x64xindex> -> tensor<1x64xf32>
  %e = tensor.empty() : tensor<1x64xf32>
  %m = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%in : tensor<1x64xf32>) outs(%e : tensor<1x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %mean, %squares = spyreop.exx2 %a : f32
    linalg.yield %mean : f32
  } -> tensor<1x64xf32>
  return
}
