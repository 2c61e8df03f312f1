"""
Distributed memory views (`ktdp.construct_distributed_memory_view`): one logical tensor whose
pieces live in different memories, each member view covering the points of its
`coordinate_set` (in the distributed view's coordinates).

A point `p` of an access tile on a distributed view belongs to the first member whose set's box
holds it, and is that member's element at the local coordinate `p - lower`, `lower` the corner
of the member's box: `offset + sum((p - lower) * strides)` in the member's memory. Overlapping
members are unspecified in RFC 0682; here the first one listed wins. A point no member covers
is an error.

Example: a 192 x 64 tensor whose rows 0-63 are in LPDDR5 (set `0 <= d0 <= 63`), rows 64-127 in
core 0's LX stored column by column (strides [1, 64]) and rows 128-191 in core 1's LX: row 70,
column 5 is element (70 - 64) * 1 + 5 * 64 = 326 of core 0's member.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.ir.affine import AffineMap

from ktir.hardware import cost_model
from ktir.ir.diagnostics import location_of
from ktir.ktdp_engine.memory import KtdpError
from ktir.ktdp_engine.schedule import Access
from ktir.ktdp_engine.tiles import View, permutation_of

if TYPE_CHECKING:
    from ktir.ktdp_engine.engine import TileProgram


@dataclass
class DistributedView:
    """A distributed view: its member views (each with its box) and the whole tensor's sizes."""

    members: list[View]
    sizes: list[int]
    dtype: np.dtype


@dataclass
class DistributedTile:
    """An access tile on a distributed view: every point's coordinates (tiles x shape x dims)."""

    view: DistributedView
    coords: np.ndarray

    @property
    def shape(self) -> tuple[int, ...]:
        """(tiles, *tile shape)."""
        return self.coords.shape[:-1]


def distributed_view(run: TileProgram, op: Any) -> list[DistributedView]:
    """The handler of `ktdp.construct_distributed_memory_view`."""
    members = [run.env[v] for v in op.memrefs]
    for index, member in enumerate(members):
        if not isinstance(member, View) or member.covers is None:
            raise KtdpError(
                f"member {index} of a distributed view is not a memory view whose coordinate_set is a box",
                location_of(op),
            )
    shape = [int(n) for n in op.result.type.get_shape()]
    dtype = members[0].dtype if members else np.dtype(np.float16)
    return [DistributedView(members, shape, dtype)]


def distributed_tile(
    view: DistributedView, base: np.ndarray, lower: np.ndarray, upper: np.ndarray, order: AffineMap
) -> DistributedTile:
    """The coordinates of a direct access tile's points (base + its box, in `order`)."""
    tiles, dims = base.shape
    extents = upper[0] - lower[0] + 1
    if (upper - lower + 1 != extents).any():
        raise KtdpError("the access tile's extents differ between compute tiles")
    axes = [
        (base[:, d] + lower[:, d]).reshape(tiles, *[1] * dims)
        + np.arange(int(extents[d])).reshape(1, *[int(extents[d]) if a == d else 1 for a in range(dims)])
        for d in range(dims)
    ]
    coords = np.stack(np.broadcast_arrays(*axes), axis=-1)
    sizes = np.array(view.sizes)
    if ((coords < 0) | (coords >= sizes)).any():
        raise KtdpError("the access tile reaches outside its distributed view's sizes")
    perm = permutation_of(order)
    return DistributedTile(view, coords.transpose(0, *(p + 1 for p in perm), dims + 1))


def _pieces(run: TileProgram, tile: DistributedTile) -> list[tuple[View, np.ndarray, np.ndarray]]:
    """Per member: the mask of the points it holds (tiles x shape) and their element indices."""
    coords = tile.coords
    rank = coords.shape[-1]
    taken = np.zeros(coords.shape[:-1], dtype=bool)
    if run.charges.active is not None:  # a tile past its last loop iteration touches nothing
        taken |= ~run.charges.active.reshape(-1, *[1] * (coords.ndim - 2))
    pieces = []
    for index, member in enumerate(tile.view.members):
        assert member.covers is not None  # `distributed_view` admits only members with a box
        low, high = (b.reshape(-1, *[1] * (coords.ndim - 2), rank) for b in member.covers)
        inside = ((coords >= low) & (coords <= high)).all(axis=-1) & ~taken
        taken |= inside
        local = (coords - low)[inside]
        tile_of = np.nonzero(inside)[0]
        flat = member.offset[tile_of].astype(np.int64)
        for d in range(rank):
            if ((local[:, d] < 0) | (local[:, d] >= member.sizes[d][tile_of])).any():
                raise KtdpError(
                    f"member {index} of the distributed view covers a point outside its own sizes "
                    "(its coordinate_set is larger than the view)"
                )
            flat = flat + local[:, d] * member.strides[d][tile_of]
        pieces.append((member, inside, flat))
    if not taken.all():
        raise KtdpError("an access tile point lies in no member of its distributed view")
    return pieces


def _charge(run: TileProgram, pieces: list[tuple[View, np.ndarray, np.ndarray]], queue: str) -> None:
    """
    Each member's share: a DMA of the sticks it touches; the points in scratchpads, one LX copy
    per tile of the bytes it copies (the tiles copy at once, each in its own core's LX, as
    ktir's cores copy a resident tensor's tiles).
    """
    target = run.target
    copied = np.zeros(run.tiles)  # bytes each tile copies inside LX
    for member, inside, flat in pieces:
        if not flat.size:
            continue
        run.schedule.accesses.append(Access(run.memory.key_of(member), write=queue == "store"))
        itemsize = member.dtype.itemsize
        if member.space == "ct_local":
            copied += np.count_nonzero(inside.reshape(len(inside), -1), axis=1) * itemsize
            continue
        tile_of = np.nonzero(inside)[0]
        per = target.stick_bytes // itemsize
        sticks = len(np.unique(tile_of * (1 << 40) + flat // per))
        run.charges.footprint.touch(flat, itemsize, target.stick_bytes)
        run.charges.charge_transfer(queue, float(sticks * target.stick_bytes), target)
    if copied.any():
        cycles = np.where(copied > 0, cost_model.lx_copy_cycles(copied, target), 0.0)
        run.charges.charge("dma", cycles, queue=queue)


def load_distributed(run: TileProgram, tile: DistributedTile) -> np.ndarray:
    """The points of a distributed tile, each read from its member's memory."""
    pieces = _pieces(run, tile)
    data = np.zeros(tile.shape, tile.view.dtype)
    for member, inside, flat in pieces:
        data[inside] = run.memory.read(member, flat)
    _charge(run, pieces, "load")
    return data


def store_distributed(run: TileProgram, tile: DistributedTile, values: np.ndarray) -> None:
    """Write every point of a distributed tile into its member's memory."""
    pieces = _pieces(run, tile)
    data = np.broadcast_to(values, tile.shape)
    for member, inside, flat in pieces:
        run.memory.write(member, flat, data[inside])
    _charge(run, pieces, "store")


__all__ = [
    "DistributedTile",
    "DistributedView",
    "distributed_tile",
    "distributed_view",
    "load_distributed",
    "store_distributed",
]
