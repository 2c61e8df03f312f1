// Nested loops whose trip counts differ between tiles: tile t of 4 takes rows r = t, t + 4, ...
// below 5, and for each row the blocks c = 0 .. r of a 25 x 64 fp16 matrix (row r * 5 + c),
// summing them into row t of a 4 x 64 fp32 result:
//   out[t] = sum(x[5 r + c] for r in range(t, 5, 4) for c in range(r + 1)).
#row = affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 63 >= 0)>
#full = affine_map<(d0, d1) -> (d0, d1)>
func.func @nested(%x: index, %out: index) attributes {grid = [4]} {
  %t = ktdp.get_compute_tile_id : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %vx = ktdp.construct_memory_view %x, sizes: [25, 64], strides: [64, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 24 >= 0, d1 >= 0, -d1 + 63 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<25x64xf16>
  %vo = ktdp.construct_memory_view %out, sizes: [4, 64], strides: [64, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 3 >= 0, d1 >= 0, -d1 + 63 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<4x64xf32>
  %zero = arith.constant dense<0.0> : tensor<1x64xf32>
  %sum = scf.for %r = %t to %c5 step %c4 iter_args(%acc = %zero) -> (tensor<1x64xf32>) {
    %blocks = arith.addi %r, %c1 : index
    %row = scf.for %c = %c0 to %blocks step %c1 iter_args(%inner = %acc) -> (tensor<1x64xf32>) {
      %tx = ktdp.construct_access_tile %vx[%r * 5 + %c, 0] {access_tile_set = #row, access_tile_order = #full} : memref<25x64xf16> -> !ktdp.access_tile<1x64xindex>
      %a = ktdp.load %tx : <1x64xindex> -> tensor<1x64xf16>
      %a32 = arith.extf %a : tensor<1x64xf16> to tensor<1x64xf32>
      %next = arith.addf %inner, %a32 : tensor<1x64xf32>
      scf.yield %next : tensor<1x64xf32>
    }
    scf.yield %row : tensor<1x64xf32>
  }
  %to = ktdp.construct_access_tile %vo[%t, 0] {access_tile_set = #row, access_tile_order = #full} : memref<4x64xf32> -> !ktdp.access_tile<1x64xindex>
  ktdp.store %sum, %to : tensor<1x64xf32>, <1x64xindex>
  return
}
