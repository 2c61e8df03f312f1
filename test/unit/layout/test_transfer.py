"""`to_device` reads a host array through its own strides, as the reference's `x.to(device_layout=stl)`."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ktir.layout import SpyreTensorLayout, to_device, to_host
from ktir.layout.tiled import LayoutError


def column_major_layout() -> SpyreTensorLayout:
    """(40, 60) fp16 stored column-major: rows walk host stride 1, the stick walks stride 40."""
    return SpyreTensorLayout.from_device([1, 40, 64], [2560, 1, 40], "float16")


def test_a_column_major_array_round_trips_exactly() -> None:
    host = np.asfortranarray(np.arange(2400, dtype=np.float16).reshape(40, 60))
    stl = column_major_layout()
    device = to_device(host, stl)
    # Device row i holds host row i; lanes 60..63 are padding.
    assert np.array_equal(device[0, :, :60], host)
    assert not device[0, :, 60:].any()
    assert np.array_equal(to_host(device, stl, (40, 60), (1, 40)), host)
    # Explicit host strides say the same.
    assert np.array_equal(to_device(host, stl, (1, 40)), device)


def test_a_transposed_torch_tensor_is_read_through_its_strides() -> None:
    stored = torch.arange(2400, dtype=torch.float16).reshape(60, 40)
    tensor = stored.T  # (40, 60), strides (1, 40)
    assert tensor.stride() == (1, 40)
    stl = column_major_layout()
    device = to_device(tensor, stl)
    assert np.array_equal(device[0, :, :60], tensor.numpy())
    assert np.array_equal(to_host(device, stl, (40, 60), (1, 40)), tensor.numpy())


def test_a_stepped_slice_is_read_through_its_strides() -> None:
    base = np.arange(8 * 128, dtype=np.float16).reshape(8, 128)
    host = base[:, ::2]  # (8, 64), strides (128, 2) elements
    stl = SpyreTensorLayout((8, 64), "float16", host_strides=(128, 2))
    assert (stl.device_size, stl.stride_map) == ([1, 8, 64], [128, 128, 2])
    device = to_device(host, stl)
    assert np.array_equal(device[0], host)
    assert np.array_equal(to_host(device, stl, (8, 64), (128, 2)), host)


def test_an_expanded_array_keeps_its_zero_stride() -> None:
    row = np.arange(64, dtype=np.float16)
    stl = SpyreTensorLayout((3, 64), "float16", host_strides=(0, 1))  # [1, 3, 64] / [64, 0, 1]
    for host in (np.broadcast_to(row, (3, 64)), torch.from_numpy(row).expand(3, 64)):
        assert np.array_equal(to_device(host, stl), np.broadcast_to(row, (1, 3, 64)))
    # The same values stored three times are a different host tensor, which this layout misses.
    with pytest.raises(LayoutError, match="the DMA blocks miss 128 of the 192 host elements"):
        to_device(np.tile(row, (3, 1)), stl)


def test_size_one_dims_need_no_usable_stride() -> None:
    host = np.arange(3, dtype=np.float16).reshape(3, 1)[:, ::-1]  # strides (2, -2) bytes
    stl = SpyreTensorLayout((3, 1), "float16")
    assert np.array_equal(to_host(to_device(host, stl), stl, (3, 1)), host)


def test_negative_strides_are_refused() -> None:
    host = np.arange(64, dtype=np.float16)[::-1]
    with pytest.raises(LayoutError) as error:
        to_device(host, SpyreTensorLayout((64,), "float16"))
    assert str(error.value) == (
        "host array strides [-2] (bytes) run backwards in dim 0, which no stride_map describes: "
        "pass np.ascontiguousarray(array) or host_strides"
    )


@pytest.mark.parametrize(
    "host",
    [
        np.zeros(64, dtype=[("tag", "u1"), ("value", "<f2")])["value"],  # a field 3 bytes apart
        np.lib.stride_tricks.as_strided(np.zeros(256, np.uint8).view(np.float16), (64,), (3,)),
    ],
    ids=["structured-field", "as-strided"],
)
def test_strides_that_are_not_whole_elements_are_refused(host: np.ndarray) -> None:
    assert host.dtype == np.float16 and host.strides == (3,)
    with pytest.raises(LayoutError) as error:
        to_device(host, SpyreTensorLayout((64,), "float16"))
    assert str(error.value) == (
        "host array strides [3] (bytes) are not whole float16 elements (2 bytes) in dim 0: "
        "pass np.ascontiguousarray(array) or host_strides"
    )
    # A copy packs.
    assert to_device(np.ascontiguousarray(host), SpyreTensorLayout((64,), "float16")).shape == (1, 64)
