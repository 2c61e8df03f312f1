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

import functools
import itertools
import math
from collections.abc import Sequence

from ktir.layout.spyre import SpyreTensorLayout, restickify_target
from ktir.layout.tiled import LayoutError, contiguous_strides

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
    elements (the dim with the stick's stride) when the sticks stay the same: that dim is the
    whole source dim, or both are whole numbers of sticks (then no stick is padded, and
    merging or splitting them moves whole sticks).

    Example: stick 1 of (4, 128) -> (4, 2, 64) lands on dim 2; (4, 64) -> (256,) on dim 0;
    (4, 96) -> (4, 3, 32) splits the stick and (4, 96) -> (384,) drops the padding of each
    row's second stick: both None (the view must copy).
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
        if length == size or (length % elems_per_stick == 0 and size % elems_per_stick == 0):
            return dim
        return None
    return None


def aligned(stick: int, operand_rank: int, result_rank: int) -> int:
    """An operand dim's index in a broadcast result (right-aligned, as in NumPy)."""
    return SPARSE if stick == SPARSE else stick + result_rank - operand_rank


# ---------------------------------------------------------------------------------------------
# Sticks <-> layouts
# ---------------------------------------------------------------------------------------------


def normalize(stick: int | None, shape: Sequence[int]) -> int | None:
    """
    A stick on a size-1 dim holds one element per stick, exactly like a sparse layout, so it
    is `SPARSE`; every other stick is unchanged.

    Example: stick 1 of (64, 1) is `SPARSE`; stick 0 of (64, 1) stays 0.
    """
    if stick is None or stick == SPARSE:
        return stick
    return SPARSE if shape[stick] == 1 else stick


def candidate_sticks(shape: Sequence[int]) -> tuple[int, ...]:
    """
    Every stick a tensor of `shape` can have: its dims longer than 1, innermost first (the
    default layout's stick comes first, so searches prefer it on ties), then `SPARSE`.

    Example: (4, 1, 64) can be sticked on dim 2, dim 0 or be sparse: `(2, 0, SPARSE)`.
    """
    return (*(d for d in reversed(range(len(shape))) if shape[d] > 1), SPARSE)


def layout_stick(stl: SpyreTensorLayout, shape: Sequence[int]) -> int | None:
    """
    The host dim the sticks of `stl` walk on a tensor of `shape`: `SPARSE` for one element per
    stick, None when a stick spans several host dims (a split stick).

    Example: the default layout of (128, 256) walks dim 1; `dim_order=[1, 0]` walks dim 0;
    the default layout of (128, 1) is `SPARSE`; the (8, 64) default layout read as
    (8, 4, 16) is split (each stick holds four rows of dim 2). Raises `LayoutError` if `stl`
    does not fit `shape`.
    """
    return _layout_stick(stl, tuple(shape))


@functools.lru_cache(maxsize=4096)
def _layout_stick(stl: SpyreTensorLayout, shape: tuple[int, ...]) -> int | None:
    bound = stl.bind(shape)
    lane = len(stl.device_size) - 1
    for group in bound.groups:
        digit = next((d for d in group.digits if d.device_dim == lane), None)
        if digit is None:
            continue
        if digit.unit != 1:
            return None
        inner = group.host_dims[-1]
        # A stick inside one host dim: the group is that dim alone, or whole sticks of it.
        if len(group.host_dims) == 1 or group.host_sizes[-1] % stl.elems_per_stick == 0:
            return normalize(inner, shape)
        return None
    return SPARSE


def stick_layout(shape: Sequence[int], dtype: object, stick: int) -> SpyreTensorLayout:
    """
    The canonical layout of `shape` sticked on `stick`: the other dims keep their order
    outside the stick (`dim_order = [others..., stick]`). `SPARSE` (one element per stick)
    puts the stick on the last size-1 dim when there is one, else uses a sparse `dim_order`.

    Example: `stick_layout((256, 128), "float16", 0)` is `dim_order=[1, 0]`: device_size
    [4, 128, 64] with stride_map [8192, 1, 128]. `stick_layout((128, 1), "float16", SPARSE)`
    is the default layout of (128, 1): [1, 128, 64] / [-1, 1, -1].
    """
    rank = len(shape)
    if stick == SPARSE:
        unit = [d for d, n in enumerate(shape) if n == 1]
        if not unit:
            return SpyreTensorLayout(shape, dtype, dim_order=[*range(rank), -1])
        stick = unit[-1]
    return SpyreTensorLayout(shape, dtype, dim_order=[*(d for d in range(rank) if d != stick), stick])


def restickified_layout(
    stl: SpyreTensorLayout, shape: Sequence[int], old: int | None, new: int
) -> SpyreTensorLayout:
    """
    The layout a restickify from stick `old` to `new` (a dim, or `SPARSE`) produces: the reference's
    target formula (`ktir.layout.restickify_target`) when `stl` is sticked on a real dim,
    otherwise (a split stick, or slots the formula cannot find) the canonical `stick_layout`.

    Example: (256, 128) fp16 default, `old=1`, `new=0` gives [4, 128, 64] / [8192, 1, 128].
    """
    if old is not None and old != SPARSE and new != SPARSE and shape[old] > 1:
        try:
            return restickify_target(stl, shape, old, new)
        except LayoutError:
            pass
    return stick_layout(shape, stl.device_dtype, new)


@functools.lru_cache(maxsize=4096)
def dim_order_of(stl: SpyreTensorLayout, shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """
    The `dim_order` that builds `stl` for `shape` (`SpyreTensorLayout(shape, dtype, dim_order)`),
    or None for layouts no dim order builds (sparse, split, or hand-written).

    Example: `restickify_target` of the (2, 8, 64) default from dim 2 to dim 1 is `(0, 2, 1)`.
    """
    stick = layout_stick(stl, shape)
    if stick is None or stick == SPARSE:
        return None
    others = [d for d in range(len(shape)) if d != stick]
    for order in itertools.permutations(others):
        if SpyreTensorLayout(shape, stl.device_dtype, dim_order=[*order, stick]) == stl:
            return (*order, stick)
    return None


def permuted_layout(
    stl: SpyreTensorLayout, shape: Sequence[int], perm: Sequence[int]
) -> SpyreTensorLayout | None:
    """
    The layout of `permute(x, perm)` that holds the same device bytes as `x` (layout `stl`,
    host `shape`), or None when no layout can say it.

    Result dim `i` is input dim `perm[i]`. A `dim_order` layout maps its dim order through
    `perm.index`. Any other layout is rewritten device dim by device dim: a device dim that
    walks several host dims at once (a merged group) is first split, row-major, into one
    device dim per host dim (the same bytes), then every stride is re-expressed in the
    result's host strides.
    Example: (256, 128) default (`dim_order=[0, 1]`) transposed is the (128, 256) layout with
    `dim_order=[1, 0]`: device_size [2, 256, 64], stride_map [16384, 1, 256], the same bytes
    read with the stick on dim 0. The (128, 64) default [1, 128, 64] / [64, 64, 1] read as
    (4, 32, 64) and permuted by [1, 0, 2] becomes [1, 4, 32, 64] / [-1, 64, 256, 1].
    """
    target = [shape[p] for p in perm]
    order = dim_order_of(stl, tuple(shape))
    if order is not None:
        return SpyreTensorLayout(target, stl.device_dtype, dim_order=[list(perm).index(d) for d in order])
    try:
        groups = stl.bind(shape).groups
    except LayoutError:
        return None
    digit_of = {d.device_dim: (group, d) for group in groups for d in group.digits}
    target_strides = contiguous_strides(tuple(target))
    where = {d: list(perm).index(d) for d in range(len(shape))}
    sizes: list[int] = []
    strides: list[int] = []
    for j, (size, step) in enumerate(zip(stl.device_size, stl.stride_map, strict=True)):
        if j not in digit_of:  # synthetic, broadcast or size 1: no host stride to move
            sizes.append(size)
            strides.append(step if step <= 0 else -1)
            continue
        group, digit = digit_of[j]
        pieces = _split_digit(group.host_dims, group.host_sizes, digit.unit, digit.size)
        if pieces is None:
            return None
        for dim, piece, unit in pieces:
            sizes.append(piece)
            strides.append(unit * target_strides[where[dim]])
    try:
        return SpyreTensorLayout.from_device(sizes, strides, stl.device_dtype)
    except LayoutError:
        return None


def _split_digit(
    dims: Sequence[int], sizes: Sequence[int], unit: int, size: int
) -> list[tuple[int, int, int]] | None:
    """
    Split a device dim stepping `unit` positions `size` times through a merged group of host
    `dims` (outer to inner) into `(host dim, size, unit within that dim)` pieces, outer first;
    None if it does not split at host dim boundaries. Positions past the group are padding and
    stay with the outermost piece.
    """
    pieces: list[tuple[int, int, int]] = []
    inner = 1
    top = unit * size
    for k in reversed(range(len(dims))):
        outer = inner * sizes[k] if k else max(inner * sizes[k], top)
        low, high = max(unit, inner), min(top, outer)
        if low < high:
            if low % inner or high % low:
                return None
            pieces.append((dims[k], high // low, low // inner))
        inner *= sizes[k]
    return pieces[::-1]


def reshaped_layout(stl: SpyreTensorLayout, target: Sequence[int]) -> SpyreTensorLayout | None:
    """
    The layout of a row-major reshape to `target` that holds the same device bytes, or None.

    A reshape keeps every element's host offset, so the same `device_size` / `stride_map`
    describes the result when it binds to `target` with the stick on one whole dim.
    Example: (4, 128) default [2, 4, 64] / [64, 128, 1] binds to (4, 2, 64) unchanged.
    """
    try:
        stl.bind(target)
    except LayoutError:
        return None
    return stl if layout_stick(stl, target) is not None else None


def in_sticks(shape: Sequence[int], element_bytes: int, stick_bytes: int) -> int:
    """
    Elements of a tile counted in whole sticks of `stick_bytes` along its innermost dim, the way
    the scratchpad holds it. Example: (16, 1) fp32 in 128-byte sticks is 16 rows of one stick of
    32 lanes: 512.
    """
    if not shape:
        return 1
    per_stick = max(stick_bytes // element_bytes, 1)
    return math.prod(shape[:-1]) * -(-shape[-1] // per_stick) * per_stick
