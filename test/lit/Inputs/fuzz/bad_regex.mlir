// An expected-error-re annotation whose {{...}} is not a regular expression.
func.func @bad_regex(%a: i32) -> i64 {
  // expected-error-re @below {{expected {{\[i[1--1]+\]}}, got [i32]}}
  func.return %a : i32
}
