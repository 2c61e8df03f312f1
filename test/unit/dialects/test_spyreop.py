"""The `spyreop` dialect (ktir.dialects.spyreop): typed builders, verifiers, docs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from xdsl.dialects.builtin import Float16Type, Float32Type, IntegerType, f16, f32, i32
from xdsl.dialects.test import TestOp as ValueOp
from xdsl.utils.exceptions import VerifyException

from ktir.dialects.spyreop import SPYREOP_OPS, SpyreOp
from ktir.dialects.spyreop import ops as sp
from ktir.dialects.spyreop.types import DF16FusedType, DF16Type, FP16FusedType, fused_pair_of, scalar_of_pair
from ktir.ir.context import make_context
from ktir.ir.diagnostics import parse_module

DOC = Path(__file__).resolve().parents[3] / "docs" / "ktdp.md"


def _value(type_):
    return ValueOp(result_types=[type_]).results[0]


@pytest.mark.parametrize("op_class", [sp.ExpOp, sp.SqrtOp, sp.SiluOp, sp.ReciprocalOp])
@pytest.mark.parametrize("element", [Float16Type(), DF16Type(), Float32Type()])
def test_unary_builder_keeps_the_operand_type(op_class, element):
    op = op_class(_value(element))
    op.verify()
    assert op.result.type == element


def test_gelu_refuses_f32():
    with pytest.raises(VerifyException, match=r"operand #0 must be f16 or !spyreop.df16, but got 'f32'"):
        sp.GeluOp(_value(f32)).verify()


def test_realdiv_builder():
    a = _value(DF16Type())
    op = sp.RealDivOp(a, a)
    op.verify()
    assert op.result.type == DF16Type()


def test_fused_pairs_are_inverse():
    for scalar in (Float16Type(), DF16Type(), Float32Type()):
        assert scalar_of_pair(fused_pair_of(scalar)) == scalar
    assert fused_pair_of(DF16Type()) == DF16FusedType()
    assert fused_pair_of(IntegerType(32)) is None
    assert scalar_of_pair(f16) is None


def test_exx2_fused_result_must_pair_the_operand():
    op = sp.Exx2FusedOp.create(operands=[_value(f32)], result_types=[FP16FusedType()])
    with pytest.raises(VerifyException, match=r"result must be !spyreop\.fp32_fused for a f32 operand"):
        op.verify()


def test_integer_intrinsics_infer_their_type():
    module = parse_module(
        make_context(),
        "func.func @f(%a: i32, %b: i32) -> i32 {\n  %s = spyreop.muli32toi32 %a, %b\n  return %s : i32\n}",
        "<test>",
    )
    (op,) = [o for o in module.walk() if isinstance(o, sp.MulI32Op)]
    assert op.result.type == i32


def test_every_op_has_a_docstring_and_a_row_in_ktdp_md():
    doc = DOC.read_text()
    assert {op.name for op in SPYREOP_OPS} == {op.name for op in SpyreOp.operations}
    missing = [op.name for op in SPYREOP_OPS if not re.search(rf"`{re.escape(op.name)}`", doc)]
    assert not missing, f"docs/ktdp.md's spyreop table lacks {missing}"
    assert not [op.__name__ for op in SPYREOP_OPS if not (op.__doc__ or "").strip()]
