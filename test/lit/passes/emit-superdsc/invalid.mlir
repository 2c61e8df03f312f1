// ktir-emit-superdsc needs every kernel's ktir.work_division; without one it reports a located
// error and writes no file.
// RUN: rm -rf %t
// RUN: ktir-opt %s --verify-diagnostics -p 'ktir-propagate-layouts,ktir-emit-superdsc{dir="%t"}'
// RUN: not ls %t

func.func @f(%x: tensor<4x64xf16>) -> tensor<4x64xf16> {
  // expected-error @+1 {{'ktir.abs' op has no ktir.work_division; run ktir-divide-work first}}
  %y = ktir.abs %x : tensor<4x64xf16> -> tensor<4x64xf16>
  return %y : tensor<4x64xf16>
}
