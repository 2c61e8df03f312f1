// Rotary embedding of 163840 x 128 fp16 rows on 32 tiles, 5120 rows each in chunks of 512:
// out = x * cos + rotate_half(x) * sin with rotate_half(x) = [-x[:, 64:], x[:, :64]], built from
// tensor.extract_slice and tensor.insert_slice; the cos and sin tables are per row.
#full = affine_map<(d0, d1) -> (d0, d1)>
#chunk = affine_set<(d0, d1) : (d0 >= 0, -d0 + 511 >= 0, d1 >= 0, -d1 + 127 >= 0)>
#all = affine_set<(d0, d1) : (d0 >= 0, -d0 + 163839 >= 0, d1 >= 0, -d1 + 127 >= 0)>
func.func @rope(%x: index, %cos: index, %sin: index, %out: index) attributes {grid = [32]} {
  %id = ktdp.get_compute_tile_id : index
  %c0 = arith.constant 0 : index
  %cstep = arith.constant 512 : index
  %cper = arith.constant 5120 : index
  %first = arith.muli %id, %cper : index
  %vx = ktdp.construct_memory_view %x, sizes: [163840, 128], strides: [128, 1] {coordinate_set = #all, memory_space = #ktdp.memory_space<global>} : memref<163840x128xf16>
  %vc = ktdp.construct_memory_view %cos, sizes: [163840, 128], strides: [128, 1] {coordinate_set = #all, memory_space = #ktdp.memory_space<global>} : memref<163840x128xf16>
  %vs = ktdp.construct_memory_view %sin, sizes: [163840, 128], strides: [128, 1] {coordinate_set = #all, memory_space = #ktdp.memory_space<global>} : memref<163840x128xf16>
  %vo = ktdp.construct_memory_view %out, sizes: [163840, 128], strides: [128, 1] {coordinate_set = #all, memory_space = #ktdp.memory_space<global>} : memref<163840x128xf16>
  scf.for %i = %c0 to %cper step %cstep {
    %row = arith.addi %first, %i : index
    %tx = ktdp.construct_access_tile %vx[%row, 0] {access_tile_set = #chunk, access_tile_order = #full} : memref<163840x128xf16> -> !ktdp.access_tile<512x128xindex>
    %tc = ktdp.construct_access_tile %vc[%row, 0] {access_tile_set = #chunk, access_tile_order = #full} : memref<163840x128xf16> -> !ktdp.access_tile<512x128xindex>
    %ts = ktdp.construct_access_tile %vs[%row, 0] {access_tile_set = #chunk, access_tile_order = #full} : memref<163840x128xf16> -> !ktdp.access_tile<512x128xindex>
    %to = ktdp.construct_access_tile %vo[%row, 0] {access_tile_set = #chunk, access_tile_order = #full} : memref<163840x128xf16> -> !ktdp.access_tile<512x128xindex>
    %a = ktdp.load %tx : <512x128xindex> -> tensor<512x128xf16>
    %c = ktdp.load %tc : <512x128xindex> -> tensor<512x128xf16>
    %s = ktdp.load %ts : <512x128xindex> -> tensor<512x128xf16>
    %lo = tensor.extract_slice %a[0, 0] [512, 64] [1, 1] : tensor<512x128xf16> to tensor<512x64xf16>
    %hi = tensor.extract_slice %a[0, 64] [512, 64] [1, 1] : tensor<512x128xf16> to tensor<512x64xf16>
    %nhi = arith.negf %hi : tensor<512x64xf16>
    %e = tensor.empty() : tensor<512x128xf16>
    %r0 = tensor.insert_slice %nhi into %e[0, 0] [512, 64] [1, 1] : tensor<512x64xf16> into tensor<512x128xf16>
    %rot = tensor.insert_slice %lo into %r0[0, 64] [512, 64] [1, 1] : tensor<512x64xf16> into tensor<512x128xf16>
    %xc = arith.mulf %a, %c : tensor<512x128xf16>
    %rs = arith.mulf %rot, %s : tensor<512x128xf16>
    %y = arith.addf %xc, %rs : tensor<512x128xf16>
    ktdp.store %y, %to : tensor<512x128xf16>, <512x128xindex>
  }
  return
}
