"""
`ktir-plan-scratchpad{solver=greedy|firstfit|bestfit budget=838860 all-ops=false}`: keep
intermediate tensors in the cores' scratchpads (LX) instead of device memory.

A kernel's result stays in LX, at the same address on every core, when (the reference's
eligibility, `torch_spyre/_inductor/scratchpad/allocator.py` and `utils.py`; docs/scratchpad.md):

- its op is one whose outputs the reference keeps (`max sum exp sub mul mean add rsqrt`), or a
  matmul kernel whose result `ktir-divide-work` hands off to its consumer in LX
  (`ktir.lx_handoff`, `ktir.cores.handoff`), or any kernel with `all-ops=true`;
- it is not a function result;
- every consumer is a kernel that sees on each core exactly the tile the producer wrote there
  (same core count and the same device box per core); a consumer that divides work
  differently, a view or a `ktir.cpu_fallback` keeps it in device memory, and so does a
  matmul whose K is split (its partial sums meet on one core).

Its per-core size is its tile; it lives from its producer to its last consumer. A
pointwise consumer whose input dies there with the same tile size and layout may write over
it in place. `ktir.cores.lx_placement.plan` places the buffers within `budget` bytes (by default
half of the usable LX, leaving the rest to the staging buffers of the kernels themselves),
but for a result that would leave a kernel live beside it no chunking that fits
(`fitting_plan`), and the producer records `ktir.lx_address = A : i64` and `ktir.lx_bytes = S : i64`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from ktir.cores.chunking import ChunkingError, plan_chunks
from ktir.cores.iteration import IterationError
from ktir.cores.kernels import Kernel, kernel_of
from ktir.cores.lx_placement import SOLVERS, align, default_budget, free_ranges, plan
from ktir.dialects.ktir import elementwise as ew
from ktir.dialects.ktir import structured as st
from ktir.dialects.ktir.core import WORK_DIVISION_ATTR
from ktir.hardware.target import Target, resolve_target
from ktir.ir.diagnostics import op_error
from ktir.ir.state import clear_kernel_plan, clear_lx_placement, handed_off, read_division, set_lx_placement
from ktir.ir.values import functions_of

KEPT_OUTPUTS = (st.MaxOp, st.SumOp, st.MeanOp, ew.ExpOp, ew.SubOp, ew.MulOp, ew.AddOp, ew.RsqrtOp)
"""Ops whose results the reference keeps in LX (`OP_OUTPUT_GOOD_FOR_LX_REUSE`)."""

IN_PLACE = tuple(kind for kind in ew.POINTWISE if kind is not ew.ConvertOp)
"""Pointwise ops that may write over an input that dies there (`OP_GOOD_FOR_LX_INPLACE`)."""


def kernels_of(function: func.FuncOp, cores: int) -> dict[Operation, Kernel]:
    """The divided kernels of a function, in program order."""
    kernels = {}
    for op in function.body.block.ops:
        kernel = kernel_of(op, read_division(op), cores)
        if kernel is not None:
            kernels[op] = kernel
    return kernels


def _same_tiles(value: SSAValue, producer: Kernel, kernels: dict[Operation, Kernel]) -> bool:
    """Whether every use of `value` reads, core by core, the tile the producer wrote."""
    written = producer.boxes(producer.space.output)
    for use in value.uses:
        consumer = kernels.get(use.operation)
        if consumer is None:
            return False
        access = consumer.space.inputs[use.index]
        if access is None or consumer.cores != producer.cores or consumer.boxes(access) != written:
            return False
    return True


def scratchpad_buffers(function: func.FuncOp, all_ops: bool, cores: int) -> list[dict[str, object]]:
    """The `ktir.cores.lx_placement.plan` buffers of a function: its LX-eligible kernel results."""
    ops = list(function.body.block.ops)
    index = {op: i for i, op in enumerate(ops)}
    kernels = kernels_of(function, cores)
    returned = {v for op in ops if isinstance(op, func.ReturnOp) for v in op.operands}
    buffers: dict[SSAValue, dict[str, object]] = {}
    for op, kernel in kernels.items():
        value = op.results[0]
        if value in returned or not value.uses or kernel.k_split > 1:
            continue
        if not (all_ops or isinstance(op, KEPT_OUTPUTS) or handed_off(op)):
            continue
        if not _same_tiles(value, kernel, kernels):
            continue
        uses = sorted({index[op], *(index[u.operation] for u in value.uses)})
        buffers[value] = {
            "name": f"%{index[op]}",
            "size": kernel.tile_bytes(kernel.space.output),
            "uses": uses,
        }
    for op in kernels:
        child = buffers.get(op.results[0])
        if child is None or not isinstance(op, IN_PLACE):
            continue
        child["in_place_parents"] = [
            parent["name"]
            for operand in op.operands
            if (parent := buffers.get(operand)) is not None
            and cast("list[int]", parent["uses"])[-1] == index[op]
            and parent["size"] == child["size"]
            and operand.type == op.results[0].type
        ][:1]
    return list(buffers.values())


@dataclass(frozen=True)
class PlanScratchpadPass(ModulePass):
    """Give LX addresses to the kernel results that can stay in scratchpad (module docstring)."""

    name = "ktir-plan-scratchpad"

    solver: str = "greedy"
    budget: int | None = None
    """LX bytes per core for resident results; default: half the target's usable LX."""
    all_ops: bool = False
    target: str | Target = ""
    """A target TOML file (`ktir.hardware.target.load_target`), or from Python a `Target`;
    default: Spyre."""

    def __post_init__(self) -> None:
        if self.solver not in SOLVERS:
            raise ValueError(f"unknown solver '{self.solver}' (expected one of: {', '.join(SOLVERS)})")
        usable = resolve_target(self.target).lx_usable_bytes
        if self.budget is not None and not 0 <= self.budget <= usable:
            raise ValueError(f"budget must be in 0..{usable} bytes, not {self.budget}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = resolve_target(self.target)
        budget = default_budget(target) if self.budget is None else self.budget
        for function in functions_of(op):
            ops = list(function.body.block.ops)
            for inner in ops:
                _require_division(inner)
                clear_kernel_plan(inner)  # a kernel's buffers go around the resident tensors: plan anew
            buffers = scratchpad_buffers(function, self.all_ops, target.cores)
            addresses = fitting_plan(buffers, function, budget, target, self.solver)
            for buffer, address in zip(buffers, addresses, strict=True):
                producer = ops[int(str(buffer["name"])[1:])]
                clear_lx_placement(producer)
                if address is not None:
                    set_lx_placement(producer, address, int(cast(int, buffer["size"])))


def fitting_plan(
    buffers: list[dict[str, object]], function: func.FuncOp, budget: int, target: Target, solver: str
) -> list[int | None]:
    """
    `plan`'s addresses for `function`'s `buffers`, but for residents that would leave a kernel
    live beside them no chunking that fits the LX left (`plan_chunks`, as `ktir-plan-kernels`
    chunks it): the largest resident live at the first such kernel stays in device memory, and
    the rest are planned again. The budget alone does not see this: a fused kernel may need more
    LX than the budget leaves (a mixed serving step of 512 rows on 4 cards: 1,552,384 bytes for
    its smallest chunk beside a 131,072-byte resident, of 1,677,721 usable).
    """
    index = {op: i for i, op in enumerate(function.body.block.ops)}
    kernels = {index[op]: kernel for op, kernel in kernels_of(function, target.cores).items()}
    dropped: set[int] = set()
    while True:
        kept = [i for i in range(len(buffers)) if i not in dropped]
        placed = plan([buffers[i] for i in kept], budget, target.lx_alignment, solver)
        addresses: list[int | None] = [None] * len(buffers)
        for i, address in zip(kept, placed, strict=True):
            addresses[i] = address
        crowding = _crowding(buffers, addresses, kernels, target)
        if crowding is None:
            return addresses
        dropped.add(crowding)


def _crowding(
    buffers: list[dict[str, object]], addresses: list[int | None], kernels: dict[int, Kernel], target: Target
) -> int | None:
    """The largest placed buffer live at the first kernel no chunking fits beside; None if all fit."""
    for at, kernel in sorted(kernels.items(), key=lambda item: item[0]):
        live = [i for i, address in enumerate(addresses) if address is not None and _live_at(buffers[i], at)]
        if not live:
            continue
        busy = [_extent(buffers[i], cast(int, addresses[i]), target.lx_alignment) for i in live]
        try:
            plan_chunks(kernel, free_ranges(busy, target.lx_usable_bytes), target.lx_alignment, target)
        except ChunkingError:
            return max(live, key=lambda i: (cast(int, buffers[i]["size"]), -i))
    return None


def _live_at(buffer: dict[str, object], at: int) -> bool:
    uses = cast("list[int]", buffer["uses"])
    return uses[0] <= at <= uses[-1]


def _extent(buffer: dict[str, object], address: int, alignment: int) -> tuple[int, int]:
    return address, address + align(cast(int, buffer["size"]), alignment)


def _require_division(op: Operation) -> None:
    """A located error for a kernel op without its work division (or without layouts)."""
    try:
        is_kernel = kernel_of(op, {}) is not None
    except IterationError as error:
        raise op_error(error.op, str(error)) from error
    if is_kernel and read_division(op) is None:
        raise op_error(op, f"'{op.name}' has no {WORK_DIVISION_ATTR}; run ktir-divide-work first")
