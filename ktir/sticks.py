"""
Stick-dim algebra on host shapes: where the stick goes through views, reductions and
broadcasting. Layout propagation states its per-op rules with these functions.

A tensor's stick is the host dim its 64-element (fp16) sticks walk, or `SPARSE` for one
element per stick (the result of reducing over the stick). Views move no data, so the stick of a
view's result is a function of its input's stick; `None` means the view leaves the stick
"offset" or split (not offset-free, in the reference's words), and a consumer needing a stick
must restickify it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ktir.layout import contiguous_strides

SPARSE = -1
"""The stick of a sparse tensor: one element per stick (a reduction over the stick dim)."""


def through_permute(stick: int, perm: Sequence[int]) -> int:
    """
    Result dim `i` is input dim `perm[i]`, so the stick moves to `perm.index(stick)`.

    Example: a stick on dim 1 through `perm = [1, 0]` (a transpose) lands on dim 0.
    """
    return SPARSE if stick == SPARSE else list(perm).index(stick)


def through_expand(stick: int, source: Sequence[int], target: Sequence[int]) -> int | None:
    """
    `expand` adds leading dims and broadcasts size-1 dims: the stick shifts by the added dims,
    unless it is a broadcast (size 1 -> n) dim, whose sticks would repeat one element.

    Example: stick 1 of (1, 64) expanded to (4, 8, 64) lands on dim 2.
    """
    if stick == SPARSE:
        return SPARSE
    shifted = stick + len(target) - len(source)
    if source[stick] == 1 and target[shifted] != 1:
        return None
    return shifted


def through_slice(stick: int, dim: int, start: int, step: int, elems_per_stick: int) -> int | None:
    """
    Slicing another dim keeps the stick; slicing the stick dim keeps it only when the slice
    starts on a stick boundary with step 1 (otherwise sticks would begin mid-stick).

    Example: `x[:, 64:128]` on a stick-1 tensor keeps stick 1; `x[:, 3:67]` does not.
    """
    if stick != dim:
        return stick
    return stick if step == 1 and start % elems_per_stick == 0 else None


def through_reshape(
    stick: int, source: Sequence[int], target: Sequence[int], elems_per_stick: int
) -> int | None:
    """
    A row-major reshape keeps the stick on the target dim that holds the same consecutive
    elements: the dim with the stick's stride, if it is at least a whole stick long (a multiple
    of the stick) or covers the whole source dim.

    Example: stick 1 of (4, 128) -> (4, 2, 64) lands on dim 2; (4, 64) -> (256,) on dim 0;
    (4, 96) -> (4, 3, 32) splits the stick (None).
    """
    if stick == SPARSE:
        return SPARSE
    if tuple(source) == tuple(target):
        return stick
    size = source[stick]
    if size == 1:
        return None
    stride = contiguous_strides(tuple(source))[stick]
    for dim, (length, step) in enumerate(zip(target, contiguous_strides(tuple(target)), strict=True)):
        if step != stride or length == 1:
            continue
        if length % elems_per_stick == 0 or length >= size:
            return dim
        return None
    return None


def through_reduction(stick: int, dims: Sequence[int], keepdim: bool) -> int:
    """
    Reducing keeps the stick (renumbered without the dropped dims); reducing over the stick
    gives a sparse result.

    Example: stick 2 of a rank-3 tensor reduced over [0] without keepdim lands on dim 1;
    reduced over [2] it is `SPARSE`.
    """
    if stick == SPARSE or stick in dims:
        return SPARSE
    return stick if keepdim else stick - sum(1 for d in dims if d < stick)


def aligned(stick: int, operand_rank: int, result_rank: int) -> int:
    """An operand dim's index in a broadcast result (right-aligned, as in NumPy)."""
    return SPARSE if stick == SPARSE else stick + result_rank - operand_rank


def pointwise_compatible(
    operand_stick: int | None, operand_shape: Sequence[int], result_stick: int, result_shape: Sequence[int]
) -> bool:
    """
    Whether a pointwise op with result stick `result_stick` reads this operand as it is.

    Compatible: a single element (it broadcasts everywhere); the operand's stick aligned onto
    the result stick; or an operand that is size 1 along the result stick (missing or
    broadcast there) and sparse or sticked on that size-1 dim, so each result stick sees one
    element. A split or offset stick (`None`) is never compatible.

    Example: (4, 64) stick 1 + (64,) stick 0 with result stick 1 is compatible; (4, 1) sparse
    against result stick 1 is compatible (one value per row broadcast along the stick).
    """
    if math.prod(operand_shape) == 1:
        return True
    if operand_stick is None:
        return False
    rank, result_rank = len(operand_shape), len(result_shape)
    if aligned(operand_stick, rank, result_rank) == result_stick and operand_stick != SPARSE:
        return True
    own = result_stick - (result_rank - rank)  # the operand's dim under the result stick
    broadcast_along_stick = own < 0 or operand_shape[own] == 1
    return broadcast_along_stick and (operand_stick == SPARSE or operand_stick == own)
