"""
The scalar formulas of elementwise graph ops, built into a `linalg.generic`'s body in f32 as
ktir's reference computes them (`ktir.reference.ops`), one `arith` / `math` op per step.

Example: `ktir.silu` is `negf`, `math.exp`, `addf 1.0`, `divf`: the reference's
`x / (1 + exp(-x))`. On integer operands (a decode step's positions) the arithmetic is `arith`'s
integer ops and a comparison `arith.cmpi`: `ktir.add` of i64 tensors is `addi`, `ktir.le`
`cmpi sle` (an i1 result, as the reference's `np.less_equal`).
"""

from __future__ import annotations

import math as pymath
from collections.abc import Callable
from typing import cast

import numpy as np
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import AnyFloat, Float32Type, FloatAttr, IntegerType
from xdsl.ir import Attribute, Operation, SSAValue

from ktir.dialects.ktir import elementwise as ew
from ktir.export.to_ktdp.emitter import Emitter

Formula = Callable[[Emitter, list[SSAValue]], SSAValue]
"""Scalar ops of a generic body on its widened arguments; returns the result."""

_F32 = Float32Type()


def scalar(emitter: Emitter, op: Operation) -> SSAValue:
    """One scalar op of a region body; its result (named `%v<k>`)."""
    return emitter.value(op, "v")


def float_attr(value: float, element: Attribute) -> FloatAttr:
    """`value` as a float attribute of type `element` (a float type)."""
    return FloatAttr(value, cast(AnyFloat, element))


def float_constant(emitter: Emitter, value: float, element: Attribute = _F32) -> SSAValue:
    """A scalar `arith.constant` of `value` in `element` (f32 by default)."""
    return scalar(emitter, arith.ConstantOp(float_attr(value, element)))


def binary(op_type: type[arith.FloatingPointLikeBinaryOperation]) -> Formula:
    """The formula `a op b` of a binary `arith` op."""
    return lambda e, a: scalar(e, op_type(a[0], a[1]))


def unary(op_type: Callable[[SSAValue], Operation]) -> Formula:
    """The formula `op a` of a unary op."""
    return lambda e, a: scalar(e, op_type(a[0]))


def _is_integer(value: SSAValue) -> bool:
    return isinstance(value.type, IntegerType)


def arithmetic(
    float_op: Callable[[SSAValue, SSAValue], Operation], integer_op: Callable[[SSAValue, SSAValue], Operation]
) -> Formula:
    """The formula `a op b`: `integer_op` on integer operands (wrapping, as NumPy's), else `float_op`."""
    return lambda e, a: scalar(e, (integer_op if _is_integer(a[0]) else float_op)(a[0], a[1]))


def comparison(predicate: str) -> Formula:
    """
    The formula `a <predicate> b` (`lt`, `le`, `eq`, ...), an i1: `arith.cmpi` signed on
    integers (unsigned on i1, whose true is 1), `arith.cmpf` ordered on floats (false with a
    NaN, as NumPy's), but `ne`, unordered (true with a NaN).
    """

    def formula(e: Emitter, a: list[SSAValue]) -> SSAValue:
        if not _is_integer(a[0]):
            return scalar(e, arith.CmpfOp(a[0], a[1], "une" if predicate == "ne" else f"o{predicate}"))
        if predicate in ("eq", "ne"):
            return scalar(e, arith.CmpiOp(a[0], a[1], predicate))
        signed = cast(IntegerType, a[0].type).width.data > 1
        return scalar(e, arith.CmpiOp(a[0], a[1], f"{'s' if signed else 'u'}{predicate}"))

    return formula


def _reciprocal(e: Emitter, a: list[SSAValue]) -> SSAValue:
    return scalar(e, arith.DivfOp(float_constant(e, 1.0), a[0]))


def _exp_of_negated(e: Emitter, x: SSAValue) -> SSAValue:
    return scalar(e, math.ExpOp(scalar(e, arith.NegfOp(x))))


def _sigmoid(e: Emitter, a: list[SSAValue]) -> SSAValue:
    exp = _exp_of_negated(e, a[0])
    one = float_constant(e, 1.0)
    return scalar(e, arith.DivfOp(one, scalar(e, arith.AddfOp(exp, float_constant(e, 1.0)))))


