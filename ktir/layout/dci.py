"""
The reference stack's DMA descriptor (DCI) for a Spyre layout, built and executed with NumPy.

The reference moves a host tensor to the device with a *data conversion info*: a list of loop
nests (`ktir.layout.DmaBlock`), each copying

    device[device_offset + dot(i, device_strides)] = host[host_offset + dot(i, host_strides)]

for every index vector `i < sizes`. The loops run over the device dims; the device strides are
row-major over `device_size` and the host strides are the layout's `stride_map` (a `-1` entry
counts as 1: such a dim always has loop size 1). Only the loop sizes and the offsets depend on
the host tensor. They are found in three steps:

1. `device_to_host_dims`: each device dim of size > 1 walks the host dim with the largest host
   stride not above its `stride_map` entry (host dims of size 1 or stride 0 never match). The
   stick-tile dim (device index `rank - 3`, or 0 for rank <= 2) is then pointed at the host dim
   of the within-stick dim, if it walks anything.
2. `host_tile_map`: per host dim, its device dims ordered by increasing `stride_map`; the
   within-stick dim comes first, and of two dims with the same stride only the one with the
   higher device index is kept.
3. `loop_plan`: per host dim (last first), count its elements out along its device dims, from
   the coarsest: a device dim gets as many positions as fit. A host extent that a coarse dim does
   not divide leaves a *partial tile*: that dim and the next finer one get a remainder block.

Worked example: host (90,) with device `[1, 3, 64]` / `stride_map [64, 30, 1]`. Device dims 1
and 2 walk host dim 0 (strides 30 and 1); 90 = 3 * 30, so dim 1 gets 3 positions, and the
stick then holds the 30 elements left: one block, sizes (1, 3, 30), three sticks of 30.

A folding example: host (30, 40) in `[19, 64]` / `[64, 1]`. Device dim 0 is the stick-tile dim,
so it walks host dim 1 like the stick; host dim 0 is left without a device dim and folds into
host dim 1: 1200 contiguous elements, 18 whole sticks plus 48. The descriptor is a main block
(18, 64) and a remainder (1, 48) at host and device offset 1152.

A layout *fits* a host view when the descriptor exists (the reference's own checks), stays
inside `device_size`, reads only elements of the view, and reads every one of them
(`check_blocks`). Executing it (`host_to_device`, `device_to_host`) is then the packing and the
unpacking. Two blocks never put different host elements at one device position: in every block
the host offset of device coordinate `c` is `storage_offset + dot(c, stride_map)`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ktir.layout.binding import DmaBlock, check_host_view, strided_view
from ktir.layout.tiled import LayoutError, contiguous_strides

__all__ = [
    "HostView",
    "LoopPlan",
    "Remainder",
    "check_blocks",
    "dci_blocks",
    "device_to_host",
    "device_to_host_dims",
    "host_tile_map",
    "host_to_device",
    "loop_plan",
    "reference_blocks",
]

INVALID_SIZES = "Invalid device sizes and stride map for host sizes and strides"
"""The reference's message when a device dim cannot count out its host elements."""

INVALID_TILING = "Invalid tiling for dimension"
"""The reference's message when a partial tile has no finer device dim to take the remainder."""


@dataclass(frozen=True)
class HostView:
    """
    A host tensor as the DMA sees it: sizes, element strides and offset into its storage.

    Example: rows 2..4 and columns 0..99 of a (10, 128) array are `HostView((3, 100), (128, 1),
    256)`; its elements sit at storage offsets 256..355, 384..483 and 512..611.
    """

    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    storage_offset: int = 0

    @classmethod
    def of(
        cls, sizes: Sequence[int], strides: Sequence[int] | None = None, storage_offset: int = 0
    ) -> HostView:
        """Build a checked view; `strides` default to the contiguous strides of `sizes`."""
        size = tuple(sizes)
        stride = contiguous_strides(size) if strides is None else tuple(strides)
        check_host_view(size, stride)
        if storage_offset < 0:
            raise LayoutError(f"storage offset {storage_offset} is negative")
        return cls(size, stride, storage_offset)

    @property
    def numel(self) -> int:
        """Elements of the view."""
        return math.prod(self.sizes)

    @property
    def span(self) -> int:
        """Storage elements from the first element of the view to its last, inclusive."""
        return 1 + sum((n - 1) * s for n, s in zip(self.sizes, self.strides, strict=True))

    def mask(self) -> np.ndarray:
        """Which of the `span` storage positions after the storage offset the view holds."""
        marks = np.zeros(self.span, dtype=bool)
        strided_view(marks, 0, self.sizes, self.strides)[...] = True
        return marks


