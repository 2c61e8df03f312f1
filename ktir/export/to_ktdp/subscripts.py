"""
Subscripts of the built access tiles: each core's (or chunk's) start along a device dim as an
affine expression of the compute tile id (or of a chunk loop's induction variable), when it
has one; and the access tile's base map over the indices its subscripts use.

Example: 32 cores whose starts along rows are [0, 2, 4, ..., 14] repeated four times (8 row
tiles of 2, for 4 column tiles) give `%id mod 8 * 2`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import AffineMapAttr
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineExpr, AffineMap


def is_zero(expr: AffineExpr) -> bool:
    """Whether `expr` is the constant 0."""
    return isinstance(expr, AffineConstantExpr) and expr.value == 0


def linear(values: np.ndarray, chunks: Sequence[int]) -> tuple[int, int] | None:
    """`(a, b)` when `values[i] == a * chunks[i] + b` for every i; None otherwise."""
    ks = np.array(chunks)
    slope = int(values[1] - values[0]) // int(ks[1] - ks[0]) if len(ks) > 1 else 0
    offset = int(values[0] - slope * ks[0])
    if not (values == slope * ks + offset).all():
        return None
    return slope, offset


def start_subscript(column: np.ndarray, tile_id: AffineExpr) -> AffineExpr | None:
    """
    Each core's start along one device dim as an affine expression of `tile_id`, when it has
    the form `((id floordiv q) mod r) * a + b` (a work division's mixed-radix core coordinate
    times the tile extent, plus an offset); None otherwise.

    Example: starts [0, 2, 4, 6, 0, 2, 4, 6] (4 row tiles of 2, repeated for 2 column tiles)
    are `id mod 4 * 2`; [0, 0, 0, 0, 64, 64, 64, 64] are `id floordiv 4 * 64`.
    """
    cores, first = len(column), int(column[0])
    if (column == first).all():
        return AffineExpr.constant(first)
    ids = np.arange(cores)
    for q in range(1, cores):
        for r in range(2, cores // q + 1):
            digit = (ids // q) % r
            scale = int(column[q] - first)
            if scale and (column == first + scale * digit).all():
                return _digit(tile_id, q, r, cores) * scale + first
    return None


def _digit(tile_id: AffineExpr, q: int, r: int, cores: int) -> AffineExpr:
    """The core's mixed-radix digit `(id floordiv q) mod r` (no `mod` when it does not wrap)."""
    expr = tile_id if q == 1 else tile_id // q
    return expr % r if q * r < cores else expr


class Subscripts:
    """An access tile's subscripts: affine expressions over indices, a dim per index in order of first use."""

    def __init__(self) -> None:
        self.indices: list[SSAValue] = []
        self.exprs: list[AffineExpr] = []

    def dim(self, index: SSAValue) -> AffineExpr:
        """The dim standing for `index` in the base map."""
        for position, known in enumerate(self.indices):
            if known is index:
                return AffineExpr.dimension(position)
        self.indices.append(index)
        return AffineExpr.dimension(len(self.indices) - 1)

    def base_map(self) -> AffineMapAttr:
        """The map from the indices to the tile's start."""
        return AffineMapAttr(AffineMap(len(self.indices), 0, tuple(self.exprs)))


__all__ = ["Subscripts", "is_zero", "linear", "start_subscript"]
