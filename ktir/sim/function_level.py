"""
Function-level ops that take time, and what they must move (`ktir.sim.machine` runs them).

- A view moves no data and takes no time.
- `ktir.gather_rows` / `ktir.scatter_rows`: an indirect DMA (`gather_rows_cycles`); a scatter
  also copies its destination first, unless it is `in_place` (a KV cache written where it lives),
  and writes one box with a strided DMA per core when its rows are one known run
  (`contiguous`, `box_write_cycles`).
- `ktir.topk`, `ktir.sort`, `ktir.histc`, `ktir.take_along`: small SFU ops over rows the cores
  share (`sfu_op_cycles` with the op's passes per element; a take-along selects each element
  with one compare-and-select pass per element of its source row).
- `ktir.grouped_matmul`: the experts one after another, each split over the cores along N
  (`grouped_matmul_cycles`); only the experts that got rows read their weights.
- `ktir.cpu_fallback`: the host round trip and its transfers (`host_op_cycles`); operands that
  are function arguments (inputs and model state) are on the host already.
- `ktir.all_reduce`, `ktir.all_gather`: a ring over the card-to-card link (`collective_cycles`)
  of the tensor's device bytes (the all-gather's result); the cores wait for it.

A timing-only run (`ktir.sim.estimate`) has no values: where time or compulsory bytes depend on
them it assumes what `ASSUMPTIONS` states (every gathered row distinct, uniform MoE routing) and
the report lists the assumptions it used.

`PartlyRead` keeps the compulsory bytes of tables a program reads only through gathers or
grouped matmuls to the rows and experts it reads: one token of a 128,256-row vocabulary or of a
top-2-of-8 MoE layer must move one row and two experts, not the whole tables.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func
from xdsl.ir import Operation, SSAValue

from ktir.dialects.ktir import collective, data, routing
from ktir.dialects.ktir import structured as st
from ktir.hardware import accounting, cost_model
from ktir.hardware.target import Target
from ktir.ir.state import read_division
from ktir.ir.values import element_type_of, is_tensor, shape_of, tensor_layout
from ktir.layout.dtypes import ELEMENT_TYPE_TO_DEVICE_DTYPE
from ktir.reference.data import checked_rows, expert_bounds
from ktir.sim.executor import host_array
from ktir.sim.report import KernelReport
from ktir.sim.timeline import UNITS

_READ_THROUGH = {data.GatherRowsOp: 0, routing.GroupedMatmulOp: 1}
"""Ops that read only part of one operand (by operand index): rows of a table, experts' weights."""


ASSUMPTIONS = {
    data.GatherRowsOp: "gathers (embeddings, index_select) read distinct rows, as many as they have "
    "indices (at most the table's rows)",
    routing.GroupedMatmulOp: "MoE routing is uniform: the grouped matmul's rows are spread evenly "
    "over the experts (the first experts take one more when they do not divide)",
}
"""What a timing-only run assumes about the values of each value-dependent op."""


def device_bytes(value: SSAValue) -> float:
    """Bytes a tensor value takes in device memory, in its layout."""
    return float(tensor_layout(value.type)[0].device_bytes)


def _slice_bytes(value: SSAValue) -> float:
    """Device bytes of one slice along dim 0 (a row of a table, one expert's weights)."""
    return device_bytes(value) / max(shape_of(value.type)[0], 1)


class PartlyRead:
    """
    The arguments a program reads only in parts (rows, experts), and the parts it read. An
    argument qualifies when every use reads it through gathers or grouped matmuls, directly or
    through views that keep its dim 0 (an expert's weights transposed for the matmul).
    """

    def __init__(self, function: func.FuncOp) -> None:
        self.roots: dict[SSAValue, SSAValue] = {}  # a value the ops read -> the argument it views
        self.tables: set[SSAValue] = set()
        for argument in function.body.block.args:
            views: dict[SSAValue, SSAValue] = {}
            if is_tensor(argument) and argument.uses and _read_in_parts(argument, argument, views):
                self.tables.add(argument)
                self.roots.update(views)
        self.parts: dict[SSAValue, set[int]] = {}

    def read(self, op: Operation, args: list[np.ndarray] | None) -> None:
        """Note the parts a function-level op reads of one of the tables."""
        index = _READ_THROUGH.get(type(op))
        if index is None or (root := self.roots.get(op.operands[index])) is None:
            return
        self.parts.setdefault(root, set()).update(_parts_read(op, args))

    def bytes(self) -> float:
        """Device bytes of the distinct parts read, at each table's slice size (whole sticks)."""
        return sum(len(parts) * _slice_bytes(table) for table, parts in self.parts.items())


