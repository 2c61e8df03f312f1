"""
`ktir.sim` numerics against the NumPy reference executor (`ktir.reference.run` on the graph
before compilation), and run-to-run determinism of outputs and cycle counts.

Elementwise, data-movement and reduction graphs must be bit-identical to the reference, on
shapes that pad (70 columns fill two 64-lane sticks, 100 rows do not divide over 32 cores) and
on 64-multiple shapes. Matmuls accumulate in fp32 in another order than the reference, so they
are held to |sim - ref| <= ulp_fp16(ref) + K * 2**-23 * (|x| @ |w|).
"""

from __future__ import annotations

from typing import cast

import numpy as np
import pytest
from helpers import compiled as compile_graph
from helpers import fp16_ulp, matmul, t
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, TensorType
from xdsl.ir import Attribute

import ktir
import ktir.reference
import ktir.sim
from ktir.dialects.ktir import core
from ktir.ir.context import make_context
from ktir.ir.diagnostics import parse_module


def compile_pair(text: str, cores: int) -> tuple[ModuleOp, ModuleOp]:
    """(the graph module for the reference, the same module compiled for `cores` cores)."""
    return parse_module(make_context(), text), compile_graph(text, cores)


def random_inputs(graph: ModuleOp, seed: int) -> list[np.ndarray]:
    """Standard-normal fp16 arrays for the arguments of the graph's function."""
    rng = np.random.default_rng(seed)
    (function,) = [op for op in graph.walk() if isinstance(op, func.FuncOp)]
    shapes = [cast(TensorType[Attribute], arg.type).get_shape() for arg in function.body.block.args]
    return [rng.standard_normal(shape).astype(np.float16) for shape in shapes]


def graphs(rows: int, cols: int) -> dict[str, str]:
    """Elementwise, data-movement and reduction graphs on a rows x cols input."""
    x, xt, flat, col = t(f"{rows}x{cols}"), t(f"{cols}x{rows}"), t(f"{rows * cols}"), t(f"{rows}")
    return {
        "exp": f"%y = ktir.exp %x : {x} -> {x}\n  return %y : {x}",
        "add": f"%y = ktir.add %x, %z : {x}, {x} -> {x}\n  return %y : {x}",
        "abs": f"%y = ktir.abs %x : {x} -> {x}\n  return %y : {x}",
        "permute_exp": f"%p = ktir.permute %x perm [1, 0] : {x} -> {xt}\n"
        f"  %y = ktir.exp %p : {xt} -> {xt}\n  return %y : {xt}",
        # A permuted operand next to a plain one: a restickify kernel moves the data.
        "permute_add": f"%p = ktir.permute %x perm [1, 0] : {x} -> {xt}\n"
        f"  %y = ktir.add %p, %w : {xt}, {xt} -> {xt}\n  return %y : {xt}",
        "reshape_abs": f"%p = ktir.reshape %x : {x} -> {flat}\n"
        f"  %y = ktir.abs %p : {flat} -> {flat}\n  return %y : {flat}",
        "sum_last": f"%y = ktir.sum %x dims [1] : {x} -> {col}\n  return %y : {col}",
        # exp(0) = 1 in a padded lane would show up in the sum over the padded dim.
        "exp_sum_last": f"%e = ktir.exp %x : {x} -> {x}\n"
        f"  %y = ktir.sum %e dims [1] : {x} -> {col}\n  return %y : {col}",
    }


def function(body: str, rows: int, cols: int) -> str:
    """Wrap a body in @f(%x[, %z | %w]) with the result type of its return (%w is transposed)."""
    x = t(f"{rows}x{cols}")
    result = body.rsplit(": ", 1)[1]
    args = (
        f"%x: {x}"
        + (f", %z: {x}" if "%z" in body else "")
        + (f", %w: {t(f'{cols}x{rows}')}" if "%w" in body else "")
    )
    return f"func.func @f({args}) -> {result} {{\n  {body}\n}}"


CASES = [
    pytest.param(name, rows, cols, cores, id=f"{name}-{rows}x{cols}-{cores}cores")
    for rows, cols in [(100, 70), (128, 256)]
    for name in graphs(rows, cols)
    for cores in (4, 32)
]


@pytest.mark.parametrize(("name", "rows", "cols", "cores"), CASES)
def test_bit_identical_to_the_reference(name: str, rows: int, cols: int, cores: int) -> None:
    """Non-matmul graphs give exactly the reference's fp16 bits, with and without padding."""
    graph, compiled = compile_pair(function(graphs(rows, cols)[name], rows, cols), cores)
    inputs = random_inputs(graph, seed=rows + cols + cores)
    expected = ktir.reference.run(graph, inputs)
    result = ktir.sim.simulate(compiled, inputs)
    assert len(result.outputs) == len(expected) == 1
    assert result.outputs[0].dtype == expected[0].dtype
    assert result.outputs[0].shape == expected[0].shape
    assert np.array_equal(result.outputs[0], expected[0])
    assert any(k.cores > 0 for k in result.report.kernels)  # ran on the chip, not only views
    if name == "permute_add":
        assert "ktir.restickify" in [k.op for k in result.report.kernels]


