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

from ktir.cores.executor import host_op, tensor_layout, to_device, to_host
from ktir.cores.prefetch import PreviousKernel
from ktir.dialects import ktir_core as core
from ktir.hardware.target import SPYRE, Target
from ktir.ir.diagnostics import location_of
from ktir.ir.state import read_lx_placement
from ktir.ir.values import is_tensor
from ktir.reference.executor import entry_function, last_uses, ordered_inputs
from ktir.reference.ops import ExecutionError
from ktir.sim.engine import SimKernel
from ktir.sim.function_level import Line, PartlyRead, function_level_line
from ktir.sim.memory import Scratchpad, SimulationError
from ktir.sim.report import KernelReport, Report
from ktir.sim.timeline import PrefetchWindow

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
    resident: Mapping[int, np.ndarray] | None = None,
    load_bytes: float = 0.0,
) -> SimResult:
    """
    Run the module's core-level function on `inputs` (arrays or torch tensors, in argument order
    or by name) on the simulated `target`.

    `resident` maps argument indices to device buffers already in device memory (packed by
    `pack_arguments`, e.g. a model's parameters kept across calls); their entries of `inputs`
    are not read. `load_bytes` is what was transferred host -> device to put them there before
    this call; the report shows it apart from kernel time.

    Raises `SimulationError` (a subclass of `ExecutionError`) when the program breaks the chip's
    rules, and `ExecutionError` for bad inputs or ops the simulator cannot run.
    """
    function = entry_function(module, func_name)
    block = function.body.block
    resident = resident or {}
    memory: dict[SSAValue, np.ndarray] = {
        arg: resident[i] if i in resident else to_device(value, arg.type)
        for i, (arg, value) in enumerate(zip(block.args, ordered_inputs(function, inputs), strict=True))
    }
    partly_read = PartlyRead(function)
    compulsory = _compulsory_bytes(function, skip=partly_read.tables)
    ops = list(block.ops)
    free_after = last_uses(ops)
    scratchpad = Scratchpad(target.lx_usable_bytes)
    lines: list[KernelReport] = []
    clock = 0.0
    previous: _Previous | None = None  # the last kernel, while only views follow it
    with np.errstate(all="ignore"):
        for index, op in enumerate(ops):
            if isinstance(op, func.ReturnOp):
                outputs = [to_host(memory[v], v.type) for v in op.operands]
                return SimResult(
                    outputs,
                    Report(
                        lines,
                        target,
                        compulsory_bytes=compulsory + partly_read.bytes(),
                        load_bytes=load_bytes,
                    ),
                )
            args = [memory[v] for v in op.operands]
            name = _name(op)
            if isinstance(op, core.KernelOp):
                if (cores := op.cores.value.data) > target.cores:  # planned for a larger chip
                    raise SimulationError(
                        f"kernel {index} ({name}) runs on {cores} cores; the target '{target.name}' "
                        f"has {target.cores}: compile it for this target",
                        location_of(op),
                    )
                window = previous.window(cores) if previous is not None else None
                kernel = SimKernel(op, index, name, scratchpad, clock, target, window)
                results = kernel.run(args)
                lines.append(kernel.report())
                clock += lines[-1].cycles
                previous = _Previous(kernel, PreviousKernel(set(op.results), kernel.lx_ranges))
            else:
                results = _run_host_op(op, args)
                partly_read.read(op, args)
                lines.append(function_level_line(op, args, Line(index, name, clock, target), set(block.args)))
                clock += lines[-1].cycles
                previous = previous.after(op) if previous is not None else None
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


@dataclass
class _Previous:
    """The kernel before the next one (no timed op between them), and what it writes and uses."""

    kernel: SimKernel
    reach: PreviousKernel

    def after(self, op: Operation) -> _Previous | None:
        """Still the kernel before the next one after the host op `op` (a view), or None."""
        return self if self.reach.after(op) is not None else None

    def window(self, cores: int) -> PrefetchWindow:
        """Where the next kernel's prefetch loads (on `cores` cores) run: after this kernel's loads."""
        line = self.kernel.timeline
        load_free = np.full(cores, line.start)
        shared = min(cores, line.cores)
        load_free[:shared] = line.free["load"][:shared]
        line.channel.forget_before(float(load_free.min()))  # keeps the channel short over a run
        return PrefetchWindow(load_free, line.channel, self.reach)


def pack_arguments(
    module: ModuleOp, values: Mapping[int, Any], func_name: str | None = None
) -> dict[int, np.ndarray]:
    """
    Pack host values of some arguments (index -> array or tensor) into their device layouts,
    as the transfer to the device does; the result is `simulate`'s `resident`.
    """
    args = entry_function(module, func_name).body.block.args
    return {i: to_device(value, args[i].type) for i, value in values.items()}


def _compulsory_bytes(function: func.FuncOp, skip: set[SSAValue]) -> float:
    """
    Device bytes of every argument (inputs and parameters) and every returned value, once;
    the arguments in `skip` (tables read only in parts) count as `PartlyRead` says.
    """
    values: dict[SSAValue, None] = dict.fromkeys(a for a in function.body.block.args if is_tensor(a))
    terminator = function.body.block.last_op
    if isinstance(terminator, func.ReturnOp):
        values.update(dict.fromkeys(v for v in terminator.operands if is_tensor(v)))
    return float(sum(tensor_layout(v.type)[0].device_bytes for v in values if v not in skip))


def _run_host_op(op: Operation, args: list[np.ndarray]) -> list[np.ndarray]:
    """A function-level op (view, CPU fallback) on the host; its failure located at the op."""
    try:
        return host_op(op, args)
    except SimulationError:
        raise
    except ExecutionError as error:
        raise SimulationError(str(error), location_of(op)) from error


def _name(op: Operation) -> str:
    """
    The report's name of an op: its result's SSA name, else what it does: a kernel by the graph
    op it runs, and a restickify by what it moves (`%restickify(%x)`), not `%kernel`.
    """
    if not op.results:
        return "-"
    if hint := op.results[0].name_hint:
        return f"%{hint}"
    what = op.op_name.data if isinstance(op, core.KernelOp) else op.name
    short = what.split(".")[-1]
    source = op.operands[0].name_hint if op.operands else None
    if short == "restickify" and source:
        return f"%{short}(%{source})"
    return f"%{short}"


def _resident_address(value: SSAValue) -> int | None:
    owner = value.owner
    if not isinstance(owner, Operation):
        return None
    placement = read_lx_placement(owner)
    return None if placement is None else placement[0]