def _read_in_parts(value: SSAValue, root: SSAValue, views: dict[SSAValue, SSAValue]) -> bool:
    """Whether every use of `value` reads `root` in dim-0 parts; fills `views` on the way."""
    views[value] = root
    for use in value.uses:
        user = use.operation
        if _READ_THROUGH.get(type(user)) == use.index:
            continue
        keeps_dim0 = (isinstance(user, st.PermuteOp) and st.ints(user.perm)[:1] == (0,)) or (
            isinstance(user, st.ReshapeOp) and shape_of(user.result.type)[:1] == shape_of(user.input.type)[:1]
        )
        if not keeps_dim0 or not _read_in_parts(user.results[0], root, views):
            return False
    return True


def _parts_read(op: Operation, args: list[np.ndarray] | None) -> list[int]:
    """The rows (gather) or experts (grouped matmul) `op` reads; without values, `ASSUMPTIONS`."""
    if isinstance(op, data.GatherRowsOp):
        rows, table_rows = data.rows_of(op)
        if args is None:
            return list(range(min(rows, table_rows)))
        rows = checked_rows(host_array(args[1], op.indices.type), table_rows)
        return np.unique(rows).tolist()
    assert isinstance(op, routing.GroupedMatmulOp)
    return [e for e, count in enumerate(_expert_rows(op, args)) if count > 0]


