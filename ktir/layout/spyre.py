"""
The Spyre stick layout: `SpyreTensorLayout`, the reference's default layouts, `restickify_target`.

`SpyreTensorLayout` is a tiled layout (the `device_size` + `stride_map` pair of
`ktir.layout.tiled`) plus the device data format, with the stick rule of the reference stack
(the last device dim holds exactly one 128-byte stick).

A `SpyreTensorLayout` that is valid for DMA but not a chain (two device dims stepping the same
host stride, e.g. `[1, 50, 64]` / `[64, 1, 1]`, one element per stick) has no `tiled` form:
`tiled` and `bind` raise `LayoutError`. A layout the chain form binds but the reference
construction cannot describe (a tiling whose outer tile is not the stick-tile dim, such as
`[3, 2, 64]` / `[128, 64, 1]` on (5, 64)) is moved with the chain form's descriptor, so its
bytes do not change.

`SpyreTensorLayout.dma` returns the DMA descriptor that moves a host view into the layout
(`dma_descriptor`: the reference's DCI of `ktir.layout.dci` where it fits, else the chain form's);
`ktir.layout.transfer` runs it, and says which host tensors a layout fits.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Sequence

import numpy as np

from ktir.hardware.target import SPYRE
from ktir.layout.binding import BoundLayout, DmaBlock
from ktir.layout.dci import HostView, dci_blocks
from ktir.layout.dtypes import DeviceDType
from ktir.layout.tiled import (
    MAX_HOST_RANK,
    LayoutError,
    TiledLayout,
    check_device_pair,
    contiguous_strides,
    device_dtype_of,
    int_tuple,
)

__all__ = [
    "SpyreTensorLayout",
    "restickify_target",
]


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
        size = int_tuple(host_size, "host size")
        strides = (
            contiguous_strides(size) if host_strides is None else int_tuple(host_strides, "host strides")
        )
        order = None if dim_order is None else int_tuple(dim_order, "dim_order")
        device_size, stride_map = _default_device_layout(size, strides, device_dtype.elems_per_stick, order)
        self._init(device_size, stride_map, device_dtype)

    def _init(
        self, device_size: tuple[int, ...], stride_map: tuple[int, ...], device_dtype: DeviceDType
    ) -> None:
        check_device_pair(device_size, stride_map)
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
            int_tuple(device_size, "device_size"),
            int_tuple(stride_map, "stride_map"),
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
            dma_descriptor(
                self._device_size, self._stride_map, host_view(host_size, host_strides, storage_offset)
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

    device_size: list[int] = []
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
# The DMA descriptor of a layout
# ---------------------------------------------------------------------------------------------


def host_view(host_size: Sequence[int], host_strides: Sequence[int] | None, storage_offset: int) -> HostView:
    size = int_tuple(host_size, "host size")
    strides = None if host_strides is None else int_tuple(host_strides, "host strides")
    # Not redundant: callers without a type checker pass anything (a NumPy integer is fine).
    if isinstance(storage_offset, bool | np.bool_) or not isinstance(storage_offset, int | np.integer):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise LayoutError(
            f"storage offset must be an integer, not {storage_offset!r} ({type(storage_offset).__name__})"
        )
    offset = int(storage_offset)
    return HostView.of(size, strides, offset)


@functools.lru_cache(maxsize=256)
def dma_descriptor(
    device_size: tuple[int, ...], stride_map: tuple[int, ...], view: HostView
) -> tuple[DmaBlock, ...]:
    """
    The blocks that move `view` into the layout: the reference's DCI when it fits the view.

    A layout the reference construction does not describe but the compiler's chain form binds
    (for example a tiling whose outer tile is not the stick-tile dim) keeps the chain form's
    descriptor, so such layouts keep their bytes. Neither: a `LayoutError` with both reasons.
    """
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
