// RUN: not ktir-opt %s 2>&1 | filecheck %s

// The short form of linalg.reduce names an op the context knows; anything else is located.

// CHECK: linalg_invalid.mlir:[[# @LINE + 2]]:24: error: unknown combining op 'arith.plus'
func.func @unknown(%x: tensor<8x64xf32>, %e: tensor<8xf32>) {
  %s = linalg.reduce { arith.plus } ins(%x : tensor<8x64xf32>) outs(%e : tensor<8xf32>) dimensions = [1]
  return
}
