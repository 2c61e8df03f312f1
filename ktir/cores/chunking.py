"""
Chunking a core's slice so that its tiles fit in the scratchpad, and placing them there.

A kernel stages one tile of every tensor it touches in LX. When a core's whole slice does not
fit, the slice is cut into chunks along its cuttable dims (`ktir.cores.tiling.granules`, never a
dim the core must see whole) and processed in a loop with two slots per buffer, so the DMA
of chunk i+1 can overlap the compute of chunk i. A matmul whose K is chunked or split across
cores accumulates into one fp32 tile instead of staging its output.

`plan_chunks` grows the chunk counts greedily, each step taking the cut that shrinks the
footprint most, until the buffers fit in the free LX ranges at that point of the program.
Example: an fp16 matmul [128, 11008] @ [11008, 4096] with {m: 32} gives each core 4 rows and the
whole 86 MiB weight; 2 slots of one 64-column stick of y is 2 x 1.4 MB, so K is chunked too.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ktir.cores.dataflow import ACCUMULATOR_BYTES, MAX_CHUNKS, is_matmul, ranked_cuts
from ktir.cores.factors import divisors
from ktir.cores.fusion import anchors_of, scratch_bytes
from ktir.cores.iteration import iteration_space
from ktir.cores.kernels import Kernel
from ktir.cores.lx_placement import align
from ktir.cores.space import IterationSpace
from ktir.cores.tiling import Access, combine, device_box, granules, nested
from ktir.cores.work_division import core_slices
from ktir.dialects.ktir import structured as st
from ktir.hardware import accounting, cost_model
from ktir.hardware.target import Target
from ktir.ir.values import is_tensor, shape_of


class ChunkingError(ValueError):
    """The kernel's tiles cannot fit in LX however its slice is chunked."""


@dataclass(frozen=True)
class Staged:
    """One LX buffer of a kernel: `slots` tiles of `extent` positions of `element_bytes` each."""

    role: str  # "in<i>", "out<i>", "scratch", "online", or "acc" (and "acc<p>" for a product p > 0)
    slots: int
    extent: tuple[int, ...]
    element_bytes: int
    address: int = 0

    @property
    def bytes(self) -> int:
        """Bytes the buffer takes, rounded up to the LX alignment by `place`."""
        return self.slots * math.prod(self.extent) * self.element_bytes


@dataclass(frozen=True)
class ChunkPlan:
    """A kernel's chunk counts per dim (1 = whole) and its placed staging buffers."""

    cuts: dict[str, int]
    buffers: tuple[Staged, ...]
    whole_x: bool = False
    """A matmul's x stays in LX: its whole slice is loaded once (`ktir.dma_load ... whole`)."""

    @property
    def chunks(self) -> int:
        """Chunks per core."""
        return math.prod(self.cuts.values())

    def pieces(self, reduction: Sequence[str]) -> list[dict[str, int]]:
        """Each chunk's index per dim, reduction dims fastest (they accumulate innermost)."""
        fastest = [d for d in reduction if self.cuts.get(d, 1) > 1][:1]
        return core_slices(self.cuts, fastest)


def accumulates(kernel: Kernel, cuts: dict[str, int]) -> bool:
    """Whether the kernel adds up partial sums: a matmul with K split or chunked."""
    return kernel.space.unit == "pt" and (
        kernel.k_split > 1 or any(cuts.get(d, 1) > 1 for d in kernel.space.reduction)
    )


def invariant(kernel: Kernel, access: Access, cuts: Mapping[str, int]) -> bool:
    """
    Whether every chunk of a core reads the same tile of `access` (no chunked dim indexes it),
    so it is loaded once before the chunk loop into a one-slot buffer. Matmuls keep one load
    per chunk, as their dataflow model (`ktir.cores.dataflow`) schedules them.
    """
    if is_matmul(kernel.space) or math.prod(cuts.values()) == 1:
        return False
    return all(cuts.get(d, 1) == 1 for d in access.dims if d is not None)


