"""The LX buffers' host-tile forms: held accumulators and read tiles (ktir/sim/memory.py)."""

from __future__ import annotations

import numpy as np
from xdsl.parser import Parser

from ktir.ir.context import make_context
from ktir.ir.values import tensor_layout
from ktir.sim.host_tiles import HostTiles
from ktir.sim.memory import LxBuffer

# 128 x 128 in sticks of 64 columns; two cores, 64 rows each: host tile (64, 128). The buffer is
# an fp32 accumulator of that fp16 tensor.
TYPE = "tensor<128x128xf16, #ktir.tiled<device_size = [2, 128, 64], stride_map = [64, 128, 1]>>"


def _setup() -> tuple[LxBuffer, HostTiles, np.ndarray]:
    layout, shape, _ = tensor_layout(Parser(make_context(), TYPE).parse_type())
    starts = np.array([[0, 0, 0], [0, 64, 0]])
    tiles = HostTiles.of(layout, shape, (2, 64, 64), starts, 2)
    assert tiles is not None and tiles.extent == (64, 128)
    shape = (2, 2, 2, 64, 64)  # cores, slots, tile
    buffer = LxBuffer(0, 64 * 1024, shape, np.dtype(np.float32), np.zeros((2, 2), bool), False)
    device = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    buffer.data[...] = device
    return buffer, tiles, device


def test_a_held_slot_is_updated_in_place_and_written_back_when_read_another_way() -> None:
    buffer, tiles, device = _setup()
    held = buffer.host_slot(1, tiles)
    assert np.array_equal(held, tiles.to_host(device[:, 1]))
    held += 1  # what a matmul chunk adds
    assert buffer.host_slot(1, tiles) is held
    assert np.array_equal(buffer.slot(0), device[:, 0])  # another slot: still held
    assert buffer.hosts
    assert np.array_equal(buffer.slot(1), device[:, 1] + 1)  # written back once, no longer held
    assert not buffer.hosts


def test_zeroing_or_loading_a_held_slot_drops_it() -> None:
    buffer, tiles, device = _setup()
    buffer.host_slot(0, tiles)[...] = 7
    buffer.zero(0)
    assert not buffer.hosts and not buffer.data[:, 0].any()
    buffer.host_slot(1, tiles)[...] = 7
    buffer.defer(1, device[0, 0], np.zeros((2, 3), np.int64), (2, 64, 64))
    assert np.array_equal(buffer.slot(1), np.stack([device[0, 0], device[0, 0]]))


def test_read_tiles_are_kept_until_the_slot_may_change() -> None:
    buffer, tiles, _ = _setup()
    first = buffer.read_host(0, tiles)
    assert buffer.read_host(0, tiles) is first
    wide = buffer.read_host(0, tiles, np.dtype(np.float64))
    assert wide.dtype == np.float64 and np.array_equal(wide, first)
    assert buffer.read_host(0, tiles, np.dtype(np.float64)) is wide
    buffer.slot(0)[...] = 5  # a writer gets the slot: the kept tiles are dropped
    assert np.array_equal(buffer.read_host(0, tiles), np.full((2, 64, 128), 5.0))
    held = buffer.host_slot(1, tiles)
    held[...] = 3
    assert np.array_equal(buffer.read_host(1, tiles), held)  # the held form, current
