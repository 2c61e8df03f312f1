"""The engine's vectorized paths give the reference executor's bits (ktir/sim/engine.py)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import compiled

from ktir.ir.context import make_context
from ktir.ir.diagnostics import parse_module
from ktir.reference import executor as reference
from ktir.sim import compute, engine, simulate

T, W = "tensor<256x512xf16>", "tensor<512xf16>"
ROW_WISE = f"""
func.func @f(%x: {T}, %w: {W}, %y: {T}) -> {T} {{
  %a = ktir.softmax %x dim 1 : {T} -> {T}
  %b = ktir.rms_norm %a weight %w : {W} normalized_shape [512] {{eps = 1.000000e-06 : f64}} : {T} -> {T}
  %c = ktir.mul %b, %w : {T}, {W} -> {T}
  %d = ktir.gelu %c : {T} -> {T}
  %e = ktir.add %d, %y : {T}, {T} -> {T}
  return %e : {T}
}}
"""


@pytest.mark.parametrize("cores", [4, 32])
def test_row_wise_ops_run_for_all_cores_at_once_bit_exactly(
    cores: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """softmax, rms_norm (its weight shared by all cores) and a broadcasting mul take the one-call path."""
    batched: list[str] = []
    original = compute.rows_at_once

    def counting(payload, maps, hosts):  # type: ignore[no-untyped-def]
        result = original(payload, maps, hosts)
        if result is not None:
            batched.append(payload.name)
        return result

    monkeypatch.setattr(engine, "rows_at_once", counting)
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(s).astype(np.float16) for s in ((256, 512), (512,), (256, 512))]
    (ours,) = simulate(compiled(ROW_WISE, cores, fuse=False), inputs).outputs
    (expected,) = reference.run(parse_module(make_context(), ROW_WISE), inputs)
    assert np.array_equal(ours, expected)
    assert batched == ["ktir.softmax", "ktir.rms_norm", "ktir.mul"]
    (fused,) = simulate(compiled(ROW_WISE, cores), inputs).outputs
    assert np.array_equal(fused, expected)
