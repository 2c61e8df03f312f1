"""
The placement algebra of inter-tile delivery: how `split` and `concat` rewrite a partial's
type and data along a list of axes (`scatter_dimensions`, `gather_dimensions`,
`split_dimensions`, `concat_dimensions` of the delivery ops, `ktir.dialects.ktdp.delivery`).

The contract, per upstream KTIR's inter-tile design:

- An axis list is non-empty, ascending and in range. It names the product space of its axes,
  linearized row-major: the first axis varies slowest. `E(D)` is that space's extent.
- **split** into `C` parts: part `l` is the flat range `[l * E(D) / C, (l + 1) * E(D) / C)` of
  every line through the listed axes. The part must be a box, so that it has a tensor type:
  the trailing axes it covers whole, one axis partly, the leading ones at extent 1.
- **concat** of `P` pieces: piece `l` fills the flat range `[l * E(D), (l + 1) * E(D))`; the
  first listed axis grows `P`-fold (on a stick layout, the chunk axis, never the stick).

Worked example: a partial of shape `[2, 16, 32]` over `D = [0, 2]` (`E(D) = 64`). Split in 2:
each part is `[1, 16, 32]`, part 1 is index 1 of axis 0. Split in 4: a part is 16 flat
elements, half a line of axis 2: `[1, 16, 16]`. Concat of 4: `[8, 16, 32]`, piece `l` is
rows `2l, 2l + 1` of axis 0.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np


class PlacementError(ValueError):
    """An axis list or a part count the partial's shape cannot take (the message says why)."""


def check_axes(axes: Sequence[int], rank: int, name: str) -> None:
    """`PlacementError` unless `axes` is a non-empty, strictly ascending list of axes below `rank`."""
    if not axes:
        raise PlacementError(f"{name} must list at least one axis")
    if any(b <= a for a, b in itertools.pairwise(axes)):
        raise PlacementError(f"{name} must be strictly ascending, not {list(axes)}")
    if axes[0] < 0 or axes[-1] >= rank:
        raise PlacementError(f"{name} {list(axes)} names an axis outside a rank-{rank} partial")


def split_shape(shape: Sequence[int], axes: Sequence[int], parts: int) -> tuple[int, ...]:
    """
    The shape of one of `parts` equal parts of `shape` over `axes`; `PlacementError` if the
    flat extent does not divide or a part is not a box. `split_shape([2, 16, 32], [0, 2], 4)`
    is `(1, 16, 16)`.
    """
    extents = [shape[a] for a in axes]
    total = math.prod(extents)
    if parts < 1 or total % parts:
        raise PlacementError(f"the extent {total} over axes {list(axes)} does not split into {parts} parts")
    chunk = total // parts
    part = list(extents)
    covered = 1  # the flat extent of the trailing axes the part covers whole
    for index in range(len(extents) - 1, -1, -1):
        if chunk % (covered * extents[index]) == 0:
            covered *= extents[index]
            continue
        partial = chunk // covered
        if chunk % covered or extents[index] % partial:
            raise PlacementError(f"a 1/{parts} part of axes {list(axes)} of shape {list(shape)} is not a box")
        part[index] = partial
        part[:index] = [1] * index
        break
    result = list(shape)
    for axis, extent in zip(axes, part, strict=True):
        result[axis] = extent
    return tuple(result)


def concat_shape(shape: Sequence[int], axes: Sequence[int], pieces: int) -> tuple[int, ...]:
    """The shape of `pieces` pieces of `shape` concatenated over `axes` (the first axis `pieces`-fold)."""
    result = list(shape)
    result[axes[0]] *= pieces
    return tuple(result)


def _flat(array: np.ndarray, axes: Sequence[int]) -> tuple[np.ndarray, list[int]]:
    """`array` with `axes` moved last and flattened into one, and the order that moves them back."""
    rest = [a for a in range(array.ndim) if a not in axes]
    moved = np.transpose(array, [*rest, *axes])
    return moved.reshape(*moved.shape[: len(rest)], -1), [*rest, *axes]


def _unflat(flat: np.ndarray, axes: Sequence[int], shape: Sequence[int], order: list[int]) -> np.ndarray:
    """The inverse of `_flat` for a result of `shape`."""
    moved = flat.reshape(*flat.shape[:-1], *(shape[a] for a in axes))
    return np.transpose(moved, np.argsort(order))


def split_part(array: np.ndarray, axes: Sequence[int], parts: int, index: int) -> np.ndarray:
    """Part `index` of `parts` of `array` over `axes` (the contract above)."""
    shape = split_shape(array.shape, axes, parts)
    flat, order = _flat(array, axes)
    chunk = flat.shape[-1] // parts
    return _unflat(flat[..., index * chunk : (index + 1) * chunk], axes, shape, order)


def concat_pieces(pieces: Sequence[np.ndarray], axes: Sequence[int]) -> np.ndarray:
    """`pieces` (of one shape) concatenated over `axes` in order (the contract above)."""
    shape = concat_shape(pieces[0].shape, axes, len(pieces))
    flats = [_flat(piece, axes) for piece in pieces]
    return _unflat(np.concatenate([flat for flat, _ in flats], axis=-1), axes, shape, flats[0][1])


__all__ = ["PlacementError", "check_axes", "concat_pieces", "concat_shape", "split_part", "split_shape"]
