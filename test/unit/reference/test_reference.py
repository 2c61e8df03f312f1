"""
The NumPy reference executor (`ktir.reference.run`), op by op, against float64 oracles.

Every graph-level op is run as a one-op module parsed from MLIR text. The precision contract
under test: f16 (and bf16) tensors are computed in fp32 and rounded once per op.

What each result is compared with (docs/reference.md, "How the reference is tested"):
- the float64 oracle (NumPy/SciPy, or PyTorch's functional form in float64) rounded once:
  every op with arithmetic, within a bound stated in ulps of the result type;
- eager PyTorch bit for bit, only where IEEE 754 or PyTorch's definition fixes every bit on
  every kernel: one add/sub/mul/div or abs/neg/floor/square/reciprocal, selections (relu,
  max/min, where, clamp, comparisons), conversions, integers, data movement and the ATen
  fallbacks themselves;
- eager sqrt and rsqrt within 1 fp16 ulp (every kernel is within a few fp32 ulps of exact);
- never eager transcendentals, reductions, matmul, softmax or norms: PyTorch picks their kernel
  by CPU (ATen's SLEEF/MKL code per capability, oneDNN for fp16 GELU on AVX512-FP16 CPUs), and
  those differ by several fp16 ulps and on special values (GELU(+inf) is inf or NaN).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
import scipy.special
import torch
import torch.nn.functional as F
from helpers import eager, fp16_ulp, in_fp32_once, torch_of
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp

from ktir.ir.context import make_context
from ktir.ir.diagnostics import parse_module, verify_module
from ktir.reference.executor import ExecutionError, run
from ktir.reference.precision import round_bf16

#### Helpers ####

CTX = make_context()

ELEMENT = {
    np.dtype(np.float16): "f16",
    np.dtype(np.float32): "f32",
    np.dtype(np.float64): "f64",
    np.dtype(np.int64): "i64",
    np.dtype(np.bool_): "i1",
}
TORCH_OF = {
    "f16": torch.float16,
    "bf16": torch.bfloat16,
    "f32": torch.float32,
    "i64": torch.int64,
    "i1": torch.bool,
}
ARG_NAMES = "abcdefgh"
Oracle = Callable[[np.ndarray], np.ndarray]
"""A float64 function of a float64 array: the exact meaning of an op, up to float64 rounding."""


def tensor(shape: Sequence[int], element: str) -> str:
    """`tensor((4, 8), "f16")` is `tensor<4x8xf16>`; a 0-d shape gives `tensor<f16>`."""
    return "tensor<" + "".join(f"{size}x" for size in shape) + element + ">"


def type_of(array: np.ndarray) -> str:
    """The MLIR tensor type of a NumPy array (bf16 has no NumPy dtype: pass its type explicitly)."""
    return tensor(array.shape, ELEMENT[array.dtype])


def build(op: str, arg_types: Sequence[str], result_types: Sequence[str]) -> ModuleOp:
    """
    A verified module `@f(%a, %b, ...)` whose body is `op` (written over `%a`, `%b`, ...) and which
    returns all of its results.
    """
    args = ", ".join(f"%{ARG_NAMES[i]}: {t}" for i, t in enumerate(arg_types))
    results = [f"%r{i}" for i in range(len(result_types))]
    text = (
        f"func.func @f({args}) -> ({', '.join(result_types)}) {{\n"
        f"  {', '.join(results)} = {op}\n"
        f"  func.return {', '.join(results)} : {', '.join(result_types)}\n"
        "}\n"
    )
    module = parse_module(CTX, text, "<test>")
    assert verify_module(module) == [], text
    return module


def run_op(op: str, *inputs: Any, result: str | Sequence[str], arg_types: Sequence[str] | None = None) -> Any:
    """Run one op on `inputs`; the result array (a list of arrays for several result types)."""
    types = list(arg_types) if arg_types is not None else [type_of(np.asarray(x)) for x in inputs]
    result_types = [result] if isinstance(result, str) else list(result)
    outputs = run(build(op, types, result_types), list(inputs))
    return outputs[0] if isinstance(result, str) else outputs


def assert_identical(actual: np.ndarray, expected: np.ndarray) -> None:
    """Same dtype, shape and bits (NaN matches NaN of any payload; -0.0 and 0.0 differ)."""
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if actual.dtype.kind != "f":
        np.testing.assert_array_equal(actual, expected)
        return
    nan = np.isnan(actual)
    np.testing.assert_array_equal(nan, np.isnan(expected))
    unsigned = np.dtype(f"uint{8 * actual.dtype.itemsize}")
    differ = actual.view(unsigned) != expected.view(unsigned)
    assert not (differ & ~nan).any(), (
        f"{int((differ & ~nan).sum())} elements differ, e.g. {actual[differ & ~nan][:4]} "
        f"vs {expected[differ & ~nan][:4]}"
    )


def _ordered(array: np.ndarray) -> np.ndarray:
    """fp16 values as integers that count fp16 steps from zero (+0.0 and -0.0 are both 0)."""
    bits = array.view(np.int16).astype(np.int32)
    return np.where(bits < 0, -(bits & 0x7FFF), bits)


def f16_ulps(actual: np.ndarray, expected: np.ndarray) -> int:
    """The largest distance in fp16 steps (ulps) between two fp16 arrays with NaN in the same places."""
    assert actual.dtype == expected.dtype == np.float16
    assert actual.shape == expected.shape
    nan = np.isnan(actual)
    np.testing.assert_array_equal(nan, np.isnan(expected))
    return int(np.abs(_ordered(actual[~nan]) - _ordered(expected[~nan])).max(initial=0))


def f16_grid(low: float, high: float) -> np.ndarray:
    """Every finite fp16 value in [low, high], in increasing bit order."""
    values = np.arange(-(2**15), 2**15, dtype=np.int32).astype(np.int16).view(np.float16)
    return values[np.isfinite(values) & (values >= low) & (values <= high)]


def rng() -> np.random.Generator:
    """A fresh fixed-seed generator, so every test sees the same inputs whatever runs first."""
    return np.random.default_rng(20240611)


def normal(
    shape: Sequence[int], dtype: Any = np.float16, scale: float = 1.0, offset: float = 0.0
) -> np.ndarray:
    """Normal random values (fixed seed) stored as `dtype`."""
    return (rng().standard_normal(tuple(shape)) * scale + offset).astype(dtype)


def positive(shape: Sequence[int], dtype: Any = np.float16) -> np.ndarray:
    """Log-uniform random values in [2^-10, 2^10] (fixed seed): the domain of log, sqrt, rsqrt, 1/x."""
    return np.exp2(rng().uniform(-10, 10, tuple(shape))).astype(dtype)


def test_helpers_can_fail() -> None:
    """The comparison helpers reject a one-ulp difference, a sign-of-zero change and a NaN mismatch."""
    one = np.array([1.0], np.float16)
    assert f16_ulps(one, np.nextafter(one, np.float16(2))) == 1
    assert f16_ulps(np.array([-0.0, 6e-8], np.float16), np.array([0.0, -6e-8], np.float16)) == 2
    with pytest.raises(AssertionError):
        assert_identical(np.array([0.0], np.float16), np.array([-0.0], np.float16))
    with pytest.raises(AssertionError):
        assert_identical(np.array([np.nan], np.float32), np.array([1.0], np.float32))
    with pytest.raises(AssertionError):
        assert_identical(np.array([1], np.int64), np.array([1.0], np.float64))


#### Unary ####

# Ops that are one IEEE 754 operation or a selection: the standard defines their result bit for
# bit, so the float64 oracle rounded once to the input's type is the exact answer (float64 holds
# abs, neg, relu, floor and square of an fp16 or fp32 exactly, and rounding 1/x or sqrt(x) first
# to float64 is innocuous: 53 >= 2 * 24 + 2 bits). Every PyTorch CPU kernel (scalar, AVX2,
# AVX-512, fp16 computed in fp32 or natively) gives these bits too, so eager is compared exactly.
EXACT_UNARY: list[tuple[str, Callable[[torch.Tensor], torch.Tensor], Oracle, bool]] = [
    ("abs", torch.abs, np.abs, False),
    ("neg", torch.neg, np.negative, False),
    ("relu", torch.relu, lambda d: np.maximum(d, 0.0), False),
    ("floor", torch.floor, np.floor, False),
    ("square", torch.square, np.square, False),
    ("reciprocal", torch.reciprocal, np.reciprocal, True),
]


def oracle_rounded(oracle: Oracle, x: np.ndarray) -> np.ndarray:
    """
    The float64 oracle on `x`, rounded once to `x`'s float type (NumPy rounds f64 -> f16 and
    f64 -> f32 directly, to nearest even). The oracle is NumPy/SciPy in float64: a few float64
    ulps from the exact value on every CPU, which moves an fp16 or fp32 rounding only for an
    exact value within ~2^-50 (relative) of a midpoint.
    """
    with np.errstate(all="ignore"):  # overflow, 1/0, log(-1), inf * 0: IEEE results wanted
        return oracle(x.astype(np.float64)).astype(x.dtype)


@pytest.mark.parametrize(
    ("name", "function", "oracle", "positive_only"), EXACT_UNARY, ids=[c[0] for c in EXACT_UNARY]
)
def test_exact_unary(
    name: str,
    function: Callable[[torch.Tensor], torch.Tensor],
    oracle: Oracle,
    positive_only: bool,
) -> None:
    x = positive((8, 64)) if positive_only else normal((8, 64), scale=50.0)
    x32 = x.astype(np.float32) * np.float32(1.0 + 2**-20)  # values with more than fp16's 11 bits
    for values in (x, x32):
        ours = run_op(
            f"ktir.{name} %a : {type_of(values)} -> {type_of(values)}", values, result=type_of(values)
        )
        assert_identical(ours, oracle_rounded(oracle, values))
        assert_identical(ours, eager(function, values))


@pytest.mark.parametrize(
    ("name", "function", "oracle"),
    [("sqrt", torch.sqrt, np.sqrt), ("rsqrt", torch.rsqrt, lambda d: 1 / np.sqrt(d))],
)
def test_sqrt_and_rsqrt_f16_are_correctly_rounded(
    name: str, function: Callable[[torch.Tensor], torch.Tensor], oracle: Oracle
) -> None:
    """
    Over every positive finite fp16 value, sqrt and rsqrt equal the correctly rounded result
    (the float64 oracle rounded once) bit for bit: fp32 has 24 >= 2*11 + 2 bits, so rounding
    sqrt or a division to fp32 and then to fp16 is innocuous.

    Eager PyTorch is not held to bits: its fp32 `sqrt` may be MKL's, which is not correctly
    rounded and picks its kernel by CPU (15 of 31744 values of `sqrt(x.float()).half()` were
    one ulp off on one machine), and `rsqrt` is `1 / sqrt` rounded twice. Every such kernel is
    within a few fp32 ulps of exact, far below half an fp16 ulp (2^12 fp32 ulps), so its fp16
    result is one of the two fp16 neighbours of the exact value: within 1 ulp of ours.
    fp32: sqrt is correctly rounded (2^-24 relative), rsqrt rounds twice (2^-23).
    """
    x = f16_grid(2**-24, 65504)
    ours = run_op(f"ktir.{name} %a : {type_of(x)} -> {type_of(x)}", x, result=type_of(x))
    assert_identical(ours, oracle_rounded(oracle, x))
    assert f16_ulps(ours, eager(function, x)) <= 1
    x32 = positive((8, 64), np.float32)
    ours32 = run_op(f"ktir.{name} %a : {type_of(x32)} -> {type_of(x32)}", x32, result=type_of(x32))
    exact = oracle(x32.astype(np.float64))
    assert np.all(np.abs(ours32 - exact) <= 2**-23 * exact)


def _softplus64(beta: float, threshold: float) -> Oracle:
    return lambda d: np.where(beta * d > threshold, d, np.log1p(np.exp(beta * d)) / beta)


def _gelu64(d: np.ndarray) -> np.ndarray:
    return 0.5 * d * (1.0 + scipy.special.erf(d / math.sqrt(2.0)))


def _gelu_tanh64(d: np.ndarray) -> np.ndarray:
    return 0.5 * d * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (d + 0.044715 * d**3)))


# (name, op text after the operand, float64 oracle, input range on the exhaustive fp16 grid,
# fp16 ulps allowed from the oracle rounded once). The oracles are PyTorch's documented
# formulas in float64 (NumPy/SciPy). Our fp32 kernels (NumPy's, whichever SIMD variant the CPU
# gets, or float64 for softplus) are a few fp32 ulps from exact, and an fp16 ulp is 2^13 fp32
# ulps, so fp32-then-round can only land on the other side of an fp16 midpoint: 1 ulp. GELU's
# contract computes `1 + erf(x / sqrt 2)` in fp32, which cancels for x < -2.9 (erf near -1):
# up to 2 ulps there (measured: 331 values, all with x in [-5.8, 0.0014]).
TRANSCENDENTAL: list[tuple[str, str, Oracle, tuple[float, float], int]] = [
    ("exp", "ktir.exp %a", np.exp, (-17.0, 11.0), 1),
    ("log", "ktir.log %a", np.log, (2**-14, 65504.0), 1),
    ("sigmoid", "ktir.sigmoid %a", lambda d: 1 / (1 + np.exp(-d)), (-18.0, 18.0), 1),
    ("tanh", "ktir.tanh %a", np.tanh, (-10.0, 10.0), 1),
    ("silu", "ktir.silu %a", lambda d: d / (1 + np.exp(-d)), (-18.0, 18.0), 1),
    ("gelu", "ktir.gelu %a", _gelu64, (-8.0, 8.0), 2),
    ("gelu_none", 'ktir.gelu %a {approximate = "none"}', _gelu64, (-8.0, 8.0), 2),
    ("softplus", "ktir.softplus %a", _softplus64(1.0, 20.0), (-18.0, 30.0), 1),
    (
        "softplus_beta_threshold",
        "ktir.softplus %a {beta = 2.0 : f64, threshold = 5.0 : f64}",
        _softplus64(2.0, 5.0),
        (-9.0, 9.0),
        1,
    ),
    ("softplus_beta_half", "ktir.softplus %a {beta = 0.5 : f64}", _softplus64(0.5, 20.0), (-30.0, 60.0), 1),
]
# Eager PyTorch is not an oracle for these ops. Its kernels differ by CPU beyond any bound worth
# testing: fp16 GELU goes through oneDNN on CPUs with AVX512-FP16 (whatever
# ATEN_CPU_CAPABILITY says) and there gives NaN for +inf, 2^-24 for GELU(2^-24) and values 6
# fp16 ulps from ATen's in the negative tail; fp32 erf, exp, log and tanh may be MKL's, whose
# code path depends on the CPU vendor.


@pytest.mark.parametrize(
    ("name", "op", "oracle", "domain", "ulps"), TRANSCENDENTAL, ids=[c[0] for c in TRANSCENDENTAL]
)
def test_transcendental_f16_within_one_ulp(
    name: str, op: str, oracle: Oracle, domain: tuple[float, float], ulps: int
) -> None:
    """Against the float64 oracle rounded once: `ulps` (1; 2 for GELU) on every finite fp16 of the domain."""
    x = f16_grid(*domain)
    with np.errstate(over="ignore"):  # exp overflows in softplus' unselected branch
        ours = run_op(f"{op} : {type_of(x)} -> {type_of(x)}", x, result=type_of(x))
    assert f16_ulps(ours, oracle_rounded(oracle, x)) <= ulps


@pytest.mark.parametrize(
    ("name", "op", "oracle", "domain", "ulps"), TRANSCENDENTAL, ids=[c[0] for c in TRANSCENDENTAL]
)
def test_transcendental_f32(
    name: str, op: str, oracle: Oracle, domain: tuple[float, float], ulps: int
) -> None:
    """
    fp32 is computed in fp32: against the float64 oracle, rtol 2^-20 (8 fp32 ulps; NumPy's
    fp32 kernels are documented within 4). GELU adds an absolute 2^-23 * max(1, |x|): its
    fp32 `1 + erf` cancels in the negative tail, losing up to |x| / 2 * 2^-24.
    """
    low, high = domain
    x = rng().uniform(max(low, -12.0), min(high, 12.0), (16, 64)).astype(np.float32)
    ours = run_op(f"{op} : {type_of(x)} -> {type_of(x)}", x, result=type_of(x)).astype(np.float64)
    with np.errstate(over="ignore"):
        expected = oracle(x.astype(np.float64))
    atol = 2**-23 * np.maximum(1.0, np.abs(x)) if name.startswith("gelu") else 0.0
    assert np.all(np.abs(ours - expected) <= 2**-20 * np.abs(expected) + atol)


def test_softplus_is_computed_in_float64() -> None:
    """
    Softplus' `log1p(exp(beta * x)) / beta` is evaluated in float64 from the fp32 product and
    rounded to fp32 (then to the result type), so its bits do not depend on which SIMD kernel
    NumPy picks for fp32 `log1p` and `exp` on this CPU (they did: one fp16 value of the grid
    below and ~60 of 1024 fp32 values changed between NumPy's AVX2 and AVX-512 kernels).
    The selection `beta * x > threshold` stays in the compute precision, as in PyTorch.
    """
    beta, threshold = 2.0, 5.0
    op = "ktir.softplus %a {beta = 2.0 : f64, threshold = 5.0 : f64}"
    for x in (f16_grid(-9.0, 9.0), rng().uniform(-12.0, 12.0, (16, 64)).astype(np.float32)):
        ours = run_op(f"{op} : {type_of(x)} -> {type_of(x)}", x, result=type_of(x))
        scaled = x.astype(np.float32) * np.float32(beta)
        smooth = (np.log1p(np.exp(scaled.astype(np.float64))) / beta).astype(np.float32)
        expected = np.where(scaled > threshold, x.astype(np.float32), smooth).astype(x.dtype)
        assert_identical(ours, expected)


def test_gelu_tanh() -> None:
    """
    Tanh-GELU against its float64 formula: within 1 fp16 ulp of the oracle rounded once for
    |x| <= 3.5. In the negative tail the contract computes `1 + tanh(u)` in fp32 with tanh(u)
    within 2^-24 of -1, losing up to 0.5 * |x| * 2^-24 absolutely (measured: 3 ulps at
    x = -4.45). Tolerance there: 1 ulp + |x| * 2^-24 (measured excess at most 0.38 * |x| * 2^-24).
    fp32: the same absolute term plus rtol 2^-20 (measured excess 0.49 * |x| * 2^-24).
    """
    op = 'ktir.gelu %a {approximate = "tanh"}'
    x = f16_grid(-12.0, 12.0)
    ours = run_op(f"{op} : {type_of(x)} -> {type_of(x)}", x, result=type_of(x))
    expected = oracle_rounded(_gelu_tanh64, x)
    core = np.abs(x) <= 3.5
    assert f16_ulps(ours[core], expected[core]) <= 1
    error = np.abs(ours.astype(np.float64) - expected.astype(np.float64))
    assert np.all(error <= fp16_ulp(expected) + np.abs(x.astype(np.float64)) * 2**-24)
    x32 = rng().uniform(-12, 12, (16, 64)).astype(np.float32)
    ours32 = run_op(f"{op} : {type_of(x32)} -> {type_of(x32)}", x32, result=type_of(x32)).astype(np.float64)
    exact = _gelu_tanh64(x32.astype(np.float64))
    assert np.all(np.abs(ours32 - exact) <= 2**-20 * np.abs(exact) + np.abs(x32) * 2**-24)


SPECIAL = np.array(
    [0.0, -0.0, np.inf, -np.inf, np.nan, 1, -1, 65504, -65504, 6e-8, -6e-8, 2.5, -2.5], np.float16
)
"""±0, ±inf, NaN, ±1, the largest fp16, the smallest subnormal (2^-24) and ±2.5."""


def _special_cases() -> list[tuple[str, str, Oracle, int]]:
    """(name, op text, float64 oracle, fp16 ulps allowed on finite non-zero inputs) of every unary op."""
    exact = [(name, f"ktir.{name} %a", oracle, 0) for name, _, oracle, _ in EXACT_UNARY]
    exact.append(("sqrt", "ktir.sqrt %a", np.sqrt, 0))
    return exact + [(name, op, oracle, ulps) for name, op, oracle, _, ulps in TRANSCENDENTAL]


SPECIAL_CASES = _special_cases()


@pytest.mark.parametrize(("name", "op", "oracle", "ulps"), SPECIAL_CASES, ids=[c[0] for c in SPECIAL_CASES])
def test_special_values_of_unary_ops(name: str, op: str, oracle: Oracle, ulps: int) -> None:
    """
    On ±0, ±inf and NaN inputs the result is the float64 oracle's IEEE 754 result exactly (NaN
    where it is NaN: gelu(-inf) and silu(-inf) are `-inf * 0` in PyTorch's formulas); on the
    finite non-zero inputs it is within the op's ulps of the oracle rounded once (GELU of the
    smallest subnormal: the exact value rounds up to 2^-24, the fp32 contract gives 0).
    Signed zeros are compared as values: relu(-0.0) is +0.0 here and -0.0 in PyTorch (the
    executor does not pin the sign of a zero result of relu, clamp, maximum or minimum).

    Not compared with eager: PyTorch's kernels disagree with each other on these values
    (fp16 GELU(+inf) is inf in ATen and NaN in oneDNN, which CPUs with AVX512-FP16 use).
    """
    with np.errstate(all="ignore"):
        ours = run_op(f"{op} : {type_of(SPECIAL)} -> {type_of(SPECIAL)}", SPECIAL, result=type_of(SPECIAL))
    expected = oracle_rounded(oracle, SPECIAL)
    special = ~np.isfinite(SPECIAL) | (SPECIAL == 0)
    np.testing.assert_array_equal(ours[special], expected[special], err_msg=name)
    assert f16_ulps(ours[~special], expected[~special]) <= ulps, (ours, expected)


def test_integer_unary_ops() -> None:
    x = rng().integers(-100, 100, (4, 16))
    for name, function in [
        ("abs", torch.abs),
        ("neg", torch.neg),
        ("relu", torch.relu),
        ("floor", torch.floor),
        ("square", torch.square),
    ]:
        assert_identical(
            run_op(f"ktir.{name} %a : {type_of(x)} -> {type_of(x)}", x, result=type_of(x)), eager(function, x)
        )


def test_logical_not() -> None:
    f = np.array([0.0, -0.0, 1.0, np.nan, -2.5, np.inf], np.float16)
    i = np.array([0, 3, -1, 0], np.int64)
    b = np.array([[True, False], [False, False]])
    for x in (f, i, b):
        result = tensor(x.shape, "i1")
        assert_identical(
            run_op(f"ktir.logical_not %a : {type_of(x)} -> {result}", x, result=result),
            eager(torch.logical_not, x),
        )


CONVERSIONS: list[tuple[str, np.ndarray, str]] = [
    ("f16_to_f32", np.array([0.0, -0.0, 1.5, -65504, 6e-8, np.inf, np.nan], np.float16), "f32"),
    ("f32_to_f16", np.array([0.1, -1 / 3, 65519.0, 65520.0, 1e5, -1e-8, 3e-5, np.nan], np.float32), "f16"),
    ("f64_to_f16_double_rounding", np.array([1 + 2**-11 + 2**-30, -0.1, 2.0**-25 * 1.0000001]), "f16"),
    ("f16_to_i64", np.array([2.75, -2.75, 0.5, -0.5, -0.0, 1000.9, -65504], np.float16), "i64"),
    ("f32_to_i64", np.array([1e9 + 0.5, -7.99999, 0.9999999, -3.0], np.float32), "i64"),
    ("f16_to_i1", np.array([0.0, -0.0, 6e-8, -1.0, np.nan, np.inf], np.float16), "i1"),
    ("f32_to_i1", np.array([0.0, -0.0, 1e-45, -3.0, np.nan], np.float32), "i1"),
    ("i64_to_f16", np.array([0, -1, 2049, 2051, 65504, 65519, 65520, -70000]), "f16"),
    ("i64_to_f32", np.array([0, -7, 2**24 + 1, 2**24 + 3, -(2**40) - 1]), "f32"),
    ("i64_to_i1", np.array([0, -7, 1, 2**40]), "i1"),
    ("i1_to_f16", np.array([True, False, True]), "f16"),
    ("i1_to_f32", np.array([True, False]), "f32"),
    ("i1_to_i64", np.array([False, True]), "i64"),
]


@pytest.mark.parametrize(("name", "x", "element"), CONVERSIONS, ids=[c[0] for c in CONVERSIONS])
def test_convert(name: str, x: np.ndarray, element: str) -> None:
    """
    `ktir.convert` is `Tensor.to(dtype)`, bit for bit: round to nearest even between floats
    (f64 -> f16 through f32, as PyTorch does), truncation toward zero from float to int,
    non-zero (NaN included) to true.
    """
    result = tensor(x.shape, element)
    with np.errstate(over="ignore"):
        ours = run_op(f"ktir.convert %a : {type_of(x)} -> {result}", x, result=result)
    assert_identical(ours, torch_of(x).to(TORCH_OF[element]).numpy())


#### Binary with broadcasting ####

BINARY: list[tuple[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]]] = [
    ("add", torch.add),
    ("sub", torch.sub),
    ("mul", torch.mul),
    ("div", torch.div),
    ("maximum", torch.maximum),
    ("minimum", torch.minimum),
]
BROADCASTS = [((4, 1, 8), (3, 8)), ((2, 3, 8), (8,)), ((1,), (5, 8)), ((6, 8), (6, 8)), ((), (2, 4))]


def _binary(name: str, a: np.ndarray, b: np.ndarray, element: str | None = None) -> np.ndarray:
    shape = np.broadcast_shapes(a.shape, b.shape)
    result = tensor(shape, element or ELEMENT[a.dtype])
    return run_op(f"ktir.{name} %a, %b : {type_of(a)}, {type_of(b)} -> {result}", a, b, result=result)


@pytest.mark.parametrize(("name", "function"), BINARY, ids=[c[0] for c in BINARY])
@pytest.mark.parametrize(("lhs", "rhs"), BROADCASTS)
def test_binary_float(
    name: str,
    function: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    lhs: tuple[int, ...],
    rhs: tuple[int, ...],
) -> None:
    """One IEEE op or a selection: f16 and f32 bit-exact against eager PyTorch."""
    generator = rng()
    a = (generator.standard_normal(lhs) * 8).astype(np.float16)
    b = (generator.standard_normal(rhs) * 8).astype(np.float16)
    ours = _binary(name, a, b)
    assert_identical(ours, eager(function, a, b))
    assert_identical(ours, in_fp32_once(function, a, b))
    a32, b32 = a.astype(np.float32) / 3, b.astype(np.float32) / 7
    assert_identical(_binary(name, a32, b32), eager(function, a32, b32))


@pytest.mark.parametrize(("name", "function"), BINARY, ids=[c[0] for c in BINARY])
def test_binary_special_values(
    name: str, function: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
) -> None:
    """
    All pairs of ±0, ±inf, NaN, ±65504 and small values: bit-exact (NaN propagates in max/min),
    except that maximum/minimum of +0.0 and -0.0 may return either zero: NumPy's choice depends
    on its kernel (contiguous or broadcast), PyTorch's is fixed, so zeros are compared by value.
    """
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 65504, -65504, 6e-8, 1.0, -2.5], np.float16)
    a, b = specials[:, None], specials[None, :]
    with np.errstate(all="ignore"):
        ours = _binary(name, a, b)
    expected = eager(function, a, b)
    if name in ("maximum", "minimum"):
        ours, expected = _zero_without_sign(ours), _zero_without_sign(expected)
    assert_identical(ours, expected)


def _zero_without_sign(array: np.ndarray) -> np.ndarray:
    return np.where(array == 0, np.zeros((), array.dtype), array)


@pytest.mark.parametrize(
    ("name", "function"), [c for c in BINARY if c[0] != "div"], ids=[c[0] for c in BINARY if c[0] != "div"]
)
def test_binary_integer(name: str, function: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> None:
    generator = rng()
    a, b = generator.integers(-1000, 1000, (4, 1, 8)), generator.integers(-1000, 1000, (3, 8))
    assert_identical(_binary(name, a, b), eager(function, a, b))


COMPARISONS: list[tuple[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]]] = [
    ("eq", torch.eq),
    ("ne", torch.ne),
    ("lt", torch.lt),
    ("le", torch.le),
    ("gt", torch.gt),
    ("ge", torch.ge),
    ("logical_and", torch.logical_and),
]


@pytest.mark.parametrize(("name", "function"), COMPARISONS, ids=[c[0] for c in COMPARISONS])
def test_comparisons(name: str, function: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> None:
    """Comparisons and logical_and give i1 with broadcasting; inputs hold ties, zeros and NaN."""
    generator = rng()
    values = np.array([-1.5, -0.0, 0.0, 0.5, 2.0, np.nan, np.inf], np.float16)
    cases = [
        (generator.choice(values, (4, 1, 8)), generator.choice(values, (3, 8))),
        (generator.integers(-2, 3, (5, 8)), generator.integers(-2, 3, (8,))),
        (generator.integers(0, 2, (4, 8)).astype(bool), generator.integers(0, 2, (1, 8)).astype(bool)),
    ]
    for a, b in cases:
        ours = _binary(name, a, b, element="i1")
        assert_identical(ours, eager(function, a, b))
        assert ours.any() and not ours.all()


POWERS = [2.0, 3.0, 0.5, -1.0, 0.0, 1.0, 1.5, -0.5, -2.0, 2.5]


@pytest.mark.parametrize("exponent", POWERS)
def test_pow(exponent: float) -> None:
    """
    Over every positive finite fp16 value: within 1 fp16 ulp of the float64 oracle `x ** e`
    rounded once, and bit-exact for exponents 2, 3, 0, 1, -1 and 0.5 (x*x and x*x*x are exact
    in float64 and singly rounded from fp32, 1/x and sqrt are correctly rounded). Negative bases
    are checked too (NaN for the fractional exponents, as in PyTorch). fp32: rtol 2^-21 (a
    powf within 2 fp32 ulps). Not compared with eager: PyTorch's pow kernel for a general
    exponent is a transcendental one whose last bits depend on the kernel the CPU gets.
    """

    def power(d: np.ndarray) -> np.ndarray:
        return np.power(d, exponent)

    for x in (f16_grid(2**-24, 65504), normal((8, 64), scale=4.0)):
        with np.errstate(over="ignore", invalid="ignore"):
            op = f"ktir.pow %a {{exponent = {exponent!r} : f64}} : {type_of(x)} -> {type_of(x)}"
            ours = run_op(op, x, result=type_of(x))
        expected = oracle_rounded(power, x)
        assert f16_ulps(ours, expected) <= 1
        if exponent in (2.0, 3.0, 0.0, 1.0, -1.0, 0.5):
            assert_identical(ours, expected)
    x32 = positive((8, 64), np.float32)
    op32 = f"ktir.pow %a {{exponent = {exponent!r} : f64}} : {type_of(x32)} -> {type_of(x32)}"
    ours32 = run_op(op32, x32, result=type_of(x32))
    np.testing.assert_allclose(ours32, power(x32.astype(np.float64)), rtol=2**-21)


def test_where() -> None:
    generator = rng()
    condition = generator.integers(0, 2, (4, 1)).astype(bool)
    lhs = normal((4, 8))
    rhs = np.array([-np.inf], np.float16)
    result = tensor((4, 8), "f16")
    op = f"ktir.where %a, %b, %c : {type_of(condition)}, {type_of(lhs)}, {type_of(rhs)} -> {result}"
    ours = run_op(op, condition, lhs, rhs, result=result)
    assert_identical(ours, eager(torch.where, condition, lhs, rhs))
    assert np.isinf(ours).any() and np.isfinite(ours).any()
    i_lhs, i_rhs = generator.integers(-5, 5, (8,)), generator.integers(-5, 5, (3, 1, 8))
    c = generator.integers(0, 2, (4, 1)).astype(bool)
    result = tensor((3, 4, 8), "i64")
    op = f"ktir.where %a, %b, %c : {type_of(c)}, {type_of(i_lhs)}, {type_of(i_rhs)} -> {result}"
    assert_identical(run_op(op, c, i_lhs, i_rhs, result=result), eager(torch.where, c, i_lhs, i_rhs))


CLAMPS = [(-0.1, None), (None, 0.3), (-1.0, 1.0), (1 + 2**-11 + 2**-30, None)]


@pytest.mark.parametrize(("low", "high"), CLAMPS)
def test_clamp(low: float | None, high: float | None) -> None:
    """
    Bit-exact against eager `torch.clamp` in f16 and f32 with f64 bounds (a bound is rounded
    to f16 the way PyTorch does, through f32: 1 + 2^-11 + 2^-30 clamps to 1.0). NaN stays NaN.
    """
    entries = [f"{k} = {v!r} : f64" for k, v in (("min", low), ("max", high)) if v is not None]
    bounds = f" {{{', '.join(entries)}}}"
    x = np.concatenate([normal((64,)), np.array([np.nan, np.inf, -np.inf, 1.0, 1.00097656], np.float16)])
    for values in (x, x.astype(np.float32) / 3):
        ours = run_op(
            f"ktir.clamp %a{bounds} : {type_of(values)} -> {type_of(values)}", values, result=type_of(values)
        )
        assert_identical(ours, eager(lambda t: torch.clamp(t, low, high), values))
    i = rng().integers(-5, 5, (16,))
    ours = run_op(
        f"ktir.clamp %a {{min = -2.0 : f64, max = 3.0 : f64}} : {type_of(i)} -> {type_of(i)}",
        i,
        result=type_of(i),
    )
    assert_identical(ours, eager(lambda t: torch.clamp(t, -2, 3), i))


FULLS: list[tuple[str, float, str]] = [
    ("0xFFF0000000000000", -np.inf, "f16"),
    ("0x7FF0000000000000", np.inf, "f32"),
    ("-1.250000e-01", -0.125, "f16"),
    ("-0.1", -0.1, "f16"),
    (repr(1 + 2**-11 + 2**-30), 1 + 2**-11 + 2**-30, "f16"),  # f64 -> f32 -> f16 rounds to 1.0
    ("0.1", 0.1, "f32"),
    ("2.7", 2.7, "i64"),
    ("-2.7", -2.7, "i64"),
    ("0.5", 0.5, "i1"),
    ("0.0", 0.0, "i1"),
    ("0.1", 0.1, "bf16"),
]


@pytest.mark.parametrize(("literal", "value", "element"), FULLS)
def test_full(literal: str, value: float, element: str) -> None:
    """`ktir.full` equals `torch.full(shape, value, dtype=...)`, including -inf, ints and bools."""
    result = tensor((2, 3), element)
    ours = run_op(f"ktir.full {literal} : {result}", result=result)
    expected = torch.full((2, 3), value, dtype=TORCH_OF[element])
    assert_identical(ours, expected.float().numpy() if element == "bf16" else expected.numpy())


#### Matmul ####

MATMULS = [
    ("matmul", (16, 64), (64, 32)),
    ("matmul", (3, 16, 64), (64, 32)),
    ("bmm", (3, 16, 64), (3, 64, 8)),
    ("bmm", (2, 3, 16, 64), (2, 3, 64, 8)),
    ("bmm", (3, 16, 64), (64, 32)),
]


@pytest.mark.parametrize(("name", "x_shape", "y_shape"), MATMULS)
def test_matmul(name: str, x_shape: tuple[int, ...], y_shape: tuple[int, ...]) -> None:
    """
    Against the exact product: f16 is the float64 product rounded to fp16, bit for bit (the
    products of fp16 values and, for these inputs, their sums are exact in float64: checked
    equal to `math.fsum`, so no summation order changes a bit). f32: within half an fp32 ulp of
    the float64 product plus 2^-48 * sum_k |x||y| for float64's own rounding of the sums.

    Not compared with eager: PyTorch's fp16 and fp32 matmuls accumulate in fp32 in an order
    that depends on the BLAS/oneDNN kernel the CPU gets, so near-cancelling elements move by
    several fp16 ulps between machines.
    """
    generator = rng()
    x = generator.standard_normal(x_shape).astype(np.float16)
    y = generator.standard_normal(y_shape).astype(np.float16)
    exact = np.matmul(x.astype(np.float64), y.astype(np.float64))
    result = tensor(exact.shape, "f16")
    ours = run_op(f"ktir.{name} %a, %b : {type_of(x)}, {type_of(y)} -> {result}", x, y, result=result)
    assert_identical(ours, exact.astype(np.float16))
    x32 = x.astype(np.float32) + generator.standard_normal(x_shape).astype(np.float32) * 1e-3
    y32 = y.astype(np.float32)
    result = tensor(exact.shape, "f32")
    ours32 = run_op(
        f"ktir.{name} %a, %b : {type_of(x32)}, {type_of(y32)} -> {result}", x32, y32, result=result
    )
    exact32 = np.matmul(x32.astype(np.float64), y32.astype(np.float64))
    magnitude = np.matmul(np.abs(x32.astype(np.float64)), np.abs(y32.astype(np.float64)))
    assert np.all(np.abs(ours32 - exact32) <= 2**-24 * np.abs(exact32) + 2**-48 * magnitude)


#### Reductions, softmax, norms ####

# Our fp32 arithmetic is compared with float64 oracles: NumPy, or PyTorch's own functional form
# evaluated in float64 (its definition of the variance and of eps, at a precision where no
# kernel's summation order shows in an fp16 or fp32 result). Ours does not depend on the CPU:
# NumPy's fp32 summation order is fixed by its source (the outputs below are bit-identical
# under its AVX2 and AVX-512 kernels). PyTorch's fp16/fp32 kernels are not compared: their
# reductions, softmax and norms sum in an order chosen by the kernel the CPU gets.

REDUCTION_DIMS = [([2], False), ([2], True), ([0, 2], False), ([0, 2], True), ([1], True), ([0, 1, 2], False)]


@pytest.mark.parametrize(("dims", "keepdim"), REDUCTION_DIMS)
@pytest.mark.parametrize("name", ["sum", "mean"])
def test_sum_mean(name: str, dims: list[int], keepdim: bool) -> None:
    """
    f16 accumulates in fp32: within 1 fp16 ulp of the float64 result rounded once (measured:
    bit-exact). f32: |error| <= 2^-22 * op(|x|) (measured 2^-23.3). i64: exact, as torch.sum.
    """
    reduce = np.sum if name == "sum" else np.mean
    x = normal((4, 6, 64), scale=2.0, offset=0.25)
    flag = " keepdim" if keepdim else ""
    for values in (x, x.astype(np.float32) / 3):
        exact = reduce(values.astype(np.float64), axis=tuple(dims), keepdims=keepdim)
        result = tensor(np.shape(exact), ELEMENT[values.dtype])
        ours = run_op(
            f"ktir.{name} %a dims {dims}{flag} : {type_of(values)} -> {result}", values, result=result
        )
        assert ours.shape == np.shape(exact)
        if values.dtype == np.float16:
            assert f16_ulps(ours, np.asarray(exact).astype(np.float16)) <= 1
        else:
            magnitude = reduce(np.abs(values.astype(np.float64)), axis=tuple(dims), keepdims=keepdim)
            assert np.all(np.abs(ours - exact) <= 2**-22 * magnitude)
    i = rng().integers(-1000, 1000, (4, 6, 8))
    if name == "sum":
        expected = torch.sum(torch_of(i), dim=dims, keepdim=keepdim).numpy()
        ours = run_op(
            f"ktir.sum %a dims {dims}{flag} : {type_of(i)} -> {type_of(expected)}",
            i,
            result=type_of(expected),
        )
        assert_identical(ours, expected)


@pytest.mark.parametrize(("dims", "keepdim"), REDUCTION_DIMS)
@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min(name: str, dims: list[int], keepdim: bool) -> None:
    """A selection: exact against `torch.amax` / `torch.amin` for f16, f32 and i64."""
    function = torch.amax if name == "max" else torch.amin
    flag = " keepdim" if keepdim else ""
    for x in (normal((4, 6, 64)), normal((4, 6, 64), np.float32), rng().integers(-50, 50, (4, 6, 64))):
        expected = function(torch_of(x), dim=dims, keepdim=keepdim).numpy()
        result = type_of(expected)
        ours = run_op(f"ktir.{name} %a dims {dims}{flag} : {type_of(x)} -> {result}", x, result=result)
        assert_identical(ours, expected)


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_softmax(dim: int) -> None:
    """
    Against softmax in float64, with -inf entries as attention masks have. f16: within 1 fp16
    ulp of it rounded once (measured: bit-exact; our fp32 evaluation is within (n + 16) fp32
    ulps relative, far below an fp16 ulp). f32: rtol 2^-20 (measured maxrel 2^-21.4); masked
    entries are exactly 0.
    """
    x = normal((4, 6, 64), scale=3.0)
    x[0, 0, :5] = -np.inf
    for values in (x, x.astype(np.float32) / 3):
        ours = run_op(
            f"ktir.softmax %a dim {dim} : {type_of(values)} -> {type_of(values)}",
            values,
            result=type_of(values),
        )
        exact = torch.softmax(torch_of(values).double(), dim).numpy()
        if values.dtype == np.float16:
            assert f16_ulps(ours, exact.astype(np.float16)) <= 1
        else:
            assert np.all(np.abs(ours - exact) <= 2**-20 * exact)
        assert (ours == 0).any()


def _norm_op(
    name: str, x: np.ndarray, normalized: list[int], eps: float, **operands: np.ndarray
) -> np.ndarray:
    text = f"ktir.{name} %a"
    inputs = [x]
    for key, value in operands.items():
        text += f" {key} %{ARG_NAMES[len(inputs)]} : {type_of(value)}"
        inputs.append(value)
    text += f" normalized_shape {normalized} {{eps = {eps:.6e} : f64}} : {type_of(x)} -> {type_of(x)}"
    return run_op(text, *inputs, result=type_of(x))


def _double(array: np.ndarray | None) -> torch.Tensor | None:
    """The array as a float64 tensor (the oracle's precision), or None."""
    return None if array is None else torch_of(array).double()


@pytest.mark.parametrize("normalized", [[64], [6, 64]])
@pytest.mark.parametrize(
    ("with_weight", "with_bias"), [(False, False), (True, False), (True, True), (False, True)]
)
def test_layer_norm(normalized: list[int], with_weight: bool, with_bias: bool) -> None:
    """
    f16: within 1 fp16 ulp of `F.layer_norm` in float64 rounded once (measured 1 ulp for
    weight+bias, else bit-exact). f32: |error| <= 2^-20 * (1 + |exact|) (measured at most 0.18
    of that).
    """
    generator = rng()
    x = (generator.standard_normal((4, 6, 64)) * 2 + 0.5).astype(np.float16)
    weight = (generator.standard_normal(normalized) + 1).astype(np.float16) if with_weight else None
    bias = generator.standard_normal(normalized).astype(np.float16) if with_bias else None
    for dtype in (np.float16, np.float32):
        values = x.astype(dtype)
        w = None if weight is None else weight.astype(dtype)
        b = None if bias is None else bias.astype(dtype)
        operands = {k: v for k, v in (("weight", w), ("bias", b)) if v is not None}
        ours = _norm_op("layer_norm", values, normalized, 1e-5, **operands)
        exact = F.layer_norm(_double(values), normalized, _double(w), _double(b), 1e-5).numpy()
        if dtype == np.float16:
            assert f16_ulps(ours, exact.astype(np.float16)) <= 1
        else:
            assert np.all(np.abs(ours - exact) <= 2**-20 * (1 + np.abs(exact)))


@pytest.mark.parametrize("normalized", [[64], [6, 64]])
@pytest.mark.parametrize("with_weight", [False, True])
def test_rms_norm(normalized: list[int], with_weight: bool) -> None:
    """
    f16: within 1 fp16 ulp of `F.rms_norm` in float64 rounded once (measured: bit-exact on these
    inputs). f32: rtol 2^-20 (measured maxrel 2^-22.7; a product of roundings, no cancellation).
    """
    x = normal((4, 6, 64), scale=2.0, offset=0.5)
    weight = (rng().standard_normal(normalized) + 1).astype(np.float16) if with_weight else None
    for dtype in (np.float16, np.float32):
        values = x.astype(dtype)
        w = None if weight is None else weight.astype(dtype)
        ours = _norm_op("rms_norm", values, normalized, 1e-6, **({"weight": w} if w is not None else {}))
        exact = F.rms_norm(_double(values), normalized, _double(w), 1e-6).numpy()
        if dtype == np.float16:
            assert f16_ulps(ours, exact.astype(np.float16)) <= 1
        else:
            np.testing.assert_allclose(ours, exact, rtol=2**-20)


#### Views and data movement: exact ####


def _movement_inputs() -> list[np.ndarray]:
    generator = rng()
    return [
        normal((2, 4, 6)),
        normal((2, 4, 6), np.float32),
        generator.integers(-9, 9, (2, 4, 6)),
        generator.integers(0, 2, (2, 4, 6)).astype(bool),
    ]


@pytest.mark.parametrize("index", range(4), ids=["f16", "f32", "i64", "i1"])
def test_views_and_data_movement(index: int) -> None:
    x = _movement_inputs()[index]
    t = torch_of(x)
    cases: list[tuple[str, torch.Tensor]] = [
        ("ktir.permute %a perm [2, 0, 1]", t.permute(2, 0, 1)),
        ("ktir.permute %a perm [0, 2, 1]", t.transpose(1, 2)),
        ("ktir.reshape %a", t.reshape(8, 6)),
        ("ktir.reshape %a", t.reshape(48)),
        ("ktir.expand %a", t[:, :1, :].expand(3, 2, 4, 6)),
        ("ktir.slice %a dim 1 start 1 end 4 step 2", t[:, 1:4:2]),
        ("ktir.slice %a dim 2 start 0 end 6 step 1", t[:, :, 0:6]),
        ("ktir.slice %a dim 2 start 2 end 6 step 3", t[:, :, 2:6:3]),
        ("ktir.slice %a dim 0 start 1 end 1 step 1", t[1:1]),
        ("ktir.copy %a", t.clone()),
        ("ktir.restickify %a", t),
    ]
    for op, expected in cases:
        source = x[:, :1, :] if op.startswith("ktir.expand") else x
        result = tensor(expected.shape, ELEMENT[x.dtype])
        ours = run_op(f"{op} : {type_of(source)} -> {result}", source, result=result)
        assert_identical(ours, expected.numpy())
    pieces = [x, x[:, :1] if x.dtype != np.bool_ else ~x[:, :1], x[:, :3]]
    expected = torch.cat([torch_of(p) for p in pieces], dim=1).numpy()
    types = ", ".join(type_of(p) for p in pieces)
    ours = run_op(
        f"ktir.cat %a, %b, %c dim 1 : {types} -> {type_of(expected)}", *pieces, result=type_of(expected)
    )
    assert_identical(ours, expected)


@pytest.mark.parametrize("value", [0.0, -np.inf, 0.1, 2.0])
def test_pad(value: float) -> None:
    """Constant padding, low/high per dim, with the fill value rounded as `torch.full` would."""
    for x in (normal((2, 3, 4)), normal((2, 3, 4), np.float32)):
        expected = F.pad(torch_of(x), (0, 3, 2, 1, 1, 0), value=value).numpy()
        # -inf is written in MLIR's hex form, which the attribute dictionary parses.
        literal = "0xFFF0000000000000" if np.isinf(value) else repr(value)
        types = f"{type_of(x)} -> {type_of(expected)}"
        op = f"ktir.pad %a low [1, 2, 0] high [0, 1, 3] {{value = {literal} : f64}} : {types}"
        assert_identical(run_op(op, x, result=type_of(expected)), expected)
    i = rng().integers(-9, 9, (3, 4))
    expected = F.pad(torch_of(i), (1, 1), value=int(value) if np.isfinite(value) else 0).numpy()
    fill = repr(float(expected[0, 0]))
    op = f"ktir.pad %a low [0, 1] high [0, 1] {{value = {fill} : f64}} : {type_of(i)} -> {type_of(expected)}"
    assert_identical(run_op(op, i, result=type_of(expected)), expected)


#### CPU fallback: the ATen op itself, exact ####


def fallback(
    aten: str, inputs: Sequence[np.ndarray], results: Sequence[str], args: str, kwargs: str = ""
) -> str:
    """The text of a `ktir.cpu_fallback` of `aten` on `%a, %b, ...` (one per input)."""
    operands = ", ".join(f"%{ARG_NAMES[i]}" for i in range(len(inputs)))
    attributes = f"args = [{args}]" + (f", kwargs = {{{kwargs}}}" if kwargs else "")
    types = f"({', '.join(type_of(x) for x in inputs)}) -> ({', '.join(results)})"
    return f'ktir.cpu_fallback "{aten}"({operands}) {{{attributes}}} : {types}'


def test_fallback_cumsum() -> None:
    i = rng().integers(-100, 100, (16,))
    op = fallback("aten::cumsum.default", [i], [type_of(i)], "#ktir.operand<0>, 0 : i64")
    assert_identical(run_op(op, i, result=type_of(i)), torch.cumsum(torch_of(i), 0).numpy())
    x = normal((4, 16))
    op = fallback("aten::cumsum.default", [x], [type_of(x)], "#ktir.operand<0>, 1 : i64")
    assert_identical(run_op(op, x, result=type_of(x)), torch.cumsum(torch_of(x), 1).numpy())


def test_fallback_embedding() -> None:
    table = normal((100, 64))
    ids = rng().integers(0, 100, (2, 8))
    result = tensor((2, 8, 64), "f16")
    args = "#ktir.operand<0>, #ktir.operand<1>"
    kwargs = "padding_idx = -1 : i64, scale_grad_by_freq = false, sparse = false"
    op = fallback("aten::embedding.default", [table, ids], [result], args, kwargs)
    assert_identical(
        run_op(op, table, ids, result=result), F.embedding(torch_of(ids), torch_of(table)).numpy()
    )


@pytest.mark.parametrize(("start", "end", "step", "element"), [(0, 16, 1, "i64"), (3, 40, 5, "f32")])
def test_fallback_arange_without_operands(start: int, end: int, step: int, element: str) -> None:
    """A fallback may have no operands (arange); `none` and element types are keyword values."""
    expected = torch.arange(start, end, step, dtype=TORCH_OF[element]).numpy()
    args = f"{start} : i64, {end} : i64, {step} : i64"
    kwargs = f'dtype = {element}, layout = none, device = "cpu", pin_memory = none'
    op = fallback("aten::arange.start_step", [], [type_of(expected)], args, kwargs)
    assert_identical(run_op(op, result=type_of(expected)), expected)


def test_fallback_index_with_none() -> None:
    x = normal((4, 64))
    i = rng().integers(0, 64, (16,))
    result = tensor((4, 16), "f16")
    op = fallback("aten::index.Tensor", [x, i], [result], "#ktir.operand<0>, [none, #ktir.operand<1>]")
    assert_identical(run_op(op, x, i, result=result), torch_of(x)[:, torch_of(i)].numpy())


def test_fallback_with_two_results() -> None:
    x = normal((4, 64))
    values, indices = torch.max(torch_of(x), 1)
    results = [tensor((4,), "f16"), tensor((4,), "i64")]
    op = fallback("aten::max.dim", [x], results, "#ktir.operand<0>, 1 : i64, false")
    ours = run_op(op, x, result=results)
    assert len(ours) == 2
    assert_identical(ours[0], values.numpy())
    assert_identical(ours[1], indices.numpy())


def test_fallback_keyword_operand_and_dtype() -> None:
    x = normal((4, 8))
    result = tensor((4, 8), "f32")
    op = fallback("aten::_to_copy.default", [x], [result], "", "self = #ktir.operand<0>, dtype = f32")
    assert_identical(run_op(op, x, result=result), torch_of(x).float().numpy())


#### Executor errors ####


def _two_input_module() -> ModuleOp:
    text = """
    func.func @f(%arg0: tensor<4xf16> {ktir.name = "x"}, %w: tensor<2x4xf16>) -> tensor<2x4xf16> {
      %r = ktir.add %arg0, %w : tensor<4xf16>, tensor<2x4xf16> -> tensor<2x4xf16>
      func.return %r : tensor<2x4xf16>
    }
    """
    return parse_module(CTX, text, "<test>")


def test_inputs_by_position_and_by_name() -> None:
    module = _two_input_module()
    x, w = normal((4,)), normal((2, 4), scale=3.0)
    expected = (torch_of(x) + torch_of(w)).numpy()
    assert_identical(run(module, [x, w])[0], expected)
    assert_identical(run(module, {"w": w, "x": x})[0], expected)  # `ktir.name`, else the SSA name
    assert_identical(run(module, [torch_of(x), torch_of(w)])[0], expected)  # torch tensors are accepted too


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ([np.zeros(4, np.float16)], "@f takes 2 input(s), got 1"),
        ([np.zeros(4, np.float16)] * 3, "@f takes 2 input(s), got 3"),
        ([np.zeros(5, np.float16), np.zeros((2, 4), np.float16)], "input 'x' has shape [5], expected [4]"),
        (
            [np.zeros(4, np.float16), np.zeros((4, 2), np.float16)],
            "input 'w' has shape [4, 2], expected [2, 4]",
        ),
        (
            [np.zeros(4, np.float32), np.zeros((2, 4), np.float16)],
            "input 'x' has dtype float32, expected float16 (f16)",
        ),
        (
            [np.zeros(4, np.float16), np.zeros((2, 4), np.int64)],
            "input 'w' has dtype int64, expected float16 (f16)",
        ),
        ({"x": np.zeros(4, np.float16)}, "missing input(s): w"),
        ({"arg0": np.zeros(4, np.float16), "w": np.zeros((2, 4), np.float16)}, "missing input(s): x"),
    ],
)
def test_input_errors(inputs: Any, message: str) -> None:
    with pytest.raises(ExecutionError) as error:
        run(_two_input_module(), inputs)
    assert str(error.value) == message


