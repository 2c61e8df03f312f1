// --disable-verify skips the verifier (for looking at what a broken pass wrote); without it,
// the same input is a located error. xdsl-opt flags that do not apply are usage errors.
// RUN: not ktir-opt %s 2>&1 | filecheck %s --check-prefix=VERIFY
// RUN: ktir-opt %s --disable-verify | filecheck %s --check-prefix=PRINTED
// RUN: not ktir-opt %s --shrink 2>&1 | filecheck %s --check-prefix=SHRINK
// RUN: not ktir-opt -v 2>&1 | filecheck %s --check-prefix=DASH-V
// RUN: not ktir-opt %s -f mlir 2>&1 | filecheck %s --check-prefix=FRONTEND

// VERIFY: disable_verify.mlir:[[# @LINE + 6]]:8: error: 'ktir.abs' op result shape [4, 32] does not match the input shape [4, 64]
// PRINTED: %y = ktir.abs %x : tensor<4x64xf16> -> tensor<4x32xf16>
// SHRINK: ktir-opt: error: unrecognized arguments: --shrink
// DASH-V: ktir-opt: error: unrecognized arguments: -v
// FRONTEND: ktir-opt: error: unrecognized arguments: -f
func.func @f(%x: tensor<4x64xf16>) -> tensor<4x64xf16> {
  %y = ktir.abs %x : tensor<4x64xf16> -> tensor<4x32xf16>
  return %y : tensor<4x32xf16>
}
