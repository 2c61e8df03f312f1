// RUN: KTIR_ROUNDTRIP
// RUN: KTIR_GENERIC_ROUNDTRIP

// Upstream linalg as KTIR programs write it where xDSL differs (dialects/linalg_ext.py): the short
// `linalg.reduce { combiner }` form, the region form (printed short when its body is one
// combining op of input and accumulator, as mlir-opt does; kept whole otherwise), `linalg.div`
// and `linalg.batch_matmul`.

// Maps print as #map aliases, defined before the module (mlir-opt's form): the transposed matmul's.
// CHECK:       #map = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-NEXT:  #map1 = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-NEXT:  #map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @reduce
// CHECK-NEXT:    %e = tensor.empty() : tensor<8xf32>
// CHECK-NEXT:    %s = linalg.reduce { arith.addf } ins(%x : tensor<8x64xf32>) outs(%e : tensor<8xf32>) dimensions = [1]
// CHECK-NEXT:    %m = linalg.reduce { arith.maximumf } ins(%x : tensor<8x64xf32>) outs(%e : tensor<8xf32>) dimensions = [1]
// CHECK-NEXT:    %r = linalg.reduce ins(%x : tensor<8x64xf32>) outs(%e : tensor<8xf32>) dimensions = [1]
// CHECK-NEXT:    (%in: f32, %acc: f32) {
// CHECK-NEXT:      %sq = arith.mulf %in, %in : f32
// CHECK-NEXT:      %add = arith.addf %sq, %acc : f32
// CHECK-NEXT:      linalg.yield %add : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %d = linalg.div ins(%x, %x : tensor<8x64xf32>, tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) -> tensor<8x64xf32>
// CHECK-NEXT:    %b = linalg.batch_matmul ins(%p, %q : tensor<2x8x16xf32>, tensor<2x16x4xf32>) outs(%o : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
// CHECK-GENERIC: "linalg.reduce"(%x, %e) <{dimensions = array<i64: 1>}> ({
// CHECK-GENERIC-NEXT: ^bb0(%0: f32, %1: f32):
// CHECK-GENERIC-NEXT:   %2 = "arith.addf"(%0, %1)
// CHECK-GENERIC: "linalg.div"(%x, %x, %x)
// CHECK-GENERIC: "linalg.batch_matmul"(%p, %q, %o)
func.func @reduce(%x: tensor<8x64xf32>, %p: tensor<2x8x16xf32>, %q: tensor<2x16x4xf32>, %o: tensor<2x8x4xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %s = linalg.reduce { arith.addf } ins(%x : tensor<8x64xf32>) outs(%e : tensor<8xf32>) dimensions = [1]
  %m = linalg.reduce ins(%x : tensor<8x64xf32>) outs(%e : tensor<8xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %r = arith.maximumf %in, %acc : f32
      linalg.yield %r : f32
    }
  %r = linalg.reduce ins(%x : tensor<8x64xf32>) outs(%e : tensor<8xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %sq = arith.mulf %in, %in : f32
      %add = arith.addf %sq, %acc : f32
      linalg.yield %add : f32
    }
  %d = linalg.div ins(%x, %x : tensor<8x64xf32>, tensor<8x64xf32>) outs(%x : tensor<8x64xf32>) -> tensor<8x64xf32>
  %b = linalg.batch_matmul ins(%p, %q : tensor<2x8x16xf32>, tensor<2x16x4xf32>) outs(%o : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return
}

// linalg.matmul with upstream's explicit indexing_maps (B read as (n, k)); the default maps print
// nothing, as mlir-opt prints them.
// CHECK-LABEL: func.func @transposed
// CHECK-NEXT:    %m = linalg.matmul indexing_maps = [#map, #map1, #map2] ins(%a, %bt : tensor<4x8xf32>, tensor<16x8xf32>) outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT:    %n = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
// CHECK-GENERIC: "linalg.matmul"(%a, %bt, %c) <{operandSegmentSizes = array<i32: 2, 1>, indexing_maps = [#map3, #map4, #map5]}>
func.func @transposed(%a: tensor<4x8xf32>, %bt: tensor<16x8xf32>, %b: tensor<8x16xf32>, %c: tensor<4x16xf32>) {
  %m = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%a, %bt : tensor<4x8xf32>, tensor<16x8xf32>) outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
  %n = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
  return
}
