// ktir-import --weights writes the parameters by argument name; ktir-run --weights runs the
// imported model with them (x from --inputs), and gives PyTorch eager's output.
// RUN: rm -rf %t && mkdir %t
// RUN: ktir-import %inputs/models/mlp.py -o %t/mlp.mlir --weights %t/weights.npz --version | filecheck %s --check-prefix=VERSION
// RUN: ktir-import %inputs/models/mlp.py -o %t/mlp.mlir --weights %t/weights.npz
// RUN: %python -c "import numpy as np, sys; print(sorted(np.load(sys.argv[1])))" %t/weights.npz | filecheck %s --check-prefix=NAMES
// RUN: %python -c "import runpy, sys, numpy as np; ns = runpy.run_path(sys.argv[1]); np.savez(sys.argv[2], x=ns['example_args'][0].numpy()); np.save(sys.argv[3], ns['model'](*ns['example_args']).detach().numpy())" %inputs/models/mlp.py %t/inputs.npz %t/eager.npy
// RUN: ktir-run %t/mlp.mlir --inputs %t/inputs.npz --weights %t/weights.npz -o %t/y.npz --quiet > /dev/null
// RUN: %python -c "import numpy as np, sys; y = np.load(sys.argv[1])['out0'].astype(np.float32); e = np.load(sys.argv[2]).astype(np.float32); print('max difference below 1e-3:', bool(np.abs(y - e).max() < 1e-3))" %t/y.npz %t/eager.npy | filecheck %s --check-prefix=EAGER
// RUN: not ktir-run %t/mlp.mlir --inputs %t/inputs.npz -o %t/y2.npz 2>&1 | filecheck %s --check-prefix=MISSING

// VERSION: ktir-import {{[0-9]+\.[0-9]+\.[0-9]+}}
// NAMES: ['p_fc1_bias', 'p_fc1_weight', 'p_fc2_weight']
// EAGER: max difference below 1e-3: True
// MISSING: ktir-run: error: inputs '{{.*}}inputs.npz' have no array 'p_fc1_weight' (or 'arg1')
