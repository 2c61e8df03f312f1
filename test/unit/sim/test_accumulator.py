"""
The PE arrays' resident accumulator (docs/hardware.md, "The card as measured"): a matmul tile of
more than `Target.accumulator_elements` (65,536) outputs per core streams a fraction
min(1.5, 0.45 log2(area / 65,536)) of its operand tiles from LPDDR5 again (torch-spyre
`mm_spill_*`). The simulator charges those bytes as one more load on the channel (moved bytes, not
compulsory ones); the dataflow planner sees the same cost and cuts the output into tiles that fit.
"""

from __future__ import annotations

import dataclasses

import pytest
from helpers import compiled, matmul

import ktir.sim
from ktir.hardware import cost_model
from ktir.hardware.target import SPYRE, SPYRE_DATASHEET


@pytest.mark.parametrize(
    ("area", "expected"),
    [(4096, 0.0), (65536, 0.0), (131072, 0.45), (262144, 0.9), (2**20, 1.5), (2**24, 1.5)],
)
def test_the_restreamed_fraction_follows_the_cards_fit(area: int, expected: float) -> None:
    """0 up to 64K outputs per core, 0.45 per doubling past it, at most 1.5; off on the datasheet."""
    assert cost_model.accumulator_reread_fraction(area, target=SPYRE) == pytest.approx(expected, rel=1e-12)
    assert cost_model.accumulator_reread_fraction(area, SPYRE_DATASHEET) == 0.0


def test_an_overflowing_tile_streams_its_operands_again() -> None:
    """
    4096 x 1024 @ 1024 x 4096 on 32 cores, planned at the datasheet's rates: a {m: 4, n: 8} split
    cut {m: 2, n: 2, k: 16}, so each core accumulates 512 x 256 = 131,072 outputs per tile. Its
    chunks load x twice and y twice (8.4 MB each, 33.6 MB); on the card each tile streams 0.45 of
    its operands again: 0.45 x 33.6 MB = 15.1 MB more moved bytes, the same compulsory bytes.
    """
    module = compiled(matmul(4096, 1024, 4096), 32, target="spyre-datasheet")
    off = ktir.sim.estimate(module, target=dataclasses.replace(SPYRE, accumulator_reread_slope=0.0))
    on = ktir.sim.estimate(module, target=SPYRE)
    operands = 4 * 4096 * 1024 * 2
    assert on.bytes - off.bytes == pytest.approx(0.45 * operands, rel=1e-9)
    assert on.compulsory_bytes == off.compulsory_bytes
    assert on.total_cycles >= off.total_cycles  # here the restream fits the channel's idle time
    (kernel,) = [k for k in on.kernels if k.cores]
    restreams = [e for e in kernel.events if e.label.startswith("re-stream operands (0.45")]
    assert len(restreams) == 64  # one per chunk: 2 x 2 output tiles x 16 K chunks
    channel = sum(end - start for e in restreams for start, end in e.channel)
    assert channel == pytest.approx(0.45 * operands / SPYRE.sustained_bytes_per_cycle, rel=1e-9)


def test_the_planner_weighs_the_restream_against_the_turnaround() -> None:
    """
    The same matmul planned for the card, whose model charges both the re-stream and the
    read/write turnaround of stores that run under later loads (`ktir.cores.dataflow`).
    Cutting the output into 65,536-output tiles would re-stream nothing but load an operand
    again and store three tiles under loads: 83.9 MB, 710.1 µs simulated. The planner keeps N
    cut in 2 (262,144 outputs per tile) and re-streams part of its operands in half its chunks
    instead: 81.4 MB, 706.7 µs, which also beats the datasheet's plan run on the card
    (82.2 MB, 708.3 µs, a re-stream in every chunk).
    """
    card = ktir.sim.estimate(compiled(matmul(4096, 1024, 4096), 32), target=SPYRE)
    datasheet_plan = compiled(matmul(4096, 1024, 4096), 32, target="spyre-datasheet")
    on_card = ktir.sim.estimate(datasheet_plan, target=SPYRE)
    datasheet = ktir.sim.estimate(datasheet_plan, target=SPYRE_DATASHEET)
    operand, output = 4096 * 1024 * 2, 4096 * 4096 * 2
    assert datasheet.bytes == 4 * operand + output
    assert card.bytes == pytest.approx(81_369_497.6, rel=1e-9)
    assert on_card.bytes == pytest.approx(82_208_358.4, rel=1e-9)
    assert card.time_us == pytest.approx(706.673, abs=0.01)
    assert card.time_us < on_card.time_us
    (kernel,) = [k for k in card.kernels if k.cores]
    assert len([e for e in kernel.events if e.label.startswith("re-stream")]) == 32
