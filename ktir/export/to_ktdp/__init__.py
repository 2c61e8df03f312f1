"""
The conversion of core-level ktir to RFC 0682 `ktdp` + `linalg` / `tensor` / `scf` / `arith` /
`math` / `func` (docs/ktdp.md, "Emission"): each `ktir.kernel` becomes a function built op by op
with xDSL's typed builders (`kernels.KernelConversion`), so that what `ktir-emit-ktdp` prints is
xDSL's printer output and an op the conversion cannot build is a located error at the ktir op.

Modules by concern: `kernels` (a kernel's function, its DMAs, computes and chunk loops),
`access` (memory views and access tiles), `subscripts` (their affine subscripts), `buffers`
(what LX buffers hold), `loops` (chunk indices and carried accumulators), `accumulate` (K-split
accumulators and ring reductions), `compute` (a compute's payload), `payload` (elementwise ops
and matmuls), `formulas` (their scalar bodies), `structured` (reductions, norms, slices, pads),
`attention`, `routines` (ops outlined as routine functions), `tensors` (reshapes and slices of
host tiles) and `emitter` (the insertion point and names).

```python
from ktir.export.to_ktdp import emit_module
program = emit_module(core_level_module)  # a ModuleOp of ktdp functions
```
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp

from ktir.dialects.ktir import core as ktir_core
from ktir.export.to_ktdp.kernels import convert_kernel, kernel_names
from ktir.ir.diagnostics import Diagnostic, DiagnosticError, Severity, location_of


def emit_kernel(kernel: ktir_core.KernelOp, name: str) -> ModuleOp:
    """
    One kernel as a module of its ktdp function and the routines it calls; a located
    `DiagnosticError` for what is not written yet.
    """
    return ModuleOp(convert_kernel(kernel, name))


def emit_module(module: ModuleOp) -> ModuleOp:
    """
    Every kernel of a core-level module as one ktdp module (function-level views and host ops
    are not kernels: they are left out). Raises one `DiagnosticError` listing every kernel that
    cannot be written.
    """
    functions, errors = [], []
    for name, kernel in kernel_names(module):
        try:
            functions.extend(convert_kernel(kernel, name))
        except DiagnosticError as error:
            errors.extend(error.diagnostics)
    if errors:
        raise DiagnosticError(errors)
    if not functions:
        message = "the module has no ktir.kernel: run ktir-lower-to-cores (or ktir-compile) first"
        first = module.body.block.first_op
        raise DiagnosticError([Diagnostic(Severity.ERROR, message, location_of(first) if first else None)])
    return ModuleOp(functions)


__all__ = ["emit_kernel", "emit_module", "kernel_names"]
