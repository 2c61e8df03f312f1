"""
Inputs for fuzzing the ktdp engine: a ktdp kernel of the corpus (`test/lit/Inputs/ktdp/`) runs
as `ktir-run KERNEL --function NAME --inputs inputs.npz`, and its mutations must end in a
located error or a clean run, never an internal error or a hang.

`kernel_inputs(name, text)` gives the kernel's first function and an `.npz` with one array per
argument: the memref shape and element type of the memory view built on it, filled with small
integers (valid gather indices), or a 0-d zero for an argument that is no view's offset. Kernels
whose inputs would exceed `MAX_BYTES` (the full-size benchmarks) are left to `ktir-opt`.
"""

from __future__ import annotations

import functools
import io

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import BlockArgument

from ktir.dialects.ktdp import ops as ktdp
from ktir.ir.context import make_context
from ktir.ir.diagnostics import DiagnosticError, parse_module
from ktir.layout.dtypes import numpy_dtype

MAX_BYTES = 1 << 22
"""The largest total input a fuzzed kernel gets (4 MiB)."""

KERNELS = "Inputs/ktdp/"
"""The corpus directory of ktdp kernels."""


def _argument_array(arg: BlockArgument, rng: np.random.Generator) -> np.ndarray | None:
    views = [
        use.operation
        for use in arg.uses
        if isinstance(use.operation, ktdp.ConstructMemoryViewOp) and use.operation.offset is arg
    ]
    if not views:
        return np.array(0)
    memref = views[0].result.type
    if not isinstance(memref, MemRefType) or any(n < 0 for n in memref.get_shape()):
        return None
    shape = tuple(memref.get_shape())
    return rng.integers(0, 4, shape).astype(numpy_dtype(memref.element_type))


@functools.cache
def kernel_inputs(name: str, text: str) -> tuple[str, bytes] | None:
    """(function name, `.npz` bytes) for a small corpus kernel; None for anything else."""
    if not name.startswith(KERNELS):
        return None
    try:
        module = parse_module(make_context(), text, name)
    except DiagnosticError:
        return None
    function = next((op for op in module.walk() if isinstance(op, func.FuncOp)), None)
    if function is None:
        return None
    rng = np.random.default_rng(0)
    arrays = {}
    for arg in function.body.block.args:
        array = _argument_array(arg, rng)
        if array is None or not arg.name_hint:
            return None
        arrays[arg.name_hint] = array
    if sum(a.nbytes for a in arrays.values()) > MAX_BYTES:
        return None
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return function.sym_name.data, buffer.getvalue()


__all__ = ["KERNELS", "MAX_BYTES", "kernel_inputs"]
