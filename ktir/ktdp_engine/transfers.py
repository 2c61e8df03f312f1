"""
ktdp's memory ops on every tile at once: tile ids, memory views, direct and indirect access
tiles, loads and stores, each transfer charged as ktir's chip model charges a DMA.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from xdsl.dialects.builtin import DenseArrayBase, IntegerType, MemRefType, TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.ir.affine import AffineBinaryOpKind, AffineConstantExpr, AffineDimExpr

from ktir.dialects.ktdp import ops as ktdp
from ktir.dialects.ktdp.attributes import MemorySpaceAttr
from ktir.dialects.ktdp.indirect import ConstructIndirectAccessTileOp
from ktir.dialects.ktdp.legacy import SpyreMemorySpaceAttr
from ktir.hardware import accounting, cost_model
from ktir.hardware.target import Target
from ktir.ir.diagnostics import location_of
from ktir.ir.interpreter import Implementations
from ktir.ktdp_engine.charges import device_itemsize
from ktir.ktdp_engine.distributed import (
    DistributedTile,
    DistributedView,
    distributed_tile,
    distributed_view,
    load_distributed,
    store_distributed,
)
from ktir.ktdp_engine.memory import KtdpError
from ktir.ktdp_engine.schedule import Access
from ktir.ktdp_engine.tiles import (
    OWN_LX,
    Box,
    Tile,
    TileError,
    View,
    box_of,
    box_points,
    element_indices,
    masked_indices,
    row_sticks,
    sticks_of_rows,
    sticks_touched,
)
from ktir.layout.dtypes import numpy_dtype
from ktir.reference.precision import store

if TYPE_CHECKING:
    from ktir.ktdp_engine.engine import Handler, TileProgram

IMPLS: Implementations[Handler] = Implementations()
"""The memory ops (`ktir.ir.interpreter`)."""


@IMPLS.impl(ktdp.GetComputeTileIdOp)
def _tile_id(run: TileProgram, op: ktdp.GetComputeTileIdOp) -> list[np.ndarray]:
    grid = run.grid
    t = np.arange(run.tiles)
    ids, step = [], 1
    for extent in grid[: len(op.ids)]:
        ids.append((t // step) % extent)
        step *= extent
    return ids


@IMPLS.impl(ktdp.ConstructMemoryViewOp)
def _memory_view(run: TileProgram, op: ktdp.ConstructMemoryViewOp) -> list[View]:
    def values(static: Sequence[int], dynamic: Sequence[SSAValue]) -> list[np.ndarray]:
        rest = iter(dynamic)
        return [run.addressed(run.env[next(rest)] if n == ktdp.DYNAMIC else n) for n in static]

    space = op.memory_space
    kind, core = (
        cast(SpyreMemorySpaceAttr, space).placement()
        if hasattr(space, "placement")
        else (cast(MemorySpaceAttr, space).kind.data, cast(MemorySpaceAttr, space).ct_id.data)
    )
    element = cast(MemRefType[Attribute], op.result.type).element_type
    sizes = values(cast("DenseArrayBase[IntegerType]", op.static_sizes).get_values(), op.sizes)
    offset = run.addressed(run.env[op.offset])
    if kind == "ct_local" and core < 0:  # no ct_id: each tile's own scratchpad (`OWN_LX`)
        core = OWN_LX
        offset = offset + np.arange(run.tiles) * (run.target.lx_bytes // numpy_dtype(element).itemsize)
    return [
        View(
            kind,
            max(core, OWN_LX),
            offset,
            sizes,
            values(cast("DenseArrayBase[IntegerType]", op.static_strides).get_values(), op.strides),
            numpy_dtype(element),
            _covers(run, op, sizes),
        )
    ]


def _covers(run: TileProgram, op: Any, sizes: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray] | None:
    """
    The view's `coordinate_set` as a box per tile (None: not a box); without a set, the full
    index space of its sizes. The set's symbols are the dynamic sizes, left to right (RFC 0682).
    """
    if op.coordinate_set is None:
        upper = np.stack([np.broadcast_to(np.asarray(n), (run.tiles,)) for n in sizes], axis=-1) - 1
        return np.zeros_like(upper), upper
    try:
        return box_of(op.coordinate_set.data, [run.addressed(run.env[v]) for v in op.sizes], run.tiles)
    except (TileError, ValueError):
        return None


@IMPLS.impl(ktdp.ConstructAccessTileOp)
def _access_tile(run: TileProgram, op: ktdp.ConstructAccessTileOp) -> list[Tile] | list[DistributedTile]:
    view = run.addressed_view(run.env[op.base])
    if not isinstance(view, View | DistributedView):
        raise KtdpError("access tiles of tensors are not supported yet: give a memory view", location_of(op))
    indices = [run.addressed(run.env[v]) for v in op.indices]
    base = np.stack(
        [np.broadcast_to(_eval_expr(e, indices), (run.tiles,)) for e in op.base_map.data.results], 1
    )
    symbols = [run.addressed(run.env[v]) for v in op.symbol_operands]
    lower, upper = box_of(op.access_tile_set.data, symbols, run.tiles)
    order = op.access_tile_order.data
    if isinstance(view, DistributedView):
        return [distributed_tile(view, base, lower, upper, order)]
    try:
        box = box_points(base, lower, upper, order, view.offset, view.strides, view.sizes)
        if box is not None:
            return [Tile(view, box=box)]
        return [Tile(view, element_indices(base, lower, upper, order, view.offset, view.strides, view.sizes))]
    except TileError:  # past the view's sizes: masked where its coordinate_set leaves the excess out
        indices, mask = masked_indices(base, lower, upper, order, view)
        return [Tile(view, indices, mask=mask)]


@IMPLS.impl(ConstructIndirectAccessTileOp)
def _indirect_tile(run: TileProgram, op: Any) -> list[Tile]:
    """
    An indirect access tile: the intermediate variables over their box, each base coordinate a
    direct subscript or a value read from an index view (a gather or scatter's addresses).
    """
    view = run.addressed_view(run.env[op.base])
    if not isinstance(view, View):
        raise KtdpError("indirect access tiles of tensors are not supported yet", location_of(op))
    symbols = [run.addressed(run.env[v]) for v in op.symbol_operands]
    lower, upper = box_of(op.variables_space_set.data, symbols, run.tiles)
    extents = [int(e) for e in upper[0] - lower[0] + 1]
    if (upper - lower + 1 != extents).any():
        raise TileError("the access tile's extents differ between compute tiles")
    shape = (run.tiles, *extents)
    variables = [
        np.broadcast_to((lower[:, k].reshape(-1, *([1] * len(extents))) + np.arange(e).reshape(
            [1] + [e if a == k else 1 for a in range(len(extents))])), shape)
        for k, e in enumerate(extents)
    ]  # fmt: skip
    dims = [
        np.broadcast_to(run.addressed(run.env[v]).reshape(-1, *([1] * len(extents))), shape)
        for v in op.captured_variables
    ]
    dims += variables
    views = iter(run.addressed_view(run.env[v]) for v in op.indirect_memrefs)
    coords = []
    for kind, map_attr in zip(op.per_dim_subscript_kinds.data, op.per_dim_subscript_maps.data, strict=True):
        values = [_eval_expr(e, dims) for e in map_attr.data.results]
        if not kind.value.data:
            coords.append(values[0])
            continue
        index_view = next(views)
        where = _flat_index(index_view, values, run.tiles)
        coords.append(run.memory.read(index_view, where).astype(np.int64))
        _charge_transfer(run, Tile(index_view, where), "load")
    indices = _flat_index(view, coords, run.tiles)
    perm = [r.position for r in op.variables_space_order.data.results]
    return [Tile(view, indices.transpose(0, *(p + 1 for p in perm)))]


def _eval_expr(expr: Any, dims: Sequence[np.ndarray]) -> np.ndarray | np.int64:
    """
    An affine expression on arrays of dim values (floordiv and mod as floor operations); a
    constant expression is an `np.int64` scalar, which broadcasts like an array.
    """
    if isinstance(expr, AffineDimExpr):
        return dims[expr.position]
    if isinstance(expr, AffineConstantExpr):
        return np.int64(expr.value)
    lhs, rhs = _eval_expr(expr.lhs, dims), _eval_expr(expr.rhs, dims)
    kind = expr.kind
    if kind == AffineBinaryOpKind.Add:
        return lhs + rhs
    if kind == AffineBinaryOpKind.Mul:
        return lhs * rhs
    if kind == AffineBinaryOpKind.FloorDiv:
        return lhs // rhs
    if kind == AffineBinaryOpKind.CeilDiv:
        return -((-lhs) // rhs)
    return lhs % rhs


def _flat_index(view: View, coords: Sequence[np.ndarray | np.int64], tiles: int) -> np.ndarray:
    """
    Element indices of per-point coordinates in a view, checked against its sizes (a coordinate
    whose map is constant is a scalar).
    """
    per_tile = (tiles, *([1] * (max(np.ndim(c) for c in coords) - 1)))
    flat = view.offset.reshape(per_tile).astype(np.int64)
    for coord, size, stride in zip(coords, view.sizes, view.strides, strict=True):
        if ((coord < 0) | (coord >= size.reshape(per_tile))).any():
            raise TileError("an indirect access tile reaches outside its memory view's sizes")
        flat = flat + coord * stride.reshape(per_tile)
    return np.broadcast_to(flat, np.broadcast_shapes(*(np.shape(c) for c in coords), flat.shape)).copy()


@IMPLS.impl(ktdp.LoadOp)
def _load(run: TileProgram, op: ktdp.LoadOp) -> list[np.ndarray]:
    tile = run.env[op.access_tile]
    if isinstance(tile, DistributedTile):
        return [store(load_distributed(run, tile), cast(TensorType[Attribute], op.result.type).element_type)]
    data = run.memory.read(tile.view, tile.indices if tile.box is None else tile.box)
    if tile.mask is not None:  # the points out of the view's coordinate_set read as 0
        data = np.where(tile.mask, data, np.zeros((), data.dtype))
    _charge_transfer(run, tile, "load", broadcast=True)
    return [store(data, cast(TensorType[Attribute], op.result.type).element_type)]


@IMPLS.impl(ktdp.StoreOp)
def _store(run: TileProgram, op: ktdp.StoreOp) -> None:
    tile = run.env[op.access_tile]
    if isinstance(tile, DistributedTile):
        store_distributed(run, tile, np.asarray(run.env[op.data_tile]))
        return
    data = np.broadcast_to(np.asarray(run.env[op.data_tile]), tile.shape)
    active = run.charges.active
    if active is not None:  # tiles past their last loop iteration store nothing
        tile, data = tile.only(active), data[active]
    if tile.mask is not None:  # the points out of the view's coordinate_set are not written
        run.memory.write(tile.view, tile.indices[tile.mask], data[tile.mask])
    else:
        run.memory.write(tile.view, tile.indices if tile.box is None else tile.box, data)
    _charge_transfer(run, tile, "store")


def _charge_transfer(run: TileProgram, tile: Tile, queue: str, broadcast: bool = False) -> None:
    """
    The DMA of the active tiles' part of an access tile (stores pass that part already). Tiles
    that load the same box share one broadcast read per `broadcast_cohort` of them, as the
    cores of ktir's own kernels do (`ktir.sim.engine`): 32 tiles reading one weight box move
    it 4 times with cohorts of 8.
    """
    target = run.target
    if run.charges.active is not None and tile.shape[0] == run.tiles:
        tile = tile.only(run.charges.active)
    itemsize = device_itemsize(tile.view.dtype)
    run.schedule.accesses.append(Access(run.memory.key_of(tile.view), write=queue == "store"))
    if tile.view.space == "ct_local":
        core_bytes = math.prod(tile.shape[1:]) * itemsize
        run.charges.charge("dma", cost_model.lx_copy_cycles(core_bytes, target), queue=queue)
        return
    sticks = _broadcast_sticks(tile, target) if broadcast and tile.box is not None else None
    if sticks is None:
        sticks = _sticks(tile, target)
    moved = float(sticks) * target.stick_bytes
    rows = tile.box.rows() if tile.box is not None else None
    if rows is not None:
        run.charges.footprint.touch_rows(*row_sticks(rows[0], rows[1], target.stick_bytes // itemsize))
    else:
        run.charges.footprint.touch(tile.indices, itemsize, target.stick_bytes)
    run.charges.charge_transfer(queue, moved, target)


def _sticks(tile: Tile, target: Target) -> int:
    """The sticks an access tile's tiles touch, summed over tiles."""
    itemsize = device_itemsize(tile.view.dtype)
    rows = tile.box.rows() if tile.box is not None else None
    sticks = sticks_of_rows(rows[0], rows[1], target.stick_bytes // itemsize) if rows is not None else None
    if sticks is None:
        sticks = sticks_touched(tile.indices, itemsize, target.stick_bytes)
    return sticks


def _broadcast_sticks(tile: Tile, target: Target) -> int | None:
    """The sticks a load moves when tiles share boxes (one read per cohort); None if none do."""
    box = cast(Box, tile.box)
    starts, first, readers = np.unique(box.start, return_index=True, return_counts=True)
    if len(starts) == len(box.start):
        return None
    total = 0
    for index, count in zip(first, readers, strict=True):
        one = np.zeros(len(box.start), dtype=bool)
        one[index] = True
        total += int(accounting.broadcast_reads(count, target)) * _sticks(tile.only(one), target)
    return total


# -- compute ------------------------------------------------------------------------------------


IMPLS.impl(ktdp.ConstructDistributedMemoryViewOp)(distributed_view)


__all__ = ["IMPLS"]
