// Bad input: a located error with the source line and a caret, no traceback.
// RUN: not ktir-opt %inputs/parse_error.mlir 2>&1 | filecheck %s --check-prefix=PARSE --strict-whitespace
// RUN: not ktir-opt %s 2>&1 | filecheck %s --check-prefix=VERIFY --strict-whitespace
// RUN: not ktir-opt %inputs/parse_error.mlir --split-input-file 2>&1 | filecheck %s --check-prefix=PARSE

// PARSE: parse_error.mlir:3:20: error: Expected argument or type
// PARSE-NEXT: func.func @broken( {
// PARSE-NEXT: {{^}}                   ^
// PARSE-NOT: Traceback

// VERIFY: errors.mlir:[[# @LINE + 4]]:3: error: 'func.return' op Expected arguments to have the same types as the function output types: expected [i64], got [i32]
// VERIFY-NEXT: {{^}}  func.return %a : i32
// VERIFY-NEXT: {{^}}  ^
func.func @mismatch(%a: i32) -> i64 {
  func.return %a : i32
}
