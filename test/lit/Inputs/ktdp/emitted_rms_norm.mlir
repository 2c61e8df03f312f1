// hf_llama's first kernel (its RMSNorm as the model's ops: square, mean, add eps, rsqrt, scale,
// weight) as ktir-emit-ktdp writes it: the kernel function, its fused payload as a `ktir.fused`
// routine, and the mean inside as a `ktir.mean` routine (docs/ktdp.md, "Emission"). Generated with
//   emit_kernel(kernel, "k0_fused") of ktir.compile(<hf_llama of test/unit/model_zoo.py>)
func.func @k0_fused(%in0: index, %in1: index, %in2: index, %out0: index) attributes {grid = [24]} {
  %id = ktdp.get_compute_tile_id : index
  %vin0 = ktdp.construct_memory_view %in0, sizes: [24, 1, 1, 64], strides: [64, 64, 64, 1] {coordinate_set = affine_set<(d0, d1, d2, d3) : (d0 >= 0, -d0 + 23 >= 0, d1 >= 0, -d1 >= 0, d2 >= 0, -d2 >= 0, d3 >= 0, -d3 + 63 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<24x1x1x64xf16>
  %vin1 = ktdp.construct_memory_view %in1, sizes: [1, 32], strides: [32, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 >= 0, d1 >= 0, -d1 + 31 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<1x32xf32>
  %vin2 = ktdp.construct_memory_view %in2, sizes: [1, 64], strides: [64, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 >= 0, d1 >= 0, -d1 + 63 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<1x64xf16>
  %vout0 = ktdp.construct_memory_view %out0, sizes: [24, 1, 1, 64], strides: [64, 64, 64, 1] {coordinate_set = affine_set<(d0, d1, d2, d3) : (d0 >= 0, -d0 + 23 >= 0, d1 >= 0, -d1 >= 0, d2 >= 0, -d2 >= 0, d3 >= 0, -d3 + 63 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<24x1x1x64xf16>
  %tile0 = ktdp.construct_access_tile %vin0[%id, 0, 0, 0] {access_tile_set = affine_set<(d0, d1, d2, d3) : (d0 >= 0, -d0 >= 0, d1 >= 0, -d1 >= 0, d2 >= 0, -d2 >= 0, d3 >= 0, -d3 + 63 >= 0)>, access_tile_order = affine_map<(d0, d1, d2, d3) -> (d1, d2, d0, d3)>} : memref<24x1x1x64xf16> -> !ktdp.access_tile<1x1x1x64xindex>
  %t0 = ktdp.load %tile0 : <1x1x1x64xindex> -> tensor<1x1x1x64xf16>
  %t1 = tensor.collapse_shape %t0 [[0, 1, 2, 3]] : tensor<1x1x1x64xf16> into tensor<64xf16>
  %t2 = tensor.expand_shape %t1 [[0, 1, 2]] output_shape [1, 1, 64] : tensor<64xf16> into tensor<1x1x64xf16>
  %tile1 = ktdp.construct_access_tile %vin1[0, 0] {access_tile_set = affine_set<(d0, d1) : (d0 >= 0, -d0 >= 0, d1 >= 0, -d1 >= 0)>, access_tile_order = affine_map<(d0, d1) -> (d0, d1)>} : memref<1x32xf32> -> !ktdp.access_tile<1x1xindex>
  %t3 = ktdp.load %tile1 : <1x1xindex> -> tensor<1x1xf32>
  %t4 = tensor.collapse_shape %t3 [[0, 1]] : tensor<1x1xf32> into tensor<1xf32>
  %tile2 = ktdp.construct_access_tile %vin2[0, 0] {access_tile_set = affine_set<(d0, d1) : (d0 >= 0, -d0 >= 0, d1 >= 0, -d1 + 63 >= 0)>, access_tile_order = affine_map<(d0, d1) -> (d0, d1)>} : memref<1x64xf16> -> !ktdp.access_tile<1x64xindex>
  %t5 = ktdp.load %tile2 : <1x64xindex> -> tensor<1x64xf16>
  %t6 = tensor.collapse_shape %t5 [[0, 1]] : tensor<1x64xf16> into tensor<64xf16>
  %r0 = func.call @k0_fused_fused0(%t2, %t4, %t6) : (tensor<1x1x64xf16>, tensor<1xf32>, tensor<64xf16>) -> tensor<1x1x64xf16>
  %tile3 = ktdp.construct_access_tile %vout0[%id, 0, 0, 0] {access_tile_set = affine_set<(d0, d1, d2, d3) : (d0 >= 0, -d0 >= 0, d1 >= 0, -d1 >= 0, d2 >= 0, -d2 >= 0, d3 >= 0, -d3 + 63 >= 0)>, access_tile_order = affine_map<(d0, d1, d2, d3) -> (d1, d2, d0, d3)>} : memref<24x1x1x64xf16> -> !ktdp.access_tile<1x1x1x64xindex>
  %t7 = tensor.collapse_shape %r0 [[0, 1, 2]] : tensor<1x1x64xf16> into tensor<64xf16>
  %t8 = tensor.expand_shape %t7 [[0, 1, 2, 3]] output_shape [1, 1, 1, 64] : tensor<64xf16> into tensor<1x1x1x64xf16>
  ktdp.store %t8, %tile3 : tensor<1x1x1x64xf16>, <1x1x1x64xindex>
  return
}
func.func private @k0_fused_fused0(%p0: tensor<1x1x64xf16>, %p1: tensor<1xf32>, %p2: tensor<64xf16>) -> tensor<1x1x64xf16> attributes {ktir.routine = "ktir.fused"} {
  %e0 = tensor.empty() : tensor<1x1x64xf32>
  %t0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%p0 : tensor<1x1x64xf16>) outs(%e0 : tensor<1x1x64xf32>) {
  ^bb0(%a0: f16, %o0: f32):
    %v0 = arith.extf %a0 : f16 to f32
    linalg.yield %v0 : f32
  } -> tensor<1x1x64xf32>
  %e1 = tensor.empty() : tensor<1x1x64xf32>
  %t1 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%t0, %t0 : tensor<1x1x64xf32>, tensor<1x1x64xf32>) outs(%e1 : tensor<1x1x64xf32>) {
  ^bb0(%a1: f32, %a2: f32, %o1: f32):
    %v1 = arith.mulf %a1, %a2 : f32
    linalg.yield %v1 : f32
  } -> tensor<1x1x64xf32>
  %r0 = func.call @k0_fused_mean1(%t1) : (tensor<1x1x64xf32>) -> tensor<1x1x1xf32>
  %e2 = tensor.empty() : tensor<1x1x1xf32>
  %t2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%r0, %p1 : tensor<1x1x1xf32>, tensor<1xf32>) outs(%e2 : tensor<1x1x1xf32>) {
  ^bb0(%a3: f32, %a4: f32, %o2: f32):
    %v2 = arith.addf %a3, %a4 : f32
    linalg.yield %v2 : f32
  } -> tensor<1x1x1xf32>
  %e3 = tensor.empty() : tensor<1x1x1xf32>
  %t3 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%t2 : tensor<1x1x1xf32>) outs(%e3 : tensor<1x1x1xf32>) {
  ^bb0(%a5: f32, %o3: f32):
    %v3 = math.rsqrt %a5 : f32
    linalg.yield %v3 : f32
  } -> tensor<1x1x1xf32>
  %e4 = tensor.empty() : tensor<1x1x64xf32>
  %t4 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%t0, %t3 : tensor<1x1x64xf32>, tensor<1x1x1xf32>) outs(%e4 : tensor<1x1x64xf32>) {
  ^bb0(%a6: f32, %a7: f32, %o4: f32):
    %v4 = arith.mulf %a6, %a7 : f32
    linalg.yield %v4 : f32
  } -> tensor<1x1x64xf32>
  %e5 = tensor.empty() : tensor<1x1x64xf16>
  %t5 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%t4 : tensor<1x1x64xf32>) outs(%e5 : tensor<1x1x64xf16>) {
  ^bb0(%a8: f32, %o5: f16):
    %v5 = arith.truncf %a8 : f32 to f16
    linalg.yield %v5 : f16
  } -> tensor<1x1x64xf16>
  %e6 = tensor.empty() : tensor<1x1x64xf16>
  %t6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%p2, %t5 : tensor<64xf16>, tensor<1x1x64xf16>) outs(%e6 : tensor<1x1x64xf16>) {
  ^bb0(%a9: f16, %a10: f16, %o6: f16):
    %v6 = arith.extf %a9 : f16 to f32
    %v7 = arith.extf %a10 : f16 to f32
    %v8 = arith.mulf %v6, %v7 : f32
    %v9 = arith.truncf %v8 : f32 to f16
    linalg.yield %v9 : f16
  } -> tensor<1x1x64xf16>
  return %t6 : tensor<1x1x64xf16>
}
func.func private @k0_fused_mean1(%p0: tensor<1x1x64xf32>) -> tensor<1x1x1xf32> attributes {ktir.routine = "ktir.mean"} {
  %e0 = tensor.empty() : tensor<1x1xf32>
  %t0 = linalg.reduce ins(%p0 : tensor<1x1x64xf32>) outs(%e0 : tensor<1x1xf32>) dimensions = [2]
    (%a0: f32, %a1: f32) {
      %v0 = arith.addf %a0, %a1 : f32
      linalg.yield %v0 : f32
    }
  %t1 = tensor.collapse_shape %t0 [[0, 1]] : tensor<1x1xf32> into tensor<1xf32>
  %t2 = tensor.expand_shape %t1 [[0, 1, 2]] output_shape [1, 1, 1] : tensor<1xf32> into tensor<1x1x1xf32>
  %e1 = tensor.empty() : tensor<1x1x1xf32>
  %t3 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%t2 : tensor<1x1x1xf32>) outs(%e1 : tensor<1x1x1xf32>) {
  ^bb0(%a2: f32, %o0: f32):
    %v1 = arith.constant 64.0 : f32
    %v2 = arith.divf %a2, %v1 : f32
    linalg.yield %v2 : f32
  } -> tensor<1x1x1xf32>
  return %t3 : tensor<1x1x1xf32>
}
