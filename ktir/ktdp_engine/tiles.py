"""
Access tiles as boxes: the coordinates a `ktdp.construct_access_tile` names, for every compute
tile at once.

An access tile is the set of points of `access_tile_set` (relative to `base_map(indices)`),
enumerated in `access_tile_order`. The sets torch-spyre's emitter and the RFC examples write are
boxes: each constraint bounds one dim (`d0 >= 0`, `-d0 + 127 >= 0`, `d0 == 0`, `-d1 + s0 - 1 >=
0`). `box_of` reads the box from the constraints, with the symbols' values; the element indices
of a tile in its memory view are then `offset + sum((base + local) * stride)` over the box.

Example: the set `(d0, d1) : (d0 >= 0, -d0 + 127 >= 0, d1 >= 0, -d1 + 1023 >= 0)` is the box
[0, 127] x [0, 1023]; with base (256, 0), offset 0 and strides (1024, 1) its first element is
element 262,144 of the view's memory.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
from xdsl.ir.affine import AffineConstraintKind, AffineDimExpr, AffineExpr, AffineMap, AffineSet


class TileError(ValueError):
    """An access tile the engine cannot run (not a box, sizes that differ between tiles)."""


def _linear(expr: AffineExpr, dims: int, symbols: int) -> tuple[list[int], list[int], int]:
    """The coefficients of an affine expression: per dim, per symbol, and the constant."""
    zero_d, zero_s = [0] * dims, [0] * symbols
    constant = expr.eval(zero_d, zero_s)
    dim_coefs = [expr.eval([int(i == d) for i in range(dims)], zero_s) - constant for d in range(dims)]
    sym_coefs = [expr.eval(zero_d, [int(i == s) for i in range(symbols)]) - constant for s in range(symbols)]
    return dim_coefs, sym_coefs, constant


@functools.lru_cache(maxsize=1024)
def _box_constraints(tile_set: AffineSet) -> list[tuple[bool, int, int, list[int], int]]:
    """
    Per constraint of a box-shaped set: (is an equality, its dim, the dim's coefficient (+-1),
    the symbols' coefficients, the constant). Cached: loops construct the same tiles each
    iteration.
    """
    rows = []
    for constraint in tile_set.constraints:
        expr = constraint.lhs - constraint.rhs
        dim_coefs, sym_coefs, constant = _linear(expr, tile_set.num_dims, tile_set.num_symbols)
        used = [d for d, c in enumerate(dim_coefs) if c]
        if len(used) != 1 or abs(dim_coefs[used[0]]) != 1:
            raise TileError(f"access tile set constraint '{constraint}' does not bound one dim: not a box")
        d = used[0]
        rows.append((constraint.kind == AffineConstraintKind.eq, d, dim_coefs[d], sym_coefs, constant))
    return rows


def box_of(tile_set: AffineSet, symbols: Sequence[np.ndarray], tiles: int) -> tuple[np.ndarray, np.ndarray]:
    """
    (lower, upper) inclusive bounds of each dim of a box-shaped set, per compute tile
    (tiles x dims); `symbols` are the set's symbol values per tile. `TileError` if a constraint
    bounds more than one dim or a dim is unbounded. A set without symbols is the same box on
    every call (cached: an access tile in a loop builds it once).
    """
    if not symbols:
        return _static_box(tile_set, tiles)
    return _bounds(tile_set, symbols, tiles)


@functools.lru_cache(maxsize=1024)
def _static_box(tile_set: AffineSet, tiles: int) -> tuple[np.ndarray, np.ndarray]:
    lower, upper = _bounds(tile_set, [], tiles)
    lower.flags.writeable = upper.flags.writeable = False  # shared by every call
    return lower, upper


def _bounds(tile_set: AffineSet, symbols: Sequence[np.ndarray], tiles: int) -> tuple[np.ndarray, np.ndarray]:
    lower = np.full((tiles, tile_set.num_dims), np.iinfo(np.int64).min)
    upper = np.full((tiles, tile_set.num_dims), np.iinfo(np.int64).max)
    for equality, d, coef, sym_coefs, constant in _box_constraints(tile_set):
        rest = constant + sum(c * np.asarray(v) for c, v in zip(sym_coefs, symbols, strict=True))
        bound = np.broadcast_to(-rest * coef, (tiles,))  # coef * d + rest >= 0 (or == 0)
        if equality:
            lower[:, d] = np.maximum(lower[:, d], bound)
            upper[:, d] = np.minimum(upper[:, d], bound)
        elif coef > 0:
            lower[:, d] = np.maximum(lower[:, d], bound)
        else:
            upper[:, d] = np.minimum(upper[:, d], bound)
    if (lower == np.iinfo(np.int64).min).any() or (upper == np.iinfo(np.int64).max).any():
        raise TileError("the access tile set leaves a dim unbounded: not a box")
    return lower, upper


def permutation_of(order: AffineMap) -> list[int]:
    """The dims an access order lists, in its order: `(d0, d1) -> (d1, d0)` gives [1, 0]."""
    # The order is a permutation map: every result is a dim.
    return [cast(AffineDimExpr, r).position for r in order.results]


def _box_coordinates(base: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> list[np.ndarray]:
    """Each dim's coordinates of every tile's box (tiles x extent); `TileError` if extents differ."""
    extents = upper[0] - lower[0] + 1
    if (upper - lower + 1 != extents).any():
        raise TileError("the access tile's extents differ between compute tiles")
    corner = base + lower
    return [corner[:, d, None] + np.arange(int(extents[d]))[None] for d in range(base.shape[1])]


def _along(values: np.ndarray, d: int, dims: int) -> np.ndarray:
    """A tiles x extent array along dim `d` of a tiles x box array (broadcast over the others)."""
    return values.reshape(values.shape[0], *([1] * d), values.shape[1], *([1] * (dims - d - 1)))


def _in_order(flat: np.ndarray, order: AffineMap) -> np.ndarray:
    """A tiles x box array laid out in the access order."""
    return flat.transpose(0, *(p + 1 for p in permutation_of(order)))


def element_indices(
    base: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    order: AffineMap,
    offset: np.ndarray,
    strides: Sequence[np.ndarray],
    sizes: Sequence[np.ndarray],
) -> np.ndarray:
    """
    The element index (in the view's memory, its element type) of every point of each tile's
    box, laid out in `order` (tiles x tile shape). `base`, `lower`, `upper` are tiles x dims;
    `offset` and each stride and size are per tile. `TileError` when a coordinate leaves the view.

    The index is separable, `offset + sum_d coord_d * stride_d`, so it is built as one broadcast
    sum of a short vector per dim rather than from every point's coordinates.
    """
    tiles, dims = base.shape
    flat = np.broadcast_to(offset, (tiles,)).reshape(tiles, *([1] * dims)).astype(np.int64)
    for d, coords in enumerate(_box_coordinates(base, lower, upper)):
        size = np.broadcast_to(sizes[d], (tiles,))[:, None]
        if ((coords < 0) | (coords >= size)).any():
            raise TileError("the access tile reaches outside its memory view's sizes")
        flat = flat + _along(coords * np.broadcast_to(strides[d], (tiles,))[:, None], d, dims)
    return _in_order(flat, order)


def masked_indices(
    base: np.ndarray, lower: np.ndarray, upper: np.ndarray, order: AffineMap, view: View
) -> tuple[np.ndarray, np.ndarray]:
    """
    The element indices and mask of a direct access tile that reaches past its view's sizes
    where the view's `coordinate_set` leaves the excess out (a masked vector add's last block):
    a point is in the mask when every coordinate is in the set's box; the points out of it get
    the index of coordinate 0 (a valid address no access uses). `TileError` if the view has no
    box-shaped set, or a point in the set lies outside the sizes.
    """
    if view.covers is None:
        raise TileError("the access tile reaches outside its memory view's sizes")
    tiles, dims = base.shape
    flat = np.broadcast_to(view.offset, (tiles,)).reshape(tiles, *([1] * dims)).astype(np.int64)
    mask = np.ones((tiles, *([1] * dims)), bool)
    for d, coords in enumerate(_box_coordinates(base, lower, upper)):
        inside = (coords >= view.covers[0][:, d, None]) & (coords <= view.covers[1][:, d, None])
        size = np.broadcast_to(view.sizes[d], (tiles,))[:, None]
        if (inside & ((coords < 0) | (coords >= size))).any():
            raise TileError("the access tile reaches outside its memory view's sizes")
        stride = np.broadcast_to(view.strides[d], (tiles,))[:, None]
        flat = flat + _along(np.where(inside, coords, 0) * stride, d, dims)
        mask = mask & _along(inside, d, dims)
    return _in_order(flat, order), _in_order(np.broadcast_to(mask, flat.shape), order)


@dataclass
class Box:
    """
    A direct access tile as a strided box: the element at tile position `i` of compute tile
    `t` is `start[t] + sum_d i_d * strides[d]`, the data laid out in `perm` order. Loads and
    stores then read and write strided views of memory instead of index arrays.

    Example: a 128 x 1024 tile at row 256 of a row-major 4096 x 1024 f16 view is start
    262,144, strides (1024, 1), extents (128, 1024).
    """

    start: np.ndarray
    strides: tuple[int, ...]
    extents: tuple[int, ...]
    perm: tuple[int, ...]

    def indices(self) -> np.ndarray:
        """Every point's element index (tiles x shape, in `perm` order)."""
        tiles, dims = len(self.start), len(self.extents)
        flat = self.start.reshape(tiles, *([1] * dims))
        for d, (extent, stride) in enumerate(zip(self.extents, self.strides, strict=True)):
            flat = flat + (np.arange(extent) * stride).reshape(1, *([1] * d), extent, *([1] * (dims - d - 1)))
        return flat.transpose(0, *(p + 1 for p in self.perm))

    def bounds(self) -> tuple[int, int]:
        """The smallest and largest element index the box reaches."""
        low = sum(min(0, (e - 1) * s) for e, s in zip(self.extents, self.strides, strict=True))
        high = sum(max(0, (e - 1) * s) for e, s in zip(self.extents, self.strides, strict=True))
        return int(self.start.min()) + low, int(self.start.max()) + high

    def view_of(self, elements: np.ndarray) -> np.ndarray | None:
        """A strided view of `elements` holding the box (None unless the starts step evenly)."""
        steps = np.diff(self.start)
        if len(steps) and (steps != steps[0]).any():
            return None
        step = int(steps[0]) if len(steps) else 0
        item = elements.itemsize
        base = elements[int(self.start[0]) :]
        view = np.lib.stride_tricks.as_strided(
            base,
            (len(self.start), *self.extents),
            (step * item, *(s * item for s in self.strides)),
            writeable=True,
        )
        return view.transpose(0, *(p + 1 for p in self.perm))

    def rows(self) -> tuple[np.ndarray, int] | None:
        """Each row's first element (tiles x rows) and its length, if the last dim is contiguous."""
        if self.strides[-1] != 1:
            return None
        outer = Box(self.start, self.strides[:-1], self.extents[:-1], tuple(range(len(self.extents) - 1)))
        return outer.indices().reshape(len(self.start), -1), self.extents[-1]


def box_points(
    base: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    order: AffineMap,
    offset: np.ndarray,
    strides: Sequence[np.ndarray],
    sizes: Sequence[np.ndarray],
) -> Box | None:
    """The box of a direct access tile when its view's strides are the same on every tile."""
    tiles = base.shape[0]
    uniform = [np.broadcast_to(s, (tiles,)) for s in strides]
    if any((s != s[0]).any() for s in uniform):
        return None
    extents = upper[0] - lower[0] + 1
    if (upper - lower + 1 != extents).any():
        raise TileError("the access tile's extents differ between compute tiles")
    corner = base + lower
    size = np.stack([np.broadcast_to(n, (tiles,)) for n in sizes], axis=1)
    if (corner < 0).any() or (corner + extents > size).any():
        raise TileError("the access tile reaches outside its memory view's sizes")
    steps = tuple(int(s[0]) for s in uniform)
    start = np.broadcast_to(offset, (tiles,)).astype(np.int64) + (corner * np.array(steps)).sum(axis=1)
    perm = tuple(permutation_of(order))
    return Box(start, steps, tuple(int(e) for e in extents), perm)


def row_sticks(first: np.ndarray, length: int, per: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's first and last stick (tiles x rows) for rows of `length` consecutive elements."""
    return first // per, (first + length - 1) // per


def sticks_of_rows(first: np.ndarray, length: int, per: int) -> int | None:
    """
    Distinct sticks of rows of consecutive elements, summed over tiles, when each tile's rows
    do not share sticks (they start a whole stick apart, no closer than a row's span); None
    otherwise.
    """
    begin, end = row_sticks(first, length, per)
    spans = end - begin + 1
    starts = np.sort(begin, axis=1)
    if not bool((np.diff(starts, axis=1) >= spans.max(initial=1)).all()):
        return None
    if not bool((first % per == first[:, :1] % per).all()):
        return None
    return int(spans.sum())


def sticks_touched(indices: np.ndarray, itemsize: int, stick_bytes: int) -> int:
    """
    Distinct sticks the tiles' elements fall in, summed over tiles. Rows whose elements are
    consecutive (the last dim's step 1) and start a whole number of sticks apart are counted
    from their ends; anything else with `np.unique` per tile.
    """
    per = stick_bytes // itemsize
    tiles = indices.shape[0]
    rows = (
        indices.reshape(tiles, -1, indices.shape[-1]) if indices.ndim > 1 else indices.reshape(tiles, 1, -1)
    )
    first, last = rows[:, :, 0], rows[:, :, -1]
    consecutive = rows.shape[-1] == 1 or bool((np.diff(rows[:, :1, :], axis=-1) == 1).all())
    spans = last // per - first // per + 1
    starts = np.sort(first // per, axis=1)
    disjoint = bool((np.diff(starts, axis=1) >= spans.max(initial=1)).all()) and bool(
        (first % per == first[:, :1] % per).all()
    )
    if consecutive and disjoint and bool((last - first == rows.shape[-1] - 1).all()):
        return int(spans.sum())
    return int(sum(len(np.unique(t // per)) for t in indices.reshape(tiles, -1)))


OWN_LX = -1
"""`View.core` of a `ct_local` view without a `ct_id`: each tile's own LX."""


@dataclass
class View:
    """
    A memory view: its memory (`global`, or core `core`'s LX; `OWN_LX`: each tile's own, its
    offsets then counted from the start of tile 0's LX, tile t's `t` scratchpads on), offset,
    sizes and strides.
    """

    space: str
    core: int
    offset: np.ndarray
    sizes: list[np.ndarray]
    strides: list[np.ndarray]
    dtype: np.dtype
    covers: tuple[np.ndarray, np.ndarray] | None = None
    """Its `coordinate_set` as a box: (lower, upper) per tile and dim (None: not a box)."""


@dataclass
class Tile:
    """
    An access tile: its view and the element index of each point (tiles x shape), or the
    strided `Box` they form (a direct tile on a view with the same strides on every tile).
    """

    view: View
    points: np.ndarray | None = None
    box: Box | None = None
    mask: np.ndarray | None = None
    """Which points are in the view's `coordinate_set` (tiles x shape; None: all of them).
    A load reads the others as 0, a store skips them (`masked_indices`)."""

    @property
    def indices(self) -> np.ndarray:
        """Every point's element index (tiles x shape)."""
        if self.points is None:
            self.points = cast(Box, self.box).indices()
        return self.points

    def only(self, active: np.ndarray | None) -> Tile:
        """The tile of the `active` compute tiles only (all of them for None)."""
        if active is None:
            return self
        if self.box is not None:
            box = self.box
            return Tile(self.view, box=Box(box.start[active], box.strides, box.extents, box.perm))
        mask = None if self.mask is None else self.mask[active]
        return Tile(self.view, points=self.indices[active], mask=mask)

    @property
    def shape(self) -> tuple[int, ...]:
        """(tiles, *tile shape)."""
        if self.points is not None:
            return self.points.shape
        box = cast(Box, self.box)
        return (len(box.start), *(box.extents[p] for p in box.perm))


__all__ = [
    "OWN_LX",
    "Box",
    "Tile",
    "TileError",
    "View",
    "box_of",
    "box_points",
    "element_indices",
    "masked_indices",
    "permutation_of",
    "sticks_of_rows",
    "sticks_touched",
]
