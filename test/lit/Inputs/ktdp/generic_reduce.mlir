// linalg.generic with reduction iterators on 4 tiles, 16 rows each: a matmul written as a
// generic over (i, j, k) with k a reduction (y = x @ w + y0, fp32 accumulation from an
// initialised accumulator), and each row's largest absolute value into an uninitialised
// tensor.empty (m[i] = max_k |x[i, k]|).
#x = affine_map<(i, j, k) -> (i, k)>
#w = affine_map<(i, j, k) -> (k, j)>
#y = affine_map<(i, j, k) -> (i, j)>
#full = affine_map<(d0, d1) -> (d0, d1)>
#rows = affine_map<(d0, d1) -> (d0)>
func.func @reduce(%x: index, %w: index, %y: index, %m: index) attributes {grid = [4]} {
  %t = ktdp.get_compute_tile_id : index
  %c16 = arith.constant 16 : index
  %row = arith.muli %t, %c16 : index
  %vx = ktdp.construct_memory_view %x, sizes: [64, 32], strides: [32, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 63 >= 0, d1 >= 0, -d1 + 31 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<64x32xf16>
  %vw = ktdp.construct_memory_view %w, sizes: [32, 64], strides: [64, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 31 >= 0, d1 >= 0, -d1 + 63 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<32x64xf16>
  %vy = ktdp.construct_memory_view %y, sizes: [64, 64], strides: [64, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 63 >= 0, d1 >= 0, -d1 + 63 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<64x64xf32>
  %vm = ktdp.construct_memory_view %m, sizes: [64], strides: [1] {coordinate_set = affine_set<(d0) : (d0 >= 0, -d0 + 63 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<64xf16>
  %tx = ktdp.construct_access_tile %vx[%row, 0] {access_tile_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 15 >= 0, d1 >= 0, -d1 + 31 >= 0)>, access_tile_order = #full} : memref<64x32xf16> -> !ktdp.access_tile<16x32xindex>
  %tw = ktdp.construct_access_tile %vw[0, 0] {access_tile_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 31 >= 0, d1 >= 0, -d1 + 63 >= 0)>, access_tile_order = #full} : memref<32x64xf16> -> !ktdp.access_tile<32x64xindex>
  %ty = ktdp.construct_access_tile %vy[%row, 0] {access_tile_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 15 >= 0, d1 >= 0, -d1 + 63 >= 0)>, access_tile_order = #full} : memref<64x64xf32> -> !ktdp.access_tile<16x64xindex>
  %tm = ktdp.construct_access_tile %vm[%row] {access_tile_set = affine_set<(d0) : (d0 >= 0, -d0 + 15 >= 0)>, access_tile_order = affine_map<(d0) -> (d0)>} : memref<64xf16> -> !ktdp.access_tile<16xindex>
  %a = ktdp.load %tx : <16x32xindex> -> tensor<16x32xf16>
  %b = ktdp.load %tw : <32x64xindex> -> tensor<32x64xf16>
  %y0 = ktdp.load %ty : <16x64xindex> -> tensor<16x64xf32>
  %prod = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<16x32xf16>, tensor<32x64xf16>) outs(%y0 : tensor<16x64xf32>) {
  ^bb0(%p: f16, %q: f16, %acc: f32):
    %p32 = arith.extf %p : f16 to f32
    %q32 = arith.extf %q : f16 to f32
    %pq = arith.mulf %p32, %q32 : f32
    %sum = arith.addf %pq, %acc : f32
    linalg.yield %sum : f32
  } -> tensor<16x64xf32>
  %e = tensor.empty() : tensor<16xf16>
  %big = linalg.generic {indexing_maps = [#full, #rows], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<16x32xf16>) outs(%e : tensor<16xf16>) {
  ^bb0(%v: f16, %acc: f16):
    %abs = math.absf %v : f16
    %mx = arith.maximumf %acc, %abs : f16
    linalg.yield %mx : f16
  } -> tensor<16xf16>
  ktdp.store %prod, %ty : tensor<16x64xf32>, <16x64xindex>
  ktdp.store %big, %tm : tensor<16xf16>, <16xindex>
  return
}
