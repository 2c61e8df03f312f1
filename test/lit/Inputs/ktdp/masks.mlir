// Three ways a kernel masks positions past a per-tile length inside a linalg.generic, each
// storing y[t, p] = x[t, p] for p < len(t) and -inf after: a per-tile index captured from
// outside the body (len = t + 3), the same index as a scalar operand of the generic, and an
// i32 length loaded from memory compared with an index_cast of linalg.index (len = n[t]).
#row = affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 7 >= 0)>
#full = affine_map<(d0, d1) -> (d0, d1)>
#none = affine_map<(d0, d1) -> ()>
func.func @captured(%x: index, %y: index) attributes {grid = [2]} {
  %id = ktdp.get_compute_tile_id : index
  %vx = ktdp.construct_memory_view %x, sizes: [2, 8], strides: [8, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 1 >= 0, d1 >= 0, -d1 + 7 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<2x8xf32>
  %vy = ktdp.construct_memory_view %y, sizes: [2, 8], strides: [8, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 1 >= 0, d1 >= 0, -d1 + 7 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<2x8xf32>
  %tx = ktdp.construct_access_tile %vx[%id, 0] {access_tile_set = #row, access_tile_order = #full} : memref<2x8xf32> -> !ktdp.access_tile<1x8xindex>
  %ty = ktdp.construct_access_tile %vy[%id, 0] {access_tile_set = #row, access_tile_order = #full} : memref<2x8xf32> -> !ktdp.access_tile<1x8xindex>
  %a = ktdp.load %tx : <1x8xindex> -> tensor<1x8xf32>
  %c3 = arith.constant 3 : index
  %len = arith.addi %id, %c3 : index
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1x8xf32>
  %m = linalg.generic {indexing_maps = [#full, #full], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<1x8xf32>) outs(%e : tensor<1x8xf32>) {
  ^bb0(%av: f32, %o: f32):
    %p = linalg.index 1 : index
    %keep = arith.cmpi slt, %p, %len : index
    %v = arith.select %keep, %av, %ninf : f32
    linalg.yield %v : f32
  } -> tensor<1x8xf32>
  ktdp.store %m, %ty : tensor<1x8xf32>, <1x8xindex>
  return
}
func.func @operand(%x: index, %y: index) attributes {grid = [2]} {
  %id = ktdp.get_compute_tile_id : index
  %vx = ktdp.construct_memory_view %x, sizes: [2, 8], strides: [8, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 1 >= 0, d1 >= 0, -d1 + 7 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<2x8xf32>
  %vy = ktdp.construct_memory_view %y, sizes: [2, 8], strides: [8, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 1 >= 0, d1 >= 0, -d1 + 7 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<2x8xf32>
  %tx = ktdp.construct_access_tile %vx[%id, 0] {access_tile_set = #row, access_tile_order = #full} : memref<2x8xf32> -> !ktdp.access_tile<1x8xindex>
  %ty = ktdp.construct_access_tile %vy[%id, 0] {access_tile_set = #row, access_tile_order = #full} : memref<2x8xf32> -> !ktdp.access_tile<1x8xindex>
  %a = ktdp.load %tx : <1x8xindex> -> tensor<1x8xf32>
  %c3 = arith.constant 3 : index
  %len = arith.addi %id, %c3 : index
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1x8xf32>
  %m = linalg.generic {indexing_maps = [#full, #none, #full], iterator_types = ["parallel", "parallel"]} ins(%a, %len : tensor<1x8xf32>, index) outs(%e : tensor<1x8xf32>) {
  ^bb0(%av: f32, %l: index, %o: f32):
    %p = linalg.index 1 : index
    %keep = arith.cmpi slt, %p, %l : index
    %v = arith.select %keep, %av, %ninf : f32
    linalg.yield %v : f32
  } -> tensor<1x8xf32>
  ktdp.store %m, %ty : tensor<1x8xf32>, <1x8xindex>
  return
}
func.func @loaded(%x: index, %n: index, %y: index) attributes {grid = [2]} {
  %id = ktdp.get_compute_tile_id : index
  %c0 = arith.constant 0 : index
  %vx = ktdp.construct_memory_view %x, sizes: [2, 8], strides: [8, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 1 >= 0, d1 >= 0, -d1 + 7 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<2x8xf32>
  %vy = ktdp.construct_memory_view %y, sizes: [2, 8], strides: [8, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 1 >= 0, d1 >= 0, -d1 + 7 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<2x8xf32>
  %vn = ktdp.construct_memory_view %n, sizes: [2], strides: [1] {coordinate_set = affine_set<(d0) : (d0 >= 0, -d0 + 1 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<2xi32>
  %tx = ktdp.construct_access_tile %vx[%id, 0] {access_tile_set = #row, access_tile_order = #full} : memref<2x8xf32> -> !ktdp.access_tile<1x8xindex>
  %ty = ktdp.construct_access_tile %vy[%id, 0] {access_tile_set = #row, access_tile_order = #full} : memref<2x8xf32> -> !ktdp.access_tile<1x8xindex>
  %tn = ktdp.construct_access_tile %vn[%id] {access_tile_set = affine_set<(d0) : (d0 == 0)>, access_tile_order = affine_map<(d0) -> (d0)>} : memref<2xi32> -> !ktdp.access_tile<1xindex>
  %a = ktdp.load %tx : <1x8xindex> -> tensor<1x8xf32>
  %nt = ktdp.load %tn : <1xindex> -> tensor<1xi32>
  %ni = tensor.extract %nt[%c0] : tensor<1xi32>
  %lf = arith.sitofp %ni : i32 to f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1x8xf32>
  %m = linalg.generic {indexing_maps = [#full, #full], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<1x8xf32>) outs(%e : tensor<1x8xf32>) {
  ^bb0(%av: f32, %o: f32):
    %p = linalg.index 1 : index
    %pi = arith.index_cast %p : index to i32
    %pf = arith.sitofp %pi : i32 to f32
    %keep = arith.cmpf olt, %pf, %lf : f32
    %v = arith.select %keep, %av, %ninf : f32
    linalg.yield %v : f32
  } -> tensor<1x8xf32>
  ktdp.store %m, %ty : tensor<1x8xf32>, <1x8xindex>
  return
}
