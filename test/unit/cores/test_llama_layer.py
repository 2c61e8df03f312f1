"""
The Llama-3-8B-shaped decoder layer on the default target (`spyre`, the calibrated card), as
`ktir-estimate` compiles it (`ktir.llm.estimate`: a static KV cache, the prefill's positions
known): one layer is the 2-layer program less the 1-layer one. Its time is pinned against the
sustained bound, max(matmul FLOPs at the card's sustained PE rate on every core, compulsory
bytes at the sustained LPDDR5 rate), and its kernels per layer (docs/work-division.md,
"The Llama-3-8B layer"). Cycles are deterministic (no values are computed), so the margins
only absorb rounding.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import transformers

from ktir.hardware.target import SPYRE, Target
from ktir.llm.estimate import decode_program, prefill_program
from ktir.sim import Report
from ktir.sim.report import bound_cycles

CONFIG = Path(__file__).resolve().parents[3] / "bench" / "configs" / "llama-3-8b.json"


def layer(one: Report, two: Report, target: Target) -> tuple[float, int]:
    """(one layer's time / its sustained bound, its kernels): the 2-layer report less the 1-layer."""
    us = (two.total_cycles - one.total_cycles) / target.clock_mhz
    flops, compulsory = two.matmul_flops - one.matmul_flops, two.compulsory_bytes - one.compulsory_bytes
    bound = bound_cycles(flops, compulsory, target, sustained=True) / target.clock_mhz
    return us / bound, two.device_kernels - one.device_kernels


@pytest.fixture(scope="module")
def config() -> transformers.PretrainedConfig:
    fields = json.loads(CONFIG.read_text())
    return transformers.LlamaConfig(**{k: v for k, v in fields.items() if k != "architectures"})


@pytest.mark.slow
def test_prefill_512_layer(config: transformers.PretrainedConfig) -> None:
    """
    Prefill of 512 tokens: 3,799.7 µs against a sustained bound of 3,094.2 µs (the FLOPs;
    the compulsory bytes take 2,923.9 µs), 1.2280x in 10 kernels. SwiGLU's 14.7 MB result stays
    in LX for the down projection (`ktir.cores.handoff`: SwiGLU divided {m: 8, n: 4}, the down
    projection {m: 8, k: 4}; 3,946.3 µs, 1.2754x before). The cache of 512 positions is filled
    whole at the known positions 0..511, so each KV write is a copy of the new keys or values
    (the keys' fused into the rotary kernel), not a scatter of 4,096 rows (4,068.1 µs, 1.3147x
    in 11 kernels before that); `o_proj + residual` prefetches its output tiles' residual under
    attention. On `spyre-datasheet` it is 1.2688x its datasheet bound (no hand-off there). What
    is left above the bound is listed in docs/work-division.md.
    """
    reports = [prefill_program(config, n, 512).estimate() for n in (1, 2)]
    ratio, kernels = layer(*reports, SPYRE)
    assert kernels == 10
    assert ratio == pytest.approx(1.22800, abs=5e-4)
    assert ratio <= 1.25


@pytest.mark.slow
def test_one_token_layer(config: transformers.PretrainedConfig) -> None:
    """
    One token at context 2048: 3,000.6 µs against 2,964.1 µs (reading the layer's weights at
    150 GB/s), 1.0123x in 13 kernels; 1.0156x its datasheet bound on `spyre-datasheet`.
    """
    reports = [decode_program(config, n, context=2048).estimate() for n in (1, 2)]
    ratio, kernels = layer(*reports, SPYRE)
    assert kernels == 13
    assert ratio == pytest.approx(1.01230, abs=5e-4)
    assert ratio <= 1.05
