"""
An fp32 matmul in the simulator. The PE arrays multiply fp16 (docs/hardware.md), so its operand
tiles are converted to fp16 on the SFU (one pass per element, every chunk), read as fp16, their
products summed in fp32 and stored in fp32; the PE arrays run at the fp16 rate.

Against the float64 oracle (`ktir.reference.run`, the exact product rounded once to f32), for
operands in fp16's normal range: |sim - ref| <= (2**-10 + (K + 1) * 2**-22) * (|x| @ |w|).
"""

from __future__ import annotations

from typing import cast

import numpy as np
import pytest
from helpers import compiled
from xdsl.dialects.builtin import IntegerAttr

import ktir
import ktir.reference
import ktir.sim
from ktir.cores.dataflow import best_schedule
from ktir.cores.iteration import iteration_space
from ktir.dialects.ktir import core
from ktir.hardware import cost_model
from ktir.hardware.target import SPYRE
from ktir.ir.context import make_context
from ktir.ir.diagnostics import parse_module
from ktir.ir.values import functions_of
from ktir.sim.compute import fused_cost


def matmul(m: int, k: int, n: int, element: str = "f32", hint: str = "", bias: bool = False) -> str:
    """`x @ w` (plus a bias `b`, which fuses with it) in graph-level ktir."""
    x, w, y = (f"tensor<{a}x{b}x{element}>" for a, b in ((m, k), (k, n), (m, n)))
    attributes = f" {{ktir.work_division_hint = {{{hint}}}}}" if hint else ""
    arguments = f"%x: {x}, %w: {w}" + (f", %b: {y}" if bias else "")
    body = f"  %y = ktir.matmul %x, %w{attributes} : {x}, {w} -> {y}\n"
    if bias:
        body += f"  %z = ktir.add %y, %b : {y}, {y} -> {y}\n  return %z : {y}\n"
    else:
        body += f"  return %y : {y}\n"
    return f"func.func @mm({arguments}) -> {y} {{\n{body}}}"


def kernel_of(module: object) -> core.KernelOp:
    (kernel,) = [op for op in module.walk() if isinstance(op, core.KernelOp)]  # type: ignore[attr-defined]
    return kernel


@pytest.mark.parametrize(
    ("k", "hint", "bias", "kernel"),
    [
        (64, "", False, "ktir.matmul"),
        (64, "", True, "ktir.fused"),  # the matmul runs inside a fused kernel
        (256, "m = 2 : i64, k = 2 : i64", False, "ktir.matmul"),  # K split: fp32 partials meet
    ],
)
def test_fp32_operands_are_read_as_fp16(k: int, hint: str, bias: bool, kernel: str) -> None:
    """
    1 + 2**-13 is an fp32 number that fp16 rounds to 1.0 (10 fraction bits): k of them times
    ones sum to exactly k + k * 2**-13 in fp32, and to exactly k read as fp16.
    """
    module = compiled(matmul(64, k, 64, hint=hint, bias=bias), 4)
    assert kernel_of(module).op_name.data == kernel
    x = np.full((64, k), 1 + 2.0**-13, np.float32)
    inputs = [x, np.ones((k, 64), np.float32)] + ([np.zeros((64, 64), np.float32)] if bias else [])
    (output,) = ktir.sim.simulate(module, inputs).outputs
    assert output.dtype == np.float32
    assert np.array_equal(output, np.full((64, 64), float(k), np.float32))


