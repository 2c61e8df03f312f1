// MLIR's -verify-diagnostics semantics: every designator form, and mismatches fail.
// RUN: ktir-opt %s --split-input-file --verify-diagnostics
// RUN: not ktir-opt %inputs/diagnostics_mismatch.mlir --split-input-file --verify-diagnostics 2>&1 | filecheck %s --check-prefix=MISMATCH

// @+N counts from the annotation's line.
// expected-error @+2 {{'func.return' op Expected arguments to have the same types}}
func.func @plus(%a: i32) -> i64 {
  func.return %a : i32
}

// -----

func.func @minus(%a: i32) -> i64 {
  func.return %a : i32
  // expected-error @-1 {{expected [i64], got [i32]}}
}

// -----

// @below: the next line that is not an annotation; @above: the last such line above.
func.func @below(%a: i32) -> i64 {
  // expected-error @below {{Expected arguments}}
  func.return %a : i32
}

// -----

// -re: the {{...}} parts are regular expressions.
func.func @regex(%a: i32) -> i64 {
  // expected-error-re @below {{expected {{\[i[0-9]+\]}}, got [i32]}}
  func.return %a : i32
}

// -----

func.func @above(%a: i32) -> i64 {
  func.return %a : i32
  // expected-error @above {{got [i32]}}
}

// -----

// Same line, and a parse error.
"test.op"() : () -> tensor<64xf16, #ktir.tiled<device_size = [1, 64], stride_map = [64 1]>> // expected-error {{']' expected}}

// -----

// A chunk without errors checks that nothing unexpected is reported.
func.func @fine(%a: i32) -> i32 {
  func.return %a : i32
}

// MISMATCH: diagnostics_mismatch.mlir:4:3: error: unexpected error: 'func.return' op Expected arguments to have the same types
// MISMATCH: diagnostics_mismatch.mlir:9:6: error: expected error "this is never reported" was not produced
// MISMATCH: diagnostics_mismatch.mlir:18:3: error: unexpected error: 'func.return' op Expected arguments
// MISMATCH: diagnostics_mismatch.mlir:17:6: error: expected warning "Expected arguments" was not produced
