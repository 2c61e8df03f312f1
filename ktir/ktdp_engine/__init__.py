"""
`ktir.ktdp_engine`: run RFC 0682 `ktdp` programs (what torch-spyre's emitter writes) on ktir's chip model.

```python
outputs, report = ktir.ktdp_engine.run(text, "add", {"a": a, "b": b, "c": np.zeros_like(a)})
outputs["c"]          # read back from simulated device memory after the run
report.total_cycles   # the same report as ktir's own programs (one line for the function)
```

Each function argument binds by name (its SSA name) to the entry of `arrays` of that name. An
array entry is placed in simulated device memory (contiguous, row-major, its own dtype) and the
argument receives its element offset; a 0-d entry is passed as the argument's value. `place`
maps names to `(offset, core)`: `core` None for LPDDR5, else that core's LX (arrays a kernel
addresses at constant offsets). Every array entry is read back into `outputs` after the run
(with `written_only`, those a store reached).
`grid` overrides the function's `{grid = [...]}` attribute (absent: one tile); each tile runs
on one simulated core. The engine, its numerics and its time model: `ktir.ktdp_engine.engine`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, ModuleOp

from ktir.hardware.target import Target, resolve_target
from ktir.ir.context import make_context
from ktir.ir.diagnostics import (
    DiagnosticError,
    decode_source,
    location_of,
    parse_module,
    verify_module,
)
from ktir.ktdp_engine.engine import UNITS, TileProgram
from ktir.ktdp_engine.lx_capacity import buffers_per_loop_tensor, check_lx_capacity
from ktir.ktdp_engine.memory import DeviceMemory, KtdpError
from ktir.reference.blas import one_blas_thread
from ktir.sim.report import KernelReport, Report


def load_module(text_or_path: str | Path) -> ModuleOp:
    """
    Parse and verify ktdp text, or the file it names (a `Path`, or a string of one line);
    `DiagnosticError` with locations (a `SourceError` at the first byte of a file that is not
    UTF-8), `KtdpError` for a file that cannot be read.
    """
    if isinstance(text_or_path, str) and (
        "\n" in text_or_path or text_or_path.lstrip().startswith("func.func")
    ):
        text, name = text_or_path, "<ktdp>"
    else:
        name = str(text_or_path)
        try:
            data = Path(text_or_path).read_bytes()
        except OSError as error:
            raise KtdpError(f"cannot read '{text_or_path}': {error.strerror or error}") from None
        text = decode_source(data, name)
    module = parse_module(make_context(), text, name)
    if errors := verify_module(module):
        raise DiagnosticError(errors)
    return module


def grid_of(function: func.FuncOp, grid: Sequence[int] | None) -> list[int]:
    """The function's grid (`{grid = [x, y, z]}`, absent: one tile), or `grid` if given."""
    if grid is not None:
        return [int(n) for n in grid]
    attribute = function.attributes.get("grid")
    if isinstance(attribute, ArrayAttr):
        return [a.value.data for a in attribute.data if isinstance(a, IntegerAttr)]
    return [1]


