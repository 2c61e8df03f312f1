// Row softmax of a 4096 x 1024 fp16 matrix on 32 tiles, 128 rows each: max, subtract, exp, sum,
// divide, in the emitter's form (one index argument per buffer, reductions into tensor.empty).
func.func @softmax(%x: index, %y: index) attributes {grid = [32]} {
  %id = ktdp.get_compute_tile_id : index
  %c128 = arith.constant 128 : index
  %row = arith.muli %id, %c128 : index
  %vx = ktdp.construct_memory_view %x, sizes: [4096, 1024], strides: [1024, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 4095 >= 0, d1 >= 0, -d1 + 1023 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<4096x1024xf16>
  %vy = ktdp.construct_memory_view %y, sizes: [4096, 1024], strides: [1024, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 4095 >= 0, d1 >= 0, -d1 + 1023 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<4096x1024xf16>
  %tx = ktdp.construct_access_tile %vx[%row, 0] {access_tile_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 127 >= 0, d1 >= 0, -d1 + 1023 >= 0)>, access_tile_order = affine_map<(d0, d1) -> (d0, d1)>} : memref<4096x1024xf16> -> !ktdp.access_tile<128x1024xindex>
  %ty = ktdp.construct_access_tile %vy[%row, 0] {access_tile_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 127 >= 0, d1 >= 0, -d1 + 1023 >= 0)>, access_tile_order = affine_map<(d0, d1) -> (d0, d1)>} : memref<4096x1024xf16> -> !ktdp.access_tile<128x1024xindex>
  %a = ktdp.load %tx : <128x1024xindex> -> tensor<128x1024xf16>
  %e0 = tensor.empty() : tensor<128xf16>
  %m = linalg.reduce ins(%a : tensor<128x1024xf16>) outs(%e0 : tensor<128xf16>) dimensions = [1]
    (%in: f16, %acc: f16) {
      %r = arith.maximumf %in, %acc : f16
      linalg.yield %r : f16
    }
  %e1 = tensor.empty() : tensor<128x1024xf16>
  %mb = linalg.broadcast ins(%m : tensor<128xf16>) outs(%e1 : tensor<128x1024xf16>) dimensions = [1]
  %d = linalg.sub ins(%a, %mb : tensor<128x1024xf16>, tensor<128x1024xf16>) outs(%e1 : tensor<128x1024xf16>) -> tensor<128x1024xf16>
  %ex = linalg.exp ins(%d : tensor<128x1024xf16>) outs(%e1 : tensor<128x1024xf16>) -> tensor<128x1024xf16>
  %s = linalg.reduce ins(%ex : tensor<128x1024xf16>) outs(%e0 : tensor<128xf16>) dimensions = [1]
    (%in: f16, %acc: f16) {
      %r = arith.addf %in, %acc : f16
      linalg.yield %r : f16
    }
  %sb = linalg.broadcast ins(%s : tensor<128xf16>) outs(%e1 : tensor<128x1024xf16>) dimensions = [1]
  %o = arith.divf %ex, %sb : tensor<128x1024xf16>
  ktdp.store %o, %ty : tensor<128x1024xf16>, <128x1024xindex>
  return
}
