"""
`ktir-lower-to-cores`: turn every divided graph op into a `ktir.kernel`, the program its
cores run (core-level ktir, `ktir.dialects.ktir.core`), as `ktir-plan-kernels` planned it.

The pass decides nothing: each op with a `work_division` must carry its plan
(`ktir.chunk_plan`, `ktir.lx_buffers`, and `ktir.prefetch` when some first loads are
prefetches; without them it is a located error asking for `ktir-plan-kernels` first, as MLIR
passes report an unmet precondition). From the recorded chunking it derives the staging
buffers (`ktir.cores.chunking.recorded_plan`: roles, slots, extents) at the recorded addresses,
then

1. writes one `#ktir.tile` per tensor: its device box on each core and in each chunk;
2. builds the program: `ktir.core_id`, the `ktir.lx_alloc`s, and a loop over chunks that
   loads the input tiles (`ktir.dma_load`, the recorded first ones `prefetch`), runs the op on
   them (`ktir.compute`, whose payload is the graph op itself) and stores the result tile
   (`ktir.dma_store`). A matmul with a chunked or split K zeroes an fp32 accumulator,
   accumulates over an inner loop of K chunks, adds up K partners' partial sums over the ring
   (`ktir.ring_reduce`), and lets the first partner store.

A result the scratchpad plan keeps in LX (`lx_address`) is stored to a resident buffer at that
address instead of device memory, and its consumers load it from there. The plan's attributes
do not reach the kernel (core-level IR does not carry them). Views that move no data and
`ktir.cpu_fallback` stay at function level. The result is checked statically
(`ktir.cores.check`, also the pass `ktir-check-cores`): an LX overflow, a prefetch that
conflicts with the previous kernel or an out-of-bounds DMA is a located error naming the op,
core and bytes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import cast

from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import (
    DictionaryAttr,
    IndexType,
    IntegerAttr,
    TensorType,
    f32,
    i8,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import Rewriter

from ktir.cores.check import check_function
from ktir.cores.chunking import (
    ChunkingError,
    ChunkPlan,
    Staged,
    accumulates,
    accumulator_roles,
    chunk_inputs,
    input_role,
    invariant,
    recorded_plan,
)
from ktir.cores.fusion import anchors_of
from ktir.cores.kernels import Kernel
from ktir.cores.tiling import Access, combine, device_box, nested
from ktir.dialects.ktir import core
from ktir.dialects.ktir import structured as st
from ktir.dialects.ktir.attributes import CombineKind, ComputeUnit, TileAttr
from ktir.dialects.ktir.core import (
    CHUNK_PLAN_ATTR,
    CORE_ORDER_ATTR,
    LX_ADDRESS_ATTR,
    LX_BUFFERS_ATTR,
    LX_BYTES_ATTR,
    PREFETCH_ATTR,
    STATE_ATTRIBUTES,
    WORK_DIVISION_ATTR,
)
from ktir.hardware.target import Target
from ktir.ir.diagnostics import op_error
from ktir.ir.state import read_chunk_plan, read_lx_buffers, read_prefetch, resident_placement
from ktir.passes.function_pass import FunctionPass
from ktir.passes.plan_kernels import kernel_of_divided


def tile_of(access: Access, kernel: Kernel, plan: ChunkPlan) -> TileAttr:
    """The `#ktir.tile` of `access`: its box extent, each core's start and each chunk's offset."""
    total = combine(kernel.splits, plan.cuts)
    no_chunk = {d: 0 for d in plan.cuts}
    starts = [
        device_box(access, total, nested(kernel.splits, piece, plan.cuts, no_chunk))[0]
        for piece in kernel.slices
    ]
    chunk_starts = [device_box(access, total, piece)[0] for piece in plan.pieces(kernel.space.reduction)]
    _, extent = device_box(access, total, {})
    return TileAttr.make(extent, starts, chunk_starts)


def _element_type(value: SSAValue) -> Attribute:
    assert isinstance(value.type, TensorType)
    return value.type.element_type


class _Builder:
    """Appends ops to a block, with index constants cached."""

    def __init__(self, block: Block) -> None:
        self.block = block
        self.constants: dict[int, SSAValue] = {}

    def add(self, op: Operation) -> Operation:
        self.block.add_op(op)
        return op

    def index(self, value: int) -> SSAValue:
        if value not in self.constants:
            self.constants[value] = self.add(arith.ConstantOp(IntegerAttr(value, IndexType()))).results[0]
        return self.constants[value]


def _payload(op: Operation) -> Region:
    block = Block(arg_types=[v.type for v in op.operands])
    clone = op.clone(value_mapper=dict(zip(op.operands, block.args, strict=True)))
    for name in STATE_ATTRIBUTES:  # the payload is the bare op; the state is the kernel's
        clone.attributes.pop(name, None)
    block.add_ops([clone, core.YieldOp(*clone.results)])
    return Region(block)


def build_kernel(kernel: Kernel, plan: ChunkPlan, prefetch: frozenset[int] = frozenset()) -> core.KernelOp:
    """
    The `ktir.kernel` of a divided op under a chunk plan (see the module docstring); the first
    loads of the input tensors `prefetch` (indices among the op's tensor operands) are
    `ktir.dma_load ... prefetch`.
    """
    return _KernelBody(kernel, plan, prefetch).build()


class _KernelBody:
    """
    Builds one kernel's body: LX buffers, resident sources, then the chunk loops (outer chunks,
    and inside them the reduction chunks of an accumulating matmul).
    """

    def __init__(self, kernel: Kernel, plan: ChunkPlan, prefetch: frozenset[int] = frozenset()) -> None:
        self.kernel, self.plan, self.op = kernel, plan, kernel.op
        self.prefetch = prefetch
        # Inputs whose chunk-0 load is a prefetch before the loops: the loops enclosing chunk 0
        # are peeled (`_loop`) and chunk 0 does not load them again (`_chunk`).
        self.first_chunk_skips: set[int] = set()
        # Per output tile built first (tile 0, then tile 1), the epilogue inputs whose load for
        # that tile is a prefetch: the loop over output tiles is peeled around those tiles and
        # their epilogues do not load them again (`_epilogue_inputs`).
        self.first_tile_skips: list[set[int]] = []
        space = kernel.space
        self.accesses = [a for a in space.inputs if a is not None] + [space.output]
        self.tensors = [v for v in self.op.operands if isinstance(v.type, TensorType)] + list(self.op.results)
        self.body = Block(arg_types=[v.type for v in self.tensors])
        self.n_inputs = len(self.tensors) - 1
        self.reduction_chunks = math.prod(plan.cuts.get(d, 1) for d in space.reduction)
        self.slots = 2 if plan.chunks > 1 else 1
        self.accumulate = accumulates(kernel, plan.cuts)
        inputs = [a for a in space.inputs if a is not None]
        self.hoisted = {i for i, a in enumerate(inputs) if invariant(kernel, a, plan.cuts)}
        # x kept in LX (`ChunkPlan.whole_x`): its whole slice loads once, before the chunk loop.
        self.whole = {0} if plan.whole_x else set()
        self.out_role = "acc" if self.accumulate else "out0"
        # A fused matmul epilogue on an accumulating kernel: K chunks feed each product's
        # accumulator from x and its y only; each output tile then runs the epilogue into
        # `out0`, which is stored.
        self.anchors = anchors_of(self.op.members) if isinstance(self.op, st.FusedOp) else ()
        self.epilogue = self.accumulate and bool(self.anchors)
        self.matmul_inputs = chunk_inputs(kernel, plan.cuts)
        self.accumulators = accumulator_roles(kernel.space) if self.accumulate else []
        # Two accumulators (`ktir.cores.chunking.accumulator_slots`): output tile n accumulates
        # in slot n % 2 while the SFU runs the epilogue of tile n - 1 from the other slot.
        self.alternating = any(b.role == "acc" and b.slots == 2 for b in plan.buffers)

    def build(self) -> core.KernelOp:
        """The `ktir.kernel` op, its body built."""
        b = _Builder(self.body)
        self.core_id = b.add(core.CoreIdOp()).results[0]
        self.buffers = self._buffers(b)
        self.sources = self._sources(b)
        # prefetches first (chunk 0's, then output tile 0's epilogue inputs), then the tiles
        # every chunk reads (loaded once, before the chunk loop) and x's whole slice
        once = sorted(self.hoisted | self.whole)
        self._first_loads(b, [i for i in sorted(self.prefetch) if i < self.matmul_inputs], once)
        self._prefetch_epilogue_inputs(b)
        self._first_loads(b, [i for i in once if i not in self.prefetch], once)
        outer_count = self.plan.chunks // self.reduction_chunks
        if self.alternating:  # both accumulators start at zero; each is zeroed again once read
            for role in self.accumulators:
                for slot in (0, 1):
                    b.add(core.FillOp(self.buffers[role], b.index(slot), IntegerAttr(0, i64)))
            self._pipelined_outer_loop(b, outer_count)
        else:
            self._loop(b, outer_count, self._outer_body, over_tiles=True)
        b.add(core.YieldOp())
        op, kernel = self.op, self.kernel
        lowered = core.KernelOp(
            op.name,
            [v for v in op.operands if isinstance(v.type, TensorType)],
            [r.type for r in op.results],
            kernel.cores,
            self.plan.chunks,
            cast(DictionaryAttr, op.attributes[WORK_DIVISION_ATTR]),  # set by ktir-divide-work
            [tile_of(a, kernel, self.plan) for a in self.accesses],
            Region(self.body),
        )
        # the core order says which core holds which slice; consumers lowered later look for the placement
        for name in (CORE_ORDER_ATTR, LX_ADDRESS_ATTR, LX_BYTES_ATTR):
            if name in op.attributes:
                lowered.attributes[name] = op.attributes[name]
        return lowered

    def _first_loads(self, b: _Builder, inputs: list[int], once: list[int]) -> None:
        """The loads of chunk 0 (or, for the inputs in `once`, of every chunk) before the loops."""
        for i in inputs:
            target = self.buffers[input_role(self.kernel, i)]
            whole, prefetch = i in self.whole, i in self.prefetch
            if prefetch and i not in once:
                self.first_chunk_skips.add(i)
            zero = b.index(0)
            b.add(core.DmaLoadOp(self.sources[i], target, self.core_id, zero, zero, i, whole, prefetch))

    def _prefetch_epilogue_inputs(self, b: _Builder) -> None:
        """
        Prefetch the epilogue inputs in `prefetch` for the first output tiles, one per slot of
        their buffers (which no earlier tile fills): tile t's last K chunk's tile into slot t,
        where `_epilogue_inputs` would load it.
        """
        epilogue = sorted(i for i in self.prefetch if i >= self.matmul_inputs)
        if not epilogue:
            return
        tiles = min(self.slots, self.plan.chunks // self.reduction_chunks)
        self.first_tile_skips = [set(epilogue) for _ in range(tiles)]
        for tile in range(tiles):
            last, slot = b.index((tile + 1) * self.reduction_chunks - 1), b.index(tile)
            for i in epilogue:
                target = self.buffers[input_role(self.kernel, i)]
                b.add(core.DmaLoadOp(self.sources[i], target, self.core_id, last, slot, i, prefetch=True))

    def _buffers(self, b: _Builder) -> dict[str, SSAValue]:
        """One LX staging buffer per role (`in<i>`, `out0`, `acc`)."""
        buffers: dict[str, SSAValue] = {}
        for staged in self.plan.buffers:
            if staged.role in ("scratch", "online"):  # fused intermediates; online softmax rows' state
                memref = core.lx_buffer(1, staged.extent, i8)
                buffers[staged.role] = b.add(core.LxAllocOp(staged.address, memref)).results[0]
                continue
            value = _staged_value(staged, self.tensors)
            element = f32 if staged.role in self.accumulators else _element_type(value)
            memref = core.lx_buffer(staged.slots, staged.extent, element)
            buffers[staged.role] = b.add(core.LxAllocOp(staged.address, memref)).results[0]
        return buffers

    def _sources(self, b: _Builder) -> list[SSAValue]:
        """Where each tensor is read from or written to: its argument, or its resident LX copy."""
        sources: list[SSAValue] = list(self.body.args)
        for i, value in enumerate(self.tensors):
            if (resident := resident_placement(value)) is not None:
                _, extent = device_box(self.accesses[i], self.kernel.splits, {})
                memref = core.lx_buffer(1, extent, _element_type(value))
                sources[i] = b.add(core.LxAllocOp(resident[0], memref, resident=True)).results[0]
        return sources

    def _loop(
        self,
        builder: _Builder,
        count: int,
        make_body: Callable[[_Builder, SSAValue], None],
        over_tiles: bool = False,
    ) -> None:
        """
        `make_body` once at index 0, or inside an `scf.for` over `count` iterations; while chunk
        0 (or, for a loop `over_tiles`, an output tile's epilogue) is still to be built and some
        of its loads were prefetched, the next iteration is peeled.
        """
        if count == 1:
            make_body(builder, builder.index(0))
            return
        first = 0
        while first < count and (self.first_chunk_skips or (over_tiles and self.first_tile_skips)):
            make_body(builder, builder.index(first))
            first += 1
        if first == count:
            return
        loop_block = Block(arg_types=[IndexType()])
        inner = _Builder(loop_block)
        inner.constants = dict(builder.constants)
        make_body(inner, loop_block.args[0])
        loop_block.add_op(scf.YieldOp())
        builder.add(
            scf.ForOp(builder.index(first), builder.index(count), builder.index(1), [], Region(loop_block))
        )

    def _outer_body(self, builder: _Builder, outer: SSAValue) -> None:
        """One outer chunk: its reduction chunks, then (accumulating) the ring reduce and store."""
        if not self.accumulate:
            self._loop(
                builder, self.reduction_chunks, lambda inner_b, inner: self._chunk(inner_b, outer, inner)
            )
            return
        for role in self.accumulators:
            builder.add(core.FillOp(self.buffers[role], builder.index(0), IntegerAttr(0, i64)))
        self._accumulate_tile(builder, outer)
        self._finish_tile(builder, self._epilogue_inputs(builder, outer))

    def _pipelined_outer_loop(self, builder: _Builder, count: int) -> None:
        """
        Output tiles with two accumulators, software-pipelined: tile n's epilogue inputs load
        before tile n + 1's K chunks, and its epilogue and store come after them in program
        order, so the in-order DMA queue never waits on the SFU (a store waits for its
        epilogue) and the PE arrays accumulate tile n + 1 while the SFU runs tile n's epilogue.
        """

        def body(inner: _Builder, n: SSAValue) -> None:
            end = self._epilogue_inputs(inner, n)
            self._accumulate_tile(inner, inner.add(arith.AddiOp(n, inner.index(1))).results[0])
            self._finish_tile(inner, end)

        self._accumulate_tile(builder, builder.index(0))
        self._loop(builder, count - 1, body, over_tiles=True)
        self._finish_tile(builder, self._epilogue_inputs(builder, builder.index(count - 1)))

    def _accumulate_tile(self, builder: _Builder, outer: SSAValue) -> None:
        """Output tile `outer`'s K chunks into its accumulator, and the K partners' ring reduction."""
        acc_slot = self._slot(builder, outer) if self.alternating else builder.index(0)
        self._loop(builder, self.reduction_chunks, lambda b, inner: self._chunk(b, outer, inner, acc_slot))
        k_split = self.kernel.k_split
        if k_split > 1:
            for role in self.accumulators:
                builder.add(core.RingReduceOp(self.buffers[role], acc_slot, k_split, CombineKind.ADD))

    def _last_chunk(self, builder: _Builder, outer: SSAValue) -> SSAValue:
        """The chunk index of output tile `outer`'s last K chunk (its tiles' chunk offsets)."""
        if self.reduction_chunks == 1:
            return outer
        return _affine(builder, outer, self.reduction_chunks, builder.index(self.reduction_chunks - 1))

    def _epilogue_inputs(self, builder: _Builder, outer: SSAValue) -> _TileEnd:
        """Output tile `outer`'s last chunk and slot, and its epilogue inputs loaded (if any)."""
        last = self._last_chunk(builder, outer)
        if not self.epilogue:
            return _TileEnd(last, builder.index(0), ())
        slot = self._slot(builder, outer)
        inputs = []
        # output tiles are built in order: the first built are the prefetched ones
        prefetched = self.first_tile_skips.pop(0) if self.first_tile_skips else set()
        for i in range(self.matmul_inputs, self.n_inputs):
            target = self.buffers[input_role(self.kernel, i)]
            if i not in prefetched:
                builder.add(core.DmaLoadOp(self.sources[i], target, self.core_id, last, slot, tile=i))
            inputs.append(target)
        return _TileEnd(last, slot, tuple(inputs))

    def _finish_tile(self, builder: _Builder, end: _TileEnd) -> None:
        """An output tile's epilogue (if any) and store; a second accumulator is zeroed again."""
        if not self.epilogue:
            self._store(builder, end.last, end.slot)
            return
        products = [self.n_inputs] * len(self.anchors)
        tiles = [*products, *range(self.matmul_inputs, self.n_inputs), self.n_inputs]
        payload = _epilogue_payload(cast(st.FusedOp, self.op), self.anchors)
        ins = [*(self.buffers[role] for role in self.accumulators), *end.inputs]
        out = self.buffers["out0"]
        builder.add(
            core.ComputeOp(ComputeUnit.SFU, self.core_id, end.last, end.slot, ins, [out], tiles, payload)
        )
        self._store(builder, end.last, end.slot)
        if self.alternating:
            for role in self.accumulators:
                builder.add(core.FillOp(self.buffers[role], end.slot, IntegerAttr(0, i64)))

    def _slot(self, builder: _Builder, index: SSAValue) -> SSAValue:
        """The buffer slot of chunk `index`: alternating when chunked."""
        if self.slots == 1:
            return builder.index(0)
        return builder.add(arith.RemUIOp(index, builder.index(self.slots))).results[0]

    def _chunk(
        self, builder: _Builder, outer: SSAValue, inner: SSAValue, acc_slot: SSAValue | None = None
    ) -> None:
        """
        One chunk: load every input tile, compute, and (not accumulating) store. An epilogue
        kernel's chunk loads x and each y and runs one product per y, each into its accumulator.
        """
        chunk = outer if self.reduction_chunks == 1 else _affine(builder, outer, self.reduction_chunks, inner)
        slot = self._slot(builder, chunk)
        ins = []
        prefetched, self.first_chunk_skips = self.first_chunk_skips, set()  # chunk 0 is the first built
        for i in range(self.matmul_inputs):
            target = self.buffers[input_role(self.kernel, i)]
            if i not in self.hoisted | self.whole | prefetched:
                builder.add(core.DmaLoadOp(self.sources[i], target, self.core_id, chunk, slot, tile=i))
            ins.append(target)
        if self.epilogue:
            computes = [
                ([ins[0], ins[p]], [0, p], self.buffers[role], _payload(anchor))
                for p, (role, anchor) in enumerate(zip(self.accumulators, self.anchors, strict=True), 1)
            ]
        else:
            out = self.buffers[self.out_role]
            computes = [(ins, list(range(self.matmul_inputs)), out, _payload(self.op))]
        for operands, tiles, out, payload in computes:
            builder.add(
                core.ComputeOp(
                    self.kernel.space.unit,
                    self.core_id,
                    chunk,
                    slot,
                    operands,
                    [out],
                    tiles=[*tiles, self.n_inputs],
                    payload=payload,
                    accumulate=self.accumulate,
                    into=acc_slot if self.alternating else None,
                )
            )
        if not self.accumulate:
            self._store(builder, chunk, slot)

    def _store(self, builder: _Builder, chunk: SSAValue, slot: SSAValue) -> None:
        """Store the output tile (a K-split kernel names its writers)."""
        writers = self.kernel.k_split if self.kernel.k_split > 1 else None
        source, target = self.buffers["out0" if self.epilogue else self.out_role], self.sources[self.n_inputs]
        builder.add(
            core.DmaStoreOp(source, target, self.core_id, chunk, slot, tile=self.n_inputs, writers=writers)
        )


