"""
Run a core-level function on the simulated chip: kernels one after another, device memory
freed at last use, LX shared across kernels, one report line per op.

```python
result = ktir.sim.simulate(module, [x, w])       # module after ktir-lower-to-cores
result.outputs                                    # host NumPy arrays
result.report.total_cycles
report = ktir.sim.estimate(module)                # the same cycles, no values computed
```
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue

from ktir.cores.prefetch import PreviousKernel
from ktir.dialects.ktir import core
from ktir.dialects.ktir import structured as st
from ktir.hardware.target import SPYRE, Target
from ktir.ir.diagnostics import ExecutionError, location_of
from ktir.ir.state import read_lx_placement, updated_arguments
from ktir.ir.values import is_tensor
from ktir.reference.blas import one_blas_thread
from ktir.reference.executor import entry_function, last_uses, ordered_inputs
from ktir.sim.engine import DeviceShape, SimKernel
from ktir.sim.executor import device_buffer, host_array, host_op
from ktir.sim.function_level import ASSUMPTIONS, Line, PartlyRead, device_bytes, function_level_line
from ktir.sim.gemm import release_scratch
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
    device_outputs: list[np.ndarray] = field(default_factory=list)
    """The returned values as they are in device memory, in their layouts (for state updates)."""


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
    memory: dict[SSAValue, Any] = {
        arg: resident[i] if i in resident else device_buffer(value, arg.type)
        for i, (arg, value) in enumerate(zip(block.args, ordered_inputs(function, inputs), strict=True))
    }
    run = _Run(function, target, values=True)
    try:
        with one_blas_thread():  # the same bits whatever the machine's cores (ktir.reference.blas)
            outputs, report = run.run(memory, progress, load_bytes)
    finally:
        release_scratch()  # the GEMM threads' result buffers are not held between simulations
    return SimResult(outputs, report, run.device_outputs)


def estimate(
    module: ModuleOp,
    *,
    target: Target = SPYRE,
    func_name: str | None = None,
    progress: Progress | None = None,
    load_bytes: float = 0.0,
) -> Report:
    """
    The report of `simulate` without computing values or holding tensor data: the same
    program, engine, checks and cycle counts, from the argument types alone.

    Where time or compulsory bytes depend on values (MoE routing, which rows a gather reads) it
    assumes what `ktir.sim.function_level.ASSUMPTIONS` states, and `Report.assumptions` lists
    the assumptions the program needed. Raises `SimulationError` like `simulate`.
    """
    function = entry_function(module, func_name)
    memory: dict[SSAValue, Any] = {
        arg: DeviceShape.of(arg.type) if is_tensor(arg) else None for arg in function.body.block.args
    }
    return _Run(function, target, values=False).run(memory, progress, load_bytes)[1]


class _Run:
    """One run of a core-level function: its ops in order on the chip (with values or without)."""

    def __init__(self, function: func.FuncOp, target: Target, values: bool) -> None:
        self.function = function
        self.target = target
        self.values = values
        self.partly_read = PartlyRead(function)
        self.scratchpad = Scratchpad(target.lx_usable_bytes)
        self.lines: list[KernelReport] = []
        self.assumptions: dict[str, None] = {}
        self.clock = 0.0
        self.previous: _Previous | None = None  # the last kernel, while only views follow it
        self.device_outputs: list[Any] = []

    def run(
        self, memory: dict[SSAValue, Any], progress: Progress | None, load_bytes: float
    ) -> tuple[list[np.ndarray], Report]:
        """Run every op; returns the outputs (host arrays; none without values) and the report."""
        block = self.function.body.block
        ops = list(block.ops)
        free_after = last_uses(ops)
        with np.errstate(all="ignore"):
            for index, op in enumerate(ops):
                if isinstance(op, func.ReturnOp):
                    return self._finish(op, memory, load_bytes)
                results = self._op(index, op, [memory[v] for v in op.operands])
                memory.update(zip(op.results, results, strict=True))
                for value in op.results:
                    if (address := _resident_address(value)) is not None:
                        self.scratchpad.hold(address, value)
                for value in [*free_after.get(index, ()), *(r for r in op.results if not r.uses)]:
                    memory.pop(value, None)
                    if (address := _resident_address(value)) is not None:
                        self.scratchpad.release(address, value)
                if progress is not None:
                    progress(index + 1, len(ops))
        raise ExecutionError(f"@{self.function.sym_name.data} has no func.return")

    def _finish(
        self, op: func.ReturnOp, memory: dict[SSAValue, Any], load_bytes: float
    ) -> tuple[list[np.ndarray], Report]:
        self.device_outputs = [memory[v] for v in op.operands]
        outputs = [host_array(memory[v], v.type) for v in op.operands] if self.values else []
        compulsory = _compulsory_bytes(self.function, skip=self.partly_read.tables)
        report = Report(
            self.lines,
            self.target,
            compulsory_bytes=compulsory + self.partly_read.bytes(),
            load_bytes=load_bytes,
            assumptions=list(self.assumptions),
        )
        return outputs, report

    def _op(self, index: int, op: Operation, args: list[Any]) -> list[Any]:
        """Run one function-level op (a kernel, a view, a timed op); returns its results."""
        name = _name(op)
        target = self.target
        if isinstance(op, core.KernelOp):
            if (cores := op.cores.value.data) > target.cores:  # planned for a larger chip
                raise SimulationError(
                    f"kernel {index} ({name}) runs on {cores} cores; the target '{target.name}' "
                    f"has {target.cores}: compile it for this target",
                    location_of(op),
                )
            window = self.previous.window(cores) if self.previous is not None else None
            kernel = SimKernel(op, index, name, self.scratchpad, self.clock, target, window, self.values)
            results = kernel.run(args)
            self.lines.append(kernel.report())
            self.clock += self.lines[-1].cycles
            self.previous = _Previous(kernel, PreviousKernel(set(op.results), kernel.lx_ranges))
            return results
        if self.values:
            results = _run_host_op(op, args)
        else:
            results = [DeviceShape.of(r.type) if is_tensor(r) else None for r in op.results]
            if (assumption := ASSUMPTIONS.get(type(op))) is not None:
                self.assumptions[assumption] = None
        known = args if self.values else None
        self.partly_read.read(op, known)
        line = Line(index, name, self.clock, target)
        self.lines.append(function_level_line(op, known, line, set(self.function.body.block.args)))
        self.lines[-1].lx_bytes = self.scratchpad.live_bytes(target.cores)  # resident tensors
        self.clock += self.lines[-1].cycles
        self.previous = self.previous.after(op) if self.previous is not None else None
        return results


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
    return {i: device_buffer(value, args[i].type) for i, value in values.items()}


def _compulsory_bytes(function: func.FuncOp, skip: set[SSAValue]) -> float:
    """
    Device bytes of every argument (inputs and parameters) an op reads and every returned value,
    once. An argument no op reads, itself or through function-level views, need not move: one
    that is unused or only returned (as it is, or as a view) counts nothing (counting it put an
    `exp` of a 1x64 input beside an unused 64x2048 weight at 0.5x its datasheet roofline);
    the arguments in `skip` (tables read only in parts) count as `PartlyRead` says, and a
    state's new value (`ktir.updated_by`) is its argument's memory, counted with it.

    A returned view (a function-level `ktir.permute`, `ktir.reshape`, ...: it moves no byte) is
    the memory it views: an argument's, counted with the argument, or a result's, counted once
    at the size of the largest value returned from it. Counting it again would ask for bytes no
    op moves (a transposed weight returned beside the output: moved below compulsory).
    """
    arguments = [a for a in function.body.block.args if is_tensor(a)]
    memory: dict[SSAValue, float] = {a: device_bytes(a) for a in arguments if a not in skip and _read(a)}
    terminator = function.body.block.last_op
    updates = set(updated_arguments(function).values())
    returned = terminator.operands if isinstance(terminator, func.ReturnOp) else ()
    for i, value in enumerate(returned):
        root = _viewed(value)
        if i in updates or not is_tensor(value) or root in arguments:
            continue
        memory[root] = max(memory.get(root, 0.0), device_bytes(value))
    return float(sum(memory.values()))


def _read(value: SSAValue) -> bool:
    """Whether an op that moves bytes reads `value` or a function-level view of it (not a return)."""
    for use in value.uses:
        op = use.operation
        if isinstance(op, st.ShapeChangeOp):
            if any(_read(result) for result in op.results):
                return True
        elif not isinstance(op, func.ReturnOp):
            return True
    return False


def _viewed(value: SSAValue) -> SSAValue:
    """The value whose memory `value` is, through function-level views (itself if none)."""
    while isinstance(value.owner, st.ShapeChangeOp):
        value = value.owner.operands[0]
    return value


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
