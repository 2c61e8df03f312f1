"""Device tiles as host boxes (ktir/sim/host_tiles.py), checked against packed host tensors."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.parser import Parser

from ktir.ir.context import make_context
from ktir.ir.values import tensor_layout
from ktir.sim.executor import device_buffer
from ktir.sim.host_tiles import HostTiles, cast_into

# q of a grouped attention: host dims 1 and 2 (2 x 2 heads) walk one device dim of 4.
_GROUPED = (
    "tensor<1x2x2x32x16xf16, #ktir.tiled<device_size = [4, 32, 1, 1, 64], stride_map = [512, 16, 64, -1, 1]>>"
)
# a 32-wide bias in a 64-lane stick: 32 lanes of padding.
_PADDED = "tensor<32xf16, #ktir.tiled<device_size = [1, 64], stride_map = [64, 1]>>"


def _setup(text: str) -> tuple:
    value_type = Parser(make_context(), text).parse_type()
    layout, shape, _ = tensor_layout(value_type)
    host = np.arange(np.prod(shape), dtype=np.float16).reshape(shape)
    return layout, shape, host, device_buffer(host, value_type)


def _host_tiles(
    mapping: HostTiles, device: np.ndarray, starts: np.ndarray, extent: tuple[int, ...]
) -> np.ndarray:
    tiles = np.stack(
        [device[tuple(slice(s, s + e) for s, e in zip(start, extent, strict=True))] for start in starts]
    )
    return mapping.to_host(tiles)


@given(st.lists(st.integers(0, 3), min_size=1, max_size=4))
def test_a_box_that_cuts_a_group_of_host_dims_is_their_box(heads: list[int]) -> None:
    layout, shape, host, device = _setup(_GROUPED)
    extent = (1, 32, 1, 1, 64)
    starts = np.array([[h, 0, 0, 0, 0] for h in heads])
    mapping = HostTiles.of(layout, shape, extent, starts, len(heads), padded=True)
    assert mapping is not None and mapping.extent == (1, 1, 1, 32, 64)  # the last dim padded to its stick
    assert HostTiles.of(layout, shape, extent, starts, len(heads)) is None  # the simulator's default
    for core, head in enumerate(heads):
        assert tuple(mapping.lo[core, 1:3]) == divmod(head, 2)
        expected = host[:, head // 2 : head // 2 + 1, head % 2 : head % 2 + 1]
        got = _host_tiles(mapping, device, starts, extent)[core]
        np.testing.assert_array_equal(got[..., :16], expected)


def test_a_box_over_padding_maps_onto_the_padded_host_box() -> None:
    layout, shape, host, device = _setup(_PADDED)
    starts = np.zeros((2, 2), dtype=np.int64)
    assert HostTiles.of(layout, shape, (1, 64), starts, 2) is None
    mapping = HostTiles.of(layout, shape, (1, 64), starts, 2, padded=True)
    assert mapping is not None and mapping.extent == (64,)
    tiles = _host_tiles(mapping, device, starts, (1, 64))
    np.testing.assert_array_equal(tiles[:, :32], np.stack([host, host]))


def test_a_run_across_two_heads_of_a_group_is_no_box() -> None:
    layout, shape, _, _ = _setup(_GROUPED)
    starts = np.array([[1, 0, 0, 0, 0]])
    assert HostTiles.of(layout, shape, (2, 32, 1, 1, 64), starts, 1, padded=True) is None  # heads 1, 2
    starts = np.array([[2, 0, 0, 0, 0]])
    mapping = HostTiles.of(layout, shape, (2, 32, 1, 1, 64), starts, 1, padded=True)
    assert mapping is not None and mapping.extent == (1, 1, 2, 32, 64)


# 128 x 256 in sticks of 64 columns: a box of 2 sticks x 32 rows is a 32 x 128 host box.
_STICKS = "tensor<128x256xf16, #ktir.tiled<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>"


@settings(deadline=None)  # its parse and packing on a loaded machine
@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 3)), min_size=1, max_size=4))
def test_boxes_convert_to_host_tiles_as_their_stack_does(starts_drawn: list[tuple[int, int]]) -> None:
    """
    `boxes_to_host` writes each device box straight into its host tile, converted: the bits of
    `to_host` on the boxes stacked, on a transposing layout and on one with synthetic dims.
    """
    for text, extent, starts in [
        (_STICKS, (2, 32, 64), np.array([[2 * a, 32 * b, 0] for a, b in starts_drawn])),
        (_GROUPED, (1, 32, 1, 1, 64), np.array([[b, 0, 0, 0, 0] for _, b in starts_drawn])),
    ]:
        layout, shape, _, device = _setup(text)
        mapping = HostTiles.of(layout, shape, extent, starts, len(starts), padded=True)
        assert mapping is not None
        boxes = [
            device[tuple(slice(s, s + e) for s, e in zip(start, extent, strict=True))] for start in starts
        ]
        stacked = mapping.to_host(np.stack(boxes), np.float32)
        each = mapping.boxes_to_host(boxes, np.float32)
        assert each.dtype == np.float32 and np.array_equal(each, stacked)


def test_fp16_to_fp32_through_the_table_gives_numpys_bits() -> None:
    """`cast_into`: every fp16 bit pattern (NaNs, infinities, subnormals, -0) as NumPy converts it."""
    every = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16).reshape(256, 256)
    widened = np.empty((256, 256), np.float32)
    cast_into(every.T, widened)  # a strided source, as a device-to-host transpose gives
    assert np.array_equal(widened.view(np.uint32), every.T.astype(np.float32).view(np.uint32))
    finite = np.nan_to_num(widened.T, posinf=0, neginf=0)
    narrowed = np.empty((256, 256), np.float16)
    cast_into(finite, narrowed)  # other types: NumPy's own assignment
    assert np.array_equal(narrowed, finite.astype(np.float16))
