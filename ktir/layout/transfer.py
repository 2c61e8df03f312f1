"""
Host <-> device transfer: `to_device` and `to_host` run a layout's DMA descriptor.

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
Two examples the chain form (`ktir.layout.binding`) would refuse:

- host (90,) in `[1, 3, 64]` / `[64, 30, 1]`: one block, loop sizes (1, 3, 30): the tensor is
  cut into three pieces of 30 and each piece starts a stick (lanes 30..63 are padding);
- host (30, 40) in `[19, 64]` / `[64, 1]` (folding): the 1200 contiguous elements are re-cut
  into rows of 64, a main block (18, 64) plus a remainder (1, 48) at host and device offset 1152.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ktir.layout.binding import strided_view
from ktir.layout.dci import HostView, device_to_host, host_to_device
from ktir.layout.dtypes import DeviceDType
from ktir.layout.spyre import SpyreTensorLayout, dma_descriptor, host_view
from ktir.layout.tiled import LayoutError, contiguous_strides, dtype_name

__all__ = [
    "to_device",
    "to_host",
]


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
    tensor), and `host_strides` and `storage_offset` say where the DMA finds it in host storage:
    they are what `stl.stride_map` refers to. `host_strides` defaults to the array's own strides
    in elements (a torch tensor's `stride()`), as the reference's `x.to(device_layout=stl)`
    reads `x`; a NumPy array whose strides are negative or not whole elements raises a
    `LayoutError` (pass a copy or `host_strides`). With `host_size`,
    `host_array` is the host storage (read flat) and the tensor is its view of `host_size`,
    `host_strides` and `storage_offset`, as the reference reads a strided view. Device positions
    no block writes (padding) are zero. The buffer has the device format's NumPy type
    (float16, float32, int32, int8; uint8 bits for fp8). Example: a (90,) tensor in
    `from_device([1, 3, 64], [64, 30, 1], "float16")` fills lanes 0..29 of three sticks.
    """
    host = _as_numpy(host_array)
    if host_size is None:
        strides = own_strides(host_array, host) if host_strides is None else host_strides
        view = host_view(host.shape, strides, storage_offset)
        values = host
        storage = _storage_of(host, view)
    else:
        view = host_view(host_size, host_strides, storage_offset)
        storage = _storage_slice(host, view)
        values = strided_view(storage, 0, view.sizes, view.strides)
    # The layout's own tuples (its public properties copy to lists, which the cache cannot hash).
    blocks = dma_descriptor(stl._device_size, stl._stride_map, view)  # pyright: ignore[reportPrivateUsage]
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
    view = host_view(host_size, host_strides, storage_offset)
    device = _device_flat(device_buffer, stl)
    # The layout's own tuples (its public properties copy to lists, which the cache cannot hash).
    blocks = dma_descriptor(stl._device_size, stl._stride_map, view)  # pyright: ignore[reportPrivateUsage]
    out_dtype = device.dtype if dtype is None else np.dtype(dtype_name(dtype))
    storage = np.zeros(view.storage_offset + view.span, dtype=device.dtype)
    device_to_host(blocks, device, storage)
    if out_dtype != storage.dtype:
        storage = storage.astype(out_dtype)
    if host_strides is None and storage_offset == 0:
        return storage.reshape(view.sizes)
    return strided_view(storage[view.storage_offset :], 0, view.sizes, view.strides)


def own_strides(array: Any, host: np.ndarray) -> tuple[int, ...]:
    """
    The strides of `array` in elements: a torch tensor's `stride()`, a NumPy array's byte
    strides over its item size. A dim of size 0 or 1 is never stepped, so whatever NumPy
    reports there is read as the contiguous stride. Example: the column-major
    `np.asfortranarray(np.zeros((40, 60), np.float16))` has strides (1, 40).
    """
    if _is_torch(array):
        return tuple(int(step) for step in array.stride())
    contiguous = contiguous_strides(host.shape)
    strides: list[int] = []
    for dim, (size, step) in enumerate(zip(host.shape, host.strides, strict=True)):
        if size <= 1:
            strides.append(contiguous[dim])
        elif step < 0:
            raise LayoutError(
                f"host array strides {list(host.strides)} (bytes) run backwards in dim {dim}, which no "
                "stride_map describes: pass np.ascontiguousarray(array) or host_strides"
            )
        elif step % host.itemsize:
            raise LayoutError(
                f"host array strides {list(host.strides)} (bytes) are not whole {host.dtype} elements "
                f"({host.itemsize} bytes) in dim {dim}: pass np.ascontiguousarray(array) or host_strides"
            )
        else:
            strides.append(step // host.itemsize)
    return tuple(strides)


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


def _is_torch(array: Any) -> bool:
    return type(array).__module__.startswith("torch")


def _as_numpy(array: Any) -> np.ndarray:
    if _is_torch(array):
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
