// RMSNorm of a 512 x 4096 fp16 matrix on 32 tiles, 16 rows each: y = x * rsqrt(mean(x^2) + eps) * w,
// the squares summed in fp32 by linalg.reduce, the rest one linalg.generic whose indexing maps
// broadcast the row statistic and the weight vector.
#full = affine_map<(d0, d1) -> (d0, d1)>
#rows = affine_map<(d0, d1) -> (d0)>
#cols = affine_map<(d0, d1) -> (d1)>
func.func @rmsnorm(%x: index, %w: index, %y: index) attributes {grid = [32]} {
  %id = ktdp.get_compute_tile_id : index
  %c16 = arith.constant 16 : index
  %row = arith.muli %id, %c16 : index
  %vx = ktdp.construct_memory_view %x, sizes: [512, 4096], strides: [4096, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 511 >= 0, d1 >= 0, -d1 + 4095 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<512x4096xf16>
  %vw = ktdp.construct_memory_view %w, sizes: [1, 4096], strides: [4096, 1] {coordinate_set = affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 4095 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<1x4096xf16>
  %vy = ktdp.construct_memory_view %y, sizes: [512, 4096], strides: [4096, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 511 >= 0, d1 >= 0, -d1 + 4095 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<512x4096xf16>
  %tx = ktdp.construct_access_tile %vx[%row, 0] {access_tile_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 15 >= 0, d1 >= 0, -d1 + 4095 >= 0)>, access_tile_order = #full} : memref<512x4096xf16> -> !ktdp.access_tile<16x4096xindex>
  %tw = ktdp.construct_access_tile %vw[0, 0] {access_tile_set = affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 4095 >= 0)>, access_tile_order = #full} : memref<1x4096xf16> -> !ktdp.access_tile<1x4096xindex>
  %ty = ktdp.construct_access_tile %vy[%row, 0] {access_tile_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 15 >= 0, d1 >= 0, -d1 + 4095 >= 0)>, access_tile_order = #full} : memref<512x4096xf16> -> !ktdp.access_tile<16x4096xindex>
  %a = ktdp.load %tx : <16x4096xindex> -> tensor<16x4096xf16>
  %w2 = ktdp.load %tw : <1x4096xindex> -> tensor<1x4096xf16>
  %wv = tensor.collapse_shape %w2 [[0, 1]] : tensor<1x4096xf16> into tensor<4096xf16>
  %a32 = arith.extf %a : tensor<16x4096xf16> to tensor<16x4096xf32>
  %sq = arith.mulf %a32, %a32 : tensor<16x4096xf32>
  %e0 = tensor.empty() : tensor<16xf32>
  %ss = linalg.reduce ins(%sq : tensor<16x4096xf32>) outs(%e0 : tensor<16xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  %n = arith.constant 4096.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %e1 = tensor.empty() : tensor<16x4096xf16>
  %out = linalg.generic {indexing_maps = [#full, #rows, #cols, #full], iterator_types = ["parallel", "parallel"]} ins(%a32, %ss, %wv : tensor<16x4096xf32>, tensor<16xf32>, tensor<4096xf16>) outs(%e1 : tensor<16x4096xf16>) {
  ^bb0(%xv: f32, %s: f32, %g: f16, %o: f16):
    %mean = arith.divf %s, %n : f32
    %m = arith.addf %mean, %eps : f32
    %r = math.rsqrt %m : f32
    %xn = arith.mulf %xv, %r : f32
    %g32 = arith.extf %g : f16 to f32
    %v = arith.mulf %xn, %g32 : f32
    %v16 = arith.truncf %v : f32 to f16
    linalg.yield %v16 : f16
  } -> tensor<16x4096xf16>
  ktdp.store %out, %ty : tensor<16x4096xf16>, <16x4096xindex>
  return
}