def _expert_rows(op: routing.GroupedMatmulOp, args: list[np.ndarray] | None) -> list[int]:
    """Rows each expert multiplies; without values, spread evenly (`ASSUMPTIONS`)."""
    if args is None:
        experts, total = shape_of(op.weights.type)[0], shape_of(op.x.type)[0]
        return [total // experts + (e < total % experts) for e in range(experts)]
    offsets = host_array(args[2], op.offsets.type)
    return [end - start for start, end in expert_bounds(offsets, shape_of(op.x.type)[0])]


@dataclass
class Line:
    """Where a function-level op sits in the report."""

    index: int
    name: str
    clock: float
    target: Target

    def timed(
        self, op: Operation, cycles: float, moved: float, compulsory: float, unit: str, flops: float = 0.0
    ) -> KernelReport:
        """A line of an op the chip runs on the cores its division names, busy the whole time."""
        division = read_division(op) or {"rows": 1}
        cores = _cores(op, self.target)
        busy = np.zeros((cores, len(UNITS)))
        busy[:, UNITS.index(unit)] = cycles
        return KernelReport(
            index=self.index,
            name=self.name,
            op=op.name,
            unit=unit,
            cores=cores,
            chunks=1,
            start=self.clock,
            cycles=cycles,
            bytes=moved,
            flops=flops,
            compulsory_bytes=compulsory,
            matmul_flops=flops if isinstance(op, routing.GroupedMatmulOp) else 0.0,
            busy=busy,
            finish=np.full(cores, cycles),
            division=division,
            target=self.target,
        )


def function_level_line(
    op: Operation, args: list[np.ndarray] | None, line: Line, from_host: set[SSAValue]
) -> KernelReport:
    """
    The report line (and so the time) of a function-level op run on `args` (None: a
    timing-only run, which assumes what `ASSUMPTIONS` says).
    """
    if isinstance(op, data.GatherRowsOp):
        return _gather(op, args, line)
    if isinstance(op, routing.ScatterRowsOp):
        return _scatter(op, line)
    if isinstance(op, routing.GroupedMatmulOp):
        return _grouped(op, args, line)
    if isinstance(op, (routing.TopkOp, routing.SortOp, routing.HistcOp, data.TakeAlongOp)):
        return _sfu(op, line)
    if isinstance(op, st.CpuFallbackOp):
        return _host(op, line, from_host)
    if isinstance(op, (collective.AllReduceOp, collective.AllGatherOp)):
        return _collective(op, line)
    return KernelReport(
        line.index, line.name, f"{op.name} (view)", "-", 0, 0, line.clock, 0.0, 0.0, 0.0, target=line.target
    )


def _cores(op: Operation, target: Target) -> int:
    division = read_division(op) or {"rows": 1}
    return max(1, min(next(iter(division.values())), target.cores))


def _gather(op: data.GatherRowsOp, args: list[np.ndarray] | None, line: Line) -> KernelReport:
    rows, _ = data.rows_of(op)
    target = line.target
    row = _slice_bytes(op.table)
    stick_row = np.ceil(row / target.stick_bytes) * target.stick_bytes
    index_bytes, result_bytes = device_bytes(op.indices), device_bytes(op.result)
    cycles = cost_model.gather_rows_cycles(rows, row, index_bytes, _cores(op, target), target)
    distinct = len(_parts_read(op, args))
    moved = index_bytes + rows * stick_row + result_bytes
    return line.timed(op, cycles, moved, index_bytes + distinct * stick_row + result_bytes, "dma")


def _scatter(op: routing.ScatterRowsOp, line: Line) -> KernelReport:
    """
    One DMA per written row (a slice along the op's dim), or one per core when the rows are one
    known run (`contiguous`); unless the op is `in_place`, the destination is copied first (read
    and written once). In place, what it must move is the
    indices and the rows: the destination's other rows stay where they are.
    """
    target = line.target
    rows = op.rows_written()
    dest, index_bytes, values = device_bytes(op.dest), device_bytes(op.indices), device_bytes(op.values)
    row = dest / max(math.prod(shape_of(op.dest.type)[: op.scatter_dim() + 1]), 1)  # one slice
    stick_row = np.ceil(row / target.stick_bytes) * target.stick_bytes
    read_indices = index_bytes
    if op.contiguous is not None:  # one box: a strided DMA per core; the indices are known, not read
        written, read_indices = cost_model.box_write_cycles(rows, row, target), 0
    else:
        written = cost_model.gather_rows_cycles(rows, row, index_bytes, _cores(op, target), target)
    if op.in_place is not None:
        moved = read_indices + 2 * rows * stick_row
        return line.timed(op, written, moved, min(moved, index_bytes + values + rows * stick_row), "dma")
    copy = cost_model.transfer_cycles(2 * dest, target)
    moved = 2 * dest + read_indices + 2 * rows * stick_row
    compulsory = dest + index_bytes + values + device_bytes(op.result)
    return line.timed(op, copy + written, moved, min(moved, compulsory), "dma")


def _sfu(
    op: routing.TopkOp | routing.SortOp | routing.HistcOp | data.TakeAlongOp, line: Line
) -> KernelReport:
    elements = float(np.prod(shape_of(op.operands[0].type)))
    if isinstance(op, data.TakeAlongOp):
        # each picked element: a compare-and-select pass over its source row (held in LX)
        elements = float(np.prod(shape_of(op.index.type)))
        passes = float(shape_of(op.source.type)[-1])
    elif isinstance(op, routing.TopkOp):
        passes = 2.0 * op.k.value.data  # k rounds of a max and a mask
    elif isinstance(op, routing.SortOp):
        passes = cost_model.sort_passes(shape_of(op.input.type)[-1])
    else:
        passes = 2.0 + op.bins.value.data  # the bin of each element, then one count per bin
    io = sum(device_bytes(v) for v in (*op.operands, *op.results))
    cycles = cost_model.sfu_op_cycles(elements, passes, io, _cores(op, line.target), line.target)
    return line.timed(op, cycles, io, io, "sfu", flops=elements * passes)


def _grouped(op: routing.GroupedMatmulOp, args: list[np.ndarray] | None, line: Line) -> KernelReport:
    rows = _expert_rows(op, args)
    _, k, n = shape_of(op.weights.type)
    element = ELEMENT_TYPE_TO_DEVICE_DTYPE[str(element_type_of(op.x))].element_bytes
    target = line.target
    cores = _cores(op, target)
    cycles = cost_model.grouped_matmul_cycles(rows, k, n, element, cores, target)
    used = sum(1 for r in rows if r > 0)
    weights = used * _slice_bytes(op.weights)
    cohorts = accounting.broadcast_reads(cores, target)
    x, out = device_bytes(op.x), device_bytes(op.result)
    flops = accounting.matmul_flops(sum(rows) * k * n)
    compulsory = weights + x + device_bytes(op.offsets) + out
    return line.timed(op, cycles, weights + x * cohorts + out, compulsory, "pt", flops=flops)


def _host(op: st.CpuFallbackOp, line: Line, from_host: set[SSAValue]) -> KernelReport:
    to_host_bytes = sum(device_bytes(v) for v in dict.fromkeys(op.operands) if v not in from_host)
    to_device = sum(device_bytes(v) for v in op.results)
    return KernelReport(
        index=line.index,
        name=line.name,
        op=f"{op.name} {op.aten.data} (host)",
        unit="-",
        cores=0,
        chunks=0,
        start=line.clock,
        cycles=cost_model.host_op_cycles(to_host_bytes, to_device, line.target),
        bytes=to_host_bytes + to_device,
        flops=0.0,
        host_bytes=to_host_bytes + to_device,
        target=line.target,
    )


def _collective(op: collective.CollectiveOp, line: Line) -> KernelReport:
    """A ring collective between cards: what each card sends over its link, and its time."""
    tensor = device_bytes(op.result)  # an all-reduce's result is its input; a gather's the whole
    cards = op.card_count
    link = accounting.collective_link_bytes(op.name, tensor, cards)
    return KernelReport(
        index=line.index,
        name=line.name,
        op=f"{op.name} (link)",
        unit="-",
        cores=0,
        chunks=accounting.collective_steps(op.name, cards),
        start=line.clock,
        cycles=cost_model.collective_cycles(op.name, tensor, cards, line.target),
        bytes=link,
        flops=0.0,
        link_bytes=link,
        target=line.target,
    )
