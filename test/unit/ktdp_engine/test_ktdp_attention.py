"""
Paged attention in ktdp (`test/lit/Inputs/ktdp/paged_attention.mlir`) on the simulated chip:
decode-style grouped-query attention over a paged KV cache, checked against NumPy in float32.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import ktir.ktdp_engine as ktdp
from ktir.hardware.target import SPYRE

KERNEL = Path(__file__).resolve().parents[2] / "lit" / "Inputs" / "ktdp" / "paged_attention.mlir"
TOKENS, HEADS, KV_HEADS, DIM, PAGES, PAGE, PAGES_PER_TOKEN = 8, 32, 8, 128, 64, 16, 8
PAD = PAGES - 1  # the physical page that pads every block table row past its context


def _inputs() -> dict[str, np.ndarray]:
    """
    Random q and caches; per-token context lengths from 1 to the full 128 (page edges on both
    sides); each token's pages are distinct physical pages, the rest of its row the pad page,
    whose keys and values are 100: a position past the context that leaked into the softmax
    would dominate it.
    """
    rng = np.random.default_rng(1234)
    lens = np.array([128, 1, 16, 17, 100, 64, 33, 127], np.int32)
    used = -(-lens // PAGE)
    physical = iter(rng.permutation(PAD))  # pages 0 .. 62, each used once
    table = np.full((TOKENS, PAGES_PER_TOKEN), PAD, np.int32)
    for token, count in enumerate(used):
        table[token, :count] = [next(physical) for _ in range(count)]
    key = rng.standard_normal((PAGES, PAGE, KV_HEADS, DIM)).astype(np.float16)
    value = rng.standard_normal((PAGES, PAGE, KV_HEADS, DIM)).astype(np.float16)
    key[PAD] = value[PAD] = 100
    q = rng.standard_normal((TOKENS, HEADS, DIM)).astype(np.float16)
    return {
        "q": q,
        "key_cache": key,
        "value_cache": value,
        "block_table": table,
        "context_lens": lens,
        "out": np.zeros_like(q),
    }


def _reference(arrays: dict[str, np.ndarray]) -> np.ndarray:
    """softmax(q K^T / sqrt(128)) V per token and query head, K and V its own positions only."""
    out = np.zeros((TOKENS, HEADS, DIM), np.float32)
    for token, length in enumerate(arrays["context_lens"]):
        positions = np.arange(length)
        pages = arrays["block_table"][token, positions // PAGE]
        key = arrays["key_cache"][pages, positions % PAGE].astype(np.float32)  # length x 8 x 128
        value = arrays["value_cache"][pages, positions % PAGE].astype(np.float32)
        for head in range(HEADS):
            kv = head // (HEADS // KV_HEADS)
            scores = key[:, kv] @ arrays["q"][token, head].astype(np.float32) / np.sqrt(DIM)
            weights = np.exp(scores - scores.max())
            out[token, head] = weights / weights.sum() @ value[:, kv]
    return out


def test_paged_attention_matches_numpy() -> None:
    arrays = _inputs()
    outputs, report = ktdp.run(KERNEL, "paged_attention", arrays)
    expected = _reference(arrays)
    # The kernel computes in f32 and rounds once to fp16: at most half an fp16 ulp, 2^-11
    # relative (2^-25 absolute among subnormals), plus f32 summation-order noise (~1e-6 of
    # max |v| ~ 5), well inside atol. A leaked pad position (100) or a wrong head, page, scale
    # or mask is off by 0.1 or more.
    np.testing.assert_allclose(outputs["out"].astype(np.float32), expected, rtol=2**-11, atol=1e-5)
    for name in ("q", "key_cache", "value_cache", "block_table", "context_lens"):
        np.testing.assert_array_equal(outputs[name], arrays[name])  # inputs read back unchanged

    (line,) = report.kernels
    assert line.cores == 32
    # q K^T and P V over the whole 128-position window (masked positions included), per token
    # and query head: 2 matmuls of 128 x 128 MACs.
    assert report.matmul_flops == 2 * (2 * TOKENS * HEADS * 128 * DIM)
    # Per token, in 128-byte sticks: its context length (1), one broadcast read for its 4 tiles;
    # then per tile and KV head its 4 query and 4 output rows (2 sticks each), the block table
    # row read for each gather (8 x i32, one stick), and the 16 positions x 2 sticks of each
    # distinct page of the token's keys and values: a gather moves the pad page once however
    # often its row repeats it.
    pages = np.array([len(np.unique(row)) for row in arrays["block_table"]])
    sticks = 1 + 4 * 2 * (4 * 2 + 4 * 2 + 2 * 1 + 2 * pages * PAGE * 2)
    assert line.bytes == sticks.sum() * SPYRE.stick_bytes
