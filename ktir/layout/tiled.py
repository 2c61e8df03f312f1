"""
Tiled tensor layouts: `device_size` + `stride_map`, the form the compiler plans layouts in.

A *tiled layout* describes how a host tensor (PyTorch sizes and strides) is stored in device
memory. The device tensor is row-major over `device_size`; entry `j` of `stride_map` is the
number of **host** elements one steps over when device coordinate `j` grows by one, with `-1`
for a synthetic dim (padding, sparse sticks, size-1 dims) and `0` for a broadcast dim. The
contract tying the two coordinate systems together is

    host_offset(host_coords) == dot(device_coords, stride_map)    (over entries >= 0)

for every device coordinate that holds a host element. Device coordinates that hold none are
padding and are zero-filled.

`TiledLayout` is the pair in the form the compiler plans with (the common form of Spyre, XLA and
HTP layouts, see `ktir.layout.formats`); `TiledLayout.bind(host_size, host_strides)` checks it
against a host tensor and returns a `BoundLayout` that packs, unpacks, indexes and tiles (see
`ktir.layout.binding`). This module also exports what every layout module shares, `LayoutError`
and `contiguous_strides` (defined in `ktir.layout.common`), and holds the data formats
(`device_dtype_of`). The Spyre stick layout is in `ktir.layout.spyre`, moving data between host
and device in `ktir.layout.transfer`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from ktir.layout.binding import BoundLayout, bind_layout
from ktir.layout.common import LayoutError, contiguous_strides
from ktir.layout.dtypes import HOST_TO_DEVICE_DTYPE, DeviceDType

__all__ = [
    "LayoutError",
    "TiledLayout",
    "contiguous_strides",
    "device_dtype_of",
]

MAX_HOST_RANK = 6
"""The reference stack supports host ranks up to 6 (7 entries in a sparse `dim_order`)."""


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
    name = dtype_name(dtype)
    if name in DeviceDType.__members__:
        return DeviceDType(name)
    if (found := HOST_TO_DEVICE_DTYPE.get(name)) is not None:
        return found
    supported = ", ".join(HOST_TO_DEVICE_DTYPE)
    raise LayoutError(f"Spyre backend does not support dtype {name} (supported: {supported})")


def dtype_name(dtype: object) -> str:
    if isinstance(dtype, str):
        return dtype.removeprefix("torch.")
    if type(dtype).__module__ == "torch":  # torch.dtype, without importing torch
        return str(dtype).removeprefix("torch.")
    try:
        return np.dtype(cast("npt.DTypeLike", dtype)).name  # anything else raises the TypeError below
    except TypeError:
        return repr(dtype)


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
        object.__setattr__(self, "device_size", int_tuple(self.device_size, "device_size"))
        object.__setattr__(self, "stride_map", int_tuple(self.stride_map, "stride_map"))
        check_device_pair(self.device_size, self.stride_map)
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
        strides = None if host_strides is None else int_tuple(host_strides, "host strides")
        return bind_layout(self, int_tuple(host_size, "host size"), strides)


def int_tuple(values: object, what: str) -> tuple[int, ...]:
    """`values` as a tuple of Python ints; a `LayoutError` for floats, bools and non-sequences."""
    try:
        items = tuple(cast("Iterable[Any]", values))  # anything else raises the TypeError below
    except TypeError:
        raise LayoutError(f"{what} must be a sequence of integers, not {values!r}") from None
    for item in items:
        if isinstance(item, bool | np.bool_) or not isinstance(item, int | np.integer):
            raise LayoutError(
                f"{what} must be integers, but {list(items)!r} holds {item!r} "
                f"({type(item).__name__}); sizes and strides are never rounded"  # pyright: ignore[reportUnknownArgumentType]  # NumPy: isinstance narrows to bool_[Unknown]
            )
    return tuple(int(item) for item in items)


def check_device_pair(device_size: tuple[int, ...], stride_map: tuple[int, ...]) -> None:
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
