"""
Core-level ktir: the program each Spyre core runs for one graph op (a *kernel*).

A `ktir.kernel` replaces one graph-level op. Its region is the single program every core of
its grid runs (SPMD); `ktir.core_id` tells a core which slice of the work it owns. The
kernel's `tiles` say where each tensor's tile lies on every core and in every chunk: the
region's block arguments are the kernel's input and result tensors in device memory (HBM),
and DMA ops name a tile by its index.

```mlir
%y = ktir.kernel "ktir.abs" cores 2 chunks 1 work_division {d0 = 2 : i64, d1 = 1 : i64}
     tiles [#ktir.tile<extent = [1, 2, 64], starts = [[0, 0, 0], [0, 2, 0]], chunk_starts = [[0, 0, 0]]>,
            #ktir.tile<...>] (%x) : (tensor<4x64xf16, #L>) -> tensor<4x64xf16, #L> {
^bb0(%in: tensor<4x64xf16, #L>, %out: tensor<4x64xf16, #L>):
  %core = ktir.core_id : index
  %a = ktir.lx_alloc address 0 : memref<1x1x2x64xf16, "lx">
  ktir.dma_load %in -> %a [%core, %chunk, %slot] tile 0 : ...
  ktir.compute sfu ...                                     // the payload: ktir.abs on the tile
  ktir.dma_store %b -> %out [%core, %chunk, %slot] tile 1 : ...
  ktir.yield
}
```

A tile is a box of device positions (`ktir.cores.tiling`): `extent` per device dim, the same on every
core, starting at `starts[core] + chunk_starts[chunk]`. LX buffers are memrefs in the `"lx"`
memory space whose leading dim is the slot count (2 when chunks double-buffer) followed by the
tile extent; `address` is the byte offset in the core's scratchpad.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import (
    I64,
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    StringAttr,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, Operation, Region, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import IsolatedFromAbove, IsTerminator, Pure
from xdsl.utils.exceptions import VerifyException

from ktir.dialects.ktir.attributes import (
    CombineKind,
    CombineKindAttr,
    ComputeUnit,
    ComputeUnitAttr,
    TileAttr,
    TiledLayoutAttr,
    device_dtype_of_element,
)
from ktir.dialects.ktir.kernel_plan import ChunkPlanAttr, LxBuffersAttr, PrefetchAttr

LX_SPACE = StringAttr("lx")
"""The memory space of scratchpad buffers."""


def lx_buffer(slots: int, extent: Sequence[int], element_type: Attribute) -> MemRefType[Attribute]:
    """The type of an LX buffer of `slots` tiles: `memref<slots x extent x T, "lx">`."""
    return MemRefType(element_type, [slots, *extent], memory_space=LX_SPACE)


def _require_lx(value_type: Attribute, what: str) -> MemRefType[Attribute]:
    if not isinstance(value_type, MemRefType) or value_type.memory_space != LX_SPACE:
        raise VerifyException(f'{what} must be an LX buffer (memref in "lx"), not {value_type}')
    return value_type


@irdl_op_definition
class KernelOp(IRDLOperation):
    """
    One graph op run on a grid of `cores` cores, its slice of work cut into `chunks` chunks.

    Operands are the op's input tensors; the region's block arguments are those inputs
    followed by the results (destination tensors), all in device memory. `tiles` has one
    `#ktir.tile` per block argument; `op_name` and `work_division` record what was lowered.
    """

    name = "ktir.kernel"

    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    op_name = prop_def(StringAttr)
    cores = prop_def(IntegerAttr[I64])
    chunks = prop_def(IntegerAttr[I64])
    work_division = prop_def(DictionaryAttr)
    tiles = prop_def(ArrayAttr[TileAttr])
    body = region_def("single_block")
    traits = traits_def(IsolatedFromAbove())

    assembly_format = (
        "$op_name `cores` $cores `chunks` $chunks `work_division` $work_division `tiles` $tiles "
        "`(` $inputs `)` `:` functional-type($inputs, $outputs) attr-dict-with-keyword $body"
    )

    def __init__(
        self,
        op_name: str,
        inputs: Sequence[SSAValue | Operation],
        result_types: Sequence[Attribute],
        cores: int,
        chunks: int,
        work_division: DictionaryAttr,
        tiles: Sequence[TileAttr],
        body: Region,
    ) -> None:
        super().__init__(
            operands=[inputs],
            result_types=[result_types],
            properties={
                "op_name": StringAttr(op_name),
                "cores": IntegerAttr(cores, i64),
                "chunks": IntegerAttr(chunks, i64),
                "work_division": work_division,
                "tiles": ArrayAttr(tiles),
            },
            regions=[body],
        )

    def verify_(self) -> None:
        args = self.body.block.args
        expected = [*self.inputs.types, *self.outputs.types]
        if [a.type for a in args] != expected:
            raise VerifyException("the kernel's block arguments must be its inputs then its results")
        if len(self.tiles.data) != len(args):
            raise VerifyException(
                f"expected {len(args)} tiles (one per block argument), got {len(self.tiles.data)}"
            )
        cores, chunks = self.cores.value.data, self.chunks.value.data
        if cores < 1 or chunks < 1:
            raise VerifyException("cores and chunks must be positive")
        for i, (tile, arg) in enumerate(zip(self.tiles.data, args, strict=True)):
            device = _device_size(arg.type)
            if len(tile.extent) != len(device):
                raise VerifyException(
                    f"tile {i} has rank {len(tile.extent)}, its tensor's device rank is {len(device)}"
                )
            if len(tile.starts_array) != cores or len(tile.chunk_starts_array) != chunks:
                raise VerifyException(f"tile {i} must give {cores} core starts and {chunks} chunk starts")
            _verify_tile_inside(i, tile, device)


def _verify_tile_inside(index: int, tile: TileAttr, device: tuple[int, ...]) -> None:
    """Every core's box of every chunk (start + chunk offset, extent) must lie in the tensor's device size."""
    extent = tile.extent
    starts, chunk_starts = tile.starts, tile.chunk_starts
    furthest = [max(column) for column in zip(*chunk_starts, strict=True)]
    if all(
        max(column) + f + e <= d
        for column, f, e, d in zip(zip(*starts, strict=True), furthest, extent, device, strict=True)
    ):
        return
    for core, start in enumerate(starts):
        for chunk, offset in enumerate(chunk_starts):
            box = [s + o for s, o in zip(start, offset, strict=True)]
            if any(b + e > d for b, e, d in zip(box, extent, device, strict=True)):
                raise VerifyException(
                    f"tile {index} leaves its tensor on core {core}, chunk {chunk}: box {box} + "
                    f"{list(extent)} does not fit the device size {list(device)}"
                )


def _device_size(value_type: Attribute) -> tuple[int, ...]:
    if not isinstance(value_type, TensorType) or not isinstance(value_type.encoding, TiledLayoutAttr):
        raise VerifyException(f"kernel tensors must carry a #ktir.tiled layout, not {value_type}")
    return tuple(value_type.encoding.tiled.device_size)


@irdl_op_definition
class CoreIdOp(IRDLOperation):
    """The id of the core running the kernel, in `0 .. cores-1`."""

    name = "ktir.core_id"
    result = result_def(IndexType)
    traits = traits_def(Pure())
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self) -> None:
        super().__init__(result_types=[IndexType()])


@irdl_op_definition
class LxAllocOp(IRDLOperation):
    """
    A scratchpad buffer at byte `address` of every core's LX, live for the kernel. With
    `resident` it is a planned scratchpad tensor (`ktir-plan-scratchpad`) that outlives the
    kernel: its producer writes it and its consumers read it at the same address.
    """

    name = "ktir.lx_alloc"
    address = prop_def(IntegerAttr[I64])
    resident = opt_prop_def(UnitAttr)
    result = result_def(MemRefType)
    assembly_format = "`address` $address (`resident` $resident^)? attr-dict `:` type($result)"

    def __init__(self, address: int, result_type: MemRefType[Attribute], resident: bool = False) -> None:
        props: dict[str, Attribute] = {"address": IntegerAttr(address, i64)}
        if resident:
            props["resident"] = UnitAttr()
        super().__init__(properties=props, result_types=[result_type])

    def verify_(self) -> None:
        _require_lx(self.result.type, "the result")
        if self.address.value.data < 0:
            raise VerifyException(f"LX address must be non-negative, not {self.address.value.data}")

    @property
    def bytes(self) -> int:
        """Bytes the buffer takes."""
        memref = _require_lx(self.result.type, "the result")
        return memref.element_count() * device_dtype_of_element(memref.element_type).element_bytes


def _enclosing_kernel(op: IRDLOperation) -> KernelOp | None:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, KernelOp):
        parent = parent.parent_op()
    return parent


def _verify_tile_use(
    op: IRDLOperation, tile: int, buffer_type: Attribute, what: str, whole: bool | None = False
) -> None:
    """
    `tile` names one of the enclosing kernel's tiles, and the LX buffer holds slots of its
    extent; with `whole`, one slot of the core's whole slice (`TileAttr.whole_extent`), and with
    `whole=None` either (a compute reads its chunk's window of a whole slice).
    """
    kernel = _enclosing_kernel(op)
    if kernel is None:
        return
    tiles = kernel.tiles.data
    if not 0 <= tile < len(tiles):
        raise VerifyException(f"tile {tile} is not one of the kernel's {len(tiles)} tiles")
    if not isinstance(buffer_type, MemRefType):
        return
    shape = tuple(buffer_type.get_shape())
    extent, whole_extent = tiles[tile].extent, tiles[tile].whole_extent
    if whole is None and shape[0] == 1 and shape[1:] == whole_extent:
        return
    if whole:
        if shape[0] != 1 or shape[1:] != whole_extent:
            raise VerifyException(
                f"{what} {buffer_type} must hold one slot of tile {tile}'s whole slice "
                f"{list(whole_extent)}, not {shape[0]} of {list(shape[1:])}"
            )
        return
    if shape[1:] != extent:
        raise VerifyException(
            f"{what} {buffer_type} must hold slots of tile {tile}'s extent {list(extent)}, "
            f"not {list(shape[1:])}"
        )


def _constant(value: SSAValue) -> int | None:
    """The value of an `arith.constant` index operand; None for any other operand."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def _verify_indices(op: IRDLOperation, chunk: SSAValue, slot: SSAValue, buffers: Sequence[Attribute]) -> None:
    """Constant chunk and slot operands must name a chunk of the kernel and a slot of every buffer."""
    kernel = _enclosing_kernel(op)
    if kernel is not None and (index := _constant(chunk)) is not None:
        if not 0 <= index < kernel.chunks.value.data:
            raise VerifyException(
                f"chunk {index} is not one of the kernel's {kernel.chunks.value.data} chunks"
            )
    if (index := _constant(slot)) is None:
        return
    for buffer in buffers:
        if not isinstance(buffer, MemRefType) or not buffer.get_shape():
            continue
        if not 0 <= index < buffer.get_shape()[0]:
            raise VerifyException(f"slot {index} is not one of the {buffer.get_shape()[0]} slots of {buffer}")


# ---------------------------------------------------------------------------------------------
# IR state that passes hand on to later stages: discardable attributes, declared here once
# ---------------------------------------------------------------------------------------------

WORK_DIVISION_ATTR = "ktir.work_division"
"""Graph-op attribute set by `ktir-divide-work`: iteration dim -> number of slices, a dictionary
of i64 (`{m = 16 : i64, n = 1 : i64, k = 2 : i64}`); read by planning, lowering and export."""

WORK_DIVISION_HINT_ATTR = "ktir.work_division_hint"
"""Graph-op attribute a user sets to force a division, in the form of `WORK_DIVISION_ATTR`."""

CORE_ORDER_ATTR = "ktir.core_order"
"""Graph-op attribute set by `ktir-divide-work` where a kernel's cores do not take their slices
in the default order: the iteration dims, fastest first, of the mixed-radix decomposition of
the core id (`["n", "b0", "m", "k"]`: core 1 holds the second N slice); without it the dims go
in their division's order, a split reduction dim first. Read wherever a core's slice is."""

LX_HANDOFF_ATTR = "ktir.lx_handoff"
"""Graph-op unit attribute set by `ktir-divide-work` on a matmul kernel whose only consumer is
divided to read its result where each core wrote it (`ktir.cores.handoff`): the scratchpad plan
keeps that result in LX when its budget allows."""

LX_ADDRESS_ATTR = "ktir.lx_address"
"""Graph-op / kernel attribute set by `ktir-plan-scratchpad`: the LX byte address (i64) where
the op's result stays resident; read by lowering and the simulator."""

LX_BYTES_ATTR = "ktir.lx_bytes"
"""Companion of `LX_ADDRESS_ATTR`: the resident result's bytes per core (i64)."""

CHUNK_PLAN_ATTR = "ktir.chunk_plan"
"""Graph-op attribute set by `ktir-plan-kernels`: the op's chunking (`#ktir.chunk_plan`);
read and dropped by `ktir-lower-to-cores`."""

LX_BUFFERS_ATTR = "ktir.lx_buffers"
"""Graph-op attribute set by `ktir-plan-kernels`: the LX address of each staging buffer of the
op's kernel (`#ktir.lx_buffers`); read and dropped by `ktir-lower-to-cores`."""

PREFETCH_ATTR = "ktir.prefetch"
"""Graph-op attribute set by `ktir-plan-kernels` when some first loads are prefetches
(`#ktir.prefetch`); read and dropped by `ktir-lower-to-cores`."""

STATE_ATTRIBUTES: dict[str, type[Attribute]] = {
    WORK_DIVISION_ATTR: DictionaryAttr,
    WORK_DIVISION_HINT_ATTR: DictionaryAttr,
    CORE_ORDER_ATTR: ArrayAttr,
    LX_HANDOFF_ATTR: UnitAttr,
    LX_ADDRESS_ATTR: IntegerAttr,
    LX_BYTES_ATTR: IntegerAttr,
    CHUNK_PLAN_ATTR: ChunkPlanAttr,
    LX_BUFFERS_ATTR: LxBuffersAttr,
    PREFETCH_ATTR: PrefetchAttr,
}
"""Every state attribute and the attribute class its value must have (read with the checking
accessors of `ktir.ir.state`)."""


class _DmaOp(IRDLOperation):
    """A tile transfer between device memory (or a resident LX buffer) and an LX buffer slot."""

    source = operand_def()
    target = operand_def()
    core = operand_def(IndexType)
    chunk = operand_def(IndexType)
    slot = operand_def(IndexType)
    tile = prop_def(IntegerAttr[I64])
    assembly_format = (
        "$source `->` $target `[` $core `,` $chunk `,` $slot `]` `tile` $tile attr-dict `:` "
        "type($source) `->` type($target)"
    )

    def __init__(
        self,
        source: SSAValue,
        target: SSAValue,
        core: SSAValue,
        chunk: SSAValue,
        slot: SSAValue,
        tile: int,
        writers: int | None = None,
    ) -> None:
        properties: dict[str, Attribute] = {"tile": IntegerAttr(tile, i64)}
        if writers is not None:
            properties["writers"] = IntegerAttr(writers, i64)
        super().__init__(operands=[source, target, core, chunk, slot], properties=properties)


@irdl_op_definition
class DmaLoadOp(_DmaOp):
    """
    Move tile `tile` of `source` (a tensor in device memory, or a resident LX buffer) at
    (`core`, `chunk`) into slot `slot` of the LX buffer `target`: one loop nest over the
    tile's device box, whole sticks at a time. With `whole`, the box is the core's whole
    slice (`TileAttr.whole_extent`, every chunk's box) into a one-slot buffer, loaded once:
    each `ktir.compute` then reads its chunk's window of it (a matmul's x kept in LX while
    the chunks walk N and K).

    With `prefetch`, the load may be issued before the kernel starts: on each core's load
    queue right after the previous kernel's loads, in the LPDDR5 time the previous kernel
    leaves free. It must come before the kernel's other transfers and computes, read no
    tensor the previous kernel writes, and fill LX the previous kernel does not use (the
    simulator and `ktir-check-cores` check the last two).
    """

    name = "ktir.dma_load"
    whole = opt_prop_def(UnitAttr)
    prefetch = opt_prop_def(UnitAttr)
    assembly_format = (
        "$source `->` $target `[` $core `,` $chunk `,` $slot `]` `tile` $tile (`whole` $whole^)? "
        "(`prefetch` $prefetch^)? attr-dict `:` type($source) `->` type($target)"
    )

    def __init__(
        self,
        source: SSAValue,
        target: SSAValue,
        core: SSAValue,
        chunk: SSAValue,
        slot: SSAValue,
        tile: int,
        whole: bool = False,
        prefetch: bool = False,
    ) -> None:
        super().__init__(source, target, core, chunk, slot, tile)
        for name, flag in (("whole", whole), ("prefetch", prefetch)):
            if flag:
                self.properties[name] = UnitAttr()

    def verify_(self) -> None:
        _require_lx(self.target.type, "the target")
        whole = self.whole is not None
        _verify_tile_use(self, self.tile.value.data, self.target.type, "the target", whole)
        _verify_indices(self, self.chunk, self.slot, [self.target.type])
        if self.prefetch is not None:
            self._verify_prefetch_position()

    def _verify_prefetch_position(self) -> None:
        """
        A prefetch reads device memory, and sits in the kernel's body (no loop) before every
        other transfer and compute.
        """
        if isinstance(self.source.type, MemRefType):
            raise VerifyException("a prefetch load reads device memory, not an LX buffer")
        kernel = _enclosing_kernel(self)
        if kernel is None:
            return
        if self.parent_op() is not kernel:
            raise VerifyException("a prefetch load must be in the kernel's body, not in a loop")
        for before in kernel.body.block.ops:
            if before is self:
                return
            is_prefetch = isinstance(before, DmaLoadOp) and before.prefetch is not None
            if not is_prefetch and isinstance(before, _DmaOp | ComputeOp | FillOp | RingReduceOp | scf.ForOp):
                raise VerifyException(
                    f"a prefetch load must come before the kernel's other transfers and computes, "
                    f"not after '{before.name}'"
                )


@irdl_op_definition
class DmaStoreOp(_DmaOp):
    """
    Move slot `slot` of the LX buffer `source` to tile `tile` of `target` at (`core`, `chunk`).
    With `writers = g`, only cores whose id is a multiple of `g` store (after a ring reduction
    the first core of each group of K partners holds the sum).
    """

    name = "ktir.dma_store"
    writers = opt_prop_def(IntegerAttr[I64])
    assembly_format = (
        "$source `->` $target `[` $core `,` $chunk `,` $slot `]` `tile` $tile (`writers` $writers^)? "
        "attr-dict `:` "
        "type($source) `->` type($target)"
    )

    def verify_(self) -> None:
        _require_lx(self.source.type, "the source")
        _verify_tile_use(self, self.tile.value.data, self.source.type, "the source")
        _verify_indices(self, self.chunk, self.slot, [self.source.type])


def compute_read_slot(slot: int, slots: int) -> int:
    """The slot `ktir.compute` reads of an input buffer of `slots` slots: 0 of a one-slot one."""
    return slot if slots > 1 else 0


def compute_window(tile: TileAttr, slot_shape: Sequence[int], chunk: int) -> tuple[slice, ...] | None:
    """
    The part of an input buffer's slot a `ktir.compute` of chunk `chunk` reads: None when the
    slot holds the tile itself, else the chunk's window of the core's whole slice
    (`TileAttr.window`; the buffer was loaded with `ktir.dma_load ... whole`).
    """
    if tuple(slot_shape) == tile.extent:
        return None
    return tile.window(chunk)


@irdl_op_definition
class ComputeOp(IRDLOperation):
    """
    Run the payload (one graph-level op) on the tiles in slot `slot` of `ins`, writing `outs`,
    on the PE array (`pt`) or the SFU (`sfu`). `tiles[i]` names the kernel tile each
    buffer holds, which places its lanes in the tensor (padding lanes are not computed). An
    input buffer of one slot holds a tile every chunk reads (loaded once, before the chunk
    loop): the compute reads its slot 0 whatever `slot` is. With
    `accumulate`, the payload's fp32 result is added to the output buffer (partial sums of a
    chunked or split reduction) instead of replacing it, in its slot 0, or in slot `into` when
    given: a matmul with an epilogue alternates two accumulators, so the epilogue of one
    output tile runs while the next tile accumulates.
    """

    name = "ktir.compute"
    core = operand_def(IndexType)
    chunk = operand_def(IndexType)
    slot = operand_def(IndexType)
    ins = var_operand_def(MemRefType)
    outs = var_operand_def(MemRefType)
    into = opt_operand_def(IndexType)
    unit = prop_def(ComputeUnitAttr)
    tiles = prop_def(DenseArrayBase.constr(I64))
    accumulate = opt_prop_def(UnitAttr)
    payload = region_def("single_block")
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$unit `[` $core `,` $chunk `,` $slot `]` `ins` `(` $ins `:` type($ins) `)` "
        "`outs` `(` $outs `:` type($outs) `)` `tiles` $tiles (`accumulate` $accumulate^)? "
        "(`into` $into^)? attr-dict-with-keyword $payload"
    )

    def __init__(
        self,
        unit: ComputeUnit,
        core: SSAValue,
        chunk: SSAValue,
        slot: SSAValue,
        ins: Sequence[SSAValue],
        outs: Sequence[SSAValue],
        tiles: Sequence[int],
        payload: Region,
        accumulate: bool = False,
        into: SSAValue | None = None,
    ) -> None:
        properties: dict[str, Attribute] = {
            "unit": ComputeUnitAttr(unit),
            "tiles": DenseArrayBase.from_list(i64, list(tiles)),
        }
        if accumulate:
            properties["accumulate"] = UnitAttr()
        super().__init__(
            operands=[core, chunk, slot, list(ins), list(outs), [] if into is None else [into]],
            properties=properties,
            regions=[payload],
        )

    def accumulator_slot(self, env: Mapping[SSAValue, Any]) -> int:
        """The output slot an accumulating compute adds into (`into`, or 0), given index values."""
        return 0 if self.into is None else int(env[self.into])

    def verify_(self) -> None:
        for i, value in enumerate([*self.ins, *self.outs]):
            _require_lx(value.type, f"buffer #{i}")
        tiles = [int(t) for t in self.tiles.get_values()]
        if len(tiles) != len(self.ins) + len(self.outs):
            raise VerifyException("tiles must name one kernel tile per buffer")
        for i, (tile, value) in enumerate(zip(tiles, [*self.ins, *self.outs], strict=True)):
            _verify_tile_use(self, tile, value.type, f"buffer #{i}", None if i < len(self.ins) else False)
        _verify_indices(self, self.chunk, self.slot, [v.type for v in self.ins])
        if self.into is not None:
            if self.accumulate is None:
                raise VerifyException("'into' names an accumulator slot: it needs 'accumulate'")
            _verify_indices(self, self.chunk, self.into, [v.type for v in self.outs])