@dataclass(frozen=True)
class _TileEnd:
    """Where an output tile ends: its last chunk, its slot, and its loaded epilogue inputs."""

    last: SSAValue
    slot: SSAValue
    inputs: tuple[SSAValue, ...]


def _epilogue_payload(op: st.FusedOp, anchors: Sequence[st.MatmulBase]) -> Region:
    """
    The payload of a matmul epilogue: a `ktir.fused` op computing the kernel's result from the
    matmuls' results (the summed accumulators, rounded to the matmuls' type) and the other
    inputs.
    """
    body = op.body.block
    rest = list(body.args[1 + len(anchors) :])
    arg_types = [*(a.result.type for a in anchors), *(a.type for a in rest)]
    payload, inner = Block(arg_types=arg_types), Block(arg_types=arg_types)
    mapping: dict[SSAValue, SSAValue] = {
        **{a.result: arg for a, arg in zip(anchors, inner.args, strict=False)},
        **dict(zip(rest, inner.args[len(anchors) :], strict=True)),
    }
    for member in op.members:
        if member not in anchors:
            inner.add_op(member.clone(value_mapper=mapping))
    yielded = body.last_op
    assert yielded is not None
    inner.add_op(core.YieldOp(mapping[yielded.operands[0]]))
    fused = st.FusedOp(list(payload.args), op.result.type, Region(inner))
    payload.add_ops([fused, core.YieldOp(fused.result)])
    return Region(payload)


