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
// Bad command lines and files: one line each, never a traceback.
// RUN: not ktir-import %inputs/models/mlp.py --weights - 2>&1 | filecheck %s --check-prefix=DASH
// RUN: not ktir-import %inputs/models/mlp.py -o %t/same.npz --weights %t/same.npz 2>&1 | filecheck %s --check-prefix=SAME
// RUN: not test -e %t/same.npz
// RUN: %python -c "import numpy as np, sys; np.save(sys.argv[1], np.zeros(3)); np.savez(sys.argv[2], a=np.array([object()], dtype=object))" %t/w.npy %t/objects.npz
// RUN: not ktir-run %t/mlp.mlir --weights %t/w.npy 2>&1 | filecheck %s --check-prefix=NPY
// RUN: not ktir-run %t/mlp.mlir --weights %t/objects.npz 2>&1 | filecheck %s --check-prefix=OBJECTS
// RUN: not ktir-run %t/mlp.mlir --png %t/same.png --roofline-png %t/same.png 2>&1 | filecheck %s --check-prefix=TWICE
// RUN: not test -e %t/same.png

// VERSION: ktir-import {{[0-9]+\.[0-9]+\.[0-9]+}}
// NAMES: ['p_fc1_bias', 'p_fc1_weight', 'p_fc2_weight']
// EAGER: max difference below 1e-3: True
// DASH: ktir-import: error: argument --weights: an .npz archive is binary: give a file name, not '-'
// SAME: ktir-import: error: '{{.*}}same.npz' is named by -o and --weights; give each output its own file
// NPY: ktir-run: error: weights '{{.*}}w.npy' is not an .npz archive of named arrays
// OBJECTS: ktir-run: error: cannot read weights '{{.*}}objects.npz': Object arrays cannot be loaded
// TWICE: ktir-run: error: '{{.*}}same.png' is named by two output options; give each output its own file
// MISSING: ktir-run: error: inputs '{{.*}}inputs.npz' have no array 'p_fc1_weight' (or 'arg1')
