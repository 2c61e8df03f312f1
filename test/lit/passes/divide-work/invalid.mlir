// RUN: not ktir-opt %s -p 'ktir-propagate-layouts,ktir-divide-work' 2>&1 | filecheck %s

// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'ktir.matmul' op invalid ktir.work_division_hint: hint m = 3 does not divide the dim's 64 cuttable unit(s)
func.func @bad_hint(%x: tensor<64x256xf16>, %y: tensor<256x128xf16>) -> tensor<64x128xf16> {
  %r = ktir.matmul %x, %y {ktir.work_division_hint = {m = 3 : i64}} : tensor<64x256xf16>, tensor<256x128xf16> -> tensor<64x128xf16>
  return %r : tensor<64x128xf16>
}
