"""
Matmul dataflow: choose a matmul's work division and LX chunking together, for time.

A matmul kernel (`ktir.cores.chunking`) gives every core a slice of the iteration space
(`splits`, the work division) and walks that slice in chunks (`cuts`), reduction chunks
innermost: for each chunk it loads an x tile and a y tile into double-buffered LX slots and
runs the PE arrays on them; a chunked or split K accumulates into one fp32 tile per output
chunk (output-stationary), which is zeroed, summed over the ring when K is split across
cores, and stored once. The simulator charges exactly that (`ktir.sim`), so the traffic of a
candidate (splits, cuts) follows from counting:

    chunks C = prod(cuts); per chunk every core loads its x tile and its y tile;
    cores holding the same box of a tensor share one broadcast read per cohort of
    `Target.broadcast_cohort` cores: a tile held by `s` cores costs ceil(s / cohort) reads;
    x bytes moved = C * x_tile * (cores / sharers_x) * ceil(sharers_x / cohort), with
    sharers_x = the N split (cores that differ only in n hold the same x box), and the same
    for y with sharers_y = the M split (and batch, when y has no batch dims);
    output bytes = each output tile once (the first core of a K group stores it).

and its time from the same cost model: per chunk the load queue spends the DMA setup plus the
chip-wide transfer of each tile while the PE arrays run `pt_cycles` on the previous chunk
(double buffering), so a chunk costs the larger of the two, plus the first load (pipeline fill)
and the last compute (drain); each output chunk adds its accumulator's zeroing, ring reduction
and store, which wait for the chunk before them. An fp32 matmul's chunk also converts its tiles
to fp16 on the SFU (`cost_model.conversion_cycles`), a third pipeline stage. The store of
every output chunk but the last runs while later chunks' loads stream, and the channel charges
the read/write turnaround on its bytes (`ktir.sim.timeline.Channel`): on the calibrated card a
512 x 4096 x 6144 fp16 matmul (Llama-3-8B's q/k/v) that stores its 6.3 MB in 3 output chunks pays
18 µs of turnaround, and one output chunk, stored after the last load, none.

Worked example (docs/performance.md): x[512, 4096] @ y[4096, 14336] fp16 on 32 cores moves at
least 4.2 + 117.4 + 14.7 = 136.3 MB. The reference division {m: 32} gives each core 16 rows (the
PE arrays at half rate) and all of y, which the 32 cores read in 4 cohorts. The model picks
{m: 4, n: 8} with K cut into 64 chunks: a core owns 128 rows x 1792 columns; per chunk it loads
a 16 KiB x tile and a 224 KiB y tile (double-buffered: 480 KiB) next to its 896 KiB fp32
accumulator, 1376 KiB of the 1638 KiB of LX. The 8 cores sharing an x tile and the 4 sharing a
y tile each fit in one cohort, so every byte is read once (traffic 1.00x), and a chunk's
transfer (14.4 k cycles) and its PE time (14.3 k cycles) overlap.

Every chunking is also ranked with x *whole* (`Schedule.whole_x`) where x's other dims are not
cut, K is, and several output chunks would read x again: the core's whole slice of x takes one
LX slot and loads once before the first chunk (x bytes moved = the slice once per cohort
read), and each chunk loads only its y tiles. A matmul cut along N then reads x once: on the
Llama-3-8B prefill layer, SwiGLU's x crossed LPDDR5 7 times before.

`best_schedule` ranks every (splits, cuts) whose per-dim product divides the dim's granules,
within `MAX_CHUNKS` chunks, with NumPy (in blocks of `BLOCK_CANDIDATES`, merged: Mistral-Small-24B's
batched MLP on 2 cards has 1.75 M candidates) and returns the fastest; given the address span
(`Target.core_address_span`), only among the splits under which no core addresses more of any
tensor (the reference's span rule, `ktir.cores.work_division.per_core_span`). `ranked_cuts`
does the same for a fixed split. Ties go to fewer chunks, then to more cores, then to x loaded
per chunk, then to the first candidate in a fixed order, so the choice is deterministic.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np

from ktir.cores.factors import divisors
from ktir.cores.iteration import IterationSpace
from ktir.cores.tiling import Access, granules
from ktir.cores.work_division import per_core_span
from ktir.hardware import accounting, cost_model
from ktir.hardware.target import Target
from ktir.layout import sticks

ACCUMULATOR_BYTES = 4
"""Partial sums accumulate in fp32."""

MAX_CHUNKS = 32768
"""Chunks per core beyond which a kernel is rejected rather than unrolled further: a matmul's
candidate cuts stay within it, and `ktir.cores.chunking` cuts no kernel further."""

BLOCK_CANDIDATES = 400_000
"""Candidates costed in one NumPy pass at most (a few tens of MB of arrays, ~0.1 s): a larger grid
is ranked block by block (`_blocks`) and the blocks' best merged, with the ranking unchanged."""

