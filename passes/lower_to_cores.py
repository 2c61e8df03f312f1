"""
`ktir-lower-to-cores`: turn every divided graph op into a `ktir.kernel`, the program its
cores run (core-level ktir, `ktir.dialects.ktir_core`).

For each op with a `work_division` the pass

1. chunks each core's slice until its staging buffers fit in the LX left free by the planned
   scratchpad tensors live there (`ktir.chunking`), with two slots per buffer when chunked;
2. writes one `#ktir.tile` per tensor: its device box on each core and in each chunk;
3. builds the program: `ktir.core_id`, the `ktir.lx_alloc`s, and a loop over chunks that
   loads the input tiles (`ktir.dma_load`), runs the op on them (`ktir.compute`, whose payload
   is the graph op itself) and stores the result tile (`ktir.dma_store`). A matmul with a
   chunked or split K zeroes an fp32 accumulator, accumulates over an inner loop of K chunks,
   adds up K partners' partial sums over the ring (`ktir.ring_reduce`), and lets the first
   partner store.

A result the scratchpad plan keeps in LX (`lx_address`) is stored to a resident buffer at that
address instead of device memory, and its consumers load it from there. Views that move no
data and `ktir.cpu_fallback` stay at function level. The result is checked statically
(`ktir.core_check`, also the pass `ktir-check-cores`): an LX overflow or an out-of-bounds DMA
is a located error naming the op, core and bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import (
    DenseArrayBase,
    IndexType,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
    f32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from ktir.chunking import ChunkingError, ChunkPlan, Staged, accumulates, plan_chunks
from ktir.core_check import CoreCheckError, check_function
from ktir.diagnostics import op_error
from ktir.dialects import ktir_core as core
from ktir.iteration import IterationError
from ktir.kernels import Kernel, kernel_of
from ktir.layout_plan import functions_of
from ktir.passes.divide_work import WORK_DIVISION_ATTR, read_division
from ktir.passes.plan_scratchpad import LX_ADDRESS_ATTR, LX_BYTES_ATTR
from ktir.scratchpad import live_sets
from ktir.target import SPYRE
from ktir.tiling import Access, combine, device_box, nested


def tile_of(access: Access, kernel: Kernel, plan: ChunkPlan) -> core.TileAttr:
    """The `#ktir.tile` of `access`: its box extent, each core's start and each chunk's offset."""
    total = combine(kernel.splits, plan.cuts)
    no_chunk = {d: 0 for d in plan.cuts}
    starts = [
        device_box(access, total, nested(kernel.splits, piece, plan.cuts, no_chunk))[0]
        for piece in kernel.slices
    ]
    chunk_starts = [device_box(access, total, piece)[0] for piece in plan.pieces(kernel.space.reduction)]
    _, extent = device_box(access, total, {})
    return core.TileAttr.make(extent, starts, chunk_starts)


def _resident(value: SSAValue) -> tuple[int, int] | None:
    """(address, bytes) of a value the scratchpad plan keeps in LX."""
    owner = value.owner
    if not isinstance(owner, Operation) or LX_ADDRESS_ATTR not in owner.attributes:
        return None
    address = owner.attributes[LX_ADDRESS_ATTR]
    size = owner.attributes[LX_BYTES_ATTR]
    assert isinstance(address, IntegerAttr) and isinstance(size, IntegerAttr)
    return address.value.data, size.value.data


def _free_ranges(busy: list[tuple[int, int]], limit: int) -> list[tuple[int, int]]:
    free, cursor = [], 0
    for lo, hi in sorted(busy):
        if lo > cursor:
            free.append((cursor, lo))
        cursor = max(cursor, hi)
    if cursor < limit:
        free.append((cursor, limit))
    return free


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
    for name in (WORK_DIVISION_ATTR, LX_ADDRESS_ATTR, LX_BYTES_ATTR, "work_division_hint"):
        clone.attributes.pop(name, None)
    block.add_ops([clone, core.YieldOp(*clone.results)])
    return Region(block)


def build_kernel(kernel: Kernel, plan: ChunkPlan) -> core.KernelOp:
    """The `ktir.kernel` of a divided op under a chunk plan (see the module docstring)."""
    op, space = kernel.op, kernel.space
    accesses = [a for a in space.inputs if a is not None] + [space.output]
    tensors = [v for v in op.operands if isinstance(v.type, TensorType)] + list(op.results)
    body = Block(arg_types=[v.type for v in tensors])
    b = _Builder(body)
    core_id = b.add(core.CoreIdOp()).results[0]
    buffers: dict[str, SSAValue] = {}
    for staged, value in zip(plan.buffers, _staged_values(plan, tensors), strict=True):
        element = f32 if staged.role == "acc" else _element_type(value)
        buffers[staged.role] = b.add(
            core.LxAllocOp(staged.address, core.lx_buffer(staged.slots, staged.extent, element))
        ).results[0]
    sources: list[SSAValue] = list(body.args)
    for i, value in enumerate(tensors):
        if (resident := _resident(value)) is not None:
            _, extent = device_box(accesses[i], kernel.splits, {})
            memref = core.lx_buffer(1, extent, _element_type(value))
            sources[i] = b.add(core.LxAllocOp(resident[0], memref, resident=True)).results[0]
    n_inputs = len(tensors) - 1
    reduction_chunks = 1
    for d in space.reduction:
        reduction_chunks *= plan.cuts.get(d, 1)
    outer_count = plan.chunks // reduction_chunks
    slots = 2 if plan.chunks > 1 else 1
    accumulate = accumulates(kernel, plan.cuts)
    out_role = "acc" if accumulate else "out0"

    def loop(builder: _Builder, count: int, make_body) -> None:
        if count == 1:
            make_body(builder, builder.index(0))
            return
        loop_block = Block(arg_types=[IndexType()])
        inner = _Builder(loop_block)
        inner.constants = dict(builder.constants)
        make_body(inner, loop_block.args[0])
        loop_block.add_op(scf.YieldOp())
        builder.add(
            scf.ForOp(builder.index(0), builder.index(count), builder.index(1), [], Region(loop_block))
        )

    def chunk_body(builder: _Builder, outer: SSAValue, inner: SSAValue) -> None:
        chunk = outer if reduction_chunks == 1 else _affine(builder, outer, reduction_chunks, inner)
        slot = (
            builder.add(arith.RemUIOp(chunk, builder.index(slots))).results[0]
            if slots > 1
            else builder.index(0)
        )
        ins = []
        for i in range(n_inputs):
            target = buffers[f"in{_operand_index(kernel, i)}"]
            builder.add(
                core.DmaLoadOp(
                    operands=[sources[i], target, core_id, chunk, slot],
                    properties={"tile": IntegerAttr(i, i64)},
                )
            )
            ins.append(target)
        props: dict[str, Attribute] = {
            "unit": StringAttr(space.unit),
            "tiles": DenseArrayBase.from_list(i64, list(range(n_inputs + 1))),
        }
        if accumulate:
            props["accumulate"] = UnitAttr()
        builder.add(
            core.ComputeOp(
                operands=[core_id, chunk, slot, ins, [buffers[out_role]]],
                properties=props,
                regions=[_payload(op)],
            )
        )
        if not accumulate:
            _store(builder, chunk, slot)

    def _store(builder: _Builder, chunk: SSAValue, slot: SSAValue) -> None:
        props: dict[str, Attribute] = {"tile": IntegerAttr(n_inputs, i64)}
        if kernel.k_split > 1:
            props["writers"] = IntegerAttr(kernel.k_split, i64)
        builder.add(
            core.DmaStoreOp(
                operands=[buffers[out_role], sources[n_inputs], core_id, chunk, slot], properties=props
            )
        )

    def outer_body(builder: _Builder, outer: SSAValue) -> None:
        if not accumulate:
            loop(builder, reduction_chunks, lambda inner_b, inner: chunk_body(inner_b, outer, inner))
            return
        zero = builder.index(0)
        builder.add(core.FillOp(operands=[buffers["acc"], zero], properties={"value": IntegerAttr(0, i64)}))
        loop(builder, reduction_chunks, lambda inner_b, inner: chunk_body(inner_b, outer, inner))
        if kernel.k_split > 1:
            builder.add(
                core.RingReduceOp(
                    operands=[buffers["acc"], zero],
                    properties={"group": IntegerAttr(kernel.k_split, i64), "combine": StringAttr("add")},
                )
            )
        last = (
            outer
            if reduction_chunks == 1
            else _affine(builder, outer, reduction_chunks, builder.index(reduction_chunks - 1))
        )
        _store(builder, last, zero)

    loop(b, outer_count, outer_body)
    b.add(core.YieldOp())
    tiles = [tile_of(a, kernel, plan) for a in accesses]
    lowered = core.KernelOp(
        op.name,
        [v for v in op.operands if isinstance(v.type, TensorType)],
        [r.type for r in op.results],
        kernel.cores,
        plan.chunks,
        op.attributes[WORK_DIVISION_ATTR],  # type: ignore[arg-type]
        tiles,
        Region(body),
    )
    for name in (LX_ADDRESS_ATTR, LX_BYTES_ATTR):  # consumers lowered later look for them
        if name in op.attributes:
            lowered.attributes[name] = op.attributes[name]
    return lowered


def _affine(builder: _Builder, outer: SSAValue, scale: int, inner: SSAValue) -> SSAValue:
    """`outer * scale + inner`: the chunk index of K chunk `inner` of outer chunk `outer`."""
    scaled = builder.add(arith.MuliOp(outer, builder.index(scale))).results[0]
    return builder.add(arith.AddiOp(scaled, inner)).results[0]


def _operand_index(kernel: Kernel, tensor_index: int) -> int:
    positions = [i for i, a in enumerate(kernel.space.inputs) if a is not None]
    return positions[tensor_index]


def _staged_values(plan: ChunkPlan, tensors: list[SSAValue]) -> list[SSAValue]:
    return [tensors[-1] if s.role in ("acc", "out0") else tensors[int(s.role[2:])] for s in plan.buffers]


@dataclass(frozen=True)
class LowerToCoresPass(ModulePass):
    """Lower every divided graph op to a `ktir.kernel` (see the module docstring)."""

    name = "ktir-lower-to-cores"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in functions_of(op):
            lower_function(function)
            try:
                check_function(function)
            except CoreCheckError as error:
                raise op_error(error.op, str(error)) from error


def lower_function(function: func.FuncOp) -> None:
    """Replace each divided op of `function` by its kernel, in program order."""
    ops = list(function.body.block.ops)
    index = {o: i for i, o in enumerate(ops)}
    live: list[tuple[int, int, int, int]] = []  # (first op, last op, lo, hi) of resident tensors
    for o in ops:
        if o.results and (resident := _resident(o.results[0])) is not None:
            last = max((index[u.operation] for u in o.results[0].uses), default=index[o])
            live.append((index[o], last, resident[0], resident[0] + resident[1]))
    busy_at = live_sets([(first, last, (lo, hi)) for first, last, lo, hi in live], len(ops))
    for graph_op, busy in zip(ops, busy_at, strict=True):
        try:
            kernel = kernel_of(graph_op, read_division(graph_op))
        except IterationError as error:
            raise op_error(error.op, str(error)) from error
        if kernel is None:
            if kernel_of(graph_op, {}) is not None:
                raise op_error(
                    graph_op, f"'{graph_op.name}' has no work_division; run ktir-divide-work first"
                )
            continue
        try:
            plan = plan_chunks(kernel, _free_ranges(busy, SPYRE.lx_usable_bytes), SPYRE.lx_alignment)
        except ChunkingError as error:
            raise op_error(graph_op, str(error)) from error
        Rewriter.replace_op(graph_op, build_kernel(kernel, plan))


__all__ = ["LowerToCoresPass", "Staged", "build_kernel", "lower_function", "tile_of"]
