// `--function NAME` is the one flag that names the function to run (`--func-name` is its old
// spelling): of ktir IR (default: the only one), or of a ktdp kernel, which needs it. A wrong
// name lists the functions there are (exit 1), before anything is compiled; a ktdp kernel
// without --function says to give one (exit 2), rather than failing in ktir-compile on ktdp ops.
// Flags a ktdp kernel's run would ignore (--trace, --png, ...) are a usage error, not silently dropped.

// RUN: ktir-run %s --function f --quiet | filecheck %s --check-prefix=F
// RUN: ktir-run %s --func-name g --quiet | filecheck %s --check-prefix=G
// RUN: not ktir-run %s 2>&1 | filecheck %s --check-prefix=TWO
// RUN: not ktir-run %s --function nosuch 2>&1 | filecheck %s --check-prefix=NOSUCH
// RUN: not ktir-run %s --func-name nosuch 2>&1 | filecheck %s --check-prefix=NOSUCH
// RUN: not ktir-run %s --function g --grid 2 2>&1 | filecheck %s --check-prefix=GRID
// RUN: not ktir-run %inputs/ktdp/add.mlir 2>&1 | filecheck %s --check-prefix=KTDP
// RUN: %python -c "import numpy as np, sys; a = np.zeros((96, 64), np.float16); np.savez(sys.argv[1], a=a, b=a, c=a)" %t.npz
// RUN: not ktir-run %inputs/ktdp/add.mlir --function nosuch --inputs %t.npz 2>&1 | filecheck %s --check-prefix=KTDP-NOSUCH
// RUN: not ktir-run %inputs/ktdp/add.mlir --function add --inputs %t.npz --trace %t.trace.json --png %t.png 2>&1 | filecheck %s --check-prefix=KTDP-TRACE
// RUN: not test -e %t.trace.json
// RUN: %python -c "from ktir.tools.ktir_run import main; import sys; sys.exit(0 if main([sys.argv[1]]) == 2 else 1)" %inputs/ktdp/add.mlir 2>/dev/null

// F: ktir.sim: 1 op (1 on the chip)
// F: exp
// G: ktir.sim: 0 ops
// TWO: ktir-run: error: expected one function with a body, found 2: @f, @g (--function NAME picks one)
// NOSUCH: ktir-run: error: no function @nosuch with a body; the module has: @f, @g (--function NAME picks one)
// GRID: ktir-run: error: --grid applies to ktdp kernels only
// KTDP: ktir-run: error: '{{.*}}add.mlir' is a ktdp (RFC 0682) kernel: name the function to run with --function NAME (it has: @add) and give its arrays with --inputs FILE.npz
// KTDP-NOT: layout rule
// KTDP-TRACE: ktir-run: error: --trace, --png: not for ktdp kernels (they run on --inputs; -o and --json)
// KTDP-NOSUCH: ktir-run: error: no function @nosuch with a body; the module has: @add
func.func @f(%x: tensor<4x64xf16>) -> tensor<4x64xf16> {
  %a = ktir.exp %x : tensor<4x64xf16> -> tensor<4x64xf16>
  return %a : tensor<4x64xf16>
}
func.func @g(%x: tensor<4x64xf16>) -> tensor<4x64xf16> {
  return %x : tensor<4x64xf16>
}