def _silu(e: Emitter, a: list[SSAValue]) -> SSAValue:
    exp = _exp_of_negated(e, a[0])
    return scalar(e, arith.DivfOp(a[0], scalar(e, arith.AddfOp(exp, float_constant(e, 1.0)))))


def _half_x_times_one_plus(e: Emitter, x: SSAValue, t: SSAValue) -> SSAValue:
    """GELU's `0.5 * x * (1 + t)`, in the reference's order: `(0.5 * x) * (1 + t)`."""
    half = scalar(e, arith.MulfOp(float_constant(e, 0.5), x))
    return scalar(e, arith.MulfOp(half, scalar(e, arith.AddfOp(float_constant(e, 1.0), t))))


def _erf_gelu(e: Emitter, a: list[SSAValue]) -> SSAValue:
    # 0.5 * x * (1 + erf(x * (1 / sqrt 2))), in the reference's order of operations
    scaled = scalar(e, arith.MulfOp(a[0], float_constant(e, float(np.float32(1 / pymath.sqrt(2))))))
    return _half_x_times_one_plus(e, a[0], scalar(e, math.ErfOp(scaled)))


def _tanh_gelu(e: Emitter, a: list[SSAValue]) -> SSAValue:
    # 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x * x * x)))
    cube = scalar(e, arith.MulfOp(float_constant(e, float(np.float32(0.044715))), a[0]))
    cube = scalar(e, arith.MulfOp(scalar(e, arith.MulfOp(cube, a[0])), a[0]))
    inner = scalar(e, arith.AddfOp(a[0], cube))
    root = float_constant(e, float(np.float32(pymath.sqrt(2 / pymath.pi))))
    inner = scalar(e, arith.MulfOp(root, inner))
    return _half_x_times_one_plus(e, a[0], scalar(e, math.TanhOp(inner)))


GELU: dict[bool, Formula] = {False: _erf_gelu, True: _tanh_gelu}
"""`ktir.gelu`'s formula, by whether it is the tanh approximation."""

FORMULAS: dict[type[Operation], Formula] = {
    ew.AddOp: arithmetic(arith.AddfOp, arith.AddiOp),
    ew.SubOp: arithmetic(arith.SubfOp, arith.SubiOp),
    ew.MulOp: arithmetic(arith.MulfOp, arith.MuliOp),
    ew.DivOp: binary(arith.DivfOp),
    ew.MaximumOp: binary(arith.MaximumfOp),
    ew.MinimumOp: binary(arith.MinimumfOp),
    ew.NegOp: unary(arith.NegfOp),
    ew.AbsOp: unary(math.AbsFOp),
    ew.ExpOp: unary(math.ExpOp),
    ew.LogOp: unary(math.LogOp),
    ew.SqrtOp: unary(math.SqrtOp),
    ew.RsqrtOp: unary(math.RsqrtOp),
    ew.TanhOp: unary(math.TanhOp),
    ew.CosOp: unary(math.CosOp),
    ew.SinOp: unary(math.SinOp),
    ew.ReciprocalOp: _reciprocal,
    ew.SigmoidOp: _sigmoid,
    ew.SiluOp: _silu,
    ew.SquareOp: lambda e, a: scalar(e, arith.MulfOp(a[0], a[0])),
    ew.ConvertOp: lambda e, a: a[0],
    ew.EqOp: comparison("eq"),
    ew.NeOp: comparison("ne"),
    ew.LtOp: comparison("lt"),
    ew.LeOp: comparison("le"),
    ew.GtOp: comparison("gt"),
    ew.GeOp: comparison("ge"),
}
"""The reference's formula of each elementwise op the emitter writes, in f32 (`ktir.reference.ops`)."""

INTEGER_OPS: frozenset[type[Operation]] = frozenset(
    {ew.AddOp, ew.SubOp, ew.MulOp, ew.ConvertOp, ew.EqOp, ew.NeOp, ew.LtOp, ew.LeOp, ew.GtOp, ew.GeOp}
)
"""The ops of `FORMULAS` whose formula is written on integer operands too."""

__all__ = [
    "FORMULAS",
    "GELU",
    "INTEGER_OPS",
    "Formula",
    "arithmetic",
    "binary",
    "comparison",
    "float_attr",
    "float_constant",
    "scalar",
    "unary",
]
