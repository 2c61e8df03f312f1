"""
Shape rules shared by the graph-level ops, the FX importer and the reference executor.

Each function maps input shapes to an output shape, or raises `ShapeError` with a message
that names the rule. They are the single source of truth for broadcasting, reductions,
permutations, reshapes, slices, concatenation, padding and matmul shapes: the op verifiers
call them to check, the importer calls them to build result types, and the executor's
results must agree with them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

Shape = tuple[int, ...]


class ShapeError(ValueError):
    """A shape rule is violated; the message says which one."""


def broadcast_shapes(*shapes: Sequence[int]) -> Shape:
    """
    The NumPy/PyTorch broadcast of `shapes`: right-aligned, each dim equal or 1.

    Example: `broadcast_shapes((4, 1, 64), (8, 1))` is `(4, 8, 64)`;
    `broadcast_shapes((4, 64), (3, 64))` raises (4 vs 3 in dim 0).
    """
    rank = max((len(s) for s in shapes), default=0)
    result = [1] * rank
    for shape in shapes:
        offset = rank - len(shape)
        for i, size in enumerate(shape):
            current = result[offset + i]
            if size == current or size == 1:
                continue
            if current != 1:
                listed = ", ".join(str(list(s)) for s in shapes)
                raise ShapeError(f"shapes {listed} do not broadcast: dim {offset + i} is {current} vs {size}")
            result[offset + i] = size
    return tuple(result)


def normalize_dim(dim: int, rank: int) -> int:
    """
    `dim` in `[0, rank)`, accepting PyTorch's negative dims (`-1` is the last).

    Example: `normalize_dim(-1, 3)` is 2; `normalize_dim(3, 3)` raises.
    A rank-0 tensor accepts dims 0 and -1, as PyTorch does.
    """
    bound = max(rank, 1)
    if not -bound <= dim < bound:
        raise ShapeError(f"dim {dim} is out of range for rank {rank}")
    return dim % bound


def check_dims(dims: Sequence[int], rank: int) -> tuple[int, ...]:
    """
    Validate a list of non-negative dims: each in `[0, rank)`, no repeats; returned sorted.

    Example: `check_dims([2, 0], 3)` is `(0, 2)`; `check_dims([1, 1], 3)` raises.
    """
    for dim in dims:
        if not 0 <= dim < max(rank, 1):
            raise ShapeError(f"dim {dim} is out of range for rank {rank}")
    if len(set(dims)) != len(dims):
        raise ShapeError(f"dims {list(dims)} repeat a dim")
    return tuple(sorted(dims))


def reduce_shape(shape: Sequence[int], dims: Sequence[int], keepdim: bool) -> Shape:
    """
    The shape after reducing `dims` (already validated): size 1 with `keepdim`, else dropped.

    Example: `reduce_shape((4, 8, 64), [2], keepdim=True)` is `(4, 8, 1)`; without keepdim `(4, 8)`.
    """
    if keepdim:
        return tuple(1 if i in dims else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in dims)


def permute_shape(shape: Sequence[int], perm: Sequence[int]) -> Shape:
    """
    `shape` permuted: result dim `i` is input dim `perm[i]`; `perm` must be a permutation.

    Example: `permute_shape((2, 3, 4), [2, 0, 1])` is `(4, 2, 3)`.
    """
    if sorted(perm) != list(range(len(shape))):
        raise ShapeError(f"perm {list(perm)} is not a permutation of the {len(shape)} dims")
    return tuple(shape[p] for p in perm)


def check_reshape(source: Sequence[int], target: Sequence[int]) -> None:
    """
    A reshape keeps the element count: `(4, 8) -> (32,)` is valid, `(4, 8) -> (30,)` is not.
    """
    if math.prod(source) != math.prod(target):
        raise ShapeError(
            f"cannot reshape {list(source)} ({math.prod(source)} elements) "
            f"to {list(target)} ({math.prod(target)} elements)"
        )


def check_expand(source: Sequence[int], target: Sequence[int]) -> None:
    """
    `expand` broadcasts size-1 dims and may add leading dims; other dims must be equal.

    Example: `(1, 64) -> (4, 8, 64)` is valid; `(2, 64) -> (4, 64)` is not.
    """
    if len(target) < len(source):
        raise ShapeError(f"cannot expand rank {len(source)} to the lower rank {len(target)}")
    offset = len(target) - len(source)
    for i, size in enumerate(source):
        if size not in (1, target[offset + i]):
            raise ShapeError(f"cannot expand dim {i} of size {size} to {target[offset + i]}")


def slice_length(size: int, start: int, end: int, step: int) -> int:
    """
    Length of `range(start, end, step)` on a dim of `size`; start/end are already clamped.

    Example: `slice_length(10, 1, 10, 3)` is 3 (elements 1, 4, 7).
    """
    if step <= 0:
        raise ShapeError(f"slice step must be positive, not {step}")
    if not 0 <= start <= end <= size:
        raise ShapeError(f"slice [{start}:{end}] is outside [0, {size}] or reversed")
    return len(range(start, end, step))


def clamp_slice_bounds(size: int, start: int | None, end: int | None) -> tuple[int, int]:
    """
    PyTorch's slice bound rules: None means the edge, negatives count from the end, clamp.

    Example: on size 10, `(None, -2)` is `(0, 8)`; `(-100, 2**63 - 1)` is `(0, 10)`.
    """
    start = 0 if start is None else start
    end = size if end is None else end
    start = start + size if start < 0 else start
    end = end + size if end < 0 else end
    start = min(max(start, 0), size)
    end = min(max(end, start), size)
    return start, end


def cat_shape(shapes: Sequence[Sequence[int]], dim: int) -> Shape:
    """
    The concatenation of `shapes` along `dim`: all other dims equal, `dim` summed.

    Example: `cat_shape([(2, 3), (2, 5)], 1)` is `(2, 8)`.
    """
    if not shapes:
        raise ShapeError("cat needs at least one input")
    first = shapes[0]
    if not first:
        raise ShapeError("cat needs inputs of rank >= 1")
    if not 0 <= dim < len(first):
        raise ShapeError(f"dim {dim} is out of range for rank {len(first)}")
    for i, shape in enumerate(shapes[1:], start=1):
        if len(shape) != len(first) or any(
            a != b for d, (a, b) in enumerate(zip(shape, first, strict=True)) if d != dim
        ):
            raise ShapeError(
                f"input {i} of shape {list(shape)} does not match {list(first)} outside dim {dim}"
            )
    return tuple(sum(s[dim] for s in shapes) if d == dim else size for d, size in enumerate(first))


def pad_shape(shape: Sequence[int], low: Sequence[int], high: Sequence[int]) -> Shape:
    """
    The shape after adding `low[i]` elements before and `high[i]` after dim `i` (all >= 0).

    Example: `pad_shape((4, 60), [0, 0], [0, 4])` is `(4, 64)`.
    """
    if len(low) != len(shape) or len(high) != len(shape):
        raise ShapeError(f"low and high padding need one entry per dim ({len(shape)})")
    if any(v < 0 for v in (*low, *high)):
        raise ShapeError("padding amounts must be non-negative")
    return tuple(s + lo + hi for s, lo, hi in zip(shape, low, high, strict=True))


def matmul_shape(x: Sequence[int], y: Sequence[int]) -> Shape:
    """
    `x @ y` for the forms Spyre runs: [M,K]@[K,N], [B,M,K]@[K,N], [B,M,K]@[B,K,N], [A,B,M,K]@[A,B,K,N].

    Example: `matmul_shape((2, 16, 64), (64, 128))` is `(2, 16, 128)`.
    """
    forms = {(2, 2), (3, 2), (3, 3), (4, 4)}
    if (len(x), len(y)) not in forms:
        raise ShapeError(f"unsupported matmul ranks {len(x)}D x {len(y)}D (supported: 2x2, 3x2, 3x3, 4x4)")
    if x[-1] != y[-2]:
        raise ShapeError(f"contraction dims differ: x has K = {x[-1]}, y has K = {y[-2]}")
    if len(y) > 2 and tuple(x[:-2]) != tuple(y[:-2]):
        raise ShapeError(f"batch dims differ: {list(x[:-2])} vs {list(y[:-2])}")
    return (*x[:-1], y[-1])
