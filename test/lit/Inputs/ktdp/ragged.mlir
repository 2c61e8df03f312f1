// A loop whose trip count differs between tiles: tile t of 32 sums rows t, t + 16, ... below 24
// of a 24 x 64 fp16 matrix (tiles 0-7: two rows, 8-23: one, 24-31: none) and stores the sum in
// row t of a 32 x 64 fp32 result: out[t] = sum(x[r] for r in range(t, 24, 16)).
#row = affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 63 >= 0)>
#full = affine_map<(d0, d1) -> (d0, d1)>
func.func @ragged(%x: index, %out: index) attributes {grid = [32]} {
  %t = ktdp.get_compute_tile_id : index
  %c16 = arith.constant 16 : index
  %c24 = arith.constant 24 : index
  %vx = ktdp.construct_memory_view %x, sizes: [24, 64], strides: [64, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 23 >= 0, d1 >= 0, -d1 + 63 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<24x64xf16>
  %vo = ktdp.construct_memory_view %out, sizes: [32, 64], strides: [64, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 31 >= 0, d1 >= 0, -d1 + 63 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<32x64xf32>
  %zero = arith.constant dense<0.0> : tensor<1x64xf32>
  %sum = scf.for %r = %t to %c24 step %c16 iter_args(%acc = %zero) -> (tensor<1x64xf32>) {
    %tx = ktdp.construct_access_tile %vx[%r, 0] {access_tile_set = #row, access_tile_order = #full} : memref<24x64xf16> -> !ktdp.access_tile<1x64xindex>
    %a = ktdp.load %tx : <1x64xindex> -> tensor<1x64xf16>
    %a32 = arith.extf %a : tensor<1x64xf16> to tensor<1x64xf32>
    %next = arith.addf %acc, %a32 : tensor<1x64xf32>
    scf.yield %next : tensor<1x64xf32>
  }
  %to = ktdp.construct_access_tile %vo[%t, 0] {access_tile_set = #row, access_tile_order = #full} : memref<32x64xf32> -> !ktdp.access_tile<1x64xindex>
  ktdp.store %sum, %to : tensor<1x64xf32>, <1x64xindex>
  return
}
