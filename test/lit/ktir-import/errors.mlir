// Unsupported ops are listed together at their source lines; nothing is printed on stdout.
// RUN: not ktir-import %inputs/models/unsupported.py 2>&1 | filecheck %s --check-prefix=UNSUP
// UNSUP-NOT:  builtin.module
// UNSUP:      unsupported.py:6:5: error: unsupported ATen op 'aten.lgamma.default' (node 'lgamma')
// UNSUP-NEXT:     y = torch.lgamma(x) + 1
// UNSUP-NEXT:     ^
// UNSUP-NEXT: unsupported.py:7:5: error: unsupported ATen op 'aten.atan2.default' (node 'atan2')
// UNSUP:      unsupported.py:8:5: error: unsupported ATen op 'aten.i0.default' (node 'i0')
// UNSUP:      error: 3 unsupported op(s) in the FX graph; nothing was imported
// UNSUP-NOT:  Traceback
// UNSUP-NOT:  builtin.module

// A dynamic dimension names the input.
// RUN: not ktir-import %inputs/models/dynamic.py 2>&1 | filecheck %s --check-prefix=DYNAMIC
// DYNAMIC: error: input 'input' has a dynamic dimension 0 ({{s[0-9]+}}): ktir needs static shapes (export without dynamic_shapes)
// DYNAMIC-NOT: Traceback

// A missing file, and a model file that raises, are one-line errors.
// RUN: not ktir-import %inputs/models/missing.py 2>&1 | filecheck %s --check-prefix=MISSING
// MISSING: ktir-import: error: cannot read '{{.*}}missing.py': no such file
// RUN: not ktir-import %inputs/models/raises.py 2>&1 | filecheck %s --check-prefix=RAISES
// RAISES: ktir-import: error: running '{{.*}}raises.py' failed: RuntimeError: model file failed on purpose
// RAISES-NOT: Traceback