def test_module_errors() -> None:
    text = """
    func.func private @external(tensor<4xf16>) -> tensor<4xf16>
    func.func @f(%a: tensor<4xf16>) -> tensor<4xf16> {
      %r = func.call @external(%a) : (tensor<4xf16>) -> tensor<4xf16>
      func.return %r : tensor<4xf16>
    }
    func.func @g(%a: tensor<4xf16>) -> tensor<4xf16> {
      %r = ktir.neg %a : tensor<4xf16> -> tensor<4xf16>
      func.return %r : tensor<4xf16>
    }
    """
    module = parse_module(CTX, text, "<test>")
    x = normal((4,))
    with pytest.raises(ExecutionError, match=r"^expected one function with a body, found 2: @f, @g$"):
        run(module, [x])
    with pytest.raises(ExecutionError, match=r"^no function @h with a body; the module has: @f, @g$"):
        run(module, [x], func_name="h")
    with pytest.raises(
        ExecutionError, match=r"^the reference executor has no implementation of 'func.call'$"
    ):
        run(module, [x], func_name="f")
    assert_identical(run(module, [x], func_name="g")[0], -x)


#### bf16 ####


def test_round_bf16_examples() -> None:
    values = np.array(
        [1 + 2**-9, 1 + 3 * 2**-9, -(1 + 2**-8), 1 + 2**-8 + 2**-20, -0.0, np.inf, np.nan], np.float32
    )
    expected = np.array([1.0, 1 + 2**-7, -1.0, 1 + 2**-7, -0.0, np.inf, np.nan], np.float32)
    assert_identical(round_bf16(values), expected)
    assert_identical(round_bf16(values), torch_of(values).bfloat16().float().numpy())


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(width=32, allow_nan=False, allow_infinity=False), min_size=1, max_size=16))
def test_round_bf16_matches_torch(values: list[float]) -> None:
    """Any finite float32 rounds to a bf16-representable value (low 16 bits zero), as PyTorch's."""
    x = np.array(values, np.float32)
    rounded = round_bf16(x)
    assert rounded.dtype == np.float32
    assert not (rounded.view(np.uint32) & 0xFFFF).any()
    assert_identical(rounded, torch.tensor(x, dtype=torch.float32).bfloat16().float().numpy())