@irdl_op_definition
class FillOp(IRDLOperation):
    """Set slot `slot` of an LX buffer to `value` (an accumulator's zero)."""

    name = "ktir.lx_fill"
    buffer = operand_def(MemRefType)
    slot = operand_def(IndexType)
    value = prop_def(Attribute)
    assembly_format = "$buffer `[` $slot `]` `value` $value attr-dict `:` type($buffer)"

    def __init__(self, buffer: SSAValue, slot: SSAValue, value: Attribute) -> None:
        super().__init__(operands=[buffer, slot], properties={"value": value})

    def verify_(self) -> None:
        _require_lx(self.buffer.type, "the buffer")


@irdl_op_definition
class RingReduceOp(IRDLOperation):
    """
    Combine slot `slot` of `buffer` over each group of `group` consecutive cores (K partners,
    ring neighbours) with `combine` (`add`, `max` or `min`); the group's first core gets the
    result. The data travels the ring: `group - 1` hops of one tile each.
    """

    name = "ktir.ring_reduce"
    buffer = operand_def(MemRefType)
    slot = operand_def(IndexType)
    group = prop_def(IntegerAttr[I64])
    combine = prop_def(CombineKindAttr)
    assembly_format = "$buffer `[` $slot `]` `group` $group `combine` $combine attr-dict `:` type($buffer)"

    def __init__(self, buffer: SSAValue, slot: SSAValue, group: int, combine: CombineKind) -> None:
        super().__init__(
            operands=[buffer, slot],
            properties={"group": IntegerAttr(group, i64), "combine": CombineKindAttr(combine)},
        )

    def verify_(self) -> None:
        _require_lx(self.buffer.type, "the buffer")
        if self.group.value.data < 2:
            raise VerifyException("a ring reduction needs a group of at least 2 cores")


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Ends a kernel body (no operands) or a compute payload (the payload's results)."""

    name = "ktir.yield"
    values = var_operand_def()
    traits = traits_def(IsTerminator())
    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, *values: SSAValue) -> None:
        super().__init__(operands=[list(values)])


CORE_OPS = [KernelOp, CoreIdOp, LxAllocOp, DmaLoadOp, DmaStoreOp, ComputeOp, FillOp, RingReduceOp, YieldOp]
