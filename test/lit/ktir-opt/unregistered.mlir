// An op of no registered dialect: the caret is on its name (with its quotes in the generic
// form), where the op's location is, not on the token after it.
// RUN: not ktir-opt %s --split-input-file 2>&1 | filecheck %s --strict-whitespace

// CHECK: unregistered.mlir:[[# @LINE + 4]]:8: error: Operation ktir.frobnicate is not registered
// CHECK-NEXT: {{^}}  %a = ktir.frobnicate %x : tensor<4x64xf16> -> tensor<4x64xf16>
// CHECK-NEXT: {{^}}       ^^^^^^^^^^^^^^^{{$}}
func.func @custom(%x: tensor<4x64xf16>) -> tensor<4x64xf16> {
  %a = ktir.frobnicate %x : tensor<4x64xf16> -> tensor<4x64xf16>
  return %a : tensor<4x64xf16>
}

// -----

// CHECK: unregistered.mlir:[[# @LINE + 4]]:8: error: Operation ktir.frobnicate is not registered
// CHECK-NEXT: {{^}}  %a = "ktir.frobnicate"(%x) : (tensor<4x64xf16>) -> tensor<4x64xf16>
// CHECK-NEXT: {{^}}       ^^^^^^^^^^^^^^^^^{{$}}
func.func @generic(%x: tensor<4x64xf16>) -> tensor<4x64xf16> {
  %a = "ktir.frobnicate"(%x) : (tensor<4x64xf16>) -> tensor<4x64xf16>
  return %a : tensor<4x64xf16>
}

// -----

// CHECK: unregistered.mlir:[[# @LINE + 4]]:3: error: Operation nosuch.op is not registered
// CHECK-NEXT: {{^}}  nosuch.op{{$}}
// CHECK-NEXT: {{^}}  ^^^^^^^^^{{$}}
func.func @bare() {
  nosuch.op
  func.return
}
