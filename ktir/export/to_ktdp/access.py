"""
A kernel's memory views and access tiles (`ktir.export.to_ktdp.kernels`): the device memory
view of each kernel tensor, a resident LX tensor's distributed view, and the access tile of a
DMA, its subscripts affine in the compute tile id and the chunk loop's variable where they can
be (`subscripts`), else entries of constant tables of starts.

Example: a 16 x 256 f16 result with device size [4, 16, 64] (column sticks outermost) whose
tile on core c is extent [1, 2, 64] at start [c // 8, 2 (c mod 8), 0] is written through
`%vout0[%id floordiv 8, %id mod 8 * 2, 0]` with `access_tile_order = (d0, d1, d2) -> (d1, d0,
d2)`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import (
    AffineMapAttr,
    AffineSetAttr,
    DenseIntOrFPElementsAttr,
    IndexType,
    IntAttr,
    MemRefType,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.ir.affine import (
    AffineConstantExpr,
    AffineConstraintExpr,
    AffineConstraintKind,
    AffineExpr,
    AffineMap,
    AffineSet,
)

from ktir.dialects.arith_ext import IndexCastOp
from ktir.dialects.ktdp.attributes import MemorySpaceAttr
from ktir.dialects.ktdp.ops import (
    ConstructAccessTileOp,
    ConstructDistributedMemoryViewOp,
    ConstructMemoryViewOp,
)
from ktir.dialects.ktir import core
from ktir.export.to_ktdp.emitter import Emitter
from ktir.export.to_ktdp.loops import Chunk, index_constant
from ktir.export.to_ktdp.subscripts import Subscripts, is_zero, linear, start_subscript
from ktir.ir.diagnostics import op_error
from ktir.ir.values import tensor_layout
from ktir.sim.host_tiles import HostTiles


@dataclass(frozen=True)
class KernelTensor:
    """A kernel tensor: its device memory view, device size and element type."""

    view: SSAValue
    device_size: tuple[int, ...]
    element: Attribute


def box_set(extents: Sequence[int], starts: Sequence[int] | None = None) -> AffineSetAttr:
    """The integer set of a box of `extents` from `starts` (default: the origin)."""
    starts = starts or [0] * len(extents)
    constraints = []
    for i, (a, n) in enumerate(zip(starts, extents, strict=True)):
        d = AffineExpr.dimension(i)
        constraints.append(AffineConstraintExpr(AffineConstraintKind.ge, d - a, AffineExpr.constant(0)))
        constraints.append(
            AffineConstraintExpr(AffineConstraintKind.ge, -d + (a + n - 1), AffineExpr.constant(0))
        )
    return AffineSetAttr(AffineSet(len(extents), 0, tuple(constraints)))


def memory_view(
    offset: SSAValue,
    size: Sequence[int],
    element: Attribute,
    space: MemorySpaceAttr,
    starts: Sequence[int] | None = None,
) -> ConstructMemoryViewOp:
    """A row-major view of `size` at `offset` in `space`, covering the box of `size` from `starts`."""
    strides = [math.prod(size[d + 1 :]) for d in range(len(size))]
    return ConstructMemoryViewOp(
        offset, size, strides, box_set(size, starts), space, MemRefType(element, size)
    )


GLOBAL = MemorySpaceAttr(StringAttr("global"), IntAttr(-1))
"""Device memory."""


def _itemsize(tensor_type: Attribute, op: Operation) -> int:
    """
    Bytes of one device element of a tensor kept in LX (f16: 2), which must be its host
    element's too: the round trip places host arrays in LX. A located error otherwise (fp8, bf16).
    """
    layout, _, dtype = tensor_layout(tensor_type)
    device = layout.device_dtype.element_bytes
    if device != dtype.itemsize:
        raise op_error(op, f"a resident {dtype} tensor of {device}-byte device elements is not written yet")
    return device


class AccessTiles:
    """
    The view- and access-tile-building methods of a kernel's conversion (module docstring);
    the conversion (`ktir.export.to_ktdp.kernels.KernelConversion`) gives the state below and
    `_host_map`.
    """

    kernel: core.KernelOp
    cores: int
    emitter: Emitter
    tile_id: SSAValue
    tiles: list[Any]
    tensors: dict[SSAValue, KernelTensor]
    resident_views: dict[SSAValue, SSAValue]

    if TYPE_CHECKING:  # the conversion's method this class calls

        def _host_map(
            self, op: Operation, tile_index: int, chunk: Chunk
        ) -> tuple[HostTiles, tuple[int, ...]]: ...

    def _tensor_of(self, tile_index: int) -> KernelTensor:
        """The kernel tensor a tile index names."""
        return self.tensors[self.kernel.body.block.args[tile_index]]

    def _start(
        self, subscripts: Subscripts, cores: np.ndarray, chunks: np.ndarray, chunk: Chunk
    ) -> AffineExpr:
        """
        A subscript of a tile's start along one device dim: the core's part (`cores`, per core)
        plus the chunk's (`chunks`, per chunk index), each a literal, an affine expression of
        the tile id or the loop's induction variable (`start_subscript`), or an entry of a table.
        """
        core_part = self._part(subscripts, cores)
        chunk_terms = self._chunk_terms(subscripts, chunks, chunk)
        if len(chunk_terms) == 1 and is_zero(chunk_terms[0]):
            return core_part
        expr = chunk_terms[0] if is_zero(core_part) else core_part + chunk_terms[0]
        for term in chunk_terms[1:]:  # summed from left to right, as MLIR reads `a + b + c`
            expr = expr + term
        return expr

    def _chunk_terms(self, subscripts: Subscripts, chunks: np.ndarray, chunk: Chunk) -> list[AffineExpr]:
        """The chunk's part of a start: `k * a + b` of the loop's variable, a literal, or a table's entry."""
        if chunk.value is None:
            return [AffineExpr.constant(int(chunks[chunk.values[0]]))]
        fit = linear(np.array([chunks[k] for k in chunk.values]), chunk.values)
        if fit is None:
            return [subscripts.dim(self._table(chunks, chunk.value))]
        slope, offset = fit
        if not slope:
            return [AffineExpr.constant(offset)]
        return [subscripts.dim(chunk.value) * slope] + ([AffineExpr.constant(offset)] if offset else [])

    def _part(self, subscripts: Subscripts, column: np.ndarray) -> AffineExpr:
        """The core's part of a start: a literal, affine in the tile id, or a table's entry."""
        probe = start_subscript(column, AffineExpr.dimension(0))
        if probe is None:
            return subscripts.dim(self._table(column, self.tile_id))
        if isinstance(probe, AffineConstantExpr):
            return probe
        return cast(AffineExpr, start_subscript(column, subscripts.dim(self.tile_id)))

    def _table(self, column: np.ndarray, variable: SSAValue) -> SSAValue:
        """Entry `variable` of a constant table of `column`'s values, as an index."""
        e = self.emitter
        values = TensorType(i64, [len(column)])
        table = e.value(
            arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(values, [int(v) for v in column])), "starts"
        )
        entry = e.value(tensor.ExtractOp(table, [variable], i64), "s")
        return e.value(IndexCastOp(entry, IndexType()), "s")

    def _device_dims(self, host: HostTiles, tile_index: int) -> tuple[tuple[int, ...], list[int]]:
        """
        A DMA's extent along each device dim and the device dims in host order. A device dim
        that holds no host data in the box (size 1, or synthetic: data at position 0 only) is
        moved at position 0 only (extent 1) and comes first.
        """
        kept = [d for d, pick in enumerate(host.index) if isinstance(pick, slice)]
        dropped = [d for d, pick in enumerate(host.index) if not isinstance(pick, slice)]
        extent = tuple(
            1 if d in dropped else int(e) for d, e in enumerate(self.tiles[tile_index].extent_array)
        )
        return extent, dropped + [kept[p - 1] for p in host.perm[1:]]

    def _access_tile(
        self,
        op: Operation,
        tile_index: int,
        chunk: Chunk,
        device_order: bool = False,
        view: SSAValue | None = None,
    ) -> tuple[SSAValue, tuple[int, ...], HostTiles, tuple[int, ...]]:
        """
        The access tile of a DMA (and the shape it moves, device dims in host order unless
        `device_order`), the tile's host map and held extent; on the tensor's device memory
        view, or on `view`, a resident LX tensor's distributed view of the same coordinates.
        """
        host, held = self._host_map(op, tile_index, chunk)
        tile = self.tiles[tile_index]
        tensor_ = self._tensor_of(tile_index)
        extent, order = self._device_dims(host, tile_index)
        subscripts = Subscripts()
        for d in range(len(extent)):
            subscripts.exprs.append(
                self._start(subscripts, tile.starts_array[:, d], tile.chunk_starts_array[:, d], chunk)
            )
        name = self.emitter.fresh("tile")
        if device_order:
            order = list(range(len(extent)))
        loaded = tuple(extent[d] for d in order)
        tile_order = AffineMapAttr(AffineMap(len(extent), 0, tuple(AffineExpr.dimension(d) for d in order)))
        access = ConstructAccessTileOp(
            view or tensor_.view,
            subscripts.indices,
            subscripts.base_map(),
            box_set(extent),
            tile_order,
            loaded,
        )
        return self.emitter.named(access, name), loaded, host, held

    def _resident_view(self, buffer: SSAValue, op: Operation) -> SSAValue | None:
        """
        The distributed view (`ktdp.construct_distributed_memory_view`) of a resident LX tensor
        a DMA moves `buffer` to or from, None for a device tensor: one `ct_local` member per
        core at the buffer's LX address, holding the core's slice of the tensor (the buffer's
        extent, row-major, from the core's start of tile `tile_index`), so that an access tile
        addresses it by the tensor's device coordinates as it would its device memory view.
        Example: a 256 x 2048 fp16 result kept at address 0 as each core's [8, 32, 64] slice:
        core 1's member covers device coordinates [8..15, 0..31, 0..63] of [32, 256, 64].
        """
        if not isinstance(buffer.type, MemRefType):
            return None
        if (known := self.resident_views.get(buffer)) is not None:
            return known
        alloc = buffer.owner
        if not isinstance(alloc, core.LxAllocOp) or alloc.resident is None:
            raise op_error(op, "it moves an LX buffer that is not a resident tensor's")
        moves = [
            u.operation for u in buffer.uses if isinstance(u.operation, core.DmaLoadOp | core.DmaStoreOp)
        ]
        if not moves:
            raise op_error(alloc, "a resident tensor no DMA moves is not written")
        tile_index = moves[0].tile.value.data
        element = self._tensor_of(tile_index).element
        slots, *extent = (int(n) for n in buffer.type.get_shape())
        itemsize = _itemsize(self.kernel.body.block.args[tile_index].type, alloc)
        if slots != 1 or alloc.address.value.data % itemsize:
            raise op_error(
                op, "resident tensors of several slots or at unaligned addresses are not written yet"
            )
        e = self.emitter
        offset = index_constant(e, alloc.address.value.data // itemsize, "lx")
        members = []
        for core_index, start in enumerate(self.tiles[tile_index].starts_array):
            space = MemorySpaceAttr(StringAttr("ct_local"), IntAttr(core_index))
            member = memory_view(offset, extent, element, space, [int(x) for x in start])
            members.append(e.value(member, "m"))
        device_size = self._tensor_of(tile_index).device_size
        view = e.value(
            ConstructDistributedMemoryViewOp(members, MemRefType(element, device_size)), "resident"
        )
        self.resident_views[buffer] = view
        return view


__all__ = ["GLOBAL", "AccessTiles", "KernelTensor", "box_set", "memory_view"]