def run(
    kernel: str | Path | ModuleOp,
    function: str,
    arrays: Mapping[str, np.ndarray],
    *,
    grid: Sequence[int] | None = None,
    place: Mapping[str, tuple[int, int | None]] | None = None,
    target: Target | str | os.PathLike[str] | None = None,
    written_only: bool = False,
) -> tuple[dict[str, np.ndarray], Report]:
    """
    Run `function` of a ktdp module on `arrays` (module docstring); (outputs, report). `kernel`
    is the module's text, its file, or the module parsed and verified (as `load_module` gives
    it). `target` is the chip: a `Target` or a TOML file
    (`ktir.hardware.target.resolve_target`; default: Spyre). With `written_only`, `outputs`
    holds only the arrays a store reached (what `ktir-run -o` writes).
    """
    try:
        target = resolve_target(target)
    except ValueError as error:  # a file it cannot read, a Target with unusable fields
        raise KtdpError(str(error)) from None
    module = kernel if isinstance(kernel, ModuleOp) else load_module(kernel)
    entry = next(
        (op for op in module.walk() if isinstance(op, func.FuncOp) and op.sym_name.data == function), None
    )
    if entry is None:
        names = [op.sym_name.data for op in module.walk() if isinstance(op, func.FuncOp)]
        raise KtdpError(f"no function '{function}' in the module (it has: {', '.join(names)})")
    dims = grid_of(entry, grid)
    tiles = math.prod(dims)
    if not 1 <= tiles <= target.cores:
        raise KtdpError(
            f"a grid of {tiles} tiles does not fit the {target.cores} cores of '{target.name}'",
            location_of(entry),
        )
    memory = DeviceMemory(target, target.cores)
    _place_arrays(memory, arrays, place or {})
    arguments = _bind(entry, arrays, memory)
    placed = memory.lx_placed_bytes()
    check_lx_capacity(entry, target.lx_bytes, placed)
    program = TileProgram(
        entry, dims, memory, target, buffers_per_loop_tensor(entry, target.lx_bytes, placed)
    )
    with one_blas_thread():  # the same bits whatever the machine's cores (ktir.reference.blas)
        program.run(arguments)
    names = [n for n in memory.placements if n in memory.written or not written_only]
    outputs = {name: memory.array(name) for name in names}
    return outputs, _report(program, function, arrays, target)


def _place_arrays(
    memory: DeviceMemory, arrays: Mapping[str, np.ndarray], place: Mapping[str, tuple[int, int | None]]
) -> None:
    for name in place:
        if name not in arrays:
            raise KtdpError(f"--place names '{name}', which is not an input array")
    stick = memory.target.stick_bytes
    placed = [
        np.asarray(arrays[n]).nbytes + offset * np.asarray(arrays[n]).itemsize
        for n, (offset, c) in place.items()
        if c is None
    ]
    memory.reserve(
        max(placed, default=0)
        + sum(-(-np.asarray(a).nbytes // stick) * stick + stick for a in arrays.values())
    )
    for name, (offset, core) in place.items():
        memory.place(name, np.asarray(arrays[name]), offset, core)
    for name, array in arrays.items():
        if np.ndim(array) and name not in place:
            memory.allocate(name, np.asarray(array))


def _bind(entry: func.FuncOp, arrays: Mapping[str, np.ndarray], memory: DeviceMemory) -> list[np.ndarray]:
    values = []
    for arg in entry.body.block.args:
        name = arg.name_hint or ""
        if name not in arrays:
            raise KtdpError(
                f"no input array '{name}' for argument %{name} (inputs: {', '.join(arrays)})",
                location_of(entry),
            )
        array = np.asarray(arrays[name])
        value = memory.placements[name].offset if array.ndim else array.item()
        values.append(np.asarray(value))
    return values


def _report(program: TileProgram, function: str, arrays: Mapping[str, np.ndarray], target: Target) -> Report:
    charges = program.charges
    timeline = program.schedule.timeline
    busy = timeline.busy_table()  # the DMA unit's load and store queues merged, not added
    line = KernelReport(
        index=0,
        name=f"@{function}",
        op="ktdp.program",
        unit=UNITS[int(np.argmax(busy.sum(axis=0)))],
        cores=program.tiles,
        chunks=1,
        start=0.0,
        cycles=program.schedule.end,
        bytes=charges.bytes,
        flops=charges.flops,
        compulsory_bytes=charges.footprint.bytes(target.stick_bytes),
        matmul_flops=charges.matmul_flops,
        busy=busy,
        finish=timeline.end_per_core,
        target=target,
    )
    return Report([line], target, compulsory_bytes=line.compulsory_bytes)


__all__ = ["KtdpError", "grid_of", "load_module", "run"]