MAX_CANDIDATES = 4_000_000
"""Candidates ranked at most per matmul (about 2 s); a matmul with more is left to the reference's
work division. Mistral-Small-24B's batched MLP on 2 cards (32 sequences x 1,024 tokens,
{b0: 32, m: 1024, k: 5120, n: 16384}) has 1.75 M, ranked in about 0.85 s."""


@dataclass(frozen=True)
class Schedule:
    """A matmul's work division and chunk cuts, with the modeled cycles and LPDDR5 bytes."""

    splits: dict[str, int]
    cuts: dict[str, int]
    cycles: float
    traffic: float
    whole_x: bool = False
    """x's whole slice stays in LX: loaded once before the chunk loop, not once per chunk."""


@dataclass(frozen=True)
class Handoff:
    """
    Which of a matmul's tensors stay in LX instead of crossing LPDDR5 (`ktir.cores.handoff`):
    its x already resident (a producer kept it there, each core's tile where the core reads it),
    its output kept for a consumer. A resident tensor moves no LPDDR5 bytes; its chunks are
    copied inside LX (`cost_model.lx_copy_cycles`) into the staging slots they would load into.
    The LX the resident buffer itself takes is the caller's to leave out of `lx_bytes`.
    """

    resident_x: bool = False
    kept_output: bool = False


@dataclass(frozen=True)
class _Operand:
    """A tensor of the matmul: its device bytes and the iteration dims its tiles depend on."""

    bytes: int
    dims: frozenset[str]


def is_matmul(space: IterationSpace) -> bool:
    """Whether `space` is a matmul's (PE arrays, with m, n and k dims)."""
    return space.unit == "pt" and {"m", "n", "k"} <= set(space.sizes)


def _operand(access: Access) -> _Operand:
    return _Operand(access.layout.device_bytes, frozenset(d for d in access.dims if d is not None))


