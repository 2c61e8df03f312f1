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
from ktir.dialects import ktir_data as data
from ktir.dialects import ktir_structured as st
from ktir.hardware.cost_model import gather_rows_cycles, host_op_cycles
from ktir.hardware.target import SPYRE, Target
from ktir.ir.diagnostics import location_of
from ktir.ir.state import read_division, read_lx_placement
from ktir.ir.values import is_tensor, shape_of
from ktir.reference.data import checked_rows
from ktir.reference.executor import entry_function, last_uses, ordered_inputs
from ktir.reference.ops import ExecutionError
from ktir.sim.engine import SimKernel
from ktir.sim.memory import Scratchpad, SimulationError
from ktir.sim.report import KernelReport, Report
from ktir.sim.timeline import UNITS, PrefetchWindow

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
    gathered = GatheredRows(function)
    compulsory = _compulsory_bytes(function, skip=gathered.tables)
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
                        lines, target, compulsory_bytes=compulsory + gathered.bytes(), load_bytes=load_bytes
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
                gathered.read(op, args)
                lines.append(_function_level_line(op, args, index, name, clock, target, set(block.args)))
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
    the arguments in `skip` (tables read only through row gathers) count as `GatheredRows` says.
    """
    values: dict[SSAValue, None] = dict.fromkeys(a for a in function.body.block.args if is_tensor(a))
    terminator = function.body.block.last_op
    if isinstance(terminator, func.ReturnOp):
        values.update(dict.fromkeys(v for v in terminator.operands if is_tensor(v)))
    return float(sum(tensor_layout(v.type)[0].device_bytes for v in values if v not in skip))


class GatheredRows:
    """
    The compulsory bytes of tables a program reads only through `ktir.gather_rows`: the distinct
    rows it reads, not the whole table. A 128,256-row embedding read for one token costs one row;
    counting the whole table would put the bound above what the program must move.
    """

    def __init__(self, function: func.FuncOp) -> None:
        arguments = [a for a in function.body.block.args if is_tensor(a)]
        self.tables = {
            a
            for a in arguments
            if a.uses and all(isinstance(u.operation, data.GatherRowsOp) and u.index == 0 for u in a.uses)
        }
        self.rows: dict[SSAValue, set[int]] = {}

    def read(self, op: Operation, args: list[np.ndarray]) -> None:
        """Note the rows a function-level op reads, if it gathers from one of the tables."""
        if isinstance(op, data.GatherRowsOp) and op.table in self.tables:
            table_rows = data.rows_of(op)[1]
            rows = checked_rows(to_host(args[1], op.indices.type), table_rows)
            self.rows.setdefault(op.table, set()).update(np.unique(rows).tolist())

    def bytes(self) -> float:
        """Device bytes of the distinct rows read, at each table's row size (whole sticks)."""
        total = 0.0
        for table, rows in self.rows.items():
            shape = shape_of(table.type)
            total += len(rows) * tensor_layout(table.type)[0].device_bytes / max(shape[0], 1)
        return total


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


def _function_level_line(
    op: Operation,
    args: list[np.ndarray],
    index: int,
    name: str,
    clock: float,
    target: Target,
    from_host: set[SSAValue],
) -> KernelReport:
    """
    A function-level op: a view moves no data and takes no time; a row gather runs as an
    indirect DMA on the chip (`gather_rows_cycles`); a CPU fallback costs the host round trip
    and its transfers (`host_op_cycles`), its operands sent to the host unless they came from it
    (the function's arguments: inputs and state the host holds).
    """
    if isinstance(op, data.GatherRowsOp):
        return _gather_line(op, args[1], index, name, clock, target)
    if not isinstance(op, st.CpuFallbackOp):
        return KernelReport(index, name, f"{op.name} (view)", "-", 0, 0, clock, 0.0, 0.0, 0.0, target=target)
    to_host = sum(_device_bytes(v) for v in dict.fromkeys(op.operands) if v not in from_host)
    to_device = sum(_device_bytes(v) for v in op.results)
    return KernelReport(
        index=index,
        name=name,
        op=f"{op.name} {op.aten.data} (host)",
        unit="-",
        cores=0,
        chunks=0,
        start=clock,
        cycles=host_op_cycles(to_host, to_device, target),
        bytes=to_host + to_device,
        flops=0.0,
        host_bytes=to_host + to_device,
        target=target,
    )


def _gather_line(
    op: data.GatherRowsOp, indices: np.ndarray, index: int, name: str, clock: float, target: Target
) -> KernelReport:
    """`ktir.gather_rows` on the chip: the indices, one DMA per row, the result (see the cost model)."""
    rows, table_rows = data.rows_of(op)
    row_bytes = _device_bytes(op.table) / max(table_rows, 1)
    index_bytes, result_bytes = _device_bytes(op.indices), _device_bytes(op.result)
    division = read_division(op) or {"rows": max(1, min(target.cores, rows))}
    cores = min(division.get("rows", 1), target.cores)
    distinct = len(np.unique(checked_rows(to_host(indices, op.indices.type), table_rows)))
    stick_row = np.ceil(row_bytes / target.stick_bytes) * target.stick_bytes
    cycles = gather_rows_cycles(rows, row_bytes, index_bytes, cores, target)
    busy = np.zeros((cores, len(UNITS)))
    busy[:, UNITS.index("dma")] = cycles
    return KernelReport(
        index=index,
        name=name,
        op=op.name,
        unit="dma",
        cores=cores,
        chunks=1,
        start=clock,
        cycles=cycles,
        bytes=index_bytes + rows * stick_row + result_bytes,
        flops=0.0,
        compulsory_bytes=index_bytes + distinct * stick_row + result_bytes,
        busy=busy,
        finish=np.full(cores, cycles),
        division=division,
        target=target,
    )


def _device_bytes(value: SSAValue) -> float:
    """Bytes a tensor value takes in device memory, in its layout."""
    return float(tensor_layout(value.type)[0].device_bytes)