def _affine(builder: _Builder, outer: SSAValue, scale: int, inner: SSAValue) -> SSAValue:
    """`outer * scale + inner`: the chunk index of K chunk `inner` of outer chunk `outer`."""
    scaled = builder.add(arith.MuliOp(outer, builder.index(scale))).results[0]
    return builder.add(arith.AddiOp(scaled, inner)).results[0]


def _staged_value(staged: Staged, tensors: list[SSAValue]) -> SSAValue:
    if staged.role.startswith("acc") or staged.role == "out0":
        return tensors[-1]
    return tensors[int(staged.role[2:])]


@dataclass(frozen=True)
class LowerToCoresPass(FunctionPass):
    """Lower every divided graph op to a `ktir.kernel` (see the module docstring)."""

    name = "ktir-lower-to-cores"

    def apply_function(self, function: func.FuncOp, target: Target) -> None:
        lower_function(function, target)
        check_function(function, target)


def lower_function(function: func.FuncOp, target: Target) -> None:
    """Replace each divided op of `function` by the kernel its recorded plan describes, in program order."""
    for graph_op in list(function.body.block.ops):
        kernel = kernel_of_divided(graph_op, target.cores)
        if kernel is None:
            continue
        plan, prefetch = recorded(kernel, target)
        Rewriter.replace_op(graph_op, build_kernel(kernel, plan, prefetch))


