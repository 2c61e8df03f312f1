// An LX-fused row softmax of a 64 x 256 fp16 matrix on 4 tiles, 16 rows each in an scf.for over
// two blocks of 8 rows. Each block is read from device memory once, into the tile's own LX
// (a ct_local memory view without a ct_id: every tile's scratchpad at the same address, each
// holding its own block); the three passes then read it from LX:
//   max:        m[r] = max_c x[r, c]                           (fp16, exact)
//   exp-sum:    s[r] = sum_c exp(x[r, c] - m[r])               (a reducing linalg.generic, fp32)
//   normalise:  y[r, c] = exp(x[r, c] - m[r]) / s[r]           (fp32, rounded to fp16 once)
// and only y goes back to device memory. The LX block is rewritten on the next iteration.
#full = affine_map<(d0, d1) -> (d0, d1)>
#rows = affine_map<(d0, d1) -> (d0)>
#all = affine_set<(d0, d1) : (d0 >= 0, -d0 + 63 >= 0, d1 >= 0, -d1 + 255 >= 0)>
#block = affine_set<(d0, d1) : (d0 >= 0, -d0 + 7 >= 0, d1 >= 0, -d1 + 255 >= 0)>
func.func @softmax_lx(%x: index, %y: index) attributes {grid = [4]} {
  %t = ktdp.get_compute_tile_id : index
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %first = arith.muli %t, %c16 : index
  %last = arith.addi %first, %c16 : index
  %vx = ktdp.construct_memory_view %x, sizes: [64, 256], strides: [256, 1] {coordinate_set = #all, memory_space = #ktdp.memory_space<global>} : memref<64x256xf16>
  %vy = ktdp.construct_memory_view %y, sizes: [64, 256], strides: [256, 1] {coordinate_set = #all, memory_space = #ktdp.memory_space<global>} : memref<64x256xf16>
  %vl = ktdp.construct_memory_view %c0, sizes: [8, 256], strides: [256, 1] {coordinate_set = #block, memory_space = #ktdp.memory_space<ct_local>} : memref<8x256xf16>
  %tl = ktdp.construct_access_tile %vl[0, 0] {access_tile_set = #block, access_tile_order = #full} : memref<8x256xf16> -> !ktdp.access_tile<8x256xindex>
  %zero = arith.constant 0.0 : f32
  scf.for %row = %first to %last step %c8 {
    %tx = ktdp.construct_access_tile %vx[%row, 0] {access_tile_set = #block, access_tile_order = #full} : memref<64x256xf16> -> !ktdp.access_tile<8x256xindex>
    %ty = ktdp.construct_access_tile %vy[%row, 0] {access_tile_set = #block, access_tile_order = #full} : memref<64x256xf16> -> !ktdp.access_tile<8x256xindex>
    %in = ktdp.load %tx : <8x256xindex> -> tensor<8x256xf16>
    ktdp.store %in, %tl : tensor<8x256xf16>, <8x256xindex>
    %a = ktdp.load %tl : <8x256xindex> -> tensor<8x256xf16>
    %e_h = tensor.empty() : tensor<8xf16>
    %m = linalg.reduce ins(%a : tensor<8x256xf16>) outs(%e_h : tensor<8xf16>) dimensions = [1]
      (%v: f16, %acc: f16) {
        %r = arith.maximumf %v, %acc : f16
        linalg.yield %r : f16
      }
    %b = ktdp.load %tl : <8x256xindex> -> tensor<8x256xf16>
    %e_s = tensor.empty() : tensor<8xf32>
    %z_s = linalg.fill ins(%zero : f32) outs(%e_s : tensor<8xf32>) -> tensor<8xf32>
    %s = linalg.generic {indexing_maps = [#full, #rows, #rows], iterator_types = ["parallel", "reduction"]} ins(%b, %m : tensor<8x256xf16>, tensor<8xf16>) outs(%z_s : tensor<8xf32>) {
    ^bb0(%v: f16, %mx: f16, %acc: f32):
      %v32 = arith.extf %v : f16 to f32
      %m32 = arith.extf %mx : f16 to f32
      %d = arith.subf %v32, %m32 : f32
      %ex = math.exp %d : f32
      %r = arith.addf %acc, %ex : f32
      linalg.yield %r : f32
    } -> tensor<8xf32>
    %c = ktdp.load %tl : <8x256xindex> -> tensor<8x256xf16>
    %e_y = tensor.empty() : tensor<8x256xf16>
    %o = linalg.generic {indexing_maps = [#full, #rows, #rows, #full], iterator_types = ["parallel", "parallel"]} ins(%c, %m, %s : tensor<8x256xf16>, tensor<8xf16>, tensor<8xf32>) outs(%e_y : tensor<8x256xf16>) {
    ^bb0(%v: f16, %mx: f16, %sum: f32, %out: f16):
      %v32 = arith.extf %v : f16 to f32
      %m32 = arith.extf %mx : f16 to f32
      %d = arith.subf %v32, %m32 : f32
      %ex = math.exp %d : f32
      %q = arith.divf %ex, %sum : f32
      %r = arith.truncf %q : f32 to f16
      linalg.yield %r : f16
    } -> tensor<8x256xf16>
    ktdp.store %o, %ty : tensor<8x256xf16>, <8x256xindex>
  }
  return
}
