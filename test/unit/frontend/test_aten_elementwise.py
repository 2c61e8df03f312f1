"""
The elementwise ATen ops added for the model zoo (ceil, sign, log1p, cos, sin, isinf, isnan,
isfinite, pow with a tensor exponent or a scalar base, clamp with tensor bounds): each imports
as ktir ops, runs on the reference executor and on the simulator, and matches eager.

The bound: PyTorch computes these in fp32 and rounds to fp16 once; the transcendental ones are
evaluated in float64 here, so an fp32 result may differ from PyTorch's vectorized one in the
last fp32 bit, which after rounding to fp16 is at most one fp16 ulp (and on the inputs below
was zero). Class tests, signs and roundings are exact. NaN must be where eager has NaN.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import torch
from helpers import compiled, fp16_ulp, run_both
from test_fx import op_names

import ktir
from ktir.frontend.fx import import_fx
from ktir.ir.context import make_context
from ktir.ir.diagnostics import parse_module
from ktir.reference import executor as reference


def _inputs() -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(11)
    x = torch.randn(8, 64, generator=generator).half() * 3
    y = torch.randn(8, 64, generator=generator).half()
    x[0, :4] = torch.tensor([0.0, -0.0, float("inf"), float("nan")]).half()
    y[0, 4] = 0.0
    return x, y


CASES: dict[str, tuple[Callable[[torch.Tensor, torch.Tensor], torch.Tensor], str]] = {
    "ceil": (lambda x, y: torch.ceil(x), "ktir.ceil"),
    "sign": (lambda x, y: torch.sign(x), "ktir.sign"),
    "log1p": (lambda x, y: torch.log1p(y.abs()), "ktir.log1p"),
    "cos": (lambda x, y: torch.cos(x.float() * 5), "ktir.cos"),
    "sin": (lambda x, y: torch.sin(x * 5), "ktir.sin"),
    "isinf": (lambda x, y: torch.isinf(x / y), "ktir.isinf"),
    "isnan": (lambda x, y: torch.isnan(x), "ktir.isnan"),
    # torch.export's decompositions rewrite isfinite as `x == x` and `|x| != inf`.
    "isfinite": (lambda x, y: torch.isfinite(x / y), "ktir.ne"),
    "pow_tensor": (lambda x, y: torch.pow(y.abs() + 0.25, x.clamp(-3, 3)), "ktir.powf"),
    "pow_scalar_base": (lambda x, y: torch.pow(0.7071, y * 4), "ktir.powf"),
    "clamp_tensor": (lambda x, y: torch.clamp(x, y, y + 1), "ktir.minimum"),
    "clamp_min_tensor": (lambda x, y: torch.clamp_min(x, y), "ktir.maximum"),
}


def _check(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype
    if want.dtype == np.bool_:
        np.testing.assert_array_equal(got, want)
        return
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isposinf(got), np.isposinf(want))
    np.testing.assert_array_equal(np.isneginf(got), np.isneginf(want))
    finite = np.isfinite(want)
    difference = np.abs(got[finite].astype(np.float64) - want[finite].astype(np.float64))
    assert np.all(difference <= fp16_ulp(want[finite]))


@pytest.mark.parametrize("name", list(CASES))
def test_imports_and_matches_eager_on_the_reference(name: str) -> None:
    fn, op = CASES[name]
    x, y = _inputs()
    assert op in op_names(import_fx(fn, (x, y)))
    (ours,), (eager,) = run_both(fn, x, y)
    _check(ours, eager)


@pytest.mark.parametrize("name", list(CASES))
def test_simulated_program_matches_eager(name: str) -> None:
    fn, _ = CASES[name]
    x, y = _inputs()
    program = ktir.compile(fn, (x, y))
    _check(program(x, y).numpy(), fn(x, y).numpy())
    assert program.report.total_cycles > 0
    assert not [k for k in program.report.kernels if "(host)" in k.op]


def test_sign_of_nan_and_negative_zero_is_zero_as_in_pytorch() -> None:
    x = torch.tensor([float("nan"), -0.0, 0.0, -2.5, 7.0]).half()
    (ours,), _ = run_both(torch.sign, x)
    np.testing.assert_array_equal(ours, np.float16([0, 0, 0, -1, 1]))


@pytest.mark.parametrize("op", ["isinf", "isnan", "isfinite"])
def test_float_class_ops_compile_and_simulate(op: str) -> None:
    """The class tests as IR (torch.export decomposes isfinite before ktir sees it)."""
    text = (
        "func.func @f(%x: tensor<8x64xf16>) -> tensor<8x64xi1> {\n"
        f"  %y = ktir.{op} %x : tensor<8x64xf16> -> tensor<8x64xi1>\n"
        "  return %y : tensor<8x64xi1>\n}"
    )
    x, y = _inputs()
    values = (x / y).numpy()
    module = parse_module(make_context(), text)
    (ref,) = reference.run(module, [values])
    (got,) = ktir.sim.simulate(compiled(text, cores=4), [values]).outputs
    np.testing.assert_array_equal(ref, got)
    np.testing.assert_array_equal(got, getattr(np, op)(values))


def test_class_tests_on_integers_are_constants() -> None:
    """PyTorch answers isinf/isfinite on integer tensors without looking at the values."""
    i = torch.arange(6, dtype=torch.int32).reshape(2, 3)
    ours, eager = run_both(lambda t: (torch.isinf(t), torch.isfinite(t)), i)
    for got, want in zip(ours, eager, strict=True):
        np.testing.assert_array_equal(got, want)
