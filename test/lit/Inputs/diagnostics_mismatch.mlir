// Used by ktir-opt/verify_diagnostics.mlir: every chunk below must be reported as a mismatch.
// No annotation: the error is unexpected.
func.func @unannotated(%a: i32) -> i64 {
  func.return %a : i32
}
// -----
// An annotation nothing matches.
func.func @fine(%a: i32) -> i32 {
  // expected-error @+1 {{this is never reported}}
  func.return %a : i32
}
// -----
// Wrong severity: an error does not satisfy an expected warning.
func.func @severity(%a: i32) -> i64 {
  // comment
  // comment
  // expected-warning @+1 {{Expected arguments}}
  func.return %a : i32
}
