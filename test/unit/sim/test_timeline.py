"""
`ktir.sim.timeline`: per-core timelines, whose units' busy time is the union of their work, and
the shared LPDDR5 channel with its read/write turnaround.

The card's rates (`ktir/hardware/target.py`, docs/hardware.md "The card as measured"): one
direction at 150 GB/s (100 bytes per cycle at 1.5 GHz), and 0.00574 ns lost per byte of
read/write overlap, so a balanced copy moves 2 / (2 / 150 + 0.00574) = 104.9 GB/s.
"""

from __future__ import annotations

import numpy as np
import pytest

from ktir.hardware import cost_model
from ktir.hardware.target import SPYRE, SPYRE_DATASHEET, Target
from ktir.sim.timeline import Channel, Timeline, covered

CHUNK = 4 * 1024 * 1024  # bytes per DMA, all cores together
CHUNKS = 64


def test_covered_is_the_length_of_the_union() -> None:
    spans = [(np.array([0.0, 5.0]), np.array([4.0, 5.0])), (np.array([2.0, 1.0]), np.array([6.0, 2.0]))]
    spans.append((np.array([8.0, 0.0]), np.array([9.0, 3.0])))
    np.testing.assert_array_equal(covered(spans, 2), [7.0, 3.0])  # [0, 6) + [8, 9); [0, 3)
    np.testing.assert_array_equal(covered([], 3), [0.0, 0.0, 0.0])


def test_a_load_and_a_store_at_once_keep_the_dma_unit_busy_once() -> None:
    """
    A load and a store issued together, each a 500-cycle setup and 30 cycles of the channel:
    the load works [0, 530), the store [0, 500) and [530, 560). The DMA unit is busy 560
    cycles, not 1,060; the SFU (one queue) adds its ops.
    """
    line = Timeline(cores=2, start=0.0)
    setup = np.array([500.0, 500.0])
    line.transfer("load", [], [("x", 0)], setup, 30.0, "load")
    line.transfer("store", [("y", 0)], [], setup, 30.0, "store")
    line.issue("sfu", [("x", 0)], [("z", 0)], np.array([10.0, 20.0]), "exp")
    line.issue("sfu", [("z", 0)], [("w", 0)], np.array([5.0, 5.0]), "exp")
    np.testing.assert_array_equal(line.busy["dma"], [560.0, 560.0])
    np.testing.assert_array_equal(line.busy["sfu"], [15.0, 25.0])
    assert line.end == 560.0


def test_the_channel_docstring_example() -> None:
    """Slicing into gaps; a write overlapping a read pays the turnaround on the overlapped bytes."""
    channel = Channel()
    channel.fill(0, 10)
    channel.fill(20, 10)
    assert channel.fill(5, 15) == 35
    for ready, end in ((0, 316), (5, 266)):
        channel = Channel(turnaround_cycles_per_byte=0.5)
        assert channel.fill(0, 10, "read", 1000) == 10
        fill = channel.fill_pieces(ready, 6, "write", 600)
        assert (fill.end, fill.pieces, fill.turnaround) == (end, [(10, 16)], end - 16)


def test_no_byte_is_paired_twice_and_one_direction_pays_nothing() -> None:
    channel = Channel(turnaround_cycles_per_byte=1.0)
    channel.fill(0, 10, "read", 100)
    assert channel.fill_pieces(0, 10, "read", 100).turnaround == 0  # same direction
    assert channel.fill_pieces(0, 1, "write", 60).turnaround == 60  # 60 of the 200 read bytes
    assert channel.fill_pieces(0, 1, "write", 200).turnaround == 140  # the 140 left
    assert channel.fill_pieces(0, 1, "write", 50).turnaround == 0  # none left
    assert channel.fill_pieces(0, 1, "", 50).turnaround == 0  # no direction: never paired


def stream(target: Target, store: bool) -> float:
    """
    GB/s of a double-buffered stream of `CHUNKS` chip-wide loads of `CHUNK` bytes on 32 cores,
    each stored back from its slot when `store` (a copy), as the simulator issues a kernel.
    """
    line = Timeline(32, 0.0, None, cost_model.turnaround_cycles_per_byte(target))
    setup = np.full(32, float(target.dma_setup_cycles))
    cycles = cost_model.transfer_cycles(CHUNK, target)
    for chunk in range(CHUNKS):
        slot = ("x", chunk % 2)
        line.transfer("load", [], [slot], setup, cycles, "load", CHUNK)
        if store:
            line.transfer("store", [slot], [], setup, cycles, "store", CHUNK)
    moved = CHUNKS * CHUNK * (2 if store else 1)
    return moved / (line.end / target.clock_hz) / 1e9


def test_a_one_directional_stream_runs_at_the_sustained_rate() -> None:
    """Loads alone: 150 GB/s less the 500-cycle setups the load queue waits for (0.2% here)."""
    assert stream(SPYRE, store=False) == pytest.approx(150.0, rel=0.015)


def test_a_balanced_copy_runs_at_105_gbps() -> None:
    """Loads and stores sharing the channel: the turnaround brings them to the card's 105 GB/s."""
    assert 2 / (2 / 150 + 0.00574) == pytest.approx(104.9, abs=0.05)
    assert stream(SPYRE, store=True) == pytest.approx(104.9, rel=0.02)


def test_the_datasheet_target_streams_both_directions_at_its_peak() -> None:
    """
    `spyre-datasheet` has no turnaround: a copy moves 204.8 GB/s as one direction does, less the
    setups (the one-directional stream waits for them: 1.6% at this rate).
    """
    assert stream(SPYRE_DATASHEET, store=True) == pytest.approx(204.8, rel=0.01)
    assert stream(SPYRE_DATASHEET, store=False) == pytest.approx(204.8, rel=0.02)