def _pairs(units: int, max_split: int) -> list[tuple[int, int]]:
    """(split, cut) pairs whose product divides `units`, split at most `max_split`."""
    return [(s, c) for t in divisors(units) for s in divisors(t) if s <= max_split for c in (t // s,)]


def _grid(
    dims: Sequence[str], options: Mapping[str, list[tuple[int, int]]], cores: int
) -> tuple[np.ndarray, np.ndarray]:
    """
    Every combination of per-dim (split, cut) options over at most `cores` cores in at most
    `MAX_CHUNKS` chunks: arrays (candidates, dims) of splits, cuts.
    """
    index = np.indices([len(options[d]) for d in dims]).reshape(len(dims), -1).T
    splits = np.stack([np.array([p[0] for p in options[d]])[index[:, i]] for i, d in enumerate(dims)], axis=1)
    cuts = np.stack([np.array([p[1] for p in options[d]])[index[:, i]] for i, d in enumerate(dims)], axis=1)
    keep = (splits.prod(axis=1) <= cores) & (cuts.prod(axis=1) <= MAX_CHUNKS)
    return splits[keep], cuts[keep]


def _blocks(
    dims: Sequence[str], options: Mapping[str, list[tuple[int, int]]], cores: int
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """
    `_grid` in blocks of at most `BLOCK_CANDIDATES`, in its order: the leading dims' options
    are fixed one combination per block (enumeration order is leading dim slowest), those whose
    splits already exceed `cores` or whose cuts exceed `MAX_CHUNKS` skipped. A grid within one
    block is one block, `_grid` itself.
    """
    sizes = [len(options[d]) for d in dims]
    lead = 0
    while math.prod(sizes[lead:]) > BLOCK_CANDIDATES:
        lead += 1
    for prefix in itertools.product(*(options[d] for d in dims[:lead])):
        if (
            math.prod(split for split, _ in prefix) > cores
            or math.prod(cut for _, cut in prefix) > MAX_CHUNKS
        ):
            continue  # every candidate of the block would be dropped
        yield _grid(dims, {**options, **{d: [p] for d, p in zip(dims[:lead], prefix, strict=True)}}, cores)


class _Model:
    """The vectorized cost of candidate (splits, cuts) arrays for one matmul."""

    def __init__(self, space: IterationSpace, target: Target, handoff: Handoff = Handoff()) -> None:
        self.space, self.target, self.handoff = space, target, handoff
        self.dims = list(space.sizes)
        x, *rest = (a for a in space.inputs if a is not None)
        # Products side by side (`IterationSpace.products`): one x tile feeds each y's product,
        # and each product has its own accumulator.
        self.x, self.out = _operand(x), _operand(space.output)
        # fp32 operands are converted to fp16 on the SFU before the PE arrays read them.
        self.x_dtype = x.layout.device_dtype
        self.converts = cost_model.converts_to_fp16(self.x_dtype)
        self.precision = cost_model.pe_precision(self.x_dtype)  # fp8 operands: the fp8 PE rate
        self.ys = [_operand(a) for a in rest[: space.products]]
        self.products = space.products
        # A fused epilogue (`ktir.cores.fusion.anchors_of`): its inputs are read once per output
        # chunk and its intermediates take LX; about one SFU pass per op on the output tile.
        self.epilogue = [_operand(a) for a in rest[space.products :]]
        self.scratch = [_operand(a) for a in space.scratch]
        self.epilogue_passes = len(space.scratch) + 1 if self.scratch or self.epilogue else 0
        self.out_element_bytes = space.output.layout.device_dtype.element_bytes
        self.reduction = [d for d in self.dims if d in space.reduction]
        # Padded iteration sizes: K and N in whole sticks, as the PE arrays read them.
        self.padded = {d: _padded(space, d) for d in self.dims}

    def _column(self, array: np.ndarray, names: Sequence[str] | frozenset[str]) -> np.ndarray:
        columns = [self.dims.index(d) for d in self.dims if d in names]
        return array[:, columns].prod(axis=1) if columns else np.ones(len(array), dtype=np.int64)

    def tile_bytes(self, operand: _Operand, total: np.ndarray) -> np.ndarray:
        """Bytes of one tile when the dims are cut `total` ways (splits times cuts)."""
        return operand.bytes / self._column(total, operand.dims)

    def whole_x_valid(self, cuts: np.ndarray) -> np.ndarray:
        """
        Where x may stay in LX for all chunks: its other dims are not cut (one whole slice per
        core), K is chunked, and several output chunks would otherwise read it again. (With K
        whole the per-chunk x tile is already the slice; ranking those as whole measured
        1.306x against 1.298x on the Llama-3-8B prefill layer: the model then favours
        schedules the simulator runs slower.)
        """
        if self.handoff.resident_x:  # already whole in LX
            return np.zeros(len(cuts), dtype=bool)
        x_other = self.x.dims - set(self.reduction)
        outer = cuts.prod(axis=1) // self._column(cuts, self.reduction)
        return (self._column(cuts, x_other) == 1) & (self._column(cuts, self.reduction) > 1) & (outer > 1)

    def lx_bytes(self, splits: np.ndarray, cuts: np.ndarray, whole_x: np.ndarray) -> np.ndarray:
        """
        LX a core needs: two slots of each input tile (one when unchunked) and the output; a
        whole x takes one slot of its whole slice instead.
        """
        total = splits * cuts
        chunks = cuts.prod(axis=1)
        slots = np.where(chunks > 1, 2, 1)
        ys = sum((self.tile_bytes(y, total) for y in self.ys), np.zeros(len(total)))
        x_whole = self.tile_bytes(self.x, splits)  # x's other dims are not cut where it is whole
        inputs = np.where(whole_x, x_whole + ys * slots, (self.tile_bytes(self.x, total) + ys) * slots)
        out_tile = self.tile_bytes(self.out, total)
        acc = out_tile / self.out_element_bytes * ACCUMULATOR_BYTES * self.products
        staged = inputs + np.where(self._accumulates(splits, cuts), acc, out_tile * slots)
        if not self.epilogue_passes:
            return staged
        extra = sum((self.tile_bytes(e, total) * slots for e in self.epilogue), np.zeros(len(total)))
        extra = extra + sum((self.tile_bytes(t, total) for t in self.scratch), np.zeros(len(total)))
        # an accumulating kernel stages its output after the epilogue as well as the accumulator,
        # and alternates two accumulators over several output chunks
        second = np.where(self._alternates(splits, cuts), acc, 0.0)
        return staged + extra + second + np.where(self._accumulates(splits, cuts), out_tile * slots, 0.0)

    def _alternates(self, splits: np.ndarray, cuts: np.ndarray) -> np.ndarray:
        """Two accumulators (`ktir.cores.chunking.accumulator_slots`): an epilogue, several output chunks."""
        outer = cuts.prod(axis=1) // self._column(cuts, self.reduction)
        return self._accumulates(splits, cuts) & (outer > 1) & (self.epilogue_passes > 0)

    def _conversion(self, total: np.ndarray) -> np.ndarray:
        """SFU cycles a chunk takes to convert its fp32 x and y tiles to fp16; 0 for other types."""
        if not self.converts:
            return np.zeros(len(total))
        tiles = self.tile_bytes(self.x, total) + sum(self.tile_bytes(y, total) for y in self.ys)
        return cost_model.conversion_cycles(tiles / self.x_dtype.element_bytes, self.target)

    def _x_load(self, x_chip: np.ndarray, total: np.ndarray) -> np.ndarray:
        """Load-queue cycles of a chunk's x tile: from LPDDR5, or copied from its resident LX buffer."""
        if self.handoff.resident_x:
            return cost_model.lx_copy_cycles(self.tile_bytes(self.x, total), self.target)
        return cost_model.dma_cycles(x_chip, self.target)

    def _store(self, out_chip: np.ndarray, total: np.ndarray) -> np.ndarray:
        """Store-queue cycles of an output chunk: to LPDDR5, or copied into its resident LX buffer."""
        if self.handoff.kept_output:
            return cost_model.lx_copy_cycles(self.tile_bytes(self.out, total), self.target)
        return cost_model.dma_cycles(out_chip, self.target)

    def _accumulates(self, splits: np.ndarray, cuts: np.ndarray) -> np.ndarray:
        return (self._column(splits, self.reduction) > 1) | (self._column(cuts, self.reduction) > 1)

    def _reads(self, operand: _Operand, splits: np.ndarray) -> np.ndarray:
        """Broadcast reads per chunk of one operand: distinct boxes x ceil(sharers / cohort)."""
        distinct = self._column(splits, operand.dims)
        sharers = splits.prod(axis=1) // distinct
        return distinct * accounting.broadcast_reads(sharers, self.target)

    def _turnaround(self, traffic: np.ndarray, out_chip: np.ndarray, outer: np.ndarray) -> np.ndarray:
        """
        Channel cycles the read/write turnaround (`ktir.sim.timeline.Channel`) costs: the store
        of every output chunk but the last runs while later chunks' loads stream and pays on its
        bytes (at most the bytes read); the last follows the last load and pays nothing.
        """
        reads = traffic - outer * out_chip
        paired = np.minimum(out_chip * (outer - 1), reads)
        return paired * cost_model.turnaround_cycles_per_byte(self.target)

    def cost(
        self, splits: np.ndarray, cuts: np.ndarray, whole_x: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """
        (cycles, LPDDR5 bytes) of each candidate, by the counting of the module docstring; a
        whole x is one load before the first chunk's, and no chunk loads x.
        """
        t = self.target
        total = splits * cuts
        chunks = cuts.prod(axis=1)
        k_chunks = self._column(cuts, self.reduction)
        outer = chunks // k_chunks
        cores = splits.prod(axis=1)
        k_split = self._column(splits, self.reduction)
        x_chip = self.tile_bytes(self.x, total) * self._reads(self.x, splits) * (not self.handoff.resident_x)
        y_chips = [self.tile_bytes(y, total) * self._reads(y, splits) for y in self.ys]
        y_chip = sum(y_chips, np.zeros(len(total)))
        out_chip = self.tile_bytes(self.out, total) * cores / k_split * (not self.handoff.kept_output)
        x_whole_chip = self.tile_bytes(self.x, splits) * self._reads(self.x, splits)
        traffic = chunks * (np.where(whole_x, 0.0, x_chip) + y_chip) + outer * out_chip
        traffic = traffic + np.where(whole_x, x_whole_chip, 0.0)
        y_load = sum(cost_model.dma_cycles(y, t) for y in y_chips)
        load = np.where(whole_x, 0.0, self._x_load(x_chip, total)) + y_load
        x_first = np.where(whole_x, cost_model.dma_cycles(x_whole_chip, t), 0.0)
        store = self._store(out_chip, total)
        rows = self.padded["m"] / total[:, self.dims.index("m")]
        macs = np.prod([self.padded[d] / total[:, i] for i, d in enumerate(self.dims)], axis=0)
        pt = cost_model.pt_cycles(macs, rows, t, self.precision) * self.products
        accumulate = self._accumulates(splits, cuts)
        acc_elements = self.tile_bytes(self.out, total) / self.out_element_bytes
        fill = np.where(accumulate, cost_model.fill_cycles(acc_elements * ACCUMULATOR_BYTES, t), 0.0)
        fill = fill * self.products
        ring = cost_model.ring_cycles(acc_elements, ACCUMULATOR_BYTES, k_split, t) * self.products
        epi_chip = sum((self.tile_bytes(e, total) * self._reads(e, splits) for e in self.epilogue), 0.0)
        traffic = traffic + outer * epi_chip
        # A tile overflowing the PE arrays' accumulator streams part of its operands again
        # (`cost_model.accumulator_reread_fraction`; the simulator charges it on plain matmuls).
        m, n = (self.padded[d] / total[:, self.dims.index(d)] for d in ("m", "n"))
        area = m * n
        plain = self.products == 1 and not self.epilogue_passes
        restream = cost_model.accumulator_reread_fraction(area, t) * (x_chip + y_chip) * plain
        traffic = traffic + chunks * restream
        load = load + np.where(restream > 0, cost_model.dma_cycles(restream, t), 0.0)
        passes = acc_elements * self.epilogue_passes / t.sfu_pass_elems_per_us * t.clock_mhz
        epilogue = cost_model.dma_cycles(epi_chip, t) * (len(self.epilogue) > 0) + passes
        # An fp32 matmul's conversion is a pipeline stage between a chunk's load and its PE time.
        convert = self._conversion(total)
        # A store in the chunk stream shares the load queue's channel time; an accumulating
        # output chunk's store is in `per_outer` instead (it waits for its K loop).
        streamed = np.where(self._accumulates(splits, cuts), 0.0, store * outer / chunks)
        streamed = streamed + self._turnaround(traffic, out_chip, outer) / chunks
        steady = np.maximum(np.maximum(pt, convert), load + streamed)
        # With two accumulators an output chunk's SFU passes run under the next chunk's K loop:
        # hidden up to that loop's length, except the last chunk's, which nothing follows.
        hidden = np.where(self._alternates(splits, cuts), np.minimum(passes, k_chunks * steady), 0.0)
        # An accumulating output chunk waits for its store, zeroing and ring reduction (and its
        # epilogue: the epilogue's inputs and SFU passes on the output tile).
        per_outer = np.where(accumulate, fill + ring + store, 0.0) + epilogue - hidden
        # The first chunk's load fills the pipeline and the last chunk's compute drains it.
        drain = pt + convert + hidden + np.where(accumulate, 0.0, store)
        cycles = x_first + load + (chunks - 1) * steady + outer * per_outer + drain
        return cycles, traffic


def _padded(space: IterationSpace, dim: str) -> float:
    """A dim's size as the PE arrays see it: a dim some tensor sticks on, in whole sticks."""
    size = space.sizes[dim]
    for access in space.accesses:
        host = [i for i, d in enumerate(access.dims) if d == dim]
        if host and sticks.layout_stick(access.layout, access.shape) == host[0]:
            per_stick = access.layout.device_dtype.elems_per_stick
            return float(-(-size // per_stick) * per_stick)
    return float(size)


_Costed = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]
"""Candidates with their cost: arrays of splits, cuts, whole_x, cycles and traffic, row by row."""


def _fastest(costed: _Costed, limit: int) -> _Costed:
    """
    The `limit` fastest of `costed`, fastest first. Fastest; then fewest chunks; then most cores
    (less work each if the model is off); then x chunked; then the first in the given order
    (np.lexsort is stable, its last key is the primary one).
    """
    splits, cuts, whole_x, cycles, traffic = costed
    order = np.lexsort((whole_x, -splits.prod(axis=1), cuts.prod(axis=1), np.round(cycles, 3)))[:limit]
    return splits[order], cuts[order], whole_x[order], cycles[order], traffic[order]


def _costed(model: _Model, splits: np.ndarray, cuts: np.ndarray, lx_bytes: int) -> _Costed:
    """Every candidate that fits `lx_bytes`, each also with x whole where that is valid, costed."""
    valid = model.whole_x_valid(cuts)
    whole_x = np.concatenate([np.zeros(len(cuts), dtype=bool), np.ones(int(valid.sum()), dtype=bool)])
    splits, cuts = np.concatenate([splits, splits[valid]]), np.concatenate([cuts, cuts[valid]])
    fits = model.lx_bytes(splits, cuts, whole_x) <= lx_bytes
    splits, cuts, whole_x = splits[fits], cuts[fits], whole_x[fits]
    cycles, traffic = model.cost(splits, cuts, whole_x)
    return splits, cuts, whole_x, cycles, traffic


def _ranked(
    model: _Model, blocks: Iterable[tuple[np.ndarray, np.ndarray]], lx_bytes: int, limit: int
) -> list[Schedule]:
    """
    The `limit` fastest candidates that fit `lx_bytes`, fastest first, of candidates given in
    blocks (`_blocks`): each block's `limit` fastest, then the fastest of them by the same keys.
    The sort is stable and the blocks come in enumeration order, so the result is what one pass
    over the whole grid gives.
    """
    best = [_fastest(_costed(model, splits, cuts, lx_bytes), limit) for splits, cuts in blocks]
    if not best:
        return []
    joined = cast(_Costed, tuple(np.concatenate(column) for column in zip(*best, strict=True)))
    splits, cuts, whole_x, cycles, traffic = _fastest(joined, limit)
    dims = model.dims
    return [
        Schedule(
            {d: int(splits[i, j]) for j, d in enumerate(dims)},
            {d: int(cuts[i, j]) for j, d in enumerate(dims)},
            float(cycles[i]),
            float(traffic[i]),
            bool(whole_x[i]),
        )
        for i in range(len(cycles))
    ]


def _candidates(
    space: IterationSpace, cores: int, target: Target, span: int | None
) -> tuple[_Model, Iterator[tuple[np.ndarray, np.ndarray]]] | None:
    """
    The model and every (splits, cuts) candidate over at most `cores` cores, in blocks
    (`_blocks`), with `span` only those within the address span (`_within_span`); None when
    there are more than `MAX_CANDIDATES`.
    """
    model = _Model(space, target)
    units = granules(space.sizes, space.accesses, space.whole)
    options = {d: _pairs(units[d], cores) for d in model.dims}
    if math.prod(len(o) for o in options.values()) > MAX_CANDIDATES:
        return None

    def spanned(splits: np.ndarray, cuts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if span is None:
            return splits, cuts
        keep = _within_span(space, model.dims, splits, span)
        return splits[keep], cuts[keep]

    return model, (spanned(*block) for block in _blocks(model.dims, options, cores))


def best_schedule(
    space: IterationSpace, cores: int, lx_bytes: int, target: Target, span: int | None = None
) -> Schedule | None:
    """
    The fastest (splits, cuts) of a matmul over at most `cores` cores whose staging buffers
    take at most `lx_bytes` of LX per core and, with `span`, whose every core addresses at
    most `span` bytes of each tensor (`_within_span`); None if no candidate fits or there are
    more than `MAX_CANDIDATES`.
    """
    grid = _candidates(space, cores, target, span)
    if grid is None:
        return None
    ranked = _ranked(*grid, lx_bytes, 1)
    return ranked[0] if ranked else None


def memory_bound(schedule: Schedule, space: IterationSpace, target: Target) -> bool:
    """
    Whether a matmul schedule's LPDDR5 transfers take at least as long as its PE arrays' work
    (`cost_model.transfer_cycles` of its traffic against `cost_model.pt_cycles` per core).
    """
    model = _Model(space, target)
    cores = math.prod(schedule.splits.values())
    macs = math.prod(model.padded.values()) / cores
    rows = model.padded["m"] / schedule.splits["m"]
    pt = float(cost_model.pt_cycles(macs, rows, target, model.precision)) * model.products
    return cost_model.transfer_cycles(schedule.traffic, target) >= pt


def ranked_splits(
    space: IterationSpace, cores: int, lx_bytes: int, target: Target, span: int | None = None, limit: int = 8
) -> list[dict[str, int]]:
    """
    The distinct work divisions among a matmul's `64 * limit` fastest schedules (`best_schedule`'s
    candidates, ranked the same way), at most `limit`, fastest first; [] when none fits or there
    are more than `MAX_CANDIDATES`.
    """
    grid = _candidates(space, cores, target, span)
    if grid is None:
        return []
    found: list[dict[str, int]] = []
    for schedule in _ranked(*grid, lx_bytes, 64 * limit):  # a split has many cuts
        if schedule.splits not in found:
            found.append(schedule.splits)
        if len(found) == limit:
            break
    return found


def _within_span(space: IterationSpace, dims: Sequence[str], splits: np.ndarray, span: int) -> np.ndarray:
    """
    Where each candidate split keeps every core's address span of every tensor at most `span`
    (the reference's rule, `ktir.cores.work_division.per_core_span`: the outermost device dim a
    core's slice spans more than one position of, times everything inside it). Splitting an
    inner dim alone never shrinks it: the LM head's 2048 x 128256 fp16 weight ([2004 sticks of
    N, 2048, 64]) spans 525 MB unless N is split, and fits 256 MiB from N split in 2.
    """
    if all(a.layout.device_bytes <= span for a in space.accesses):
        return np.ones(len(splits), dtype=bool)
    unique, inverse = np.unique(splits, axis=0, return_inverse=True)
    fits = np.array(
        [
            all(per_core_span(a, dict(zip(dims, map(int, row), strict=True))) <= span for a in space.accesses)
            for row in unique
        ],
        dtype=bool,
    )
    return fits[inverse.reshape(-1)]


def ranked_cuts(
    space: IterationSpace,
    splits: Mapping[str, int],
    lx_bytes: int,
    target: Target,
    limit: int = 16,
    handoff: Handoff = Handoff(),
) -> list[Schedule]:
    """
    The `limit` fastest chunk cuts of a matmul under a fixed split that fit `lx_bytes`, best
    first; `handoff` names the tensors that stay in LX.
    """
    model = _Model(space, target, handoff)
    units = granules(space.sizes, space.accesses, space.whole)
    options = {d: [(splits[d], c) for c in divisors(units[d] // splits[d])] for d in model.dims}
    fixed_splits, cuts = _grid(model.dims, options, math.prod(splits.values()))
    return _ranked(model, [(fixed_splits, cuts)], lx_bytes, limit)


__all__ = [
    "Handoff",
    "Schedule",
    "best_schedule",
    "is_matmul",
    "memory_bound",
    "ranked_cuts",
    "ranked_splits",
]