def test_bf16_ops_match_torch() -> None:
    """
    bf16 tensors (torch bf16 in, float32 storage out): add and convert bit-exact to PyTorch (one
    IEEE operation and a rounding), exp within 1 bf16 ulp of the float64 oracle.
    """
    generator = torch.Generator().manual_seed(7)
    a = (torch.randn(4, 8, generator=generator) * 4).bfloat16()
    b = (torch.randn(8, generator=generator) * 4).bfloat16()
    op = f"ktir.add %a, %b : {tensor((4, 8), 'bf16')}, {tensor((8,), 'bf16')} -> {tensor((4, 8), 'bf16')}"
    ours = run_op(
        op, a, b, result=tensor((4, 8), "bf16"), arg_types=[tensor((4, 8), "bf16"), tensor((8,), "bf16")]
    )
    expected = (a + b).float().numpy()
    assert_identical(ours, expected)
    assert_identical(ours, (a.float() + b.float()).bfloat16().float().numpy())
    assert not np.array_equal(ours, (a.float() + b.float()).numpy())  # rounding happened
    bf = tensor((4, 8), "bf16")
    ours = run_op(f"ktir.exp %a : {bf} -> {bf}", a, result=bf, arg_types=[bf])
    # exp against the float64 oracle rounded to bf16, not against eager: as fp16's transcendentals,
    # within 1 bf16 ulp (measured: bit-exact).
    exact = round_bf16(np.exp(a.double().numpy()).astype(np.float32))
    bf16_steps = np.abs(ours.view(np.int32) - exact.view(np.int32)) >> 16
    assert bf16_steps.max() <= 1
    x = normal((4, 8), np.float32, scale=3.0)
    ours = run_op(f"ktir.convert %a : {type_of(x)} -> {bf}", x, result=bf)
    assert_identical(ours, torch_of(x).bfloat16().float().numpy())


