// LayerNorm of 1151 x 8192 fp16 rows on 32 tiles, in the form Triton's KTIR lowering writes:
// tile t normalises rows t, t + 32, t + 64, ... (`scf.for %row = %t to 1151 step 32`), so tiles
// 0-30 run 36 rows and tile 31 runs 35 (1151 = 35 x 32 + 31): the trip count differs between
// tiles. Each row is read in 8 blocks of 1024 columns, three times: the mean, the variance
// sum((x - mean)^2), then y = (x - mean) * rstd * w + b. Statistics in fp32, stored per row:
//   mean[r] = sum(x[r]) / 8192, rstd[r] = 1 / sqrt(sum((x[r] - mean[r])^2) / 8192 + 1e-5).
#row = affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 1023 >= 0)>
#one = affine_set<(d0) : (d0 == 0)>
#full = affine_map<(d0, d1) -> (d0, d1)>
#id1 = affine_map<(d0) -> (d0)>
func.func @layernorm(%x: index, %w: index, %b: index, %y: index, %mean: index, %rstd: index) attributes {grid = [32]} {
  %t = ktdp.get_compute_tile_id : index
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c1024 = arith.constant 1024 : index
  %c1151 = arith.constant 1151 : index
  %c8192 = arith.constant 8192 : index
  %vx = ktdp.construct_memory_view %x, sizes: [1151, 8192], strides: [8192, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 1150 >= 0, d1 >= 0, -d1 + 8191 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<1151x8192xf16>
  %vy = ktdp.construct_memory_view %y, sizes: [1151, 8192], strides: [8192, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 1150 >= 0, d1 >= 0, -d1 + 8191 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<1151x8192xf16>
  %vw = ktdp.construct_memory_view %w, sizes: [1, 8192], strides: [8192, 1] {coordinate_set = affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 8191 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<1x8192xf16>
  %vb = ktdp.construct_memory_view %b, sizes: [1, 8192], strides: [8192, 1] {coordinate_set = affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 8191 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<1x8192xf16>
  %vmean = ktdp.construct_memory_view %mean, sizes: [1151], strides: [1] {coordinate_set = affine_set<(d0) : (d0 >= 0, -d0 + 1150 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<1151xf32>
  %vrstd = ktdp.construct_memory_view %rstd, sizes: [1151], strides: [1] {coordinate_set = affine_set<(d0) : (d0 >= 0, -d0 + 1150 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<1151xf32>
  %zero = arith.constant dense<0.0> : tensor<1x1024xf32>
  %n = arith.constant dense<8192.0> : tensor<1xf32>
  %eps = arith.constant dense<1.0e-5> : tensor<1xf32>
  %one = arith.constant dense<1.0> : tensor<1xf32>
  scf.for %r = %t to %c1151 step %c32 {
    %sum = scf.for %c = %c0 to %c8192 step %c1024 iter_args(%acc = %zero) -> (tensor<1x1024xf32>) {
      %tx = ktdp.construct_access_tile %vx[%r, %c] {access_tile_set = #row, access_tile_order = #full} : memref<1151x8192xf16> -> !ktdp.access_tile<1x1024xindex>
      %a = ktdp.load %tx : <1x1024xindex> -> tensor<1x1024xf16>
      %a32 = arith.extf %a : tensor<1x1024xf16> to tensor<1x1024xf32>
      %next = arith.addf %acc, %a32 : tensor<1x1024xf32>
      scf.yield %next : tensor<1x1024xf32>
    }
    %e1 = tensor.empty() : tensor<1xf32>
    %s = linalg.reduce { arith.addf } ins(%sum : tensor<1x1024xf32>) outs(%e1 : tensor<1xf32>) dimensions = [1]
    %mu = arith.divf %s, %n : tensor<1xf32>
    %e2 = tensor.empty() : tensor<1x1024xf32>
    %mub = linalg.broadcast ins(%mu : tensor<1xf32>) outs(%e2 : tensor<1x1024xf32>) dimensions = [1]
    %sq = scf.for %c = %c0 to %c8192 step %c1024 iter_args(%acc = %zero) -> (tensor<1x1024xf32>) {
      %tx = ktdp.construct_access_tile %vx[%r, %c] {access_tile_set = #row, access_tile_order = #full} : memref<1151x8192xf16> -> !ktdp.access_tile<1x1024xindex>
      %a = ktdp.load %tx : <1x1024xindex> -> tensor<1x1024xf16>
      %a32 = arith.extf %a : tensor<1x1024xf16> to tensor<1x1024xf32>
      %d = arith.subf %a32, %mub : tensor<1x1024xf32>
      %d2 = arith.mulf %d, %d : tensor<1x1024xf32>
      %next = arith.addf %acc, %d2 : tensor<1x1024xf32>
      scf.yield %next : tensor<1x1024xf32>
    }
    %v = linalg.reduce { arith.addf } ins(%sq : tensor<1x1024xf32>) outs(%e1 : tensor<1xf32>) dimensions = [1]
    %var = arith.divf %v, %n : tensor<1xf32>
    %ve = arith.addf %var, %eps : tensor<1xf32>
    %sd = math.sqrt %ve : tensor<1xf32>
    %rs = arith.divf %one, %sd : tensor<1xf32>
    %tm = ktdp.construct_access_tile %vmean[%r] {access_tile_set = #one, access_tile_order = #id1} : memref<1151xf32> -> !ktdp.access_tile<1xindex>
    %tr = ktdp.construct_access_tile %vrstd[%r] {access_tile_set = #one, access_tile_order = #id1} : memref<1151xf32> -> !ktdp.access_tile<1xindex>
    ktdp.store %mu, %tm : tensor<1xf32>, <1xindex>
    ktdp.store %rs, %tr : tensor<1xf32>, <1xindex>
    %rsb = linalg.broadcast ins(%rs : tensor<1xf32>) outs(%e2 : tensor<1x1024xf32>) dimensions = [1]
    scf.for %c = %c0 to %c8192 step %c1024 {
      %tx = ktdp.construct_access_tile %vx[%r, %c] {access_tile_set = #row, access_tile_order = #full} : memref<1151x8192xf16> -> !ktdp.access_tile<1x1024xindex>
      %tw = ktdp.construct_access_tile %vw[0, %c] {access_tile_set = #row, access_tile_order = #full} : memref<1x8192xf16> -> !ktdp.access_tile<1x1024xindex>
      %tb = ktdp.construct_access_tile %vb[0, %c] {access_tile_set = #row, access_tile_order = #full} : memref<1x8192xf16> -> !ktdp.access_tile<1x1024xindex>
      %ty = ktdp.construct_access_tile %vy[%r, %c] {access_tile_set = #row, access_tile_order = #full} : memref<1151x8192xf16> -> !ktdp.access_tile<1x1024xindex>
      %a = ktdp.load %tx : <1x1024xindex> -> tensor<1x1024xf16>
      %g = ktdp.load %tw : <1x1024xindex> -> tensor<1x1024xf16>
      %h = ktdp.load %tb : <1x1024xindex> -> tensor<1x1024xf16>
      %a32 = arith.extf %a : tensor<1x1024xf16> to tensor<1x1024xf32>
      %g32 = arith.extf %g : tensor<1x1024xf16> to tensor<1x1024xf32>
      %h32 = arith.extf %h : tensor<1x1024xf16> to tensor<1x1024xf32>
      %d = arith.subf %a32, %mub : tensor<1x1024xf32>
      %xn = arith.mulf %d, %rsb : tensor<1x1024xf32>
      %sc = arith.mulf %xn, %g32 : tensor<1x1024xf32>
      %o = arith.addf %sc, %h32 : tensor<1x1024xf32>
      %o16 = arith.truncf %o : tensor<1x1024xf32> to tensor<1x1024xf16>
      ktdp.store %o16, %ty : tensor<1x1024xf16>, <1x1024xindex>
    }
  }
  return
}