@dataclass(frozen=True)
class Remainder:
    """A partial tile: loop sizes overridden per device dim, and where the partial tile starts."""

    sizes: tuple[tuple[int, int], ...]
    host_offset: int
    device_offset: int


@dataclass(frozen=True)
class LoopPlan:
    """The main block's loop sizes (one per device dim) and the partial tiles, in order."""

    sizes: tuple[int, ...]
    remainders: tuple[Remainder, ...]


# ---------------------------------------------------------------------------------------------
# Building the descriptor
# ---------------------------------------------------------------------------------------------


def device_to_host_dims(
    view: HostView, device_size: Sequence[int], stride_map: Sequence[int]
) -> tuple[int, ...]:
    """
    The host dim each device dim walks, or -1 (the reference's `dim_map`).

    Example: (5, 100, 150) in `[100, 3, 5, 64]` / `[150, 64, 15000, 1]` gives (1, 2, 0, 2).
    """
    rank = len(device_size)
    dim_map = [-1] * rank
    best = [0] * rank
    for i, (n, stride) in enumerate(zip(view.sizes, view.strides, strict=True)):
        if n == 1 or stride == 0:
            continue
        for j in range(rank):
            if device_size[j] != 1 and best[j] < stride <= stride_map[j]:
                best[j], dim_map[j] = stride, i
    stick_tile = rank - 3 if rank > 2 else 0
    if dim_map[stick_tile] != -1:
        dim_map[stick_tile] = dim_map[rank - 1]
    return tuple(dim_map)


def host_tile_map(
    dim_map: Sequence[int], stride_map: Sequence[int], host_rank: int
) -> tuple[tuple[int, ...], ...]:
    """
    Per host dim, its device dims by increasing `stride_map` (within-stick dim first).

    Of two device dims with the same stride only the later one (higher device index) is kept,
    as in the reference's ordered map. Example: dim_map (1, 2, 0, 2) with stride_map
    (150, 64, 15000, 1) gives ((2,), (0,), (3, 1)).
    """
    keyed: list[dict[int, int]] = [{} for _ in range(host_rank)]
    last = len(dim_map) - 1
    if dim_map[last] != -1:
        keyed[dim_map[last]][-1] = last
    for j in range(last - 1, -1, -1):
        if dim_map[j] != -1:
            keyed[dim_map[j]].setdefault(stride_map[j], j)
    return tuple(tuple(dims[key] for key in sorted(dims)) for dims in keyed)


def loop_plan(view: HostView, device_size: Sequence[int], stride_map: Sequence[int]) -> LoopPlan:
    """
    Loop sizes of the main block and the partial tiles (the reference's stride-info sizes).

    Raises `LayoutError` with the reference's message when a host dim cannot be counted out.
    Example: (5, 100, 150) in `[100, 3, 5, 64]` / `[150, 64, 15000, 1]` gives sizes
    (100, 2, 5, 64) and one remainder {1: 1, 3: 22} at host offset 128, device offset 640.
    """
    tiles = host_tile_map(device_to_host_dims(view, device_size, stride_map), stride_map, len(view.sizes))
    sizes = [n if step == 0 else 1 for n, step in zip(device_size, stride_map, strict=True)]
    remainders: list[Remainder] = []
    for i in range(len(view.sizes) - 1, -1, -1):
        if tiles[i]:
            _count_host_dim(
                view, i, _folded_size(view, tiles, i), tiles[i], device_size, stride_map, sizes, remainders
            )
    return LoopPlan(tuple(sizes), tuple(remainders))


def _folded_size(view: HostView, tiles: Sequence[Sequence[int]], i: int) -> int:
    """Host dim `i`'s size times the leading host dims right before it that no device dim walks."""
    size = view.sizes[i]
    j = i - 1
    while j >= 0 and not tiles[j]:
        if view.strides[j] != 0:
            size *= view.sizes[j]
        j -= 1
    return size


def _count_host_dim(
    view: HostView,
    i: int,
    host_size: int,
    dims: Sequence[int],
    device_size: Sequence[int],
    stride_map: Sequence[int],
    sizes: list[int],
    remainders: list[Remainder],
) -> None:
    """Count `host_size` elements of host dim `i` out over its device `dims`, coarsest first."""
    device_strides = contiguous_strides(device_size)
    before = 1
    k = len(dims) - 1
    while k >= 0:
        t = dims[k]
        k -= 1
        if device_size[t] == 1:
            continue
        current = _elements_left(view, i, host_size, before, t)
        step = _tile_step(view, i, t, stride_map)
        whole, partial = divmod(current, step)
        if whole < 1:
            raise LayoutError(
                f"{INVALID_SIZES}: device dim {t} steps {step} elements of host dim {i} "
                f"(size {view.sizes[i]}, stride {view.strides[i]}), but only {current} are left"
                + _stick_tile_note(t, device_size)
            )
        if not partial:
            sizes[t] = min(whole, device_size[t])
            before *= sizes[t]
            continue
        if k < 0:
            raise LayoutError(
                f"{INVALID_TILING} {i}: device dim {t} steps {step} elements, which does not divide "
                f"the {current} left, and no finer device dim walks host dim {i} to take the rest"
            )
        n = dims[k]
        k -= 1
        tiled = current // _tile_step(view, i, n, stride_map)
        sizes[t], sizes[n] = whole, device_size[n]
        before *= tiled
        remainders.append(
            Remainder(
                ((t, 1), (n, tiled % device_size[n])),
                whole * _dma_stride(stride_map[t]),
                whole * device_strides[t],
            )
        )


