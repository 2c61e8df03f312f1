// mlir-opt's pipeline flags: --pass-pipeline, --mlir-print-ir-*, --mlir-timing, --list-passes.
// RUN: ktir-opt %s --pass-pipeline='builtin.module(cse)' | filecheck %s --check-prefix=CSE
// RUN: ktir-opt %s --pass-pipeline=' builtin.module( ktir-compile{cores=2} ) ' | filecheck %s --check-prefix=CORES

// Each stage of ktir-compile is printed (stderr), the output is unchanged.
// RUN: ktir-opt %s -p 'ktir-compile{cores=2}' --mlir-print-ir-after-all 2>&1 >/dev/null | filecheck %s --check-prefix=AFTER-ALL
// RUN: ktir-opt %s -p 'ktir-compile{cores=2}' --mlir-print-ir-after-all 2>/dev/null | filecheck %s --check-prefix=CORES
// RUN: ktir-opt %s -p 'cse,ktir-compile{cores=2}' --mlir-print-ir-before=ktir-compile --mlir-print-ir-after=ktir-fuse,ktir-compile 2>&1 >/dev/null | filecheck %s --check-prefix=NAMED
// RUN: ktir-opt %s -p 'ktir-compile{cores=2}' --mlir-timing 2>&1 >/dev/null | filecheck %s --check-prefix=TIMING
// RUN: ktir-opt --list-passes | filecheck %s --check-prefix=LIST
// RUN: ktir-opt %s -p 'cse,ktir-compile{cores=2}' --mlir-print-ir-before-all 2>&1 >/dev/null | filecheck %s --check-prefix=BEFORE-ALL
// The old spellings: --print-between-passes prints after every pass, --time-passes times them.
// RUN: ktir-opt %s -p cse --print-between-passes 2>&1 >/dev/null | filecheck %s --check-prefix=OLD-PRINT
// RUN: ktir-opt %s -p cse --time-passes 2>&1 >/dev/null | filecheck %s --check-prefix=TIMING-CSE

// Usage errors: exit 2, one line.
// RUN: not ktir-opt %s -p cse --pass-pipeline='builtin.module(cse)' 2>&1 | filecheck %s --check-prefix=BOTH
// RUN: not ktir-opt %s --pass-pipeline='builtin.module(func.func(cse))' 2>&1 | filecheck %s --check-prefix=NESTED
// RUN: not ktir-opt %s --pass-pipeline='cse' 2>&1 | filecheck %s --check-prefix=ANCHOR
// RUN: not ktir-opt %s -p cse --mlir-print-ir-after=ktir-fuse 2>&1 | filecheck %s --check-prefix=ABSENT
// RUN: not ktir-opt %s -t llvm 2>&1 | filecheck %s --check-prefix=NO-TARGET

// CSE: func.func @abs
// CSE: ktir.abs
// CORES: ktir.kernel "ktir.abs" cores 2

// AFTER-ALL: // -----// IR Dump After PropagateLayoutsPass (ktir-propagate-layouts) //----- //
// AFTER-ALL: // -----// IR Dump After InsertRestickifyPass (ktir-insert-restickify) //----- //
// AFTER-ALL: // -----// IR Dump After PadMatmulPass (ktir-pad-matmul) //----- //
// AFTER-ALL: // -----// IR Dump After FusePass (ktir-fuse) //----- //
// AFTER-ALL: // -----// IR Dump After DivideWorkPass (ktir-divide-work) //----- //
// AFTER-ALL: ktir.work_division = {d0 = 2 : i64, d1 = 1 : i64}
// AFTER-ALL: // -----// IR Dump After PlanScratchpadPass (ktir-plan-scratchpad) //----- //
// AFTER-ALL: // -----// IR Dump After PlanKernelsPass (ktir-plan-kernels) //----- //
// AFTER-ALL: ktir.chunk_plan = #ktir.chunk_plan<d0 = 1, d1 = 1>
// AFTER-ALL: // -----// IR Dump After LowerToCoresPass (ktir-lower-to-cores) //----- //
// AFTER-ALL: ktir.kernel "ktir.abs"

// NAMED-NOT: IR Dump After CommonSubexpressionElimination
// NAMED: // -----// IR Dump Before PropagateLayoutsPass (ktir-propagate-layouts) //----- //
// NAMED-NEXT: builtin.module {
// NAMED: // -----// IR Dump After FusePass (ktir-fuse) //----- //
// NAMED: // -----// IR Dump After LowerToCoresPass (ktir-lower-to-cores) //----- //
// NAMED-NOT: IR Dump

// TIMING: ... Execution time report ...
// TIMING: Total Execution Time: {{[0-9.]+}} seconds
// TIMING: ----Wall Time----  ----Name----
// TIMING-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)  Parser
// TIMING-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)  ktir-compile
// TIMING-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)    ktir-propagate-layouts
// TIMING: {{[0-9.]+}} ({{ *[0-9.]+}}%)    ktir-lower-to-cores
// TIMING-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)  Output
// TIMING-NEXT: {{[0-9.]+}} (100.0%)  Total

// BEFORE-ALL: // -----// IR Dump Before CommonSubexpressionElimination (cse) //----- //
// BEFORE-ALL: // -----// IR Dump Before PropagateLayoutsPass (ktir-propagate-layouts) //----- //
// BEFORE-ALL: // -----// IR Dump Before LowerToCoresPass (ktir-lower-to-cores) //----- //
// BEFORE-ALL-NOT: IR Dump After
// OLD-PRINT: // -----// IR Dump After CommonSubexpressionElimination (cse) //----- //
// TIMING-CSE: {{[0-9.]+}} ({{ *[0-9.]+}}%)  cse

// LIST: Available passes:
// LIST: ktir-compile
// LIST-NEXT: Graph-level ktir to core-level ktir.
// LIST-NEXT: cores: int | None = None
// LIST-NEXT: policy: str = 'dataflow'
// LIST: ktir-fuse
// LIST-NEXT: Fuse producer-consumer chains into `ktir.fused` kernels.
// LIST: remarks: bool = False

// BOTH: ktir-opt: error: -p and --pass-pipeline are alternatives: give one of them
// NESTED: ktir-opt: error: argument --pass-pipeline: nested pass anchors are not supported in 'builtin.module(func.func(cse))'
// ANCHOR: ktir-opt: error: argument --pass-pipeline: expected 'builtin.module(...)', got 'cse'
// ABSENT: ktir-opt: error: argument --mlir-print-ir-after: 'ktir-fuse' is not a pass of the pipeline 'cse'
// NO-TARGET: ktir-opt: error: unrecognized arguments: -t llvm
func.func @abs(%x: tensor<4x64xf16>) -> tensor<4x64xf16> {
  %y = ktir.abs %x : tensor<4x64xf16> -> tensor<4x64xf16>
  return %y : tensor<4x64xf16>
}
