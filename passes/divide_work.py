"""
`ktir-divide-work{cores=32 policy=dataflow|default|cost handoff=true}`: decide how each kernel's
iteration space is cut over the cores. The default policy, `dataflow`, is `ktir-compile`'s.

Every op that becomes a kernel (`ktir.cores.iteration.iteration_space`) gets a `work_division`
dictionary: iteration dim -> slice count, every dim listed in order (output dims first, then
reduced dims). The math is `ktir.cores.work_division.divide`, the reference's three passes: span
reduction (each core addresses at most 256 MiB), then either the reference's default
distribution (`policy=default`) or, with `policy=cost`, the reference's matmul cost model. With
`policy=dataflow` (the default) a matmul's split is chosen together with its LX chunking for time
(`ktir.cores.dataflow`, docs/performance.md) among the splits that keep each core within the
address span (the reference then decides only when none does), and every other op's by the
reference; with `dataflow` or `cost`, a fused kernel's for the least traffic with its chunking
(`fused_division`). Then, with
`handoff=true` (the default), a matmul whose x is the result of a matmul kernel read by nothing
else is divided to read that result where it was written, when the dataflow model finds the two
faster with the result kept in LX (`ktir.cores.handoff`, docs/work-division.md): the consumer
gets the producer's M split and its N split as K, and the producer records the core order
(`ktir.core_order`) that puts each of its tiles on the core that reads it, and `ktir.lx_handoff`,
which `ktir-plan-scratchpad` keeps in LX.
`ktir.attention`, which the reference does not have, always divides like a fused kernel: the
most cores, then the shortest estimated time with its chunking (`ktir.cores.attention`:
balanced causal work, each key and value head read once), then the least traffic. A valid
`work_division_hint` dictionary on the op overrides all of them.

```mlir
%r = ktir.abs %x {ktir.work_division = {d0 = 2 : i64, d1 = 1 : i64}} : tensor<4x64xf16, ...> -> ...
```

Views that only reinterpret bytes, `ktir.cpu_fallback` and `func.return` get nothing. An op
without layouts, a bad hint or a bad core count is a located error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from ktir.cores.attention import attention_cycles
from ktir.cores.chunking import ChunkingError, load_bytes, plan_chunks
from ktir.cores.dataflow import best_schedule, is_matmul, ranked_splits
from ktir.cores.factors import divisors
from ktir.cores.handoff import handoff_division
from ktir.cores.iteration import IterationError, IterationSpace, iteration_space
from ktir.cores.kernels import Kernel, kernel_of
from ktir.cores.lx_placement import default_budget
from ktir.cores.tiling import granules
from ktir.cores.work_division import HintError, divide
from ktir.dialects.ktir import structured as st
from ktir.dialects.ktir.core import WORK_DIVISION_HINT_ATTR
from ktir.dialects.ktir.core_functions import TIMED_FUNCTION_LEVEL_OPS
from ktir.hardware.target import Target, resolve_target
from ktir.ir.diagnostics import op_error
from ktir.ir.state import (
    clear_handoff,
    clear_kernel_plan,
    read_division,
    set_core_order,
    set_division,
    set_lx_handoff,
)
from ktir.ir.values import functions_of

POLICIES = ("default", "cost", "dataflow")


def divide_op(op: Operation, cores: int, policy: str, target: Target) -> dict[str, int] | None:
    """
    The split of one op (None when it is not a kernel); located errors on bad input. A
    data-dependent op the simulator times at function level (`TIMED_FUNCTION_LEVEL_OPS`) records
    how many cores share its `parallel_extent` (e.g. `{rows = 16}`).
    """
    if isinstance(op, TIMED_FUNCTION_LEVEL_OPS):
        dim, extent = op.parallel_extent()
        return {dim: max(1, min(cores, extent))}
    try:
        space = iteration_space(op)
    except IterationError as error:
        raise op_error(error.op, str(error)) from error
    if space is None:
        return None
    hint = read_division(op, WORK_DIVISION_HINT_ATTR)
    if policy == "dataflow" and not hint and (splits := dataflow_division(space, cores, target)):
        return splits
    if isinstance(op, st.FusedOp) and not hint and policy != "default":
        return fused_division(op, space, cores, target)
    if isinstance(op, st.AttentionOp) and not hint:  # the reference has no whole attention op
        return fused_division(op, space, cores, target)
    inputs = [a for a in space.inputs if a is not None]
    try:
        return divide(
            space.sizes,
            space.reduction,
            inputs,
            space.output,
            target,
            cores,
            whole=space.whole,
            hint=hint,
            policy="default" if policy == "dataflow" else policy,
        )
    except HintError as error:
        raise op_error(op, f"invalid {WORK_DIVISION_HINT_ATTR}: {error}") from error
    except ValueError as error:
        raise op_error(op, str(error)) from error


def dataflow_division(space: IterationSpace, cores: int, target: Target) -> dict[str, int] | None:
    """
    A matmul's split chosen with its LX chunking for time (`ktir.cores.dataflow`) among the
    splits that keep each core's address span of every tensor within
    `Target.core_address_span` (the reference's span rule); None for other ops and when no
    split fits, which the reference's division then decides.
    """
    if not is_matmul(space):
        return None
    schedule = best_schedule(space, cores, target.lx_usable_bytes, target, span=target.core_address_span)
    return None if schedule is None else schedule.splits


def fused_division(op: Operation, space: IterationSpace, cores: int, target: Target) -> dict[str, int]:
    """
    A fused kernel's or an attention's split: the most cores; then, for attention, the
    shortest estimated time (`ktir.cores.attention.attention_cycles`: a causal attention split
    by queries leaves the core with the last rows the most work); then the least LPDDR5
    traffic of its inputs with its chunking (`ktir.cores.chunking.plan_chunks`), counted as the
    simulator charges loads (`ktir.cores.chunking.load_bytes`): cores that read the same box
    share one read per broadcast cohort (`Target.broadcast_cohort`, 8 on Spyre), and a tile is
    read again by every chunk unless it is the same for all of them. Example: attention with
    its heads split 32 ways reads each key and value head once per cohort of the 4 cores of its
    group; chunks that each cut a group would read it again.
    """
    units = granules(space.sizes, space.accesses, space.whole)
    free = [d for d in space.sizes if d not in space.whole and units[d] > 1]
    best: tuple[tuple[float, ...], dict[str, int]] | None = None
    for choice in _factorings([units[d] for d in free], cores):
        splits = {d: 1 for d in space.sizes} | dict(zip(free, choice, strict=True))
        used = math.prod(choice)
        if best is not None and -used > best[0][0]:
            continue
        key = (-used, *_division_cost(Kernel(op, space, splits), target), *(-c for c in choice))
        if best is None or key < best[0]:
            best = (key, splits)
    return best[1] if best else {d: 1 for d in space.sizes}


def _division_cost(kernel: Kernel, target: Target) -> tuple[float, float]:
    """
    (estimated cycles, LPDDR5 bytes of the input loads) of a kernel with its chunking; the
    cycles are estimated for attention only (0 otherwise); (inf, inf) when no chunking fits.
    """
    try:
        cuts = plan_chunks(kernel, [(0, target.lx_usable_bytes)], target.lx_alignment, target).cuts
    except ChunkingError:
        return math.inf, math.inf
    traffic, _ = load_bytes(kernel, cuts, target)
    if not isinstance(kernel.op, st.AttentionOp):
        return 0.0, traffic
    return round(attention_cycles(kernel, cuts, target), 3), traffic


def _factorings(limits: list[int], cores: int) -> list[tuple[int, ...]]:
    """Every split per dim (a divisor of its granules) whose product divides into `cores`."""
    if not limits:
        return [()]
    head, *rest = limits
    return [(c, *tail) for c in divisors(head) if c <= cores for tail in _factorings(rest, cores // c)]


@dataclass(frozen=True)
class DivideWorkPass(ModulePass):
    """Write a `work_division` on every kernel op (see the module docstring)."""

    name = "ktir-divide-work"

    cores: int | None = None
    """Cores to divide over; default: all of the target's."""
    policy: str = "dataflow"
    """`dataflow` (`ktir-compile`'s), `default` (the reference's distribution) or `cost`."""
    handoff: bool = True
    """With `policy=dataflow`: re-divide a matmul reading another matmul kernel's result so that
    the result stays in LX between them, where that is faster (`ktir.cores.handoff`)."""
    target: str | Target = ""
    """A target TOML file (`ktir.hardware.target.load_target`), or from Python a `Target`;
    default: Spyre."""

    def __post_init__(self) -> None:
        limit = resolve_target(self.target).cores
        if self.cores is not None and not 1 <= self.cores <= limit:
            raise ValueError(f"cores must be in 1..{limit}, not {self.cores}")
        if self.policy not in POLICIES:
            raise ValueError(f"unknown policy '{self.policy}' (expected one of: {', '.join(POLICIES)})")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = resolve_target(self.target)
        cores = self.cores or target.cores
        for function in functions_of(op):
            for inner in function.body.block.ops:
                clear_handoff(inner)  # an earlier run's decisions do not hold for new divisions
                clear_kernel_plan(inner)
                splits = divide_op(inner, cores, self.policy, target)
                if splits is not None:
                    set_division(inner, splits)
            if self.policy == "dataflow" and self.handoff:
                hand_off(function, target)


def hand_off(function: func.FuncOp, target: Target) -> None:
    """
    Re-divide each matmul whose x is the result of a matmul kernel so that the result stays in
    LX between them, where the dataflow model finds that faster (`ktir.cores.handoff`): the
    consumer's new division, the producer's (chosen with it, unless hinted), its core order and
    its `ktir.lx_handoff` are recorded. A consumer with a `work_division_hint`
    keeps it, and the result may have no other use.
    """
    for consumer_op in function.body.block.ops:
        pair = _handoff_pair(consumer_op)
        if pair is None:
            continue
        producer, consumer = pair
        candidates = [producer.splits]
        if WORK_DIVISION_HINT_ATTR not in producer.op.attributes:
            lx, span = target.lx_usable_bytes, target.core_address_span
            candidates += ranked_splits(producer.space, producer.cores, lx, target, span)
        decision = handoff_division(producer, consumer, candidates, default_budget(target), target)
        if decision is not None:
            set_division(producer.op, decision.producer_splits)
            set_division(consumer_op, decision.consumer_splits)
            set_core_order(producer.op, decision.producer_order)
            set_lx_handoff(producer.op)


def _handoff_pair(op: Operation) -> tuple[Kernel, Kernel] | None:
    """
    (producer, consumer) kernels when `op` is a divided matmul whose x, a matmul kernel's
    result, only it reads."""
    consumer = kernel_of(op, read_division(op))
    if consumer is None or not is_matmul(consumer.space) or WORK_DIVISION_HINT_ATTR in op.attributes:
        return None
    index = next(i for i, a in enumerate(consumer.space.inputs) if a is not None)
    x = op.operands[index]
    source = x.owner
    if not isinstance(source, Operation) or not x.has_one_use():
        return None
    producer = kernel_of(source, read_division(source))
    if producer is None or not is_matmul(producer.space):
        return None
    return producer, consumer
