// Paged attention, decode style (one query token per sequence, as vLLM's unified paged attention
// runs a decode batch), on 32 tiles. Row-major buffers, fp16 unless stated:
//   q             8 tokens x 32 query heads x 128, viewed as 256 x 128 (row 32 t + head)
//   key_cache     64 pages x 16 positions x 8 KV heads x 128
//   value_cache   64 pages x 16 positions x 8 KV heads x 128
//   block_table   8 tokens x 8 logical pages, i32: the physical page of each of token t's pages
//   context_lens  8 tokens, i32 in [1, 128]: token t attends to its positions [0, context_lens[t])
//   out           8 tokens x 32 query heads x 128, viewed as 256 x 128
// Grouped-query attention: query heads 4 h .. 4 h + 3 share KV head h. Tile (x, y) of the grid
// [4, 8] serves token y and KV heads 2 x and 2 x + 1 (query heads 8 x .. 8 x + 7), one KV head
// per iteration of an scf.for. For token t = y and KV head h it gathers all 8 of t's pages through
// the block table (a table entry past the context must still name a valid page, as vLLM's padding
// does; its positions are masked):
//   K[p, :] = key_cache[block_table[t, p floordiv 16], p mod 16, h, :], V likewise, p in [0, 128)
//   s[i, p] = q[t, 4 h + i, :] . K[p, :] / sqrt(128), or -inf where p >= context_lens[t]
//   out[t, 4 h + i, :] = sum_p softmax(s[i, :])[p] V[p, :]
// The mask compares context_lens[t] - p > 0 with p from a constant position vector. Everything
// after the loads is f32 (the matmuls on f32 operands, the softmax max-subtracted: max, exp, sum,
// divide); only the output is rounded to fp16.
#full = affine_map<(d0, d1) -> (d0, d1)>
#cols = affine_map<(d0, d1) -> (d1)>
#ctx = affine_set<(d0, d1) : (d0 >= 0, -d0 + 127 >= 0, d1 >= 0, -d1 + 127 >= 0)>
#heads = affine_set<(d0, d1) : (d0 >= 0, -d0 + 3 >= 0, d1 >= 0, -d1 + 127 >= 0)>
func.func @paged_attention(%q: index, %key_cache: index, %value_cache: index, %block_table: index, %context_lens: index, %out: index) attributes {grid = [4, 8]} {
  %x, %y = ktdp.get_compute_tile_id : index, index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %h0 = arith.muli %x, %c2 : index
  %token_row = arith.muli %y, %c32 : index
  %vq = ktdp.construct_memory_view %q, sizes: [256, 128], strides: [128, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 255 >= 0, d1 >= 0, -d1 + 127 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<256x128xf16>
  %vk = ktdp.construct_memory_view %key_cache, sizes: [64, 16, 8, 128], strides: [16384, 1024, 128, 1] {coordinate_set = affine_set<(d0, d1, d2, d3) : (d0 >= 0, -d0 + 63 >= 0, d1 >= 0, -d1 + 15 >= 0, d2 >= 0, -d2 + 7 >= 0, d3 >= 0, -d3 + 127 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<64x16x8x128xf16>
  %vv = ktdp.construct_memory_view %value_cache, sizes: [64, 16, 8, 128], strides: [16384, 1024, 128, 1] {coordinate_set = affine_set<(d0, d1, d2, d3) : (d0 >= 0, -d0 + 63 >= 0, d1 >= 0, -d1 + 15 >= 0, d2 >= 0, -d2 + 7 >= 0, d3 >= 0, -d3 + 127 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<64x16x8x128xf16>
  %vb = ktdp.construct_memory_view %block_table, sizes: [8, 8], strides: [8, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 7 >= 0, d1 >= 0, -d1 + 7 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<8x8xi32>
  %vl = ktdp.construct_memory_view %context_lens, sizes: [8], strides: [1] {coordinate_set = affine_set<(d0) : (d0 >= 0, -d0 + 7 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<8xi32>
  %vo = ktdp.construct_memory_view %out, sizes: [256, 128], strides: [128, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 255 >= 0, d1 >= 0, -d1 + 127 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<256x128xf16>
  // The token's context length, as f32 room = context_lens[t] - p per position p (> 0: attended).
  %tl = ktdp.construct_access_tile %vl[%y] {access_tile_set = affine_set<(d0) : (d0 == 0)>, access_tile_order = affine_map<(d0) -> (d0)>} : memref<8xi32> -> !ktdp.access_tile<1xindex>
  %len1 = ktdp.load %tl : <1xindex> -> tensor<1xi32>
  %len = tensor.extract %len1[%c0] : tensor<1xi32>
  %lenf = arith.sitofp %len : i32 to f32
  %e_ctx = tensor.empty() : tensor<128xf32>
  %lens = linalg.fill ins(%lenf : f32) outs(%e_ctx : tensor<128xf32>) -> tensor<128xf32>
  %positions = arith.constant dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0, 64.0, 65.0, 66.0, 67.0, 68.0, 69.0, 70.0, 71.0, 72.0, 73.0, 74.0, 75.0, 76.0, 77.0, 78.0, 79.0, 80.0, 81.0, 82.0, 83.0, 84.0, 85.0, 86.0, 87.0, 88.0, 89.0, 90.0, 91.0, 92.0, 93.0, 94.0, 95.0, 96.0, 97.0, 98.0, 99.0, 100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0, 108.0, 109.0, 110.0, 111.0, 112.0, 113.0, 114.0, 115.0, 116.0, 117.0, 118.0, 119.0, 120.0, 121.0, 122.0, 123.0, 124.0, 125.0, 126.0, 127.0]> : tensor<128xf32>
  %room = arith.subf %lens, %positions : tensor<128xf32>
  %scale = arith.constant 0.08838834764831845 : f32
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  scf.for %i = %c0 to %c2 step %c1 {
    %h = arith.addi %h0, %i : index
    %head = arith.muli %h, %c4 : index
    %row = arith.addi %token_row, %head : index
    %tq = ktdp.construct_access_tile %vq[%row, 0] {access_tile_set = #heads, access_tile_order = #full} : memref<256x128xf16> -> !ktdp.access_tile<4x128xindex>
    %tk = ktdp.construct_indirect_access_tile intermediate_variables(%p, %d) %vk[ind(%vb[%y, %p floordiv 16]), (%p mod 16), (%h), (%d)] {variables_space_order = #full, variables_space_set = #ctx} : memref<64x16x8x128xf16>, memref<8x8xi32> -> !ktdp.access_tile<128x128xindex>
    %tv = ktdp.construct_indirect_access_tile intermediate_variables(%p, %d) %vv[ind(%vb[%y, %p floordiv 16]), (%p mod 16), (%h), (%d)] {variables_space_order = #full, variables_space_set = #ctx} : memref<64x16x8x128xf16>, memref<8x8xi32> -> !ktdp.access_tile<128x128xindex>
    %to = ktdp.construct_access_tile %vo[%row, 0] {access_tile_set = #heads, access_tile_order = #full} : memref<256x128xf16> -> !ktdp.access_tile<4x128xindex>
    %q16 = ktdp.load %tq : <4x128xindex> -> tensor<4x128xf16>
    %k16 = ktdp.load %tk : <128x128xindex> -> tensor<128x128xf16>
    %qf = arith.extf %q16 : tensor<4x128xf16> to tensor<4x128xf32>
    %kf = arith.extf %k16 : tensor<128x128xf16> to tensor<128x128xf32>
    // scores = q K^T: K (positions x dims) transposed to dims x positions.
    %e_kt = tensor.empty() : tensor<128x128xf32>
    %kt = linalg.transpose ins(%kf : tensor<128x128xf32>) outs(%e_kt : tensor<128x128xf32>) permutation = [1, 0]
    %e_s = tensor.empty() : tensor<4x128xf32>
    %s = linalg.matmul ins(%qf, %kt : tensor<4x128xf32>, tensor<128x128xf32>) outs(%e_s : tensor<4x128xf32>) -> tensor<4x128xf32>
    // Scaled, and -inf past the context.
    %sm = linalg.generic {indexing_maps = [#full, #cols, #full], iterator_types = ["parallel", "parallel"]} ins(%s, %room : tensor<4x128xf32>, tensor<128xf32>) outs(%e_s : tensor<4x128xf32>) {
    ^bb0(%sv: f32, %r: f32, %o: f32):
      %scaled = arith.mulf %sv, %scale : f32
      %keep = arith.cmpf ogt, %r, %zero : f32
      %v = arith.select %keep, %scaled, %ninf : f32
      linalg.yield %v : f32
    } -> tensor<4x128xf32>
    // softmax over the positions: max, subtract, exp, sum, divide.
    %e_row = tensor.empty() : tensor<4xf32>
    %m = linalg.reduce ins(%sm : tensor<4x128xf32>) outs(%e_row : tensor<4xf32>) dimensions = [1]
      (%in: f32, %acc: f32) {
        %r = arith.maximumf %in, %acc : f32
        linalg.yield %r : f32
      }
    %mb = linalg.broadcast ins(%m : tensor<4xf32>) outs(%e_s : tensor<4x128xf32>) dimensions = [1]
    %shifted = linalg.sub ins(%sm, %mb : tensor<4x128xf32>, tensor<4x128xf32>) outs(%e_s : tensor<4x128xf32>) -> tensor<4x128xf32>
    %ex = linalg.exp ins(%shifted : tensor<4x128xf32>) outs(%e_s : tensor<4x128xf32>) -> tensor<4x128xf32>
    %sum = linalg.reduce ins(%ex : tensor<4x128xf32>) outs(%e_row : tensor<4xf32>) dimensions = [1]
      (%in: f32, %acc: f32) {
        %r = arith.addf %in, %acc : f32
        linalg.yield %r : f32
      }
    %sb = linalg.broadcast ins(%sum : tensor<4xf32>) outs(%e_s : tensor<4x128xf32>) dimensions = [1]
    %probs = arith.divf %ex, %sb : tensor<4x128xf32>
    // out = probs V.
    %v16 = ktdp.load %tv : <128x128xindex> -> tensor<128x128xf16>
    %vf = arith.extf %v16 : tensor<128x128xf16> to tensor<128x128xf32>
    %e_o = tensor.empty() : tensor<4x128xf32>
    %o = linalg.matmul ins(%probs, %vf : tensor<4x128xf32>, tensor<128x128xf32>) outs(%e_o : tensor<4x128xf32>) -> tensor<4x128xf32>
    %o16 = arith.truncf %o : tensor<4x128xf32> to tensor<4x128xf16>
    ktdp.store %o16, %to : tensor<4x128xf16>, <4x128xindex>
  }
  return
}
