// `ktir-run KERNEL --function NAME` runs a ktdp function: inputs by argument name from an .npz,
// the arrays it stores to read back into -o under their names, the report printed (one line for the function:
// 9 DMAs of one stick per tile here), --json as for ktir's own programs; bad --place or --grid
// values are usage errors (exit 2), a kernel reading past its memory a located error (exit 1).

// RUN: %python -c "import numpy as np, sys; a = np.arange(96 * 64, dtype=np.float16).reshape(96, 64) / 1024; np.savez(sys.argv[1], a=a, b=a, c=np.zeros_like(a))" %t.in.npz
// RUN: ktir-run %inputs/ktdp/add.mlir --function add --inputs %t.in.npz -o %t.out.npz --json %t.json | filecheck %s
// RUN: %python -c "import numpy as np, sys; o, i = np.load(sys.argv[1]), np.load(sys.argv[2]); print(sorted(o.files), bool((o['c'] == 2 * i['a']).all()))" %t.out.npz %t.in.npz | filecheck %s --check-prefix=VALUES
// RUN: %python -c "import json, sys; r = json.load(open(sys.argv[1])); print(r['kernels'][0]['op'], r['kernels'][0]['cores'], r['kernels'][0]['bytes'])" %t.json | filecheck %s --check-prefix=JSON
// RUN: not ktir-run %inputs/ktdp/add.mlir --function add --inputs %t.in.npz --place a=x 2>&1 | filecheck %s --check-prefix=PLACE
// RUN: not ktir-run %inputs/ktdp/add.mlir --function add --inputs %t.in.npz --grid 0 2>&1 | filecheck %s --check-prefix=GRID
// RUN: %python -c "import numpy as np, sys; a = np.zeros((8, 64), np.float16); np.savez(sys.argv[1], a=a, b=a, c=a)" %t.small.npz
// RUN: not ktir-run %inputs/ktdp/add.mlir --function add --inputs %t.small.npz -o %t.bad.npz 2>&1 | filecheck %s --check-prefix=BOUNDS
// RUN: not test -e %t.bad.npz
// RUN: %python -c "import numpy as np, sys; x = np.zeros((512, 1024), np.float16); np.savez(sys.argv[1], x=x, y=x)" %t.wide.npz
// RUN: rm -f %t.wide.out.npz
// RUN: not ktir-run %inputs/ktdp/wide.mlir --function wide --inputs %t.wide.npz -o %t.wide.out.npz 2>&1 | filecheck %s --check-prefix=LX
// RUN: not test -e %t.wide.out.npz
// RUN: printf 'name = "spyre-4mib"\nlx_bytes = 4194304\n' > %t.toml
// RUN: ktir-run %inputs/ktdp/wide.mlir --function wide --inputs %t.wide.npz -o %t.wide.out.npz --target %t.toml | filecheck %s --check-prefix=BIGLX
// RUN: %python -c "import numpy as np, sys; print(np.load(sys.argv[1])['y'][0, :2])" %t.wide.out.npz | filecheck %s --check-prefix=BIGLXVALUES

// CHECK: ktir.sim: 1 op (1 on the chip)
// CHECK: @add
// VALUES: ['c'] True
// JSON: ktdp.program 32 36864.0
// PLACE: ktir-run: error: argument --place: expected NAME=OFFSET or NAME=OFFSET@lxC, not 'a=x'
// GRID: ktir-run: error: argument --grid: 1 to 3 positive extents, not '0'
// BOUNDS: add.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'ktdp.load': an access reaches element
// LX: wide.mlir:10:{{[0-9]+}}: error: LX overflow: 3,145,728 bytes live on each tile at this op
// BIGLX: ktir.sim: 1 op (1 on the chip)
// BIGLX: @wide
// BIGLXVALUES: [1. 1.]