def _stick_tile_note(t: int, device_size: Sequence[int]) -> str:
    rank = len(device_size)
    if t != (rank - 3 if rank > 2 else 0):
        return ""
    return f" (device dim {t} is the stick-tile dim, so it walks the host dim of the stick)"


def _elements_left(view: HostView, i: int, host_size: int, before: int, t: int) -> int:
    if before < 1 or host_size % before:
        raise LayoutError(
            f"{INVALID_SIZES}: the device dims finer than device dim {t} hold {before} elements "
            f"of host dim {i}, which does not divide its {host_size}"
        )
    return host_size // before


def _tile_step(view: HostView, i: int, t: int, stride_map: Sequence[int]) -> int:
    """Host dim `i` elements that one step of device dim `t` moves over (C++ integer division)."""
    step = _dma_stride(stride_map[t]) // view.strides[i]
    if step < 1:
        raise LayoutError(
            f"{INVALID_SIZES}: device dim {t} has host stride {stride_map[t]}, finer than the "
            f"stride {view.strides[i]} of host dim {i} it is mapped to"
        )
    return step


def _dma_stride(step: int) -> int:
    return 1 if step == -1 else step


def reference_blocks(view: HostView, device_size: Sequence[int], stride_map: Sequence[int]) -> list[DmaBlock]:
    """
    The reference's descriptor: the main block, then each remainder applied to every block so far.

    Only the reference's own checks are made (see `dci_blocks` for the checked form). Blocks
    are in device-dim order (the reference stores them innermost first). Example: (1024, 256)
    fp16 in `[4, 1024, 64]` / `[64, 256, 1]` is one block, sizes (4, 1024, 64), device strides
    (65536, 64, 1), host strides (64, 256, 1).
    """
    plan = loop_plan(view, device_size, stride_map)
    device_strides = contiguous_strides(device_size)
    host_strides = tuple(_dma_stride(s) for s in stride_map)
    blocks = [DmaBlock(plan.sizes, device_strides, host_strides, view.storage_offset, 0)]
    for rest in plan.remainders:
        for block in list(blocks):
            sizes = list(block.sizes)
            for dim, size in rest.sizes:
                sizes[dim] = size
            blocks.append(
                DmaBlock(
                    tuple(sizes),
                    device_strides,
                    host_strides,
                    block.host_offset + rest.host_offset,
                    block.device_offset + rest.device_offset,
                )
            )
    return blocks


def dci_blocks(view: HostView, device_size: Sequence[int], stride_map: Sequence[int]) -> list[DmaBlock]:
    """
    The descriptor of a layout that fits `view`; a `LayoutError` saying why otherwise.

    Example: host (50,) in `[1, 50, 64]` / `[64, 1, 1]` is one block, sizes (1, 50, 1): one
    element at the start of each of 50 sticks.
    """
    blocks = reference_blocks(view, device_size, stride_map)
    check_blocks(view, device_size, blocks)
    return blocks


# ---------------------------------------------------------------------------------------------
# Checking it
# ---------------------------------------------------------------------------------------------


def check_blocks(view: HostView, device_size: Sequence[int], blocks: Sequence[DmaBlock]) -> None:
    """
    Raise `LayoutError` unless the blocks stay in `device_size` and read exactly the view.

    Every block must lie inside the device tensor dim by dim (so device coordinates mean what
    `stride_map` says), read only elements of the view, and together read all of them.
    """
    for k, block in enumerate(blocks):
        _check_in_device(k, block, device_size)
        _check_start(k, block, device_size, view)
        _check_in_view(k, block, view)
    wanted = view.mask()
    read = np.zeros_like(wanted)
    for block in blocks:
        if block.numel:
            start = block.host_offset - view.storage_offset
            strided_view(read, start, block.sizes, block.host_strides)[...] = True
    if (stray := np.flatnonzero(read & ~wanted)).size:
        raise LayoutError(
            f"the DMA blocks read host storage offset {int(stray[0]) + view.storage_offset}, which is "
            f"not an element of the host tensor (size {list(view.sizes)}, strides {list(view.strides)})"
        )
    if (missed := np.flatnonzero(wanted & ~read)).size:
        raise LayoutError(
            f"the DMA blocks miss {missed.size} of the {view.numel} host elements, first host "
            f"{_coords_text(view, int(missed[0]))}: the layout does not reach every element"
        )


