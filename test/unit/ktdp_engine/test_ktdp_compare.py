"""arith.cmpi / cmpf predicates of the ktdp engine (ktir/ktdp_engine/compare.py)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, f32, i32

from ktir.ktdp_engine import KtdpError
from ktir.ktdp_engine.compare import compare


def _float_op(predicate: str) -> arith.CmpfOp:
    a, b = (arith.ConstantOp(FloatAttr(0.0, f32)) for _ in range(2))
    return arith.CmpfOp(a, b, predicate)


def test_float_predicates_compare_elementwise() -> None:
    values = np.array([1.0, 2.0, np.nan], np.float32)
    np.testing.assert_array_equal(compare(_float_op("olt"), values, np.float32(1.5)), [True, False, False])
    np.testing.assert_array_equal(compare(_float_op("oge"), values, np.float32(1.0)), [True, True, False])


def test_integer_predicates_compare_per_tile() -> None:
    a, b = (arith.ConstantOp.from_int_and_width(0, i32) for _ in range(2))
    op = arith.CmpiOp(a, b, "sgt")
    np.testing.assert_array_equal(compare(op, np.array([3, 5, 7]), np.int64(5)), [False, False, True])


def test_an_unordered_float_predicate_is_refused() -> None:
    with pytest.raises(KtdpError, match="comparison predicate 'ord' is not supported"):
        compare(_float_op("ord"), np.zeros(2, np.float32), np.float32(0))