#### Determinism ####


def test_same_module_twice_gives_identical_bytes() -> None:
    text = """
    func.func @f(%x: tensor<4x64xf16>, %w: tensor<64xf16>, %y: tensor<64x32xf16>, %i: tensor<16xi64>)
        -> (tensor<4x32xf16>, tensor<4x64xf16>, tensor<16xi64>, tensor<4x1xf16>) {
      %0 = ktir.exp %x : tensor<4x64xf16> -> tensor<4x64xf16>
      %1 = ktir.gelu %x {approximate = "tanh"} : tensor<4x64xf16> -> tensor<4x64xf16>
      %2 = ktir.add %0, %w : tensor<4x64xf16>, tensor<64xf16> -> tensor<4x64xf16>
      %3 = ktir.lt %0, %w : tensor<4x64xf16>, tensor<64xf16> -> tensor<4x64xi1>
      %4 = ktir.where %3, %2, %1 : tensor<4x64xi1>, tensor<4x64xf16>, tensor<4x64xf16> -> tensor<4x64xf16>
      %5 = ktir.layer_norm %4 weight %w : tensor<64xf16> bias %w : tensor<64xf16>
          normalized_shape [64] {eps = 1.0e-05 : f64} : tensor<4x64xf16> -> tensor<4x64xf16>
      %6 = ktir.matmul %5, %y : tensor<4x64xf16>, tensor<64x32xf16> -> tensor<4x32xf16>
      %7 = ktir.softmax %x dim 1 : tensor<4x64xf16> -> tensor<4x64xf16>
      %8 = ktir.cpu_fallback "aten::cumsum.default"(%i) {args = [#ktir.operand<0>, 0 : i64]}
          : (tensor<16xi64>) -> tensor<16xi64>
      %9 = ktir.sum %7 dims [1] keepdim : tensor<4x64xf16> -> tensor<4x1xf16>
      func.return %6, %7, %8, %9 : tensor<4x32xf16>, tensor<4x64xf16>, tensor<16xi64>, tensor<4x1xf16>
    }
    """
    module = parse_module(CTX, text, "<test>")
    assert verify_module(module) == []
    inputs = [normal((4, 64)), normal((64,)), normal((64, 32)), rng().integers(0, 9, (16,))]
    copies = [a.copy() for a in inputs]
    first = run(module, inputs)
    second = run(module, inputs)
    assert [a.tobytes() for a in first] == [a.tobytes() for a in second]
    assert [a.dtype for a in first] == [np.float16, np.float16, np.int64, np.float16]
    for before, after in zip(copies, inputs, strict=True):
        assert before.tobytes() == after.tobytes()  # inputs are not modified


