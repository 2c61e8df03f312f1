"""
`ktir-plan-kernels`: decide, for every divided graph op, how its kernel runs in LX, and record
it on the op for `ktir-lower-to-cores` to build (`ktir.dialects.ktir.kernel_plan`).

Walking each function in program order, for each op with a `work_division` the pass

1. chunks each core's slice until its staging buffers fit in the LX left free by the planned
   scratchpad tensors live there (`ktir.cores.chunking.plan_chunks`), with two slots per
   buffer when chunked: `ktir.chunk_plan = #ktir.chunk_plan<m = 1, n = 16, k = 2>`;
2. chooses the inputs whose first load can be a prefetch, run in the previous kernel's time
   (`ktir.cores.prefetch`): `ktir.prefetch = #ktir.prefetch<1>` (no attribute: none);
3. places the staging buffers in LX, a prefetched one clear of the previous kernel's:
   `ktir.lx_buffers = #ktir.lx_buffers<in0 = 0, in1 = 1153408, acc = 16384>`.

Its input is divided (`ktir-divide-work`) and scratchpad-planned (`ktir-plan-scratchpad`)
graph-level IR; both drop a recorded plan, which no longer holds after them. A kernel whose
tiles cannot fit in LX is a located error naming the bytes needed and free.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.ir import Operation

from ktir.cores.chunking import ChunkingError, ChunkPlan, chunk_inputs, input_role, place, plan_chunks
from ktir.cores.iteration import IterationError
from ktir.cores.kernels import Kernel, kernel_of
from ktir.cores.lx_placement import align, free_ranges
from ktir.cores.prefetch import PreviousKernel
from ktir.dialects.ktir.core import WORK_DIVISION_ATTR
from ktir.hardware.target import Target
from ktir.ir.diagnostics import op_error
from ktir.ir.liveness import live_sets
from ktir.ir.state import read_division, resident_placement, set_kernel_plan
from ktir.ir.values import is_tensor
from ktir.passes.function_pass import FunctionPass


@dataclass(frozen=True)
class PlanKernelsPass(FunctionPass):
    """Record the chunking, prefetches and LX buffers of every divided op (see the module docstring)."""

    name = "ktir-plan-kernels"

    def apply_function(self, function: func.FuncOp, target: Target) -> None:
        plan_function(function, target)


def kernel_of_divided(graph_op: Operation, cores: int) -> Kernel | None:
    """
    The kernel of a divided graph op; None for an op that runs no kernel (a view, a
    `ktir.cpu_fallback`, a kernel already lowered). A located error for an op that would run
    one but has no `ktir.work_division`.
    """
    try:
        kernel = kernel_of(graph_op, read_division(graph_op), cores)
    except IterationError as error:
        raise op_error(error.op, str(error)) from error
    if kernel is None and kernel_of(graph_op, {}) is not None:
        raise op_error(graph_op, f"'{graph_op.name}' has no {WORK_DIVISION_ATTR}; run ktir-divide-work first")
    return kernel


def _resident_busy(ops: list[Operation]) -> Iterator[list[tuple[int, int]]]:
    """Per op of `ops`, the [low, high) LX ranges of the resident tensors live there."""
    index = {o: i for i, o in enumerate(ops)}
    live: list[tuple[int, int, tuple[int, int]]] = []  # (first op, last op, LX range)
    for o in ops:
        if o.results and (resident := resident_placement(o.results[0])) is not None:
            last = max((index[u.operation] for u in o.results[0].uses), default=index[o])
            live.append((index[o], last, (resident[0], resident[0] + resident[1])))
    return live_sets(live, len(ops))


def plan_function(function: func.FuncOp, target: Target) -> None:
    """Record the plan of each divided op of `function`, in program order."""
    ops = list(function.body.block.ops)
    previous: PreviousKernel | None = None
    # A matmul kernel streams its weight on the load queue to its last chunk: what the next
    # kernel prefetches then runs in that kernel's own time, ahead of its own first loads.
    after_matmul = False
    for graph_op, busy in zip(ops, _resident_busy(ops), strict=True):
        kernel = kernel_of_divided(graph_op, target.cores)
        if kernel is None:
            previous = previous.after(graph_op) if previous is not None else None
            continue
        free = free_ranges(busy, target.lx_usable_bytes)
        try:
            plan = plan_chunks(kernel, free, target.lx_alignment, target)
        except ChunkingError as error:
            raise op_error(graph_op, str(error)) from error
        plan, prefetch = _with_prefetch(kernel, plan, free, previous, target.lx_alignment, not after_matmul)
        set_kernel_plan(
            graph_op, plan.cuts, {b.role: b.address for b in plan.buffers}, plan.whole_x, prefetch
        )
        used = [(b.address, b.address + align(b.bytes, target.lx_alignment)) for b in plan.buffers]
        previous = PreviousKernel(set(graph_op.results), [*used, *busy])
        after_matmul = "k" in kernel.space.reduction


def _with_prefetch(
    kernel: Kernel,
    plan: ChunkPlan,
    free: list[tuple[int, int]],
    previous: PreviousKernel | None,
    alignment: int,
    epilogue: bool = True,
) -> tuple[ChunkPlan, frozenset[int]]:
    """
    The inputs whose first load can be a prefetch (`ktir.dma_load ... prefetch`): read from
    device memory, not written by the previous kernel, and whose buffers fit in LX the
    previous kernel leaves free: those loaded before or in chunk 0 and an accumulating
    epilogue's inputs (loaded for its first output tiles) when all of them fit, else the former only.
    Not the epilogue's inputs with `epilogue` False (after a matmul kernel, whose weight loads
    leave no time for them: they would run before this kernel's first loads, which its first
    chunk needs, while its epilogue needs them only after the tile's K chunks).
    Their buffers are placed there first and the rest of the plan around them, at the same
    chunking; when that does not fit, nothing is prefetched.
    """
    if previous is None:
        return plan, frozenset()
    tensors = [v for v in kernel.op.operands if is_tensor(v)]
    first_loaded = chunk_inputs(kernel, plan.cuts)
    inputs = [i for i, v in enumerate(tensors) if v not in previous.written and resident_placement(v) is None]
    if not epilogue:
        inputs = [i for i in inputs if i < first_loaded]
    # with the epilogue's inputs for output tile 0 if they fit too, else the chunk inputs only
    for chosen in dict.fromkeys((tuple(inputs), tuple(i for i in inputs if i < first_loaded))):
        placed = _place_prefetched(kernel, plan, free, previous, alignment, chosen)
        if placed is not None:
            return placed, frozenset(chosen)
    return plan, frozenset()


def _place_prefetched(
    kernel: Kernel,
    plan: ChunkPlan,
    free: list[tuple[int, int]],
    previous: PreviousKernel,
    alignment: int,
    chosen: tuple[int, ...],
) -> ChunkPlan | None:
    """`plan` with the buffers of the inputs `chosen` clear of the previous kernel, or None."""
    roles = {input_role(kernel, i) for i in chosen}
    early = [b for b in plan.buffers if b.role in roles]
    if not early:
        return None
    spare = _subtract(free, previous.lx)
    placed_early = place(early, spare, alignment, from_top=True)
    if placed_early is None:
        return None
    taken = [(b.address, b.address + align(b.bytes, alignment)) for b in placed_early]
    rest = place([b for b in plan.buffers if b.role not in roles], _subtract(free, taken), alignment)
    if rest is None:
        return None
    by_role = {b.role: b for b in [*placed_early, *rest]}
    buffers = tuple(by_role[b.role] for b in plan.buffers)
    return dataclasses.replace(plan, buffers=buffers)


def _subtract(free: list[tuple[int, int]], used: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The parts of the `free` ranges that no `used` range covers."""
    limit = max((hi for _, hi in free), default=0)
    blocked = free_ranges(free, limit)  # what `free` leaves out, up to its end
    return free_ranges([*blocked, *used], limit)


__all__ = ["PlanKernelsPass", "kernel_of_divided", "plan_function"]
