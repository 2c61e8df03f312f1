"""The arithmetic of the spyreop intrinsics (ktir.ktdp_engine.intrinsics) against float64 oracles."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import FloatAttr, f32
from xdsl.dialects.test import TestOp as ValueOp

import ktir.ktdp_engine as ktdp
from ktir.dialects.spyreop import ops as sp
from ktir.dialects.spyreop.types import ComparePredicate, ComparePredicateAttr
from ktir.ktdp_engine.intrinsics import FLOAT_INTRINSICS, UNRUN, integer_intrinsic
from ktir.ktdp_engine.memory import KtdpError

X = np.linspace(-6, 6, 97, dtype=np.float32)


def _run(op_class, *args, op=None):
    return FLOAT_INTRINSICS[op_class](op, [np.asarray(a) for a in args])


def test_gelu_is_the_erf_form():
    expected = np.array([x * 0.5 * (1 + math.erf(x / math.sqrt(2))) for x in X.astype(float)])
    np.testing.assert_allclose(_run(sp.GeluOp, X), expected, rtol=2e-7, atol=1e-7)


def test_sigmoid_and_silu():
    expected = 1 / (1 + np.exp(-X.astype(np.float64)))
    np.testing.assert_allclose(_run(sp.SigmoidOp, X), expected, rtol=1e-7)
    np.testing.assert_allclose(_run(sp.SiluOp, X), X * expected, rtol=1e-6, atol=1e-7)


def test_softplus_follows_beta_and_threshold():
    x = _value_of(f32)
    limits = {"beta": FloatAttr(2.0, f32), "threshold": FloatAttr(4.0, f32)}
    op = sp.SoftplusOp.create(operands=[x], result_types=[f32], properties=limits)
    got = _run(sp.SoftplusOp, np.float32([0.0, 1.0, 2.5, 100.0]), op=op)
    # beta x = 0, 2, 5 (> 4: x itself), 200 (x itself, and no overflow)
    np.testing.assert_allclose(got, [math.log(2) / 2, math.log1p(math.exp(2)) / 2, 2.5, 100.0], rtol=1e-7)


def test_compare_is_one_or_zero_of_the_operand_type():
    a, b = np.float32([1, 2, np.nan]), np.float32([2, 2, np.nan])
    results = {}
    for predicate in ComparePredicate:
        op = sp.CompareOp.create(
            operands=[_value_of(f32), _value_of(f32)],
            result_types=[f32],
            properties={"predicate": ComparePredicateAttr(predicate)},
        )
        results[predicate.value] = _run(sp.CompareOp, a, b, op=op).tolist()
    assert results == {
        "equal": [0, 1, 0],
        "notequal": [1, 0, 1],
        "greaterthan": [0, 0, 0],
        "greaterequal": [0, 1, 0],
        "lesserthan": [1, 0, 0],
        "lesserequal": [1, 1, 0],
    }


def test_select_takes_non_zero_as_true():
    got = _run(sp.SelectOp, np.float32([0, 1, -0.5]), np.float32([1, 2, 3]), np.float32([7, 8, 9]))
    assert got.tolist() == [7, 2, 3]


def _integer(op_class, *args):
    return integer_intrinsic(op_class.create(operands=[], result_types=[]), list(args))


def test_integer_intrinsics_wrap():
    assert _integer(sp.AddI32Op, np.int32(2**31 - 1), np.int32(1)) == -(2**31)
    assert _integer(sp.MulI32Op, np.int32(65536), np.int32(65536)) == 0
    assert _integer(sp.AddI64Op, np.int64(2**63 - 1), np.int64(1)) == -(2**63)
    assert _integer(sp.Idx32ToAddrOp, np.int32(3), np.int32(100), np.int32(8)) == 124  # 100 + 8 * 3


def test_undocumented_intrinsics_are_listed_not_run():
    assert set(UNRUN).isdisjoint(FLOAT_INTRINSICS)
    assert {op.name for op in UNRUN} == {
        "spyreop.exx2",
        "spyreop.exx2_fused",
        "spyreop.layernormscale",
        "spyreop.layernormscale_fused",
        "spyreop.layernormnorm",
        "spyreop.slice_reduction",
    }


def _value_of(type_):
    return ValueOp(result_types=[type_]).results[0]


KERNEL = Path(__file__).resolve().parents[2] / "lit" / "Inputs" / "ktdp" / "spyreop.mlir"


def test_the_engine_runs_intrinsics_in_generic_bodies():
    x = (np.linspace(-4, 4, 128, dtype=np.float32).reshape(2, 64)).astype(np.float16)
    arrays = {"x": x, "y": np.zeros_like(x), "z": np.zeros((2, 64), np.float32)}
    outputs, report = ktdp.run(KERNEL, "intrinsics", arrays)
    exact = x.astype(np.float64)
    gelu = np.array([v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in exact.ravel()]).reshape(2, 64)
    assert np.array_equal(outputs["y"], gelu.astype(np.float32).astype(np.float16))  # one rounding
    sigmoid = 1 / (1 + np.exp(-exact))
    softplus = np.log1p(np.exp(exact)).astype(np.float32).astype(np.float16).astype(np.float64)
    expected = np.where(exact > 0, exact / sigmoid, softplus)
    np.testing.assert_allclose(outputs["z"], expected, rtol=3e-7)
    assert report.total_cycles > 0


def test_an_undocumented_intrinsic_is_a_located_error():
    arrays = {"x": np.zeros((1, 64), np.float32), "y": np.zeros((1, 64), np.float32)}
    message = r"'spyreop\.exx2' is not run by the ktdp engine: upstream does not document"
    with pytest.raises(KtdpError, match=message) as info:
        ktdp.run(KERNEL, "undocumented", arrays)
    assert info.value.location is not None