#### Review regressions ####


def test_integer_full_is_exact_beyond_two_to_the_53() -> None:
    big = np.iinfo(np.int64).max
    filled = run_op(f"ktir.full {big} : tensor<2xi64>", result="tensor<2xi64>", arg_types=[])
    np.testing.assert_array_equal(filled, np.array([big, big], dtype=np.int64))


def test_f32_scalar_next_to_f16_rounds_once() -> None:
    x = normal((4096,)) * np.float16(100)
    scalar = np.array([0.1], dtype=np.float32)
    ours = run_op(
        "ktir.mul %a, %b : tensor<4096xf16>, tensor<1xf32> -> tensor<4096xf16>",
        x,
        scalar,
        result="tensor<4096xf16>",
    )
    assert_identical(ours, (torch_of(x) * 0.1).numpy())


@pytest.mark.parametrize(
    ("op", "message"),
    [
        (
            'ktir.cpu_fallback "aten::no_such_op.default"(%a) {args = [#ktir.operand<0>]} '
            ": (tensor<4xf32>) -> tensor<4xf32>",
            "'aten::no_such_op.default' is not an ATen op in this PyTorch",
        ),
        (
            'ktir.cpu_fallback "aten::sin.default"(%a) {args = [#ktir.operand<0>]} '
            ": (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)",
            "'aten::sin.default' returned 1 tensor(s), the op declares 2",
        ),
        (
            'ktir.cpu_fallback "aten::cumsum.default"(%a) {args = [#ktir.operand<0>, "x"]} '
            ": (tensor<4xf32>) -> tensor<4xf32>",
            "'aten::cumsum.default' failed: ",
        ),
    ],
)
def test_cpu_fallback_failures_are_execution_errors(op: str, message: str) -> None:
    results = "%r, %s" if "-> (" in op else "%r"
    text = f"func.func @f(%a: tensor<4xf32>) {{\n  {results} = {op}\n  func.return\n}}"
    module = parse_module(make_context(), text, "<test>")
    verify_module(module)
    with pytest.raises(ExecutionError, match=message.replace("(", r"\(").replace(")", r"\)")):
        run(module, [np.zeros(4, np.float32)])
