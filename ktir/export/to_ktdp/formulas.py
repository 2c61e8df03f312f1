"""
The scalar formulas of elementwise graph ops, built into a `linalg.generic`'s body in f32 as
ktir's reference computes them (`ktir.reference.ops`), one `arith` / `math` op per step.

Example: `ktir.silu` is `negf`, `math.exp`, `addf 1.0`, `divf`: the reference's
`x / (1 + exp(-x))`.
"""

from __future__ import annotations

import math as pymath
from collections.abc import Callable
from typing import cast

import numpy as np
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import AnyFloat, Float32Type, FloatAttr
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
    ew.AddOp: binary(arith.AddfOp),
    ew.SubOp: binary(arith.SubfOp),
    ew.MulOp: binary(arith.MulfOp),
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
    ew.ReciprocalOp: _reciprocal,
    ew.SigmoidOp: _sigmoid,
    ew.SiluOp: _silu,
    ew.SquareOp: lambda e, a: scalar(e, arith.MulfOp(a[0], a[0])),
    ew.ConvertOp: lambda e, a: a[0],
}
"""The reference's formula of each elementwise op the emitter writes, in f32 (`ktir.reference.ops`)."""

__all__ = ["FORMULAS", "GELU", "Formula", "binary", "float_attr", "float_constant", "scalar", "unary"]
