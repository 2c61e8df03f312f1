// A 64 x 2048 x 8192 fp16 matmul on 32 tiles, each 256 columns of the result, with a K loop of
// 64-wide steps accumulating in fp32 (scf.for iter_args), stored as fp16.
#full = affine_map<(d0, d1) -> (d0, d1)>
func.func @matmul(%a: index, %b: index, %c: index) attributes {grid = [32]} {
  %id = ktdp.get_compute_tile_id : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %c2048 = arith.constant 2048 : index
  %n0 = arith.muli %id, %c256 : index
  %va = ktdp.construct_memory_view %a, sizes: [64, 2048], strides: [2048, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 63 >= 0, d1 >= 0, -d1 + 2047 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<64x2048xf16>
  %vb = ktdp.construct_memory_view %b, sizes: [2048, 8192], strides: [8192, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 2047 >= 0, d1 >= 0, -d1 + 8191 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<2048x8192xf16>
  %vc = ktdp.construct_memory_view %c, sizes: [64, 8192], strides: [8192, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 63 >= 0, d1 >= 0, -d1 + 8191 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<64x8192xf16>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x256xf32>
  %acc0 = linalg.fill ins(%zero : f32) outs(%e : tensor<64x256xf32>) -> tensor<64x256xf32>
  %acc = scf.for %k = %c0 to %c2048 step %c64 iter_args(%acc_in = %acc0) -> (tensor<64x256xf32>) {
    %ta = ktdp.construct_access_tile %va[0, %k] {access_tile_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 63 >= 0, d1 >= 0, -d1 + 63 >= 0)>, access_tile_order = #full} : memref<64x2048xf16> -> !ktdp.access_tile<64x64xindex>
    %tb = ktdp.construct_access_tile %vb[%k, %n0] {access_tile_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 63 >= 0, d1 >= 0, -d1 + 255 >= 0)>, access_tile_order = #full} : memref<2048x8192xf16> -> !ktdp.access_tile<64x256xindex>
    %x = ktdp.load %ta : <64x64xindex> -> tensor<64x64xf16>
    %w = ktdp.load %tb : <64x256xindex> -> tensor<64x256xf16>
    %x32 = arith.extf %x : tensor<64x64xf16> to tensor<64x64xf32>
    %w32 = arith.extf %w : tensor<64x256xf16> to tensor<64x256xf32>
    %r = linalg.matmul ins(%x32, %w32 : tensor<64x64xf32>, tensor<64x256xf32>) outs(%acc_in : tensor<64x256xf32>) -> tensor<64x256xf32>
    scf.yield %r : tensor<64x256xf32>
  }
  %out = arith.truncf %acc : tensor<64x256xf32> to tensor<64x256xf16>
  %tc = ktdp.construct_access_tile %vc[0, %n0] {access_tile_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 63 >= 0, d1 >= 0, -d1 + 255 >= 0)>, access_tile_order = #full} : memref<64x8192xf16> -> !ktdp.access_tile<64x256xindex>
  ktdp.store %out, %tc : tensor<64x256xf16>, <64x256xindex>
  return
}
