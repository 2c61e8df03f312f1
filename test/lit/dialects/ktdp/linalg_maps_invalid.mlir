// RUN: ktir-opt %s --split-input-file --verify-diagnostics
// RUN: not ktir-opt %s --split-input-file 2>&1 | filecheck %s

// linalg.matmul's indexing_maps (dialects/linalg_ext.py): three maps of (m, n, k), A read as
// (m, k) or (k, m), B as (k, n) or (n, k), C as (m, n).

// CHECK: linalg_maps_invalid.mlir:[[# @LINE + 3]]:8: error: 'linalg.matmul' op the operands' indexing maps must each read (m, k) or (k, m), (k, n) or (n, k)
func.func @operand(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<4x16xf32>) {
  // expected-error @+1 {{the operands' indexing maps must each read (m, k) or (k, m), (k, n) or (n, k)}}
  %m = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
  return
}

// -----

// CHECK: linalg_maps_invalid.mlir:[[# @LINE + 3]]:8: error: 'linalg.matmul' op the output's indexing map must be (m, n, k) -> (m, n)
func.func @output(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<16x4xf32>) {
  // expected-error @+1 {{the output's indexing map must be (m, n, k) -> (m, n)}}
  %m = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d1, d0)>] ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%c : tensor<16x4xf32>) -> tensor<16x4xf32>
  return
}

// -----

// CHECK: linalg_maps_invalid.mlir:[[# @LINE + 3]]:8: error: 'linalg.matmul' op indexing_maps must be three maps of (m, n, k) to two dims each
func.func @count(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<4x16xf32>) {
  // expected-error @+1 {{indexing_maps must be three maps of (m, n, k) to two dims each}}
  %m = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>] ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
  return
}
