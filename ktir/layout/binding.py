"""
A tiled layout bound to a host tensor: `TiledLayout.bind`, `BoundLayout` and its `DmaBlock`s.

How binding works. Each device dim with a positive stride walks one host dim: the one with
the largest host stride not above it. The device dims that walk a host dim form a mixed-radix
number (a *chain*): sorted by step, the first steps by 1 and each next one by the span of the
ones inside it, so every host index along that dim is reached exactly once. A chain may run
past the host size; what lies past it is padding. Neighbouring host dims that are contiguous
in host memory merge into one *group* when the inner chain runs on into the outer dim, which
is how a layout folds several rows into one stick. On the layouts both forms accept (this chain
form and the reference's DMA descriptor of `ktir.layout.dci`), the tests check that they move
the same bytes (`test/unit/layout/test_dci.py`: random default, permuted and sparse layouts,
and the explicit examples).

A `BoundLayout` packs, unpacks, indexes and tiles; `BoundLayout.dma` is the chain form's DMA
descriptor, a list of `DmaBlock` loop nests (the form `ktir.layout.dci` builds the reference's
descriptor in), and `strided_view` is how a block addresses a flat NumPy buffer.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ktir.layout.common import LayoutError, contiguous_strides

if TYPE_CHECKING:
    from ktir.layout.tiled import TiledLayout

__all__ = [
    "BoundLayout",
    "DmaBlock",
    "HostGroup",
]


# ---------------------------------------------------------------------------------------------
# Binding a layout to a host tensor
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Digit:
    """One device dim inside a host group: it steps `unit` group positions, `size` times."""

    device_dim: int
    size: int
    unit: int


@dataclass(frozen=True)
class HostGroup:
    """
    Host dims that one chain of device dims walks, as a single flattened host dim.

    `host_dims` are outer to inner and contiguous in host memory, so group position `g`
    sits at host offset `g * stride`. `digits` go inner to outer: `digits[0].unit == 1`
    and `digits[k+1].unit == digits[k].unit * digits[k].size`. Positions from `size` up
    to `extent` are padding.
    """

    host_dims: tuple[int, ...]
    host_sizes: tuple[int, ...]
    stride: int
    digits: tuple[Digit, ...]

    @property
    def size(self) -> int:
        """Host elements in the group."""
        return math.prod(self.host_sizes)

    @property
    def extent(self) -> int:
        """Positions the chain of device dims spans, padding included."""
        top = self.digits[-1]
        return top.unit * top.size


def _chain_problem(digits: Sequence[Digit], size: int, what: str) -> str | None:
    """Say why `digits` fail to tile `size` positions exactly once, or None if they do."""
    if not digits:
        return f"{what} (size {size}) is not walked by any device dim"
    expected = 1
    for digit in digits:
        if digit.unit < expected:
            return (
                f"device dim {digit.device_dim} steps {digit.unit} along {what} but the device "
                f"dims inside it already span {expected}: host elements would be stored twice"
            )
        if digit.unit > expected:
            return (
                f"device dim {digit.device_dim} steps {digit.unit} along {what} but the device "
                f"dims inside it span only {expected}: host elements would be skipped"
            )
        expected = digit.unit * digit.size
    if expected < size:
        return f"the device dims walking {what} span {expected} < its size {size}"
    return None


def check_host_view(size: Sequence[int], strides: Sequence[int]) -> None:
    """Raise `LayoutError` unless sizes and strides have one rank, sizes >= 1 and strides >= 0."""
    if len(strides) != len(size):
        raise LayoutError(f"host size {list(size)} and host strides {list(strides)} differ in rank")
    if any(n < 1 for n in size):
        raise LayoutError(f"host size {list(size)}: zero-size dims are not supported")
    if any(n < 0 for n in strides):
        raise LayoutError(f"host strides {list(strides)}: negative strides are not supported")


def bind_layout(
    layout: TiledLayout, host_size: tuple[int, ...], host_strides: Sequence[int] | None
) -> BoundLayout:
    """`layout` checked against a host tensor (`TiledLayout.bind`; see the module docstring)."""
    strides = contiguous_strides(host_size) if host_strides is None else tuple(host_strides)
    check_host_view(host_size, strides)

    # Host dims that address more than one element, outer (largest stride) first.
    active = sorted(
        (i for i, (n, s) in enumerate(zip(host_size, strides, strict=True)) if n > 1 and s > 0),
        key=lambda i: -strides[i],
    )
    for outer, inner in itertools.pairwise(active):
        if strides[outer] < strides[inner] * host_size[inner]:
            raise LayoutError(
                f"host dims {outer} and {inner} overlap in memory (strides {list(strides)}, "
                f"size {list(host_size)})"
            )

    walked: dict[int, list[Digit]] = {i: [] for i in active}
    for j, (size, step) in enumerate(zip(layout.device_size, layout.stride_map, strict=True)):
        if size == 1 or step <= 0:
            continue
        host_dim = next((i for i in active if strides[i] <= step), None)
        if host_dim is None:
            raise LayoutError(
                f"device dim {j} (size {size}) steps host stride {step}, but the host tensor "
                f"(size {list(host_size)}, strides {list(strides)}) has no dim that fine"
            )
        if step % strides[host_dim]:
            raise LayoutError(
                f"device dim {j} steps host stride {step}, which is not a multiple of host "
                f"dim {host_dim}'s stride {strides[host_dim]}"
            )
        walked[host_dim].append(Digit(j, size, step // strides[host_dim]))

    groups = _group_host_dims(active, host_size, strides, walked)
    return BoundLayout(layout, host_size, strides, tuple(groups))


def _group_host_dims(
    active: list[int],
    host_size: tuple[int, ...],
    strides: tuple[int, ...],
    walked: dict[int, list[Digit]],
) -> list[HostGroup]:
    """Form host groups from the inner host dim outwards (see the module docstring)."""
    groups: list[HostGroup] = []
    for i in reversed(active):
        own = HostGroup((i,), (host_size[i],), strides[i], tuple(sorted(walked[i], key=_unit)))
        own_problem = _chain_problem(own.digits, own.size, f"host dim {i}")
        if own_problem is None:
            groups.append(own)
            continue
        merged = _merge_outward(groups[-1], i, host_size, strides, walked) if groups else None
        if merged is None:
            raise LayoutError(own_problem)
        groups[-1] = merged
    groups.reverse()
    return groups


def _merge_outward(
    group: HostGroup,
    host_dim: int,
    host_size: tuple[int, ...],
    strides: tuple[int, ...],
    walked: dict[int, list[Digit]],
) -> HostGroup | None:
    """Fold `host_dim` onto the outside of `group` if it is contiguous and the chain runs on."""
    if strides[host_dim] != group.stride * group.size:
        return None
    scale = strides[host_dim] // group.stride
    outer = [Digit(d.device_dim, d.size, d.unit * scale) for d in walked[host_dim]]
    merged = HostGroup(
        (host_dim, *group.host_dims),
        (host_size[host_dim], *group.host_sizes),
        group.stride,
        tuple(sorted((*group.digits, *outer), key=_unit)),
    )
    if _chain_problem(merged.digits, merged.size, "merged host dims") is not None:
        return None
    return merged


def _unit(digit: Digit) -> int:
    return digit.unit


# ---------------------------------------------------------------------------------------------
# A layout bound to a host tensor
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DmaBlock:
    """
    One loop nest of a DMA descriptor, loops ordered by decreasing device stride.

    It copies, for every index vector `i < sizes`,
    `device[device_offset + dot(i, device_strides)] = host[host_offset + dot(i, host_strides)]`.
    Example, (1024, 256) fp16 in its default layout: sizes (4, 1024, 64), device strides
    (65536, 64, 1), host strides (64, 256, 1), both offsets 0.
    """

    sizes: tuple[int, ...]
    device_strides: tuple[int, ...]
    host_strides: tuple[int, ...]
    host_offset: int = 0
    device_offset: int = 0

    @property
    def numel(self) -> int:
        """Elements this block moves."""
        return math.prod(self.sizes)

    def device_indices(self) -> np.ndarray:
        """Flat device index of every element the block writes, in loop order."""
        return self.device_offset + _index_grid(self.sizes, self.device_strides)

    def host_indices(self) -> np.ndarray:
        """Flat host index of every element the block reads, in loop order."""
        return self.host_offset + _index_grid(self.sizes, self.host_strides)

    def copy_host_to_device(self, host_flat: np.ndarray, device_flat: np.ndarray) -> None:
        """Run the loop nest on flat buffers (host memory and device memory, in elements)."""
        dst = strided_view(device_flat, self.device_offset, self.sizes, self.device_strides)
        dst[...] = strided_view(host_flat, self.host_offset, self.sizes, self.host_strides)


def _index_grid(sizes: Sequence[int], strides: Sequence[int]) -> np.ndarray:
    grid = np.zeros((1,) * len(sizes), dtype=np.int64)
    for axis, (n, s) in enumerate(zip(sizes, strides, strict=True)):
        shape = [1] * len(sizes)
        shape[axis] = n
        grid = grid + (np.arange(n, dtype=np.int64) * s).reshape(shape)
    return grid.reshape(-1)


def strided_view(flat: np.ndarray, offset: int, sizes: Sequence[int], strides: Sequence[int]) -> np.ndarray:
    """The writable view `flat[offset + dot(i, strides)]` for every index vector `i < sizes`."""
    item = flat.itemsize
    return np.lib.stride_tricks.as_strided(
        flat[offset:], shape=tuple(sizes), strides=tuple(s * item for s in strides)
    )


@dataclass(frozen=True)
class BoundLayout:
    """
    A `TiledLayout` checked against one host tensor's sizes and strides.

    Built by `TiledLayout.bind`; every device dim is one of: a digit of a host group
    (positive stride), broadcast (stride 0: every position repeats the host data),
    synthetic (stride -1: only position 0 holds data), or trivial (size 1).
    """

    layout: TiledLayout
    host_size: tuple[int, ...]
    host_strides: tuple[int, ...]
    groups: tuple[HostGroup, ...]

    # -- single elements ----------------------------------------------------------------------

    def device_coords(self, host_coords: Sequence[int]) -> tuple[int, ...]:
        """
        Device coordinates of one host element.

        Example: for (5, 100, 150) fp16 in its default layout, host element (1, 2, 70) is at
        device coordinates (2, 1, 1, 6): row 2, stick 70 // 64 = 1, outer 1, lane 70 % 64 = 6.
        """
        coords = tuple(host_coords)
        if len(coords) != len(self.host_size) or any(
            not 0 <= c < n for c, n in zip(coords, self.host_size, strict=True)
        ):
            raise LayoutError(f"host coordinates {list(coords)} out of range {list(self.host_size)}")
        device = [0] * self.layout.device_rank
        for group in self.groups:
            position = 0
            for dim, n in zip(group.host_dims, group.host_sizes, strict=True):
                position = position * n + coords[dim]
            for digit in group.digits:
                device[digit.device_dim] = position // digit.unit % digit.size
        return tuple(device)

    def linear_index(self, host_coords: Sequence[int]) -> int:
        """Device element offset of one host element (row-major over `device_size`)."""
        coords = self.device_coords(host_coords)
        return sum(c * s for c, s in zip(coords, self.layout.device_strides, strict=True))

    # -- whole tensors ------------------------------------------------------------------------

    def host_offsets(self) -> np.ndarray:
        """
        For every device element, the host offset it holds, or -1 for padding.

        Shape `device_size`, int64. This is the layout's meaning spelled out element by
        element; it is meant for checking and small tensors (it allocates 8 bytes per
        device element).
        """
        shape = self.layout.device_size
        valid = np.ones(shape, dtype=bool)
        offset = np.zeros(shape, dtype=np.int64)
        for j, (n, step) in enumerate(zip(shape, self.layout.stride_map, strict=True)):
            if n > 1 and step == -1:
                valid &= _axis_arange(j, shape) == 0
        for group in self.groups:
            position = np.zeros((1,) * len(shape), dtype=np.int64)
            for digit in group.digits:
                position = position + _axis_arange(digit.device_dim, shape) * digit.unit
            valid &= position < group.size
            # Host coordinates of the group position, then PyTorch's own offset formula.
            rest = position
            for dim, n in zip(reversed(group.host_dims), reversed(group.host_sizes), strict=True):
                offset = offset + (rest % n) * self.host_strides[dim]
                rest = rest // n
        return np.where(valid, offset, -1)

    def pack(self, host: np.ndarray, out_dtype: np.dtype[Any] | None = None) -> np.ndarray:
        """
        Host tensor -> device tensor of shape `device_size`, padding zero-filled.

        Pad, reshape, transpose: each group is flattened and padded to its extent, split into
        its digits, and the digits are moved to their device dims (XLA's view of tiling).
        """
        x = self._active_view(np.asarray(host))
        x = x.reshape([g.size for g in self.groups])
        if any(g.extent > g.size for g in self.groups):
            x = np.pad(x, [(0, g.extent - g.size) for g in self.groups])
        digit_dims = [d.device_dim for g in self.groups for d in reversed(g.digits)]
        x = x.reshape([d.size for g in self.groups for d in reversed(g.digits)])
        x = x.transpose(np.argsort(digit_dims))
        # Only a layout with padding needs the zero fill (it costs a full pass over memory).
        allocate = np.empty if self.is_dense else np.zeros
        out = allocate(self.layout.device_size, dtype=out_dtype or x.dtype)
        placed = sorted(digit_dims)
        src_shape: list[int] = []
        dst_index: list[slice | int] = []
        for j, (n, step) in enumerate(zip(self.layout.device_size, self.layout.stride_map, strict=True)):
            if j in placed:
                src_shape.append(n)
                dst_index.append(slice(None))
            elif n > 1 and step == 0:
                src_shape.append(1)  # broadcast: the assignment repeats the data
                dst_index.append(slice(None))
            else:
                dst_index.append(0)
        out[tuple(dst_index)] = x.reshape(src_shape)
        return out

    def unpack(self, device: np.ndarray) -> np.ndarray:
        """Device tensor (flat or shaped) -> host tensor of shape `host_size`, C-contiguous."""
        dev = np.asarray(device).reshape(self.layout.device_size)
        digit_dims = [d.device_dim for g in self.groups for d in reversed(g.digits)]
        dev = dev[tuple(slice(None) if j in digit_dims else 0 for j in range(dev.ndim))]
        x = dev.transpose(np.argsort(np.argsort(digit_dims)))
        if (fast := self._unpack_in_one_copy(x)) is not None:
            return fast
        x = x.reshape([g.extent for g in self.groups])
        x = x[tuple(slice(0, g.size) for g in self.groups)]
        order = [dim for g in self.groups for dim in g.host_dims]
        x = x.reshape([self.host_size[dim] for dim in order])
        x = x.transpose(np.argsort(order))
        full_index = tuple(slice(None) if i in order else np.newaxis for i in range(len(self.host_size)))
        # np.array, not np.ascontiguousarray: the latter turns a scalar into shape (1,).
        return np.array(np.broadcast_to(x[full_index], self.host_size), order="C")

    @property
    def is_dense(self) -> bool:
        """True if every device element holds host data (no padding, no sparse sticks)."""
        synthetic = any(
            n > 1 and step == -1
            for n, step in zip(self.layout.device_size, self.layout.stride_map, strict=True)
        )
        return not synthetic and all(g.extent == g.size for g in self.groups)

    def _unpack_in_one_copy(self, digits: np.ndarray) -> np.ndarray | None:
        """
        Copy the digit-ordered device view straight into a fresh host array, if possible.

        Possible when nothing is padded and the host dims in group order are the host array's
        own memory order, so the output viewed as digits is a view, not a copy.
        """
        if not self.groups or any(g.extent != g.size for g in self.groups):
            return None
        out = np.empty(self.host_size, dtype=digits.dtype)
        target = self._active_view(out)
        if not target.flags.c_contiguous or target.size != out.size:
            return None
        target.reshape(digits.shape)[...] = digits
        return out

    def _active_view(self, host: np.ndarray) -> np.ndarray:
        """Host array reduced to its grouped dims, in group order (outer group first)."""
        if host.shape != self.host_size:
            raise LayoutError(
                f"host array has shape {list(host.shape)}, layout is bound to {list(self.host_size)}"
            )
        order = [dim for g in self.groups for dim in g.host_dims]
        x = host[tuple(slice(None) if i in order else 0 for i in range(host.ndim))]
        kept = sorted(order)
        return x.transpose([kept.index(dim) for dim in order])

    # -- DMA ----------------------------------------------------------------------------------

    def dma(self) -> list[DmaBlock]:
        """
        The DMA descriptor: loop nests that together write every host element once.

        A group whose extent runs past its size is split the way one counts to `size` in its
        mixed radix: whole steps of the top digit, then whole steps of the next digit at the
        remainder, and so on; every combination over groups is one block. Example, (5, 100,
        150) fp16: the main block copies 2 whole sticks per row (sizes (100, 2, 5, 64)) and a
        remainder block copies the last 22 elements (sizes (100, 1, 5, 22), host offset 128,
        device offset 640).
        """
        layout = self.layout
        base_sizes = [
            n if step == 0 else 1 for n, step in zip(layout.device_size, layout.stride_map, strict=True)
        ]
        host_steps = tuple(max(step, 0) for step in layout.stride_map)
        blocks: list[DmaBlock] = []
        for pieces in itertools.product(*(_count_to(g) for g in self.groups)):
            sizes = list(base_sizes)
            starts = [0] * layout.device_rank
            for piece in pieces:
                for dim, (start, count) in piece.items():
                    starts[dim], sizes[dim] = start, count
            blocks.append(
                DmaBlock(
                    sizes=tuple(sizes),
                    device_strides=layout.device_strides,
                    host_strides=host_steps,
                    host_offset=sum(s * h for s, h in zip(starts, host_steps, strict=True)),
                    device_offset=sum(s * d for s, d in zip(starts, layout.device_strides, strict=True)),
                )
            )
        return blocks


def _axis_arange(axis: int, shape: Sequence[int]) -> np.ndarray:
    view = [1] * len(shape)
    view[axis] = shape[axis]
    return np.arange(shape[axis], dtype=np.int64).reshape(view)


def _count_to(group: HostGroup) -> list[dict[int, tuple[int, int]]]:
    """
    Split positions [0, size) of a group into boxes of its digits.

    Each box maps device dim -> (start, count). Example: size 150 over digits (lane: 64 x 1,
    stick: 3 x 64) gives {stick: (0, 2), lane: (0, 64)} and {stick: (2, 1), lane: (0, 22)}.
    """
    boxes: list[dict[int, tuple[int, int]]] = []
    fixed: dict[int, int] = {}
    remaining = group.size
    for level in range(len(group.digits) - 1, -1, -1):
        digit = group.digits[level]
        whole, remaining = divmod(remaining, digit.unit)
        if whole:
            box = {d: (start, 1) for d, start in fixed.items()}
            box[digit.device_dim] = (0, whole)
            box.update({inner.device_dim: (0, inner.size) for inner in group.digits[:level]})
            boxes.append(box)
        fixed[digit.device_dim] = whole
        if not remaining:
            break
    return boxes
