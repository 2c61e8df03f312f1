"""
"Elementwise arithmetic hides under memory": on the card gelu and exp cost what neg costs
(torch-spyre cost_model.py `CostParams`: "Verified: arithmetic-free (gelu/exp == neg)"). At the
card's 32 cores ktir's SFU rate (`Target.sfu_pass_elems_per_us`, 8.8e3 elements per µs and pass)
keeps gelu's 8 passes and exp's 2 under the LPDDR5 time of a balanced fp16 stream (docs/hardware.md,
"SFU rates and the card"); these pin that property.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch
import torch.nn.functional as F

import ktir
from ktir.hardware.target import SPYRE


def time_us(fn, shape: tuple[int, int], cores: int = 32, target=SPYRE) -> float:
    """ktir's simulated time of `fn` on an fp16 tensor of `shape` (timing only)."""
    x = torch.empty(shape, dtype=torch.float16, device="meta")
    return float(ktir.estimate(fn, (x,), cores=cores, target=target).time_us)


@pytest.mark.parametrize("shape", [(2048, 1024), (2048, 4096)])
def test_gelu_and_exp_cost_what_neg_costs_on_32_cores(shape: tuple[int, int]) -> None:
    """exp within 2% of neg, gelu within 10% (its SFU passes only fill and drain the pipeline)."""
    neg = time_us(lambda x: -x, shape)
    assert time_us(torch.exp, shape) == pytest.approx(neg, rel=0.02)
    assert time_us(F.gelu, shape) == pytest.approx(neg, rel=0.10)


def test_a_slower_sfu_would_not_hide() -> None:
    """The property rests on the SFU rate: at half of it gelu is SFU-bound, 1.5x neg's time."""
    slow = dataclasses.replace(SPYRE, sfu_pass_elems_per_us=SPYRE.sfu_pass_elems_per_us / 2)
    shape = (2048, 4096)
    assert time_us(F.gelu, shape, target=slow) > 1.4 * time_us(lambda x: -x, shape, target=slow)