def recorded(kernel: Kernel, target: Target) -> tuple[ChunkPlan, frozenset[int]]:
    """
    The chunk plan and prefetched inputs `ktir-plan-kernels` recorded on the kernel's op; a
    located error when they are missing or do not fit the kernel.
    """
    op = kernel.op
    chunking, addresses = read_chunk_plan(op), read_lx_buffers(op)
    if chunking is None or addresses is None:
        missing = CHUNK_PLAN_ATTR if chunking is None else LX_BUFFERS_ATTR
        raise op_error(op, f"'{op.name}' has no {missing}; run ktir-plan-kernels first")
    cuts, whole_x = chunking
    try:
        plan = recorded_plan(kernel, cuts, whole_x, addresses, target.stick_bytes)
    except ChunkingError as error:
        raise op_error(op, str(error)) from error
    prefetch = read_prefetch(op)
    inputs = len([v for v in op.operands if isinstance(v.type, TensorType)])
    if any(i >= inputs for i in prefetch):
        raise op_error(
            op, f"'{PREFETCH_ATTR}' names inputs {sorted(prefetch)}; the op has {inputs} tensor inputs"
        )
    return plan, prefetch


__all__ = ["LowerToCoresPass", "Staged", "build_kernel", "lower_function", "recorded", "tile_of"]