def _buffers(kernel: Kernel, cuts: dict[str, int], stick_bytes: int, whole_x: bool = False) -> list[Staged]:
    total = combine(kernel.splits, cuts)
    slots = 2 if math.prod(cuts.values()) > 1 else 1
    staged = []
    x = next((i for i, a in enumerate(kernel.space.inputs) if a is not None), None)
    for i, access in enumerate(kernel.space.inputs):
        if access is None:
            continue
        if whole_x and i == x:  # the core's whole slice: K chunks no longer cut it
            uncut = combine(
                kernel.splits, {d: 1 if d in kernel.space.reduction else c for d, c in cuts.items()}
            )
            staged.append(_staged(f"in{i}", 1, access, uncut))
            continue
        staged.append(_staged(f"in{i}", 1 if invariant(kernel, access, cuts) else slots, access, total))
    if kernel.space.scratch:
        staged.append(Staged("scratch", 1, (scratch_bytes(kernel.space, total, stick_bytes),), 1))
    output = kernel.space.output
    if accumulates(kernel, cuts):
        _, extent = device_box(output, total, {})
        for role in accumulator_roles(kernel.space):
            staged.append(Staged(role, accumulator_slots(kernel, cuts), extent, ACCUMULATOR_BYTES))
        if kernel.space.chunkable:  # an online softmax also keeps each row's running max and sum
            per_stick = output.layout.device_dtype.elems_per_stick
            row = -(-kernel.space.sizes["e"] // per_stick) * per_stick  # a row of E in whole sticks
            staged.append(Staged("online", 1, (2 * ACCUMULATOR_BYTES * (math.prod(extent) // row),), 1))
    if not accumulates(kernel, cuts) or has_epilogue(kernel.space):
        staged.append(_staged("out0", slots, output, total))
    return staged


def recorded_plan(
    kernel: Kernel, cuts: Mapping[str, int], whole_x: bool, addresses: Mapping[str, int], stick_bytes: int
) -> ChunkPlan:
    """
    The plan `ktir-plan-kernels` recorded: chunks `cuts` per dim (a dim not named: 1), x kept
    whole or not, and the staging buffers those imply (roles, slots, extents) at `addresses`.
    Raises `ChunkingError` when a cut names no dim of the kernel or the roles differ from the
    buffers the cuts imply.
    """
    unknown = sorted(set(cuts) - set(kernel.space.sizes))
    if unknown:
        raise ChunkingError(f"chunk plan cuts {', '.join(unknown)}, not dims of {sorted(kernel.space.sizes)}")
    full = {d: cuts.get(d, 1) for d in kernel.space.sizes}
    staged = _buffers(kernel, full, stick_bytes, whole_x)
    roles = [b.role for b in staged]
    if sorted(roles) != sorted(addresses):
        raise ChunkingError(f"LX buffers {sorted(addresses)} are not the chunk plan's {sorted(roles)}")
    placed = tuple(Staged(b.role, b.slots, b.extent, b.element_bytes, addresses[b.role]) for b in staged)
    return ChunkPlan(full, placed, whole_x)


def chunk_inputs(kernel: Kernel, cuts: Mapping[str, int]) -> int:
    """
    How many of the op's tensor inputs every chunk loads: x and each y of an accumulating
    matmul epilogue (its other inputs load once per output tile), else all of them.
    """
    op = kernel.op
    anchors = anchors_of(op.members) if isinstance(op, st.FusedOp) else ()
    if anchors and accumulates(kernel, dict(cuts)):
        return 1 + len(anchors)
    return len([v for v in op.operands if is_tensor(v)])


def input_role(kernel: Kernel, tensor_index: int) -> str:
    """The staging buffer (`in<i>`, `i` the operand number) of the op's tensor input `tensor_index`."""
    positions = [i for i, a in enumerate(kernel.space.inputs) if a is not None]
    return f"in{positions[tensor_index]}"


def accumulator_roles(space: IterationSpace) -> list[str]:
    """The accumulator buffers of a matmul kernel, one per product: `acc`, `acc1`, ..."""
    return ["acc" if p == 0 else f"acc{p}" for p in range(space.products)]


def accumulator_slots(kernel: Kernel, cuts: dict[str, int]) -> int:
    """
    Accumulators of a matmul kernel: two when an epilogue runs on each of several output tiles
    (the next tile accumulates in one while the epilogue reads the other), else one.
    """
    outer = math.prod(c for d, c in cuts.items() if d not in kernel.space.reduction)
    return 2 if has_epilogue(kernel.space) and outer > 1 else 1


def has_epilogue(space: IterationSpace) -> bool:
    """Whether a matmul kernel runs fused ops on its output tiles (`ktir.cores.fusion.anchors_of`)."""
    return is_matmul(space) and bool(space.scratch)  # the matmul's own result is one


def _staged(role: str, slots: int, access: Access, cuts: dict[str, int]) -> Staged:
    _, extent = device_box(access, cuts, {})
    return Staged(role, slots, extent, access.layout.device_dtype.element_bytes)


def smallest_footprint(space: IterationSpace, target: Target) -> int:
    """LX bytes per core of `space`'s smallest chunk on `target`: every cuttable dim cut to one granule."""
    kernel = Kernel(None, space, {d: 1 for d in space.sizes})  # pyright: ignore[reportArgumentType]  # no op: only the space and splits are read
    units = granules(space.sizes, space.accesses, space.whole)
    return sum(b.bytes for b in _buffers(kernel, dict(units), target.stick_bytes))


def place(
    buffers: Sequence[Staged], free: Sequence[tuple[int, int]], alignment: int, from_top: bool = False
) -> list[Staged] | None:
    """
    First-fit the buffers (largest first) into the free [lo, hi) ranges; None if one does not
    fit. `from_top` fills from the highest addresses down (a prefetched buffer keeps clear of
    the previous kernel's, which sit low, and leaves the rest of the plan one low range).
    """
    ranges = [list(r) for r in (reversed(free) if from_top else free)]
    placed: dict[str, Staged] = {}
    for buffer in sorted(buffers, key=lambda b: -b.bytes):
        size = align(buffer.bytes, alignment)
        for r in ranges:
            start = (r[1] - size) // alignment * alignment if from_top else align(r[0], alignment)
            if r[0] <= start and start + size <= r[1]:
                placed[buffer.role] = Staged(
                    buffer.role, buffer.slots, buffer.extent, buffer.element_bytes, start
                )
                if from_top:
                    r[1] = start
                else:
                    r[0] = start + size
                break
        else:
            return None
    return [placed[b.role] for b in buffers]


def plan_matmul_chunks(
    kernel: Kernel, free: Sequence[tuple[int, int]], alignment: int, target: Target
) -> ChunkPlan | None:
    """
    The fastest chunking of a matmul kernel by the dataflow model (`ktir.cores.dataflow`) whose
    buffers fit in `free`; None when the model's candidates do not place (fragmented LX).
    """
    room = sum(hi - lo for lo, hi in free)
    for schedule in ranked_cuts(kernel.space, kernel.splits, room, target):
        cuts = {d: schedule.cuts.get(d, 1) for d in kernel.space.sizes}
        placed = place(_buffers(kernel, cuts, target.stick_bytes, schedule.whole_x), free, alignment)
        if placed is not None:
            return ChunkPlan(cuts, tuple(placed), schedule.whole_x)
    return None


PIPELINE_CHUNK_BYTES = 128 * 1024
"""
Per-core bytes a chunk of a non-matmul kernel may load before it is cut further even though it
fits: the first chunk's load and the last chunk's compute overlap nothing, so smaller chunks
shorten that fill and drain, while each chunk's DMAs pay their setup (`Target.dma_setup_cycles`,
500; 32 cores x 128 KiB take 30.7 k cycles of transfer). A kernel whose DMA outlasts its SFU work
streams chunks of this size (a 200 MB add runs within 10% of the LPDDR5 bandwidth); one whose
SFU work outlasts its DMA (`sfu_bound`) hides its DMA whatever the chunk size, and gains from
a short fill and drain: it streams `SFU_BOUND_CHUNK_BYTES`.
"""

SFU_BOUND_CHUNK_BYTES = 16 * 1024
"""
The streaming cut of an SFU-bound kernel, and the smallest chunk any kernel streams. On the
Llama-3-8B prefill layer (its attention and RMSNorm kernels are SFU-bound) 16 KiB measured
1.436x the bound against 1.435x, 1.440x, 1.459x and 1.464x for 8, 32, 64 and 128 KiB (8 KiB
issues twice the DMAs for 0.001x).
"""

PIPELINE_MIN_CHUNKS = 8
"""
Chunks a non-matmul kernel streams at least, as long as each still loads `SFU_BOUND_CHUNK_BYTES`
per core: a small kernel in one or two chunks overlaps nothing of its load, compute and store.
On the Llama-3-8B prefill layer this took the rotaries and the final RMSNorm from 1-2 chunks to
4-8 and the layer from 1.441x to 1.434x the bound.
"""


def sfu_bound(kernel: Kernel, target: Target) -> bool:
    """
    Whether a non-matmul kernel's SFU work outlasts its LPDDR5 traffic, estimated per core:
    each op (each member of a fused kernel; a view that moves no data is free) on its result's share of the
    elements (`cost_model.sfu_cycles`), attention on its scores, against every tensor read or
    written once. Without an op (a division estimate) the answer is False.
    """
    op = kernel.op
    if op is None:
        return False
    cores = kernel.cores
    members = list(op.members) if isinstance(op, st.FusedOp) else [op]
    sfu = 0.0
    for member in members:
        if isinstance(member, st.AttentionOp):
            q, k = shape_of(member.q.type), shape_of(member.k.type)
            sfu += cost_model.attention_sfu_cycles(math.prod(q[:4]) * k[2] / cores, target)
            continue
        moves_no_data = isinstance(member, st.ShapeChangeOp) and iteration_space(member) is None
        if moves_no_data or isinstance(member, st.MatmulBase) or not member.results:
            continue
        out_elements = math.prod(shape_of(member.results[0].type)) / cores
        source = next((v for v in member.operands if is_tensor(v)), None)
        in_elements = math.prod(shape_of(source.type)) / cores if source is not None else 0.0
        sfu += cost_model.sfu_cycles(member, int(in_elements), int(out_elements), target)
    traffic = sum(a.layout.device_bytes for a in kernel.space.accesses)
    return sfu > cost_model.transfer_cycles(traffic, target)


def _streamed_bytes(kernel: Kernel, cuts: dict[str, int]) -> int:
    """Per-core bytes one chunk loads: the input tiles that are not loaded once for all chunks."""
    total = combine(kernel.splits, cuts)
    return sum(
        _staged("in", 1, a, total).bytes
        for a in kernel.space.inputs
        if a is not None and not invariant(kernel, a, cuts)
    )


def load_bytes(kernel: Kernel, cuts: Mapping[str, int], target: Target) -> tuple[float, float]:
    """
    (every chunk, the first chunk): LPDDR5 bytes a non-matmul kernel's input loads move under
    `cuts`, counted as the simulator charges a load: each distinct box the cores read, once per
    broadcast cohort of its readers (`Target.broadcast_cohort`); an `invariant` tile once for
    all chunks, any other once per chunk, even when consecutive chunks read the same box.

    Example: attention on 32 cores with {b0: 8, h: 4} gives each core 8 query heads, 2 groups of
    4 that share a key and value head; chunks cut 4 ways along h load 2 query heads each, so
    every key and value head crosses LPDDR5 twice; cut 2 ways (one group each), once.
    """
    total = combine(kernel.splits, cuts)
    chunks = math.prod(cuts.values())
    first_chunk = dict.fromkeys(cuts, 0)
    every = first = 0.0
    for access in kernel.space.inputs:
        if access is None:
            continue
        starts = [
            device_box(access, total, nested(kernel.splits, piece, cuts, first_chunk))[0]
            for piece in kernel.slices
        ]
        _, readers = np.unique(np.array(starts), axis=0, return_counts=True)
        _, extent = device_box(access, total, {})
        copies = float(np.sum(accounting.broadcast_reads(readers, target)))
        tile = copies * math.prod(extent) * access.layout.device_dtype.element_bytes
        first += tile
        every += tile * (1 if invariant(kernel, access, cuts) else chunks)
    return every, first


def _streams_cheaply(kernel: Kernel, cuts: dict[str, int], trial: dict[str, int], target: Target) -> bool:
    """
    Whether cutting fitting chunks `cuts` further into `trial`, only to stream them, pays: the
    bytes it adds to the loads (an input the new cut does not index, read again by every new
    chunk) are at most those it takes off the first chunk's load, the pipeline fill nothing
    overlaps. Cutting attention's queries while its chunks also walk heads would reload every
    key and value head once per query chunk: at batch 8 of a Llama-3.2-1B prefill that was
    4,096 chunks moving 128 times the compulsory bytes.
    """
    every, first = load_bytes(kernel, cuts, target)
    trial_every, trial_first = load_bytes(kernel, trial, target)
    return trial_every - every <= first - trial_first


def plan_chunks(kernel: Kernel, free: Sequence[tuple[int, int]], alignment: int, target: Target) -> ChunkPlan:
    """
    The chunking of a kernel whose buffers fit in `free`: a matmul's fastest by the dataflow
    model (`plan_matmul_chunks`), otherwise (or when none of its candidates places) the
    fewest-steps greedy chunking of the module docstring, cut further while a chunk streams more
    than `PIPELINE_CHUNK_BYTES` per core (`SFU_BOUND_CHUNK_BYTES` for an SFU-bound kernel), or
    is one of fewer than `PIPELINE_MIN_CHUNKS` of at least `SFU_BOUND_CHUNK_BYTES` (to overlap
    loads with compute), by cuts that add no more to the loads than they take off the first
    chunk's (`_streams_cheaply`). Dims the space may walk in chunks though no division splits them
    (`IterationSpace.chunkable`: attention's keys) are cut only when nothing fits without.
    Raises `ChunkingError` naming the bytes needed and available when nothing fits.
    """
    space = kernel.space
    if is_matmul(space):
        planned = plan_matmul_chunks(kernel, free, alignment, target)
        if planned is not None:
            return planned
    try:
        return _greedy_chunks(kernel, free, alignment, target, space.whole)
    except ChunkingError:
        if not space.chunkable:
            raise
    # Attention whose keys and values do not fit whole walks its keys (online softmax): first
    # only them, so its queries stay in LX and each key and value crosses LPDDR5 once; if the
    # queries and their accumulator do not fit either, their chunks re-read the keys. Each key
    # chunk rescales the accumulator on the SFU, so the fewest chunks that fit are best.
    try:
        return _greedy_chunks(kernel, free, alignment, target, frozenset(space.sizes) - space.chunkable, 0)
    except ChunkingError:
        return _greedy_chunks(kernel, free, alignment, target, space.whole - space.chunkable, 0)


def _next_cuts(
    kernel: Kernel, cuts: dict[str, int], units: dict[str, int], whole: frozenset[str], stick_bytes: int
) -> list[tuple[int, bool, dict[str, int]]]:
    """
    The greedy step's options: each dim not in `whole` cut into its next larger number of chunks
    (within `MAX_CHUNKS`), as (LX bytes of the buffers in sticks of `stick_bytes`, whether the
    dim is reduced, the cuts).
    """
    options = []
    for dim in kernel.space.sizes:
        if dim in whole:  # never cut (the division may still split it)
            continue
        per_core = units[dim] // kernel.splits[dim]
        larger = [c for c in divisors(per_core) if c > cuts[dim]]
        if not larger or math.prod(cuts.values()) // cuts[dim] * larger[0] > MAX_CHUNKS:
            continue
        trial = cuts | {dim: larger[0]}
        footprint = sum(b.bytes for b in _buffers(kernel, trial, stick_bytes))
        options.append((footprint, dim in kernel.space.reduction, trial))
    return options


def _greedy_chunks(
    kernel: Kernel,
    free: Sequence[tuple[int, int]],
    alignment: int,
    target: Target,
    whole: frozenset[str],
    stream: int | None = None,
) -> ChunkPlan:
    """
    `plan_chunks` for a non-matmul kernel: the greedy cuts, never of a dim in `whole`, until a
    chunk streams at most `stream` bytes per core (default: the module's streaming rule; 0:
    the first chunking that fits).
    """
    space = kernel.space
    units = granules(space.sizes, space.accesses, whole)
    cuts = {d: 1 for d in space.sizes}
    fitting: ChunkPlan | None = None
    if stream is None:
        stream = SFU_BOUND_CHUNK_BYTES if sfu_bound(kernel, target) else PIPELINE_CHUNK_BYTES
        stream = max(SFU_BOUND_CHUNK_BYTES, min(stream, _streamed_bytes(kernel, cuts) // PIPELINE_MIN_CHUNKS))
    while True:
        buffers = _buffers(kernel, cuts, target.stick_bytes)
        placed = place(buffers, free, alignment)
        if placed is not None:
            fitting = ChunkPlan(dict(cuts), tuple(placed))
            if stream == 0 or _streamed_bytes(kernel, cuts) <= stream:
                return fitting
        options = _next_cuts(kernel, cuts, units, whole, target.stick_bytes)
        if fitting is not None:  # the chunks fit: cut further only to stream, if that pays
            options = [o for o in options if _streams_cheaply(kernel, cuts, o[2], target)]
            if not options:
                return fitting
        if not options:
            need = sum(b.bytes for b in buffers)
            room = sum(hi - lo for lo, hi in free)
            raise ChunkingError(
                f"needs {need:,} bytes of LX per core (core 0) for its smallest chunk, "
                f"more than the {room:,} bytes free"
            )
        cuts = min(options, key=lambda o: (o[0], o[1]))[2]
