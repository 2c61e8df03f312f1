"""`ktir-fuse`: which chains become one kernel, the remarks, and that fusion keeps the bits."""

from __future__ import annotations

import numpy as np
from helpers import compiled, fp16_ulp_at_largest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import func

import ktir
from ktir import reference
from ktir.dialects.ktir.core import ComputeOp, KernelOp
from ktir.dialects.ktir.structured import FusedOp
from ktir.hardware.target import SPYRE
from ktir.ir.context import make_context
from ktir.ir.diagnostics import Severity, collect_diagnostics, parse_module
from ktir.passes.fuse import fuse_function
from ktir.sim import simulate

UNARY = ["exp", "neg", "abs", "silu", "tanh", "sigmoid"]
BINARY = ["add", "mul", "sub", "maximum"]


def _chain(steps: list[tuple[str, int]], rows: int, cols: int) -> str:
    """x, w -> a chain of unary ops and binary ops with x, w (a broadcast row) or the last value."""
    t, row = f"tensor<{rows}x{cols}xf16>", f"tensor<{cols}xf16>"
    lines, last = [], "%x"
    for i, (name, operand) in enumerate(steps):
        if name in UNARY:
            lines.append(f"  %v{i} = ktir.{name} {last} : {t} -> {t}")
        else:
            other, other_type = [("%x", t), ("%w", row), (last, t)][operand]
            lines.append(f"  %v{i} = ktir.{name} {last}, {other} : {t}, {other_type} -> {t}")
        last = f"%v{i}"
    body = "\n".join(lines)
    return f"func.func @f(%x: {t}, %w: {row}) -> {t} {{\n{body}\n  return {last} : {t}\n}}"


@settings(max_examples=12, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(UNARY + BINARY), st.integers(0, 2)), min_size=2, max_size=6),
    st.sampled_from([(8, 64), (64, 128), (3, 100)]),
    st.sampled_from([1, 4, 32]),
)
def test_a_fused_chain_is_one_kernel_with_the_unfused_bits(steps, shape, cores) -> None:
    rows, cols = shape
    text = _chain(steps, rows, cols)
    rng = np.random.default_rng(0)
    inputs = [
        rng.standard_normal((rows, cols)).astype(np.float16),
        rng.standard_normal(cols).astype(np.float16),
    ]
    fused = simulate(compiled(text, cores), inputs)
    unfused = simulate(compiled(text, cores, fuse=False), inputs)
    (expected,) = reference.run(parse_module(make_context(), text), inputs)
    assert np.array_equal(fused.outputs[0], unfused.outputs[0], equal_nan=True)
    assert np.array_equal(fused.outputs[0], expected, equal_nan=True)
    assert [k.op.split("[")[0] for k in fused.report.kernels] == ["ktir.fused"]
    assert fused.report.traffic_ratio <= unfused.report.traffic_ratio


def test_remarks_name_the_producer_and_the_reason() -> None:
    module = parse_module(
        make_context(),
        """
func.func @f(%x: tensor<16x256xf16>, %w: tensor<256x64xf16>) -> (tensor<16x256xf16>, tensor<16x64xf16>) {
  %s = ktir.silu %x : tensor<16x256xf16> -> tensor<16x256xf16>
  %e = ktir.exp %s : tensor<16x256xf16> -> tensor<16x256xf16>
  %mm = ktir.matmul %s, %w : tensor<16x256xf16>, tensor<256x64xf16> -> tensor<16x64xf16>
  return %e, %mm : tensor<16x256xf16>, tensor<16x64xf16>
}
""",
    )
    ktir.run_pipeline(module, "ktir-propagate-layouts")
    function = next(op for op in module.ops if isinstance(op, func.FuncOp))
    with collect_diagnostics() as remarks:
        made = fuse_function(function, SPYRE, remarks=True)
    assert made == 0  # silu feeds the matmul too, and exp alone is one op
    assert [(r.severity, r.location.line if r.location else None) for r in remarks] == [(Severity.REMARK, 3)]
    assert "also read by 'ktir.matmul'" in remarks[0].message
    assert not any(isinstance(op, FusedOp) for op in function.walk())


EPILOGUE = """
func.func @f(%x: tensor<64x2048xf16>, %wg: tensor<2048x512xf16> {ktir.parameter = "wg"},
             %wu: tensor<2048x512xf16> {ktir.parameter = "wu"}) -> tensor<64x512xf16> {
  %g = ktir.matmul %x, %wg : tensor<64x2048xf16>, tensor<2048x512xf16> -> tensor<64x512xf16>
  %s = ktir.silu %g : tensor<64x512xf16> -> tensor<64x512xf16>
  %u = ktir.matmul %x, %wu : tensor<64x2048xf16>, tensor<2048x512xf16> -> tensor<64x512xf16>
  %m = ktir.mul %s, %u : tensor<64x512xf16>, tensor<64x512xf16> -> tensor<64x512xf16>
  return %m : tensor<64x512xf16>
}
"""


def test_a_matmul_epilogue_runs_after_k_is_summed() -> None:
    """
    SwiGLU's gate and up read one x: both products and the `silu * mul` epilogue are one kernel.
    Each K chunk loads x once and feeds both products, each into its own fp32 accumulator.
    """
    fused_module = compiled(EPILOGUE, 32)
    kernels = [op for op in fused_module.walk() if isinstance(op, KernelOp)]
    assert [k.op_name.data for k in kernels] == ["ktir.fused"]
    (epilogue,) = kernels
    assert "k" in {n for n, a in epilogue.work_division.data.items()}
    computes = [op for op in epilogue.walk() if isinstance(op, ComputeOp)]
    assert [c.unit.data for c in computes] == ["pt", "pt", "sfu"]  # K chunks, then the epilogue
    assert all(c.accumulate is not None for c in computes[:2])
    assert computes[0].ins[0] is computes[1].ins[0]  # one x tile for both products
    assert computes[0].outs[0] is not computes[1].outs[0]  # an accumulator each
    assert list(computes[2].ins) == [computes[0].outs[0], computes[1].outs[0]]
    rng = np.random.default_rng(1)
    inputs = [
        (rng.standard_normal(s) * 0.05).astype(np.float16) for s in ((64, 2048), (2048, 512), (2048, 512))
    ]
    fused = simulate(fused_module, inputs)
    unfused = simulate(compiled(EPILOGUE, 32, fuse=False), inputs)
    # K chunks of fp32 products summed by BLAS per tile: the order may depend on the tile shape
    # and the CPU, so the bound is one fp16 ulp of the largest output (measured: identical).
    difference = np.abs(fused.outputs[0].astype(np.float64) - unfused.outputs[0].astype(np.float64))
    assert difference.max() <= fp16_ulp_at_largest(unfused.outputs[0])
    assert fused.report.traffic_ratio < unfused.report.traffic_ratio
