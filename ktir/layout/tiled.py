"""
Tiled tensor layouts: `device_size` + `stride_map`, the Spyre stick layout, host<->device packing.

A *tiled layout* describes how a host tensor (PyTorch sizes and strides) is stored in device
memory. The device tensor is row-major over `device_size`; entry `j` of `stride_map` is the
number of **host** elements one steps over when device coordinate `j` grows by one, with `-1`
for a synthetic dim (padding, sparse sticks, size-1 dims) and `0` for a broadcast dim. The
contract tying the two coordinate systems together is

    host_offset(host_coords) == dot(device_coords, stride_map)    (over entries >= 0)

for every device coordinate that holds a host element. Device coordinates that hold none are
padding and are zero-filled.

`SpyreTensorLayout` is that pair plus the device data format, with the stick rule of the
reference stack (the last device dim holds exactly one 128-byte stick).

Which host tensors a layout fits, and how data moves: the DMA descriptor. As in the reference
stack, moving a host tensor to the device runs a *DCI*: a few loop nests (`DmaBlock`) that copy
`device[dev_off + dot(i, device_strides)] = host[host_off + dot(i, stride_map)]` for every
index vector `i` below the block's loop sizes. `ktir.layout.dci` builds it the way the
reference does: each device dim is matched to the host dim whose stride is the largest not
above its `stride_map` entry, the host dims are counted out over their device dims from the
coarsest, and a host extent that a tile does not divide adds a remainder block. A layout fits
a host view (sizes, strides, storage offset) when that descriptor exists, stays inside
`device_size`, reads only elements of the view and reads all of them; `to_device` and
`to_host` are the descriptor run forwards and backwards (`SpyreTensorLayout.dma` returns it).
Two examples the chain form below would refuse:

- host (90,) in `[1, 3, 64]` / `[64, 30, 1]`: one block, loop sizes (1, 3, 30): the tensor is
  cut into three pieces of 30 and each piece starts a stick (lanes 30..63 are padding);
- host (30, 40) in `[19, 64]` / `[64, 1]` (folding): the 1200 contiguous elements are re-cut
  into rows of 64, a main block (18, 64) plus a remainder (1, 48) at host and device offset 1152.

`TiledLayout` is the pair in the form the compiler plans with (the common form of Spyre, XLA and
HTP layouts, see `ktir.layout.formats`); `TiledLayout.bind(host_size, host_strides)` checks it
against a host tensor and returns a `BoundLayout` that packs, unpacks, indexes and tiles.
A `SpyreTensorLayout` that is valid for DMA but not a chain (two device dims stepping the same
host stride, e.g. `[1, 50, 64]` / `[64, 1, 1]`, one element per stick) has no `tiled` form:
`tiled` and `bind` raise `LayoutError`. A layout the chain form binds but the reference
construction cannot describe (a tiling whose outer tile is not the stick-tile dim, such as
`[3, 2, 64]` / `[128, 64, 1]` on (5, 64)) is moved with the chain form's descriptor, so its
bytes do not change.

How binding works. Each device dim with a positive stride walks one host dim: the one with
the largest host stride not above it. The device dims that walk a host dim form a mixed-radix
number (a *chain*): sorted by step, the first steps by 1 and each next one by the span of the
ones inside it, so every host index along that dim is reached exactly once. A chain may run
past the host size; what lies past it is padding. Neighbouring host dims that are contiguous
in host memory merge into one *group* when the inner chain runs on into the outer dim, which
is how a layout folds several rows into one stick. On the layouts both forms accept, the tests
check that they move the same bytes (`test/unit/layout/test_dci.py`: random default, permuted
and sparse layouts, and the explicit examples).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ktir.hardware.target import SPYRE
from ktir.layout.dtypes import HOST_TO_DEVICE_DTYPE, DeviceDType

if TYPE_CHECKING:
    from ktir.layout.dci import HostView

__all__ = [
    "BoundLayout",
    "DeviceDType",
    "DmaBlock",
    "HostGroup",
    "LayoutError",
    "SpyreTensorLayout",
    "TiledLayout",
    "contiguous_strides",
    "device_dtype_of",
    "restickify_target",
    "to_device",
    "to_host",
]

MAX_HOST_RANK = 6
"""The reference stack supports host ranks up to 6 (7 entries in a sparse `dim_order`)."""


class LayoutError(ValueError):
    """A layout that cannot exist, or that does not fit the host tensor it is used with."""


# ---------------------------------------------------------------------------------------------
# Data formats
# ---------------------------------------------------------------------------------------------


def device_dtype_of(dtype: object) -> DeviceDType:
    """
    Map a dtype to its device data format.

    Accepts torch dtypes (`torch.float16`), NumPy dtypes, host names (`"float16"`) and device
    format names (`"SEN169_FP16"`). Example: `device_dtype_of("int64") is DeviceDType.IEEE_INT32`.
    """
    if isinstance(dtype, DeviceDType):
        return dtype
    name = _dtype_name(dtype)
    if name in DeviceDType.__members__:
        return DeviceDType(name)
    if (found := HOST_TO_DEVICE_DTYPE.get(name)) is not None:
        return found
    supported = ", ".join(HOST_TO_DEVICE_DTYPE)
    raise LayoutError(f"Spyre backend does not support dtype {name} (supported: {supported})")


def _dtype_name(dtype: object) -> str:
    if isinstance(dtype, str):
        return dtype.removeprefix("torch.")
    if type(dtype).__module__ == "torch":  # torch.dtype, without importing torch
        return str(dtype).removeprefix("torch.")
    try:
        return np.dtype(dtype).name  # type: ignore[arg-type]
    except TypeError:
        return repr(dtype)


def contiguous_strides(size: Sequence[int]) -> tuple[int, ...]:
    """Row-major strides of `size`: `contiguous_strides((5, 100, 150)) == (15000, 150, 1)`."""
    strides = [1] * len(size)
    for i in range(len(size) - 2, -1, -1):
        strides[i] = strides[i + 1] * max(size[i + 1], 1)
    return tuple(strides)


# ---------------------------------------------------------------------------------------------
# The general tiled layout
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TiledLayout:
    """
    A device layout: row-major `device_size` plus one host stride per device dim.

    Example: the default Spyre layout of a (5, 100, 150) fp16 tensor is
    `TiledLayout((100, 3, 5, 64), (150, 64, 15000, 1))`: device dim 0 walks host rows
    (stride 150), dim 1 whole sticks of the last host dim (64), dim 2 the outer host dim
    (15000) and dim 3 the elements inside a stick (1).
    """

    device_size: tuple[int, ...]
    stride_map: tuple[int, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "device_size", _int_tuple(self.device_size, "device_size"))
        object.__setattr__(self, "stride_map", _int_tuple(self.stride_map, "stride_map"))
        _check_device_pair(self.device_size, self.stride_map)
        _check_distinct_steps(self.device_size, self.stride_map)

    @property
    def device_rank(self) -> int:
        """Number of device dims."""
        return len(self.device_size)

    @property
    def device_strides(self) -> tuple[int, ...]:
        """Row-major element strides of the device tensor: `prod(device_size[j+1:])`."""
        return contiguous_strides(self.device_size)

    @property
    def device_numel(self) -> int:
        """Elements in the device tensor, padding included."""
        return math.prod(self.device_size)

    def bind(self, host_size: Sequence[int], host_strides: Sequence[int] | None = None) -> BoundLayout:
        """
        Check this layout against a host tensor and return the bound mapping.

        `host_strides` defaults to the contiguous strides of `host_size`. Raises `LayoutError`
        saying why when some host element would be missed, stored twice, or aliased.
        """
        strides = None if host_strides is None else _int_tuple(host_strides, "host strides")
        return _bind(self, _int_tuple(host_size, "host size"), strides)


def _int_tuple(values: object, what: str) -> tuple[int, ...]:
    """`values` as a tuple of Python ints; a `LayoutError` for floats, bools and non-sequences."""
    try:
        items = tuple(values)  # type: ignore[call-overload]
    except TypeError:
        raise LayoutError(f"{what} must be a sequence of integers, not {values!r}") from None
    for item in items:
        if isinstance(item, bool | np.bool_) or not isinstance(item, int | np.integer):
            raise LayoutError(
                f"{what} must be integers, but {list(items)!r} holds {item!r} "
                f"({type(item).__name__}); sizes and strides are never rounded"
            )
    return tuple(int(item) for item in items)


def _check_device_pair(device_size: tuple[int, ...], stride_map: tuple[int, ...]) -> None:
    """The rules every layout obeys: one stride per dim, positive sizes, strides >= -1."""
    if len(device_size) != len(stride_map):
        raise LayoutError(
            f"device_size has {len(device_size)} dims but stride_map has "
            f"{len(stride_map)}: they must have one entry per device dim"
        )
    if not device_size:
        raise LayoutError("a device layout needs at least one device dim")
    for j, (size, stride) in enumerate(zip(device_size, stride_map, strict=True)):
        if size < 1:
            raise LayoutError(f"device dim {j} has size {size}; sizes must be positive")
        if stride < -1:
            raise LayoutError(f"stride_map[{j}] = {stride}; host strides are >= 0, or -1 for a synthetic dim")


def _check_distinct_steps(device_size: tuple[int, ...], stride_map: tuple[int, ...]) -> None:
    """The chain form's rule: no two device dims of size > 1 step the same positive host stride."""
    seen: dict[int, int] = {}
    for j, (size, stride) in enumerate(zip(device_size, stride_map, strict=True)):
        if size == 1 or stride <= 0:
            continue
        if (other := seen.get(stride)) is not None:
            raise LayoutError(
                f"device dims {other} and {j} both step host stride {stride}: the same "
                "host element would be stored at two device positions"
            )
        seen[stride] = j


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


