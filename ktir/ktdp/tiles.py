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

from collections.abc import Sequence

import numpy as np
from xdsl.ir.affine import AffineConstraintKind, AffineExpr, AffineMap, AffineSet


class TileError(ValueError):
    """An access tile the engine cannot run (not a box, sizes that differ between tiles)."""


def _linear(expr: AffineExpr, dims: int, symbols: int) -> tuple[list[int], list[int], int]:
    """The coefficients of an affine expression: per dim, per symbol, and the constant."""
    zero_d, zero_s = [0] * dims, [0] * symbols
    constant = expr.eval(zero_d, zero_s)
    dim_coefs = [expr.eval([int(i == d) for i in range(dims)], zero_s) - constant for d in range(dims)]
    sym_coefs = [expr.eval(zero_d, [int(i == s) for i in range(symbols)]) - constant for s in range(symbols)]
    return dim_coefs, sym_coefs, constant


def box_of(tile_set: AffineSet, symbols: Sequence[np.ndarray], tiles: int) -> tuple[np.ndarray, np.ndarray]:
    """
    (lower, upper) inclusive bounds of each dim of a box-shaped set, per compute tile
    (tiles x dims); `symbols` are the set's symbol values per tile. `TileError` if a constraint
    bounds more than one dim or a dim is unbounded.
    """
    lower = np.full((tiles, tile_set.num_dims), np.iinfo(np.int64).min)
    upper = np.full((tiles, tile_set.num_dims), np.iinfo(np.int64).max)
    for constraint in tile_set.constraints:
        expr = constraint.lhs - constraint.rhs
        dim_coefs, sym_coefs, constant = _linear(expr, tile_set.num_dims, tile_set.num_symbols)
        used = [d for d, c in enumerate(dim_coefs) if c]
        if len(used) != 1 or abs(dim_coefs[used[0]]) != 1:
            raise TileError(f"access tile set constraint '{constraint}' does not bound one dim: not a box")
        d = used[0]
        rest = constant + sum(c * np.asarray(v) for c, v in zip(sym_coefs, symbols, strict=True))
        bound = np.broadcast_to(-rest * dim_coefs[d], (tiles,))  # coef * d + rest >= 0 (or == 0)
        if constraint.kind == AffineConstraintKind.eq:
            lower[:, d] = np.maximum(lower[:, d], bound)
            upper[:, d] = np.minimum(upper[:, d], bound)
        elif dim_coefs[d] > 0:
            lower[:, d] = np.maximum(lower[:, d], bound)
        else:
            upper[:, d] = np.minimum(upper[:, d], bound)
    if (lower == np.iinfo(np.int64).min).any() or (upper == np.iinfo(np.int64).max).any():
        raise TileError("the access tile set leaves a dim unbounded: not a box")
    return lower, upper


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
    extents = upper[0] - lower[0] + 1
    if (upper - lower + 1 != extents).any():
        raise TileError("the access tile's extents differ between compute tiles")
    tiles, dims = base.shape
    flat = np.broadcast_to(offset, (tiles,)).reshape(tiles, *([1] * dims)).astype(np.int64)
    for d in range(dims):
        coords = base[:, d, None] + lower[:, d, None] + np.arange(int(extents[d]))[None]  # tiles x extent
        size = np.broadcast_to(sizes[d], (tiles,))[:, None]
        if ((coords < 0) | (coords >= size)).any():
            raise TileError("the access tile reaches outside its memory view's sizes")
        term = coords * np.broadcast_to(strides[d], (tiles,))[:, None]
        flat = flat + term.reshape(tiles, *([1] * d), int(extents[d]), *([1] * (dims - d - 1)))
    perm = [r.position for r in order.results]  # type: ignore[attr-defined]
    return flat.transpose(0, *(p + 1 for p in perm))


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


__all__ = ["TileError", "box_of", "element_indices", "sticks_touched"]
