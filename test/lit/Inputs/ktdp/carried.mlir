// A loop that carries an address: tile t sums rows start, start + 1, ... for n = 2 - t rows
// (start = 2 t), the row index an iter_arg. Tile 1 runs one row, then is masked while tile 0
// runs its second: its carried row (3) is past the view, and its masked access must not fail.
// out[0] = x[0] + x[1], out[1] = x[2].
#row = affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 63 >= 0)>
#full = affine_map<(d0, d1) -> (d0, d1)>
func.func @carried(%x: index, %out: index) attributes {grid = [2]} {
  %t = ktdp.get_compute_tile_id : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %start = arith.muli %t, %c2 : index
  %n = arith.subi %c2, %t : index
  %vx = ktdp.construct_memory_view %x, sizes: [3, 64], strides: [64, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 2 >= 0, d1 >= 0, -d1 + 63 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<3x64xf32>
  %vo = ktdp.construct_memory_view %out, sizes: [2, 64], strides: [64, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 1 >= 0, d1 >= 0, -d1 + 63 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<2x64xf32>
  %zero = arith.constant dense<0.0> : tensor<1x64xf32>
  %sum, %end = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %r = %start) -> (tensor<1x64xf32>, index) {
    %tx = ktdp.construct_access_tile %vx[%r, 0] {access_tile_set = #row, access_tile_order = #full} : memref<3x64xf32> -> !ktdp.access_tile<1x64xindex>
    %a = ktdp.load %tx : <1x64xindex> -> tensor<1x64xf32>
    %next = arith.addf %acc, %a : tensor<1x64xf32>
    %r1 = arith.addi %r, %c1 : index
    scf.yield %next, %r1 : tensor<1x64xf32>, index
  }
  %to = ktdp.construct_access_tile %vo[%t, 0] {access_tile_set = #row, access_tile_order = #full} : memref<2x64xf32> -> !ktdp.access_tile<1x64xindex>
  ktdp.store %sum, %to : tensor<1x64xf32>, <1x64xindex>
  return
}