def _check_in_device(k: int, block: DmaBlock, device_size: Sequence[int]) -> None:
    if not block.numel:
        return
    start = _unravel(block.device_offset, device_size)
    for j, (first, count, n) in enumerate(zip(start, block.sizes, device_size, strict=True)):
        if first + count > n:
            raise LayoutError(
                f"DMA block {k} (sizes {list(block.sizes)}) writes positions {first}..{first + count - 1} "
                f"of device dim {j}, which has size {n}: the device sizes are too small for the host tensor"
            )


def _check_start(k: int, block: DmaBlock, device_size: Sequence[int], view: HostView) -> None:
    """
    The block's first device position must hold the host element the strides say it holds.

    A remainder block's offsets are `remaining * stride` of one device dim; when `remaining`
    reaches that dim's size the device offset wraps onto the next outer dim while the host
    offset does not, and the block would overwrite positions another block filled. Example:
    host (2, 4) in `[3, 1, 2, 2, 2, 64] / [1, 4, 3, 4, 0, -1]` gives a remainder at device
    offset 512 (coordinate 1 of dim 0, host offset 1) reading host offset 6.
    """
    if not block.numel:
        return
    start = _unravel(block.device_offset, device_size)
    expected = view.storage_offset + sum(c * s for c, s in zip(start, block.host_strides, strict=True))
    if block.host_offset != expected:
        raise LayoutError(
            f"DMA block {k} starts at device coordinates {list(start)}, which hold host storage offset "
            f"{expected}, but it reads from {block.host_offset}: a partial tile runs past its device dim"
        )


def _check_in_view(k: int, block: DmaBlock, view: HostView) -> None:
    if not block.numel:
        return
    last = block.host_offset + sum((n - 1) * s for n, s in zip(block.sizes, block.host_strides, strict=True))
    end = view.storage_offset + view.span - 1
    if last > end:
        raise LayoutError(
            f"DMA block {k} (sizes {list(block.sizes)}) reads host storage offset {last}, past the last "
            f"element of the host tensor (size {list(view.sizes)}, strides {list(view.strides)}) at {end}"
        )


def _unravel(offset: int, device_size: Sequence[int]) -> tuple[int, ...]:
    if not 0 <= offset < math.prod(device_size):
        return tuple(device_size)  # out of the tensor: every dim reports past its end
    return tuple(int(c) for c in np.unravel_index(offset, tuple(device_size)))


def _coords_text(view: HostView, position: int) -> str:
    """Host coordinates of the view element at `position` after the storage offset."""
    coords = [0] * len(view.sizes)
    rest = position
    for i in sorted(range(len(view.sizes)), key=lambda d: -view.strides[d]):
        if view.sizes[i] > 1 and view.strides[i] > 0:
            coords[i], rest = divmod(rest, view.strides[i])
    return f"element {coords} (storage offset {position + view.storage_offset})"


# ---------------------------------------------------------------------------------------------
# Running it
# ---------------------------------------------------------------------------------------------


def host_to_device(
    blocks: Sequence[DmaBlock], host_storage: np.ndarray, device_flat: np.ndarray, host_base: int = 0
) -> None:
    """
    Run the blocks host -> device on flat buffers; `host_storage[0]` is storage offset `host_base`.

    Each block is one strided-view assignment.
    """
    for block in blocks:
        if block.numel:
            dst = strided_view(device_flat, block.device_offset, block.sizes, block.device_strides)
            start = block.host_offset - host_base
            dst[...] = strided_view(host_storage, start, block.sizes, block.host_strides)


def device_to_host(
    blocks: Sequence[DmaBlock], device_flat: np.ndarray, host_storage: np.ndarray, host_base: int = 0
) -> None:
    """
    Run the blocks device -> host, last block first (the reverse descriptor).

    Padding is never read. A loop with host stride 0 (a broadcast device dim) writes one host
    element from each of its positions; only its first position is read.
    """
    for block in reversed(blocks):
        if block.numel:
            sizes = tuple(1 if h == 0 else n for n, h in zip(block.sizes, block.host_strides, strict=True))
            dst = strided_view(host_storage, block.host_offset - host_base, sizes, block.host_strides)
            dst[...] = strided_view(device_flat, block.device_offset, sizes, block.device_strides)
