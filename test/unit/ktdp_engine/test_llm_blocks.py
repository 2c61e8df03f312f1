"""
LLM building blocks of the ktdp corpus (`test/lit/Inputs/ktdp/`) on the ktdp engine, each against a
NumPy reference in float64 with seeded random inputs.

The tolerances follow from where each kernel rounds: a result computed in fp32 and rounded to fp16
once is within half an fp16 ulp of the exact value, 2^-11 relative for a normal number; the tests
allow 2^-10 (twice that), the rest covering fp32's own rounding in the sums, which is some 2^-13
times smaller.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import ktir.ktdp_engine as ktdp

KERNELS = Path(__file__).resolve().parents[2] / "lit" / "Inputs" / "ktdp"
HALF_ULP = 2.0**-11
"""Half an fp16 ulp, relative: the error of one rounding of an exact value to fp16."""


def _wide(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float64)


def test_decode_attention_p_at_v_with_grouped_kv_heads_matches_numpy() -> None:
    rng = np.random.default_rng(1)
    scores = rng.standard_normal((8, 256))
    p = np.exp(scores - scores.max(1, keepdims=True))
    p = (p / p.sum(1, keepdims=True)).astype(np.float16)
    v_cache = rng.standard_normal((256, 2, 64)).astype(np.float16)
    arrays = {"p": p, "v_cache": v_cache, "out": np.zeros((8, 64), np.float16)}
    outputs, report = ktdp.run(KERNELS / "decode_pv.mlir", "decode_pv", arrays)
    # Query heads 4 h .. 4 h + 3 read KV head h.
    expected = np.stack([_wide(p[h]) @ _wide(v_cache[:, h // 4]) for h in range(8)])
    # The fp16 products are summed in fp32 over 256 positions and rounded to fp16 once.
    np.testing.assert_allclose(_wide(outputs["out"]), expected, rtol=2 * HALF_ULP, atol=0)
    # Two heads x 256 positions x 64 per tile: every product counted once.
    assert report.matmul_flops == 2 * 8 * 256 * 64


def test_tensor_parallel_swiglu_with_a_reduce_scatter_matches_numpy() -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((16, 256)).astype(np.float16)
    w_gate, w_up, w_down = ((rng.standard_normal((256, 256)) / 16).astype(np.float16) for _ in range(3))
    arrays = {"x": x, "w_gate": w_gate, "w_up": w_up, "w_down": w_down, "out": np.zeros_like(x)}
    outputs, _ = ktdp.run(KERNELS / "swiglu_tp.mlir", "swiglu_tp", arrays)
    gate, up = _wide(x) @ _wide(w_gate), _wide(x) @ _wide(w_up)
    # The kernel rounds h to fp16 (the down projection's operand): the reference does too.
    h = (gate / (1 + np.exp(-gate)) * up).astype(np.float16)
    expected = _wide(h) @ _wide(w_down)
    # The output is rounded to fp16 once (2^-10 relative); atol: an element of h whose fp32 gate
    # and up round it to the other neighbour than float64's moves an output by ulp(h) |w_down|,
    # some 1e-5 at these scales (the partial sums cancel, so a relative bound alone is too tight).
    np.testing.assert_allclose(_wide(outputs["out"]), expected, rtol=2 * HALF_ULP, atol=1e-4)


def test_an_lx_fused_softmax_matches_numpy_and_reads_device_memory_once() -> None:
    rng = np.random.default_rng(3)
    x = (3 * rng.standard_normal((64, 256))).astype(np.float16)
    outputs, report = ktdp.run(KERNELS / "softmax_lx.mlir", "softmax_lx", {"x": x, "y": np.zeros_like(x)})
    e = np.exp(_wide(x) - _wide(x).max(1, keepdims=True))
    expected = e / e.sum(1, keepdims=True)
    # Computed in fp32 and rounded to fp16 once; atol: the smallest weights are fp16 subnormals,
    # whose ulp is 2^-24 absolute.
    np.testing.assert_allclose(_wide(outputs["y"]), expected, rtol=2 * HALF_ULP, atol=2.0**-24)
    # x crosses device memory once and y once; the three passes read the block from LX.
    assert report.kernels[0].bytes == 2 * x.nbytes