def random_operand(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    """fp32 values of magnitude in [0.5, 2) with random signs: fp16's normal range."""
    return (rng.uniform(0.5, 2.0, shape) * rng.choice([-1.0, 1.0], shape)).astype(np.float32)


@pytest.mark.parametrize(
    ("m", "k", "n", "hint"),
    [(128, 300, 200, ""), (256, 512, 1024, "m = 2 : i64, k = 2 : i64"), (100, 384, 200, "k = 2 : i64")],
)
def test_fp32_matmul_within_the_documented_bound(m: int, k: int, n: int, hint: str) -> None:
    """
    The simulator's result is the fp32 sum of the fp16-rounded operands' products, and within
    the documented bound of the float64 oracle on the fp32 operands.
    """
    text = matmul(m, k, n, hint=hint)
    graph, module = parse_module(make_context(), text), compiled(text, 4)
    rng = np.random.default_rng(m + k + n)
    x, w = random_operand(rng, (m, k)), random_operand(rng, (k, n))
    sim = ktir.sim.simulate(module, [x, w]).outputs[0].astype(np.float64)
    x16, w16 = (a.astype(np.float16).astype(np.float64) for a in (x, w))
    fp32_sum = k * 2.0**-23 * (np.abs(x16) @ np.abs(w16))
    assert np.all(np.abs(sim - x16 @ w16) <= fp32_sum)
    ref = ktir.reference.run(graph, [x, w])[0].astype(np.float64)
    bound = (2.0**-10 + (k + 1) * 2.0**-22) * (np.abs(x).astype(np.float64) @ np.abs(w).astype(np.float64))
    assert np.all(np.abs(sim - ref) <= bound)


def test_an_fp32_matmul_converts_its_tiles_on_the_sfu_and_multiplies_at_the_fp16_rate() -> None:
    """
    128 x 256 x 512 on 4 cores split {n: 4}: each core multiplies all of x by a 256 x 128 slice
    of w, 4.19 M MACs at full efficiency and the sustained 1.14e6 MAC/µs = 5,518.8 PE cycles in
    fp16 and in fp32; in fp32 it first
    converts 32,768 + 32,768 elements on the SFU: 65,536 / 8.8e3 per µs = 11,170.9 cycles.
    """
    reports = {}
    for element, dtype in (("f16", np.float16), ("f32", np.float32)):
        module = compiled(matmul(128, 256, 512, element, hint="n = 4 : i64"), 4)
        kernel = kernel_of(module)
        splits = {d: cast(IntegerAttr, v).value.data for d, v in kernel.work_division.data.items()}
        assert splits == {"m": 1, "n": 4, "k": 1}
        inputs = [np.ones((128, 256), dtype), np.ones((256, 512), dtype)]
        reports[element] = ktir.sim.simulate(module, inputs).report.kernels[0]
    f16, f32 = reports["f16"], reports["f32"]
    assert f16.busy[:, 1] == pytest.approx(np.full(4, 128 * 256 * 128 / 1.14e6 * 1500), rel=1e-12)  # pt
    assert f32.busy[:, 1] == pytest.approx(f16.busy[:, 1], rel=1e-12)
    conversions = [e for e in f32.events if e.label == "convert to fp16"]
    converted = sum(e.end - e.start for e in conversions)
    assert converted == pytest.approx(np.full(4, 65536 / 8800 * 1500), rel=1e-12)
    assert not [e for e in f16.events if e.label == "convert to fp16"]
    pe_starts = sorted(e.start[0] for e in f32.events if e.unit == "pt")
    assert all(c.end[0] <= pe for c, pe in zip(conversions, pe_starts, strict=True))  # then the PE reads
    assert f32.cycles > f16.cycles and f32.cycles >= f32.busy[0, 2]  # the SFU's work bounds it


def test_a_fused_fp32_matmul_charges_its_conversion() -> None:
    """In a fused kernel's chunk cost: a 64 x 128 and a 128 x 64 tile, 16,384 elements converted."""
    text = matmul(64, 128, 64, bias=True)
    module = parse_module(make_context(), text)
    op = next(o for o in module.walk() if o.name == "ktir.matmul")
    add = next(o for o in module.walk() if o.name == "ktir.add")
    trace = [(op, [(64, 128), (128, 64)], (64, 64)), (add, [(64, 64), (64, 64)], (64, 64))]
    pt, sfu, flops, matmul_flops = fused_cost(trace, SPYRE)
    assert pt == cost_model.pt_cycles(64 * 128 * 64, 64, SPYRE)
    assert sfu == pytest.approx((16384 + 4096) / 8800 * 1500, rel=1e-12)  # conversion, then the add
    assert flops == 2 * 64 * 128 * 64 + 16384 + 4096 and matmul_flops == 2 * 64 * 128 * 64


def test_the_work_division_model_counts_the_conversion() -> None:
    """The dataflow model's time for an fp32 matmul is within 5% of the simulated kernel's."""
    text = matmul(128, 256, 512)
    graph = parse_module(make_context(), text)
    ktir.run_pipeline(graph, "ktir-propagate-layouts,ktir-insert-restickify,ktir-pad-matmul")
    op = next(o for o in functions_of(graph)[0].body.block.ops if o.name == "ktir.matmul")
    space = iteration_space(op)
    assert space is not None
    schedule = best_schedule(space, 4, SPYRE.lx_usable_bytes, SPYRE)
    assert schedule is not None
    inputs = [np.ones((128, 256), np.float32), np.ones((256, 512), np.float32)]
    simulated = ktir.sim.simulate(compiled(text, 4), inputs).report.kernels[0].cycles
    assert schedule.cycles == pytest.approx(simulated, rel=0.05)
