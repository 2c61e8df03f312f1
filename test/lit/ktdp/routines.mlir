// A kernel as ktir-emit-ktdp writes it, with routine functions (`ktir.routine`): ktir-run runs
// the routines' bodies for the values and times each call as ktir times its graph op, so the
// kernel takes the cycles ktir's simulator gives hf_llama's k0_fused (2,148.0). A routine that
// names no such op is a located error (exit 1), and nothing is written.

// RUN: %python -c "import numpy as np, sys; x = np.full((24, 1, 1, 64), 0.5, np.float16); e = np.zeros((1, 32), np.float32); e[0, 0] = 1e-6; np.savez(sys.argv[1], in0=x, in1=e, in2=np.ones((1, 64), np.float16), out0=np.zeros_like(x))" %t.in.npz
// RUN: ktir-run %inputs/ktdp/emitted_rms_norm.mlir --function k0_fused --inputs %t.in.npz -o %t.out.npz --json %t.json | filecheck %s
// RUN: %python -c "import numpy as np, sys; o = np.load(sys.argv[1])['out0']; print(o.shape, float(o.min()), float(o.max()))" %t.out.npz | filecheck %s --check-prefix=VALUES
// RUN: %python -c "import json, sys; r = json.load(open(sys.argv[1])); print(round(r['kernels'][0]['cycles'], 1))" %t.json | filecheck %s --check-prefix=CYCLES
// RUN: sed 's/"ktir.mean"/"ktir.frobnicate"/' %inputs/ktdp/emitted_rms_norm.mlir > %t.bad.mlir
// RUN: rm -f %t.bad.npz
// RUN: not ktir-run %t.bad.mlir --function k0_fused --inputs %t.in.npz -o %t.bad.npz 2>&1 | filecheck %s --check-prefix=BAD
// RUN: not test -e %t.bad.npz

// CHECK: @k0_fused
// VALUES: (24, 1, 1, 64) 1.0 1.0
// CYCLES: 2148.0
// BAD: bad.mlir:{{[0-9]+}}:1: error: 'ktir.routine' names "ktir.frobnicate", which is not a ktir graph op ktir times as a routine
