"""`ktdp.inter_tile_consume` on the ktdp engine: broadcast, routing, and a consumer with two sources."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ktir.ktdp_engine as ktdp
from ktir.ktdp_engine.memory import KtdpError

KERNEL = Path(__file__).resolve().parents[2] / "lit" / "Inputs" / "ktdp" / "consume.mlir"


def test_broadcast_and_routing_deliver_the_named_producers_rows():
    x = np.arange(256, dtype=np.float32).reshape(4, 64)
    outputs, report = ktdp.run(KERNEL, "consume", {"x": x, "y": np.zeros_like(x), "z": np.zeros_like(x)})
    assert np.array_equal(outputs["y"], np.broadcast_to(x[0], (4, 64)))  # tile 0's row on every tile
    assert np.array_equal(outputs["z"], x[[3, 2, 1, 0]])  # tile c gets tile 3 - c's row
    assert report.total_cycles > 0


def test_a_consumer_with_two_sources_is_a_located_error():
    message = "consumer tile 0 of group 0 has 2 sources: an inter_tile_consume delivers exactly one"
    with pytest.raises(KtdpError, match=message) as info:
        ktdp.run(KERNEL, "two_sources", {"x": np.zeros((2, 64), np.float32)})
    assert info.value.location is not None
