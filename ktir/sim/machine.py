"""
Run a core-level function on the simulated chip: kernels one after another, device memory
freed at last use, LX shared across kernels, one report line per op.

```python
result = ktir.sim.simulate(module, [x, w])       # module after ktir-lower-to-cores
result.outputs                                    # host NumPy arrays
result.report.total_cycles
```
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue

from ktir.cores.executor import host_op, to_device, to_host
from ktir.dialects import ktir_core as core
from ktir.dialects import ktir_structured as st
from ktir.hardware.target import SPYRE, Target
from ktir.ir.diagnostics import location_of
from ktir.ir.state import read_lx_placement
from ktir.reference.executor import entry_function, last_uses, ordered_inputs
from ktir.reference.ops import ExecutionError
from ktir.sim.engine import SimKernel
from ktir.sim.memory import Scratchpad, SimulationError
from ktir.sim.report import KernelReport, Report

Progress = Callable[[int, int], None]
"""Called with (ops done, ops in total) after every op."""


@dataclass
class SimResult:
    """The outputs of one simulated run (host NumPy arrays) and its report."""

    outputs: list[np.ndarray]
    report: Report


def simulate(
    module: ModuleOp,
    inputs: Sequence[Any] | Mapping[str, Any],
    *,
    target: Target = SPYRE,
    func_name: str | None = None,
    progress: Progress | None = None,
) -> SimResult:
    """
    Run the module's core-level function on `inputs` (arrays or torch tensors, in argument order
    or by name) on the simulated `target`.

    Raises `SimulationError` (a subclass of `ExecutionError`) when the program breaks the chip's
    rules, and `ExecutionError` for bad inputs or ops the simulator cannot run.
    """
    function = entry_function(module, func_name)
    block = function.body.block
    memory: dict[SSAValue, np.ndarray] = {
        arg: to_device(value, arg.type)
        for arg, value in zip(block.args, ordered_inputs(function, inputs), strict=True)
    }
    ops = list(block.ops)
    free_after = last_uses(ops)
    scratchpad = Scratchpad(target.lx_usable_bytes)
    lines: list[KernelReport] = []
    clock = 0.0
    with np.errstate(all="ignore"):
        for index, op in enumerate(ops):
            if isinstance(op, func.ReturnOp):
                outputs = [to_host(memory[v], v.type) for v in op.operands]
                return SimResult(outputs, Report(lines, target))
            args = [memory[v] for v in op.operands]
            name = _name(op)
            if isinstance(op, core.KernelOp):
                kernel = SimKernel(op, index, name, scratchpad, clock, target)
                results = kernel.run(args)
                lines.append(kernel.report())
                clock += lines[-1].cycles
            else:
                results = _run_host_op(op, args)
                lines.append(_host_line(op, index, name, clock, target))
            memory.update(zip(op.results, results, strict=True))
            for value in op.results:
                if (address := _resident_address(value)) is not None:
                    scratchpad.hold(address, value)
            for value in [*free_after.get(index, ()), *(r for r in op.results if not r.uses)]:
                memory.pop(value, None)
                if (address := _resident_address(value)) is not None:
                    scratchpad.release(address, value)
            if progress is not None:
                progress(index + 1, len(ops))
    raise ExecutionError(f"@{function.sym_name.data} has no func.return")


def _run_host_op(op: Operation, args: list[np.ndarray]) -> list[np.ndarray]:
    """A function-level op (view, CPU fallback) on the host; its failure located at the op."""
    try:
        return host_op(op, args)
    except SimulationError:
        raise
    except ExecutionError as error:
        raise SimulationError(str(error), location_of(op)) from error


def _name(op: Operation) -> str:
    if not op.results:
        return "-"
    hint = op.results[0].name_hint
    return f"%{hint}" if hint else f"%{op.name.split('.')[-1]}"


def _resident_address(value: SSAValue) -> int | None:
    owner = value.owner
    if not isinstance(owner, Operation):
        return None
    placement = read_lx_placement(owner)
    return None if placement is None else placement[0]


def _host_line(op: Operation, index: int, name: str, clock: float, target: Target) -> KernelReport:
    """A function-level op: a view moves no data; a CPU fallback runs on the host (not timed)."""
    kind = "host" if isinstance(op, st.CpuFallbackOp) else "view"
    return KernelReport(
        index=index,
        name=name,
        op=f"{op.name} ({kind})",
        unit="-",
        cores=0,
        chunks=0,
        start=clock,
        cycles=0.0,
        bytes=0.0,
        flops=0.0,
        busy=np.zeros((0, 4)),
        finish=np.zeros(0),
        target=target,
    )