def _bind(layout: TiledLayout, host_size: tuple[int, ...], host_strides: Sequence[int] | None) -> BoundLayout:
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
        src_shape, dst_index = [], []
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
        blocks = []
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
    boxes = []
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


# ---------------------------------------------------------------------------------------------
# The Spyre stick layout
# ---------------------------------------------------------------------------------------------


class SpyreTensorLayout:
    """
    A Spyre device layout: `device_size` + `stride_map` whose last dim is one stick, plus a data format.

    `SpyreTensorLayout(host_size, dtype, dim_order=None, host_strides=None)` builds the
    reference stack's layout for a host tensor. `dim_order[-1]` is the stick dim (padded up to
    whole sticks), `dim_order[0]` the row dim that lies inside each tile, and the others stay
    outside; a trailing `-1` makes the layout sparse (one element per stick):

    >>> SpyreTensorLayout((5, 100, 150), "float16")
    SpyreTensorLayout(device_size=[100, 3, 5, 64], stride_map =[150, 64, 15000, 1], \
device_dtype=DataFormats.SEN169_FP16)
    >>> SpyreTensorLayout((5, 100, 150), "float16", dim_order=[1, 0, 2]).device_size
    [5, 3, 100, 64]
    >>> SpyreTensorLayout((512, 256), "float16", dim_order=[0, 1, -1]).stride_map
    [1, -1, 256, -1]

    `SpyreTensorLayout.from_device(device_size, stride_map, dtype)` takes an explicit layout.
    Equal layouts compare and hash equal.
    """

    __slots__ = ("_chain_error", "_device_dtype", "_device_size", "_stride_map", "_tiled")
    _device_size: tuple[int, ...]
    _stride_map: tuple[int, ...]
    _device_dtype: DeviceDType
    _tiled: TiledLayout | None
    _chain_error: str

    def __init__(
        self,
        host_size: Sequence[int],
        dtype: object,
        dim_order: Sequence[int] | None = None,
        host_strides: Sequence[int] | None = None,
    ) -> None:
        device_dtype = device_dtype_of(dtype)
        size = _int_tuple(host_size, "host size")
        strides = (
            contiguous_strides(size) if host_strides is None else _int_tuple(host_strides, "host strides")
        )
        order = None if dim_order is None else _int_tuple(dim_order, "dim_order")
        device_size, stride_map = _default_device_layout(size, strides, device_dtype.elems_per_stick, order)
        self._init(device_size, stride_map, device_dtype)

    def _init(
        self, device_size: tuple[int, ...], stride_map: tuple[int, ...], device_dtype: DeviceDType
    ) -> None:
        _check_device_pair(device_size, stride_map)
        eps = device_dtype.elems_per_stick
        if device_size[-1] != eps:
            raise LayoutError(
                f"the last device dim is the stick and must hold {eps} elements for "
                f"{device_dtype}, but device_size[-1] is {device_size[-1]}"
            )
        if len(device_size) > MAX_HOST_RANK + 2:
            raise LayoutError(f"Unsupported device rank: {len(device_size)}")
        self._device_size = device_size
        self._stride_map = stride_map
        self._device_dtype = device_dtype
        try:
            self._tiled, self._chain_error = TiledLayout(device_size, stride_map), ""
        except LayoutError as error:
            self._tiled, self._chain_error = None, str(error)

    @classmethod
    def from_device(
        cls, device_size: Sequence[int], stride_map: Sequence[int], dtype: object
    ) -> SpyreTensorLayout:
        """
        An explicit layout, checked on its own (host-independent rules).

        The rules: one `stride_map` entry per device dim, integer sizes >= 1, integer strides
        >= -1, a last dim of one stick (`elems_per_stick` of the dtype), at most 8 device dims.
        Example: `from_device([100, 3, 5, 64], [150, 64, 15000, 1], "float16")` is the default
        layout of a (5, 100, 150) tensor, and `from_device([1, 3, 64], [64, 30, 1], "float16")`
        stores a (90,) tensor as three sticks of 30 elements. Whether a layout fits a given host
        tensor is decided by its DMA descriptor (`dma`, and so `to_device` and `to_host`).
        """
        layout = cls.__new__(cls)
        layout._init(
            _int_tuple(device_size, "device_size"),
            _int_tuple(stride_map, "stride_map"),
            device_dtype_of(dtype),
        )
        return layout

    # -- the data -----------------------------------------------------------------------------

    @property
    def device_size(self) -> list[int]:
        """Device dims, row-major; the last is the stick."""
        return list(self._device_size)

    @property
    def stride_map(self) -> list[int]:
        """Host stride per device dim; -1 for synthetic dims."""
        return list(self._stride_map)

    @property
    def device_dtype(self) -> DeviceDType:
        """Device data format."""
        return self._device_dtype

    @property
    def tiled(self) -> TiledLayout:
        """
        The dtype-free `device_size` + `stride_map` pair in the compiler's chain form.

        Raises `LayoutError` for a layout the chain form refuses (two device dims stepping the
        same host stride, e.g. `[1, 50, 64]` / `[64, 1, 1]`): such a layout still moves data
        (`dma`, `to_device`, `to_host`) but the compiler cannot plan it.
        """
        if self._tiled is None:
            raise LayoutError(
                f"{self!r} is not a layout the compiler can plan (DMA may still move it, see `dma`): "
                f"{self._chain_error}"
            )
        return self._tiled

    @property
    def elems_per_stick(self) -> int:
        """Elements per 128-byte stick for this data format."""
        return self._device_dtype.elems_per_stick

    @property
    def device_strides(self) -> list[int]:
        """Row-major element strides over `device_size`."""
        return list(contiguous_strides(self._device_size))

    @property
    def device_numel(self) -> int:
        """Elements in the device tensor, padding included."""
        return math.prod(self._device_size)

    @property
    def device_bytes(self) -> int:
        """Bytes the device tensor occupies: one stick per position of the outer dims."""
        return SPYRE.stick_bytes * math.prod(self._device_size[:-1])

    # -- mapping ------------------------------------------------------------------------------

    def bind(self, host_size: Sequence[int], host_strides: Sequence[int] | None = None) -> BoundLayout:
        """Check the layout against a host tensor in the compiler's chain form; see `TiledLayout.bind`."""
        return self.tiled.bind(host_size, host_strides)

    def dma(
        self, host_size: Sequence[int], host_strides: Sequence[int] | None = None, storage_offset: int = 0
    ) -> list[DmaBlock]:
        """
        The DMA descriptor moving a host view into this layout (the reference's DCI blocks).

        `host_strides` (default contiguous) and `storage_offset` place the view in its host
        storage; block host offsets include the storage offset. Raises `LayoutError` saying why
        when the layout does not fit the view. Example: `SpyreTensorLayout((1024, 256),
        "float16").dma((1024, 256))` is one block with sizes (4, 1024, 64), device strides
        (65536, 64, 1) and host strides (64, 256, 1). See `ktir.layout.dci`.
        """
        return list(
            _descriptor(
                self._device_size, self._stride_map, _host_view(host_size, host_strides, storage_offset)
            )
        )

    # -- value semantics ----------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SpyreTensorLayout):
            return NotImplemented
        return (self._device_size, self._stride_map, self._device_dtype) == (
            other._device_size,
            other._stride_map,
            other._device_dtype,
        )

    def __hash__(self) -> int:
        return hash((self._device_size, self._stride_map, self._device_dtype))

    def __repr__(self) -> str:
        # The reference's exact text, including the space before `=` in `stride_map =`.
        return (
            f"SpyreTensorLayout(device_size={self.device_size}, stride_map ={self.stride_map}, "
            f"device_dtype=DataFormats.{self._device_dtype})"
        )


