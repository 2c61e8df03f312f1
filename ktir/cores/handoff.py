"""
The LX hand-off between two matmul kernels: a matmul kernel's result (after its epilogue) stays
in the cores' scratchpads for the matmul that reads it as x, instead of a round trip through
LPDDR5, when the consumer's work division makes each core read exactly the tile it wrote.

The contract. A producer P computes h[M, N] and is divided `{b0: a, m: p, n: q, k: 1}` (no K
split, so every core holds finished outputs). A consumer C reads h as its x[M, K = N]. C
divided `{b0: a, m: p, n: 1, k: q}` cuts h the way P does: core c of C reads the tile of K
slice c mod q (a split K goes first in the core order, so that K partners are ring neighbours)
and M slice c div q. P's cores then take their slices N first, the core order `(n, b0, m, k)`
recorded on P as `ktir.core_order`: core c of P writes the tile of N slice c mod q and M
slice c div q, the one core c of C reads. P is marked `ktir.lx_handoff`, and the scratchpad
plan (`ktir-plan-scratchpad`) keeps h where it was written; C's q K partners add up their
partial sums over the ring.

The decision (`handoff_division`) is for time, by the dataflow model (`ktir.cores.dataflow`)
on both kernels: P with its output kept in LX (no store to LPDDR5, no read/write turnaround on
it) plus C with x resident (no x loads) and its ring reduction, against P and C apart under the
divisions they have. P's division is chosen with it, among its fastest ones alone
(`ktir.cores.dataflow.ranked_splits`; only its own when hinted): the split P takes alone may
leave C a K split whose ring reduction costs more than the traffic the hand-off saves. Only a
P whose LPDDR5 transfers outlast its PE work (`ktir.cores.dataflow.memory_bound`) is handed
off: a compute-bound P hides its store under its PE work, so keeping its result saves little,
and the model, which does not see that, then misjudges the pair (on a sweep of 108 SwiGLU MLPs
it took 59 hand-offs, 24 of them up to 6.9% slower in the simulator; with the rule 36, 7 up to
6.9% slower). A hand-off must also be modeled `REQUIRED_GAIN` faster: then 26, 24 faster in
the simulator by 0.5-29%, one as fast, one 6.9% slower (512 tokens, 512 -> 1,024 on 32 cores:
the model takes the producer's stores for exposed where they overlap the next chunk). The resident tile leaves
the rest of LX to both kernels' staging buffers, and it must fit the scratchpad plan's budget
(`ktir.cores.lx_placement.default_budget`).

Worked example, Llama-3-8B's MLP on 512 tokens (fp16, 32 cores): SwiGLU, silu(x @ Wg) *
(x @ Wu), is divided `{m: 8, n: 4}`, so each core holds h's 64 rows x 3,584 columns (448 KiB);
the down projection h @ Wd was divided `{m: 4, n: 8}` and read h from LPDDR5. Divided
`{m: 8, k: 4}` instead, it reads each core's 448 KiB from LX: the 14.7 MB of h are neither
stored nor loaded, and the store's turnaround goes with them (docs/work-division.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ktir.cores.dataflow import Handoff, is_matmul, memory_bound, ranked_cuts
from ktir.cores.kernels import Kernel
from ktir.cores.space import IterationSpace
from ktir.cores.tiling import Access, granules
from ktir.cores.work_division import per_core_span
from ktir.hardware.target import Target

REQUIRED_GAIN = 0.025
"""The least modeled gain a hand-off is taken for (2.5% of the pair's cycles): the dataflow model
does not see the prefetches the simulator runs, and it charges an output chunk's store as if the
chunk waited for it where two alternating accumulators let it overlap the next chunk, so it
misjudges a pair by a few percent (over a sweep of 108 SwiGLU MLPs, 36 hand-offs modeled faster,
7 of them 0.1-6.9% slower in the simulator, all but one modeled less than 2.5% faster)."""


@dataclass(frozen=True)
class HandoffDivision:
    """
    A hand-off's decisions (both kernels' work divisions, the producer's core order) and the
    two kernels' modeled cycles with it."""

    producer_splits: dict[str, int]
    consumer_splits: dict[str, int]
    producer_order: tuple[str, ...]
    cycles: float


def handoff_division(
    producer: Kernel,
    consumer: Kernel,
    candidates: Sequence[dict[str, int]],
    budget: int,
    target: Target,
) -> HandoffDivision | None:
    """
    The fastest hand-off (module docstring) over the producer divisions `candidates`, when the
    dataflow model finds it at least `REQUIRED_GAIN` faster than the two kernels apart under the
    divisions they have; None when none is. A candidate is left out when the producer is not
    memory-bound under it, when the tiles cannot match, when its resident tile is larger than
    `budget` bytes per core, or when a consumer core would address more than
    `Target.core_address_span` of a tensor.
    """
    lx = target.lx_usable_bytes
    apart = _cycles(producer.space, producer.splits, lx, Handoff(), target)
    apart += _cycles(consumer.space, consumer.splits, lx, Handoff(), target)
    best = None
    for splits in candidates:
        found = _aligned(Kernel(producer.op, producer.space, splits), consumer, budget, target)
        if found is None or found.cycles > (1.0 - REQUIRED_GAIN) * apart:
            continue
        if best is None or found.cycles <= best.cycles:
            best = found
    return best


def _aligned(producer: Kernel, consumer: Kernel, budget: int, target: Target) -> HandoffDivision | None:
    """One hand-off from a producer division, when its tiles match and it fits (None otherwise)."""
    splits = _aligned_splits(producer, consumer.space)
    if splits is None:
        return None
    order = ("n", *(d for d in producer.splits if d != "n"))
    ordered = Kernel(producer.op, producer.space, producer.splits, order)
    aligned = Kernel(consumer.op, consumer.space, splits)
    if ordered.boxes(producer.space.output) != aligned.boxes(_x_access(consumer.space)):
        return None
    tile = ordered.tile_bytes(producer.space.output)
    spans = (per_core_span(a, splits) for a in consumer.space.accesses)
    if tile > budget or any(span > target.core_address_span for span in spans):
        return None
    alone = ranked_cuts(producer.space, producer.splits, target.lx_usable_bytes, target, 1)
    if not alone or not memory_bound(alone[0], producer.space, target):
        return None  # its store hides under its PE work: keeping its result saves no time
    left = target.lx_usable_bytes - tile
    cycles = _cycles(producer.space, producer.splits, left, Handoff(kept_output=True), target)
    cycles += _cycles(consumer.space, splits, left, Handoff(resident_x=True), target)
    return HandoffDivision(dict(producer.splits), splits, order, cycles)


def _x_access(space: IterationSpace) -> Access:
    """A matmul's x: its first tensor input."""
    return next(a for a in space.inputs if a is not None)


def _aligned_splits(producer: Kernel, space: IterationSpace) -> dict[str, int] | None:
    """
    The consumer division that cuts x as the producer cuts its output: the producer's batch and
    M splits, its N split as the consumer's K split, N whole; None unless both are matmuls
    with these dims, the producer's K is whole and the consumer's K granules take the split.
    """
    if not (is_matmul(producer.space) and is_matmul(space)) or producer.k_split > 1:
        return None
    if set(producer.splits) != set(space.sizes) or not {"m", "n", "k"} <= set(space.sizes):
        return None
    if space.sizes["k"] != producer.space.sizes["n"] or space.sizes["m"] != producer.space.sizes["m"]:
        return None
    q = producer.splits["n"]
    if q == 1 or granules(space.sizes, space.accesses, space.whole)["k"] % q:
        return None
    return {d: producer.splits[d] if d not in ("n", "k") else 1 for d in space.sizes} | {"k": q}


def _cycles(
    space: IterationSpace, splits: dict[str, int], lx: int, handoff: Handoff, target: Target
) -> float:
    """The dataflow model's cycles of a matmul's fastest chunking under `splits` (inf if none fits)."""
    ranked = ranked_cuts(space, splits, lx, target, 1, handoff)
    return ranked[0].cycles if ranked else float("inf")


__all__ = ["REQUIRED_GAIN", "HandoffDivision", "handoff_division"]
