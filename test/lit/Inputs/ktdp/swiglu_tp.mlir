// A tensor-parallel SwiGLU MLP on 4 tiles (Megatron's split). Row-major fp16 buffers:
//   x       16 tokens x 256 (hidden)
//   w_gate  256 x 256 (intermediate), w_up 256 x 256, w_down 256 (intermediate) x 256 (hidden)
//   out     16 x 256:  out = (silu(x @ w_gate) * (x @ w_up)) @ w_down
// Tile t owns intermediate columns 64 t .. 64 t + 63: it computes its columns of the gate and up
// projections (column split: no communication), h = silu(gate) * up on them (fp32, rounded to
// fp16 once, as the down projection's operand), and its partial down projection h @ w_down[64 t
// .. 64 t + 63, :] (row split), a 16 x 256 fp32 partial sum of the output. The four partials are
// combined with ktdp.inter_tile_reduce_scatter over the hidden axis: tile t receives the sum's
// columns 64 t .. 64 t + 63 and stores them. Reduce-scatter rather than an all-reduce
// (inter_tile_reduce) because no tile needs the whole sum: each tile writes only its quarter of
// out, so the all-reduce's second half (every tile receiving all four quarters) would move three
// quarters of the sum to each tile for nothing.
#full = affine_map<(d0, d1) -> (d0, d1)>
#all = affine_set<(i)[g] : (i >= 0, -i + 3 >= 0)>
#one = affine_set<(g) : (g == 0)>
#square = affine_set<(d0, d1) : (d0 >= 0, -d0 + 255 >= 0, d1 >= 0, -d1 + 255 >= 0)>
#tokens = affine_set<(d0, d1) : (d0 >= 0, -d0 + 15 >= 0, d1 >= 0, -d1 + 255 >= 0)>
#columns = affine_set<(d0, d1) : (d0 >= 0, -d0 + 255 >= 0, d1 >= 0, -d1 + 63 >= 0)>
#rows = affine_set<(d0, d1) : (d0 >= 0, -d0 + 63 >= 0, d1 >= 0, -d1 + 255 >= 0)>
#quarter = affine_set<(d0, d1) : (d0 >= 0, -d0 + 15 >= 0, d1 >= 0, -d1 + 63 >= 0)>
func.func @swiglu_tp(%x: index, %w_gate: index, %w_up: index, %w_down: index, %out: index) attributes {grid = [4]} {
  %t = ktdp.get_compute_tile_id : index
  %c64 = arith.constant 64 : index
  %col = arith.muli %t, %c64 : index
  %vx = ktdp.construct_memory_view %x, sizes: [16, 256], strides: [256, 1] {coordinate_set = #tokens, memory_space = #ktdp.memory_space<global>} : memref<16x256xf16>
  %vg = ktdp.construct_memory_view %w_gate, sizes: [256, 256], strides: [256, 1] {coordinate_set = #square, memory_space = #ktdp.memory_space<global>} : memref<256x256xf16>
  %vu = ktdp.construct_memory_view %w_up, sizes: [256, 256], strides: [256, 1] {coordinate_set = #square, memory_space = #ktdp.memory_space<global>} : memref<256x256xf16>
  %vd = ktdp.construct_memory_view %w_down, sizes: [256, 256], strides: [256, 1] {coordinate_set = #square, memory_space = #ktdp.memory_space<global>} : memref<256x256xf16>
  %vo = ktdp.construct_memory_view %out, sizes: [16, 256], strides: [256, 1] {coordinate_set = #tokens, memory_space = #ktdp.memory_space<global>} : memref<16x256xf16>
  %tx = ktdp.construct_access_tile %vx[0, 0] {access_tile_set = #tokens, access_tile_order = #full} : memref<16x256xf16> -> !ktdp.access_tile<16x256xindex>
  %tg = ktdp.construct_access_tile %vg[0, %col] {access_tile_set = #columns, access_tile_order = #full} : memref<256x256xf16> -> !ktdp.access_tile<256x64xindex>
  %tu = ktdp.construct_access_tile %vu[0, %col] {access_tile_set = #columns, access_tile_order = #full} : memref<256x256xf16> -> !ktdp.access_tile<256x64xindex>
  %td = ktdp.construct_access_tile %vd[%col, 0] {access_tile_set = #rows, access_tile_order = #full} : memref<256x256xf16> -> !ktdp.access_tile<64x256xindex>
  %a = ktdp.load %tx : <16x256xindex> -> tensor<16x256xf16>
  %wg = ktdp.load %tg : <256x64xindex> -> tensor<256x64xf16>
  %wu = ktdp.load %tu : <256x64xindex> -> tensor<256x64xf16>
  %wd = ktdp.load %td : <64x256xindex> -> tensor<64x256xf16>
  %zero = arith.constant 0.0 : f32
  %e_mid = tensor.empty() : tensor<16x64xf32>
  %z_mid = linalg.fill ins(%zero : f32) outs(%e_mid : tensor<16x64xf32>) -> tensor<16x64xf32>
  %gate = linalg.matmul ins(%a, %wg : tensor<16x256xf16>, tensor<256x64xf16>) outs(%z_mid : tensor<16x64xf32>) -> tensor<16x64xf32>
  %up = linalg.matmul ins(%a, %wu : tensor<16x256xf16>, tensor<256x64xf16>) outs(%z_mid : tensor<16x64xf32>) -> tensor<16x64xf32>
  %e_h = tensor.empty() : tensor<16x64xf16>
  %h = linalg.generic {indexing_maps = [#full, #full, #full], iterator_types = ["parallel", "parallel"]} ins(%gate, %up : tensor<16x64xf32>, tensor<16x64xf32>) outs(%e_h : tensor<16x64xf16>) {
  ^bb0(%g: f32, %u: f32, %o: f16):
    %s = spyreop.silu %g : f32
    %m = arith.mulf %s, %u : f32
    %r = arith.truncf %m : f32 to f16
    linalg.yield %r : f16
  } -> tensor<16x64xf16>
  %e_out = tensor.empty() : tensor<16x256xf32>
  %z_out = linalg.fill ins(%zero : f32) outs(%e_out : tensor<16x256xf32>) -> tensor<16x256xf32>
  %partial = linalg.matmul ins(%h, %wd : tensor<16x64xf16>, tensor<64x256xf16>) outs(%z_out : tensor<16x256xf32>) -> tensor<16x256xf32>
  %identity = arith.constant dense<0.0> : tensor<16x256xf32>
  %f = ktdp.inter_tile_produce producer_tiles_per_group = #all -> <(tensor<16x256xf32>), groups = #one> {
  ^bb0(%gid: index):
    ktdp.yield_partial %partial : tensor<16x256xf32>
  }
  %sum = ktdp.inter_tile_reduce_scatter(%f) consumer_tiles_per_group = #all, scatter_dimensions = [1], identity(%identity : tensor<16x256xf32>) : <(tensor<16x256xf32>), groups = #one> -> tensor<16x64xf32> {
  ^bb0(%lhs: tensor<16x256xf32>, %rhs: tensor<16x256xf32>):
    %s = arith.addf %lhs, %rhs : tensor<16x256xf32>
    ktdp.yield_reduced %s : tensor<16x256xf32>
  }
  %o = arith.truncf %sum : tensor<16x64xf32> to tensor<16x64xf16>
  %to = ktdp.construct_access_tile %vo[0, %col] {access_tile_set = #quarter, access_tile_order = #full} : memref<16x256xf16> -> !ktdp.access_tile<16x64xindex>
  ktdp.store %o, %to : tensor<16x64xf16>, <16x64xindex>
  return
}