def _check_dim_order(host_size: tuple[int, ...], host_strides: tuple[int, ...], order: list[int]) -> bool:
    """Check a reference-constructor call; True if `order` is sparse (ends in -1)."""
    n = len(host_size)
    sparse = len(order) == n + 1 and order[-1] == -1
    if len(order) != n and not sparse:
        raise LayoutError("Incompatible host_size and dim_order")
    if sorted(order[:n]) != list(range(n)):
        raise LayoutError(f"dim_order {order} must be a permutation of 0..{n - 1}")
    if n > MAX_HOST_RANK:
        raise LayoutError(f"Unsupported tensor rank: {n}")
    if len(host_strides) != n:
        raise LayoutError(f"host_strides {list(host_strides)} do not match host size {list(host_size)}")
    if any(size < 1 for size in host_size):
        raise LayoutError(f"host size {list(host_size)}: zero-size dims are not supported")
    return sparse


def _default_device_layout(
    host_size: tuple[int, ...],
    host_strides: tuple[int, ...],
    eps: int,
    dim_order: Sequence[int] | None,
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """
    The reference constructor: host size and strides + dim_order -> (device_size, stride_map).

    `dim_map` lists the host dim behind each device dim: the outer dims `dim_order[1:-1]`,
    the stick-tile dim `dim_order[-1]`, the row dim `dim_order[0]`, the lane dim
    `dim_order[-1]` again. Example: (5, 100, 150) with the identity order has
    dim_map [1, 2, 0, 2] and gives ([100, 3, 5, 64], [150, 64, 15000, 1]).
    """
    n = len(host_size)
    order = list(range(n)) if dim_order is None else [int(d) for d in dim_order]
    sparse = _check_dim_order(host_size, host_strides, order)
    if n == 0:
        return (1, eps), (-1, -1)

    stick = order[-1]
    dim_map = [*order[1:], order[0], stick] if len(order) >= 2 else [stick, stick]

    def host(d: int) -> int:
        return 1 if d == -1 else host_size[d]

    device_size = []
    for j, d in enumerate(dim_map):
        if j == len(dim_map) - 1:
            device_size.append(eps)
        elif d == stick:
            device_size.append(1 if sparse else -(-host(d) // eps))
        else:
            device_size.append(host(d))

    stride_map = [0] * len(dim_map)
    last: dict[int, int] = {}
    for j in range(len(dim_map) - 1, -1, -1):
        d = dim_map[j]
        if d == -1 or host(d) == 1:
            stride_map[j] = -1
        else:
            stride_map[j] = last.get(d, host_strides[d])
        last[d] = stride_map[j] * device_size[j]
    return tuple(device_size), tuple(stride_map)


def restickify_target(
    stl: SpyreTensorLayout,
    host_size: Sequence[int],
    old_dim: int,
    new_dim: int,
    host_strides: Sequence[int] | None = None,
) -> SpyreTensorLayout:
    """
    The layout after moving the stick of `stl` from host dim `old_dim` to `new_dim`.

    The reference's restickify formula: the old stick-tile slot now counts sticks of `new_dim`,
    the slot that held `new_dim` now holds `old_dim`, and the stick walks `new_dim`:

    - `device_size[-1] = eps`, `stride_map[-1] = host_stride[new]`;
    - `device_size[old_outer] = ceil(host_size[new] / eps)`, `stride_map[old_outer] = host_stride[new] * eps`;
    - `device_size[new_outer] = host_size[old]`, `stride_map[new_outer] = host_stride[old]`.

    Example: (256, 128) fp16 with the default `[2, 256, 64] / [64, 128, 1]`, stick moved from
    dim 1 to dim 0, gives `[4, 128, 64] / [8192, 1, 128]` (the `dim_order=[1, 0]` layout).
    Both dims must have size > 1 (size-1 dims have no stride to find them by), and the stick
    must be a real host dim (not a sparse layout).
    """
    size = tuple(int(n) for n in host_size)
    strides = contiguous_strides(size) if host_strides is None else tuple(host_strides)
    for dim in (old_dim, new_dim):
        if not 0 <= dim < len(size):
            raise LayoutError(f"dim {dim} is out of range for host size {list(size)}")
        if size[dim] == 1:
            raise LayoutError(f"cannot restickify across dim {dim} of size 1")
    if old_dim == new_dim:
        return stl
    eps = stl.elems_per_stick
    device_size, stride_map = stl.device_size, stl.stride_map
    if stride_map[-1] != strides[old_dim]:
        raise LayoutError(f"the stick of {stl} does not walk host dim {old_dim}")
    # Slots are found by stride and size together: a stride alone can be ambiguous, e.g. in
    # (2, 64) the tile slot of dim 1 and the slot of dim 0 both step host stride 64.
    inner = range(len(stride_map) - 1)
    tiles = -(-size[old_dim] // eps)
    old_outer = next(
        (j for j in inner if (stride_map[j], device_size[j]) == (strides[old_dim] * eps, tiles)), None
    )
    new_outer = next(
        (
            j
            for j in inner
            if (stride_map[j], device_size[j]) == (strides[new_dim], size[new_dim]) and j != old_outer
        ),
        None,
    )
    if old_outer is None or new_outer is None:
        raise LayoutError(f"{stl} has no stick-tile slot and {new_dim}-slot to swap")
    device_size[-1], stride_map[-1] = eps, strides[new_dim]
    device_size[old_outer] = -(-size[new_dim] // eps)
    stride_map[old_outer] = strides[new_dim] * eps
    device_size[new_outer], stride_map[new_outer] = size[old_dim], strides[old_dim]
    return SpyreTensorLayout.from_device(device_size, stride_map, stl.device_dtype)


# ---------------------------------------------------------------------------------------------
# Host <-> device
# ---------------------------------------------------------------------------------------------


def _host_view(host_size: Sequence[int], host_strides: Sequence[int] | None, storage_offset: int) -> HostView:
    from ktir.layout.dci import HostView

    size = _int_tuple(host_size, "host size")
    strides = None if host_strides is None else _int_tuple(host_strides, "host strides")
    if isinstance(storage_offset, bool | np.bool_) or not isinstance(storage_offset, int | np.integer):
        raise LayoutError(
            f"storage offset must be an integer, not {storage_offset!r} ({type(storage_offset).__name__})"
        )
    offset = int(storage_offset)
    return HostView.of(size, strides, offset)


@functools.lru_cache(maxsize=256)
def _descriptor(
    device_size: tuple[int, ...], stride_map: tuple[int, ...], view: HostView
) -> tuple[DmaBlock, ...]:
    """
    The blocks that move `view` into the layout: the reference's DCI when it fits the view.

    A layout the reference construction does not describe but the compiler's chain form binds
    (for example a tiling whose outer tile is not the stick-tile dim) keeps the chain form's
    descriptor, so such layouts keep their bytes. Neither: a `LayoutError` with both reasons.
    """
    from ktir.layout.dci import dci_blocks

    try:
        return tuple(dci_blocks(view, device_size, stride_map))
    except LayoutError as error:
        reference_error = error
    try:
        bound = TiledLayout(device_size, stride_map).bind(view.sizes, view.strides)
    except LayoutError as chain_error:
        raise LayoutError(
            f"layout device_size={list(device_size)}, stride_map={list(stride_map)} does not fit host "
            f"size {list(view.sizes)}, strides {list(view.strides)}: {reference_error} "
            f"(nor does the compiler's chain form bind it: {chain_error})"
        ) from None
    shift = view.storage_offset
    return tuple(dataclasses.replace(b, host_offset=b.host_offset + shift) for b in bound.dma())


def to_device(
    host_array: Any,
    stl: SpyreTensorLayout,
    host_strides: Sequence[int] | None = None,
    *,
    storage_offset: int = 0,
    host_size: Sequence[int] | None = None,
) -> np.ndarray:
    """
    Pack a host tensor into a device buffer of shape `stl.device_size` by running `stl.dma`.

    Without `host_size`, `host_array` is the tensor itself (any NumPy array or CPU torch
    tensor), and `host_strides` (default: contiguous) and `storage_offset` say where the DMA
    finds it in host storage: they are what `stl.stride_map` refers to. With `host_size`,
    `host_array` is the host storage (read flat) and the tensor is its view of `host_size`,
    `host_strides` and `storage_offset`, as the reference reads a strided view. Device positions
    no block writes (padding) are zero. The buffer has the device format's NumPy type
    (float16, float32, int32, int8; uint8 bits for fp8). Example: a (90,) tensor in
    `from_device([1, 3, 64], [64, 30, 1], "float16")` fills lanes 0..29 of three sticks.
    """
    from ktir.layout.dci import host_to_device

    host = _as_numpy(host_array)
    if host_size is None:
        view = _host_view(host.shape, host_strides, storage_offset)
        values = host
        storage = _storage_of(host, view)
    else:
        view = _host_view(host_size, host_strides, storage_offset)
        storage = _storage_slice(host, view)
        values = strided_view(storage, 0, view.sizes, view.strides)
    blocks = _descriptor(stl._device_size, stl._stride_map, view)
    _to_device_values(values, stl.device_dtype)
    dense = sum(b.numel for b in blocks) == stl.device_numel  # blocks never overlap on the device
    device = (np.empty if dense else np.zeros)(stl.device_numel, dtype=stl.device_dtype.numpy_dtype)
    host_to_device(blocks, storage, device, host_base=view.storage_offset)
    return device.reshape(stl.device_size)


def to_host(
    device_buffer: Any,
    stl: SpyreTensorLayout,
    host_size: Sequence[int],
    host_strides: Sequence[int] | None = None,
    dtype: Any = None,
    *,
    storage_offset: int = 0,
) -> np.ndarray:
    """
    Unpack a device buffer into a host array of `host_size` by running `stl.dma` backwards.

    The buffer is flat (`stl.device_numel` elements) or shaped `stl.device_size`. The result
    is laid out in memory with `host_strides` (contiguous by default) at `storage_offset` into
    a fresh storage buffer, like `torch.empty_strided(...).as_strided(..., storage_offset)`;
    `dtype` converts the values (default: the buffer's type). Padding is never read; a host
    element stored at several device positions (broadcast) is read from the first.
    """
    from ktir.layout.dci import device_to_host

    view = _host_view(host_size, host_strides, storage_offset)
    device = _device_flat(device_buffer, stl)
    blocks = _descriptor(stl._device_size, stl._stride_map, view)
    out_dtype = device.dtype if dtype is None else np.dtype(_dtype_name(dtype))
    storage = np.zeros(view.storage_offset + view.span, dtype=device.dtype)
    device_to_host(blocks, device, storage)
    if out_dtype != storage.dtype:
        storage = storage.astype(out_dtype)
    if host_strides is None and storage_offset == 0:
        return storage.reshape(view.sizes)
    return strided_view(storage[view.storage_offset :], 0, view.sizes, view.strides)


def _device_flat(device_buffer: Any, stl: SpyreTensorLayout) -> np.ndarray:
    device = _as_numpy(device_buffer)
    if device.shape in ((stl.device_numel,), tuple(stl.device_size)):
        return np.ascontiguousarray(device).reshape(-1)
    raise LayoutError(
        f"device buffer has shape {list(device.shape)} ({device.size} elements), but {stl!r} needs "
        f"shape {stl.device_size} or {stl.device_numel} flat elements"
    )


def _storage_of(host: np.ndarray, view: HostView) -> np.ndarray:
    """Host storage from `view.storage_offset` on, holding `host` where the view places it."""
    if view.strides == contiguous_strides(view.sizes):
        return np.ascontiguousarray(host).reshape(-1)
    storage = np.zeros(view.span, dtype=host.dtype)
    placed = strided_view(storage, 0, view.sizes, view.strides)
    placed[...] = host
    if (np.count_nonzero(view.mask()) < view.numel) and not np.array_equal(
        placed, host, equal_nan=_floating(host)
    ):
        raise LayoutError(
            f"host strides {list(view.strides)} store several elements of the (size {list(view.sizes)}) "
            "host array in one place, but the array holds different values there"
        )
    return storage


def _storage_slice(storage: np.ndarray, view: HostView) -> np.ndarray:
    flat = storage.reshape(-1)
    needed = view.storage_offset + view.span
    if flat.size < needed:
        raise LayoutError(
            f"host storage has {flat.size} elements, but the view of size {list(view.sizes)}, strides "
            f"{list(view.strides)} at storage offset {view.storage_offset} needs {needed}"
        )
    return np.ascontiguousarray(flat[view.storage_offset : needed])


def _floating(array: np.ndarray) -> bool:
    return array.dtype.kind in "fc"


def _as_numpy(array: Any) -> np.ndarray:
    if type(array).__module__.startswith("torch"):
        return array.detach().cpu().numpy()
    return np.asarray(array)


def _to_device_values(host: np.ndarray, device_dtype: DeviceDType) -> np.ndarray:
    target = device_dtype.numpy_dtype
    if device_dtype in (DeviceDType.SEN143_FP8, DeviceDType.SEN152_FP8) and host.dtype != target:
        raise LayoutError("fp8 device buffers hold raw bit patterns: pass a uint8 host array")
    if host.dtype.kind in "iu" and target.kind == "i" and host.size:
        info = np.iinfo(target)
        if host.min() < info.min or host.max() > info.max:
            raise LayoutError(f"integer values out of range for {device_dtype} ({target})")
    return host