def test_a_padded_add_leaks_nothing_into_the_host_output() -> None:
    """
    100 x 70 add on 4 and 32 cores: the 58 padding lanes of each row's second stick never reach
    the host, and inputs with NaN and inf in real lanes come out exactly as the reference's.
    """
    text = function(graphs(100, 70)["add"], 100, 70)
    for cores in (4, 32):
        graph, compiled = compile_pair(text, cores)
        x, z = random_inputs(graph, seed=cores)
        x[0, 69], z[99, 0], x[50, 64] = np.inf, np.nan, np.float16(65504)
        expected = ktir.reference.run(graph, [x, z])[0]
        output = ktir.sim.simulate(compiled, [x, z]).outputs[0]
        assert output.shape == (100, 70)
        assert np.array_equal(output, expected, equal_nan=True)
        assert np.isnan(output[99, 0]) and np.isposinf(output[0, 69])


def assert_within_matmul_bound(sim: np.ndarray, ref: np.ndarray, x: np.ndarray, w: np.ndarray) -> None:
    """|sim - ref| <= ulp_fp16(ref) + K * 2**-23 * (|x| @ |w|), in float64."""
    k = x.shape[-1]
    magnitude = np.abs(x.astype(np.float64)) @ np.abs(w.astype(np.float64))
    bound = fp16_ulp(ref) + k * 2.0**-23 * magnitude
    error = np.abs(sim.astype(np.float64) - ref.astype(np.float64))
    assert sim.dtype == np.float16 and sim.shape == ref.shape
    assert np.all(np.isfinite(sim))
    assert np.all(error <= bound), f"worst error/bound {float(np.max(error / bound)):.3g}"


@pytest.mark.parametrize(
    ("m", "k", "n", "hint"),
    [
        (128, 300, 200, ""),  # K and N padded to whole sticks
        (256, 512, 1024, ""),
        (256, 512, 1024, "m = 2 : i64, k = 2 : i64"),  # K split: ring reduction
        (100, 384, 200, "n = 2 : i64, k = 2 : i64"),
    ],
)
def test_matmul_within_the_fp32_accumulation_bound(m: int, k: int, n: int, hint: str) -> None:
    """fp16 matmul on 4 cores is within one fp16 ulp plus fp32 accumulation error of the reference."""
    graph, compiled = compile_pair(matmul(m, k, n, hint), 4)
    if hint:
        (kernel,) = [op for op in compiled.walk() if isinstance(op, core.KernelOp)]
        assert kernel.op_name.data == "ktir.matmul"
        splits = {name: cast(IntegerAttr, v).value.data for name, v in kernel.work_division.data.items()}
        assert splits["k"] == 2
    x, w = random_inputs(graph, seed=m + k + n)
    ref = ktir.reference.run(graph, [x, w])[0]
    sim = ktir.sim.simulate(compiled, [x, w]).outputs[0]
    assert_within_matmul_bound(sim, ref, x, w)


def test_padded_k_lanes_do_not_leak_into_a_matmul() -> None:
    """exp (exp(0) = 1 in padded lanes) feeding a matmul over its 70-long padded K."""
    x, w, y = t("100x70"), t("70x64"), t("100x64")
    text = (
        f"func.func @f(%x: {x}, %w: {w}) -> {y} {{\n  %e = ktir.exp %x : {x} -> {x}\n"
        f"  %y = ktir.matmul %e, %w : {x}, {w} -> {y}\n  return %y : {y}\n}}"
    )
    for cores in (4, 32):
        graph, compiled = compile_pair(text, cores)
        inputs = random_inputs(graph, seed=7)
        ref = ktir.reference.run(graph, inputs)[0]
        sim = ktir.sim.simulate(compiled, inputs).outputs[0]
        exp_x = np.exp(inputs[0].astype(np.float32)).astype(np.float16)
        assert_within_matmul_bound(sim, ref, exp_x, inputs[1])


def test_two_runs_are_identical() -> None:
    """
    A multi-kernel graph (padded exp, K-split matmul, sum) compiled twice and run twice gives
    bitwise-equal outputs and equal total, per-kernel and per-core cycles and bytes.
    """
    x, w, y, s = t("100x512"), t("512x256"), t("100x256"), t("100")
    text = (
        f"func.func @f(%x: {x}, %w: {w}) -> ({y}, {s}) {{\n  %e = ktir.exp %x : {x} -> {x}\n"
        f"  %y = ktir.matmul %e, %w {{ktir.work_division_hint = {{k = 2 : i64}}}} : {x}, {w} -> {y}\n"
        f"  %s = ktir.sum %y dims [1] : {y} -> {s}\n  return %y, %s : {y}, {s}\n}}"
    )
    runs = []
    for _ in range(2):
        graph, compiled = compile_pair(text, 4)
        inputs = random_inputs(graph, seed=3)
        runs.append(ktir.sim.simulate(compiled, inputs))
        runs.append(ktir.sim.simulate(compiled, inputs))  # the same module again
    first = runs[0]
    assert first.report.total_cycles > 0 and len(first.outputs) == 2
    assert any(k.busy[:, 3].any() for k in first.report.kernels)  # the K split reached the ring
    for other in runs[1:]:
        assert all(np.array_equal(a, b) for a, b in zip(first.outputs, other.outputs, strict=True))
        assert other.report.total_cycles == first.report.total_cycles
        assert [k.cycles for k in other.report.kernels] == [k.cycles for k in first.report.kernels]
        assert [k.bytes for k in other.report.kernels] == [k.bytes for k in first.report.kernels]
        for a, b in zip(first.report.kernels, other.report.kernels, strict=True):
            assert np.array_equal(a.busy, b.busy) and np.array_equal(a.finish, b.finish)
