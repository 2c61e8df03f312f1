"""The estimated time of an attention kernel (`ktir.cores.attention`) against the simulator's."""

from __future__ import annotations

import pytest
from helpers import attention, compiled

import ktir
import ktir.sim
from ktir.cores.attention import attention_cycles
from ktir.cores.chunking import plan_chunks
from ktir.cores.kernels import kernel_of
from ktir.dialects import ktir_structured as st
from ktir.hardware.target import SPYRE
from ktir.ir.context import make_context
from ktir.ir.diagnostics import parse_module

PREFILL = (4, 8, 4, 128, 1024, 0)
"""4 sequences, 32 query heads over 8 key heads of 1024 keys, 128 causal queries (SFU-bound)."""
DECODE = (8, 2, 4, 1, 2048, 2047)
"""A decode step of 8 sequences, 8 query heads over 2 key heads of 2048 keys (memory-bound)."""


def estimated_and_simulated(
    shape: tuple[int, ...], cores: int, splits: dict[str, int]
) -> tuple[float, float]:
    """The estimate for `splits` with the chunking the compiler plans, and the simulated cycles."""
    hint = ", ".join(f"{d} = {s} : i64" for d, s in splits.items())
    module = parse_module(make_context(), attention(*shape, hint))
    ktir.run_pipeline(module, "ktir-propagate-layouts,ktir-insert-restickify,ktir-pad-matmul")
    (op,) = [o for o in module.walk() if isinstance(o, st.AttentionOp)]
    kernel = kernel_of(op, splits)
    assert kernel is not None
    cuts = plan_chunks(kernel, [(0, SPYRE.lx_usable_bytes)], SPYRE.lx_alignment, SPYRE).cuts
    report = ktir.sim.estimate(compiled(attention(*shape, hint), cores))
    (simulated,) = [k for k in report.kernels if k.op == "ktir.attention"]
    return attention_cycles(kernel, cuts, SPYRE), simulated.cycles


@pytest.mark.parametrize(
    ("shape", "cores", "divisions"),
    [
        (PREFILL, 8, [{"b0": 4, "h": 2}, {"b0": 1, "s": 8}, {"b0": 4, "s": 2}]),
        (DECODE, 32, [{"b0": 4, "h": 8}, {"b0": 8, "h": 4}, {"b0": 2, "h": 8}]),
    ],
)
def test_the_estimate_is_within_2_percent_of_the_simulator_and_ranks_divisions_as_it_does(
    shape: tuple[int, ...], cores: int, divisions: list[dict[str, int]]
) -> None:
    """
    Divisions listed fastest first by the simulator: the prefill's by sequences and heads
    (balanced causal work), by queries with its sequences walked in chunks, by queries with its
    heads walked in chunks; the decode step's with its chunks one sequence each, in one chunk,
    and over fewer cores. The estimate of each is within 2% of the simulated cycles (it measured
    0.993-1.013), in the same order.
    """
    pairs = [estimated_and_simulated(shape, cores, splits) for splits in divisions]
    for estimated, simulated in pairs:
        assert estimated == pytest.approx(simulated, rel=0.02)
    simulated_order = sorted(range(len(pairs)), key=lambda i: pairs[i][1])
    assert simulated_order == list(range(len(pairs)))
    assert sorted(range(len(pairs)), key=lambda i: pairs[i][0]) == simulated_order
