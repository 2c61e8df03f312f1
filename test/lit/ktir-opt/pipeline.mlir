// Pass pipelines with options, mlir-opt style; running a pass twice changes nothing more.
// RUN: ktir-opt %s -p 'arith-add-fastmath{flags=none}' | filecheck %s --check-prefix=NONE
// RUN: ktir-opt %s -p arith-add-fastmath | filecheck %s --check-prefix=FAST
// RUN: ktir-opt %s -p canonicalize,cse | filecheck %s --check-prefix=CSE
// RUN: ktir-opt %s -p canonicalize,cse,canonicalize,cse | filecheck %s --check-prefix=CSE
// RUN: ktir-opt %s -p cse -o %t && filecheck %s --check-prefix=CSE --input-file %t

// `-o -` is stdout (no file named `-`); `--mlir-print-debuginfo` is `--print-debuginfo`.
// RUN: rm -rf %t.dir && mkdir %t.dir && cd %t.dir && ktir-opt %s -p cse -o - | filecheck %s --check-prefix=CSE && not test -e ./-
// RUN: ktir-opt %s --mlir-print-debuginfo | filecheck %s --check-prefix=LOC
// RUN: ktir-opt --version | filecheck %s --check-prefix=VERSION

// Bad pipelines: one line naming the problem and the available passes.
// RUN: not ktir-opt %s -p 'no-such-pass,cse' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not ktir-opt %s -p 'cse{bogus=1}' 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not ktir-opt %s -p 'cse{' 2>&1 | filecheck %s --check-prefix=SYNTAX

// NONE-LABEL: func.func @add
// NONE: arith.addf %{{.*}}, %{{.*}} : f32
// FAST: arith.addf %{{.*}}, %{{.*}} fastmath<fast> : f32
// CSE-LABEL: func.func @add
// CSE-NEXT: %[[SUM:.*]] = arith.addf %{{.*}}, %{{.*}} : f32
// CSE-NEXT: func.return %[[SUM]], %[[SUM]] : f32, f32
// LOC: arith.addf %{{.*}}, %{{.*}} : f32 loc("{{.*}}pipeline.mlir":{{[0-9]+}}:{{[0-9]+}})
// VERSION: ktir-opt {{[0-9]+\.[0-9]+\.[0-9]+}} built on xdsl
// UNKNOWN: ktir-opt: error: unknown pass 'no-such-pass' in 'no-such-pass,cse'; available passes: {{.*}}canonicalize{{.*}}cse
// OPTION: ktir-opt: error: invalid pass pipeline 'cse{bogus=1}': Provided arguments ["bogus"] not found
// SYNTAX: ktir-opt: error: invalid pass pipeline 'cse{': Expected argument name here
func.func @add(%a: f32, %b: f32) -> (f32, f32) {
  %0 = arith.addf %a, %b : f32
  %1 = arith.addf %a, %b : f32
  func.return %0, %1 : f32, f32
}
