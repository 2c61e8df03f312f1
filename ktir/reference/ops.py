"""
NumPy implementations of the graph-level ktir ops, used by `ktir.reference.run`.

Each implementation maps `(op, operand arrays)` to the list of result arrays. The precision
contract (`ktir.reference.precision`): `widen` lifts f16/bf16 storage to fp32 (fp32 and fp64
stay), the op computes in that precision with one vectorized NumPy expression, and `store`
rounds once to the result's element type. For a single IEEE add/sub/mul/div/sqrt this equals
the correctly rounded fp16 result, because fp32 carries more than twice fp16's precision.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    NoneAttr,
    NoneType,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Operation

from ktir.dialects.ktir import elementwise as ew
from ktir.dialects.ktir.attributes import OperandRefAttr
from ktir.ir.interpreter import Implementations
from ktir.layout.dtypes import numpy_dtype
from ktir.reference.precision import erf, erf64, in_float64, store, widen

Implementation = Callable[[Any, list[np.ndarray]], list[np.ndarray]]


ELEMENTWISE: Implementations[Implementation] = Implementations()
"""Implementations of the ops in `ktir.dialects.ktir.elementwise` (`ktir.ir.interpreter`)."""
implements = ELEMENTWISE.impl


#### Elementwise ####


def result_element(op: Operation, index: int = 0) -> Attribute:
    """The element type of result `index`."""
    result_type = op.results[index].type
    assert isinstance(result_type, TensorType)
    return result_type.element_type


_UNARY: dict[type[Operation], Callable[[np.ndarray], np.ndarray]] = {
    ew.AbsOp: np.abs,
    ew.NegOp: np.negative,
    ew.ExpOp: np.exp,
    ew.LogOp: np.log,
    ew.SqrtOp: np.sqrt,
    ew.RsqrtOp: lambda x: 1 / np.sqrt(x),
    ew.ReciprocalOp: lambda x: 1 / x,
    ew.SigmoidOp: lambda x: 1 / (1 + np.exp(-x)),
    ew.TanhOp: np.tanh,
    ew.ReluOp: lambda x: np.maximum(x, np.zeros((), x.dtype)),
    ew.SiluOp: lambda x: x / (1 + np.exp(-x)),
    ew.FloorOp: lambda x: np.floor(x) if x.dtype.kind == "f" else x,
    ew.SquareOp: lambda x: x * x,
    ew.CeilOp: lambda x: np.ceil(x) if x.dtype.kind == "f" else x,
    ew.SignOp: lambda x: (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype),
    ew.Log1pOp: lambda x: in_float64(np.log1p, x),
    ew.CosOp: lambda x: in_float64(np.cos, x),
    ew.SinOp: lambda x: in_float64(np.sin, x),
    ew.ErfOp: lambda x: in_float64(erf64, x),
    ew.Expm1Op: lambda x: in_float64(np.expm1, x),
}
_FLOAT_CLASS: dict[type[Operation], Callable[[np.ndarray], np.ndarray]] = {
    ew.IsInfOp: np.isinf,
    ew.IsNanOp: np.isnan,
    ew.IsFiniteOp: np.isfinite,
}


@implements(*_UNARY)
def _unary(op: Operation, args: list[np.ndarray]) -> list[np.ndarray]:
    return [store(_UNARY[type(op)](widen(args[0])), result_element(op))]


@implements(*_FLOAT_CLASS)
def _float_class(op: Operation, args: list[np.ndarray]) -> list[np.ndarray]:
    return [_FLOAT_CLASS[type(op)](args[0])]


@implements(ew.GeluOp)
def _gelu(op: ew.GeluOp, args: list[np.ndarray]) -> list[np.ndarray]:
    x = widen(args[0])
    if op.approximate is not None and op.approximate.data == "tanh":
        inner = np.float32(math.sqrt(2 / math.pi)) * (x + np.float32(0.044715) * x * x * x)
        value = np.float32(0.5) * x * (1 + np.tanh(inner))
    else:
        value = np.float32(0.5) * x * (1 + erf(x * np.float32(1 / math.sqrt(2))))
    return [store(value, result_element(op))]


@implements(ew.SoftplusOp)
def _softplus(op: ew.SoftplusOp, args: list[np.ndarray]) -> list[np.ndarray]:
    x = widen(args[0])
    beta = op.beta.value.data if op.beta is not None else 1.0
    threshold = op.threshold.value.data if op.threshold is not None else 20.0
    scaled = x * x.dtype.type(beta)  # the selection compares in the compute precision, as PyTorch
    smooth = in_float64(lambda s: np.log1p(np.exp(s)) / beta, scaled)
    value = np.where(scaled > threshold, x, smooth)
    return [store(value, result_element(op))]


@implements(ew.LogicalNotOp)
def _logical_not(op: Operation, args: list[np.ndarray]) -> list[np.ndarray]:
    return [args[0] == 0]


@implements(ew.ConvertOp)
def _convert(op: Operation, args: list[np.ndarray]) -> list[np.ndarray]:
    return [store(args[0], result_element(op))]


_BINARY: dict[type[Operation], Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    ew.AddOp: np.add,
    ew.SubOp: np.subtract,
    ew.MulOp: np.multiply,
    ew.DivOp: np.divide,
    ew.MaximumOp: np.maximum,
    ew.MinimumOp: np.minimum,
    ew.PowfOp: lambda a, b: in_float64(lambda x: np.power(x, b.astype(np.float64)), a),
    ew.FloorDivOp: np.floor_divide,
}
_COMPARE: dict[type[Operation], Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    ew.EqOp: np.equal,
    ew.NeOp: np.not_equal,
    ew.LtOp: np.less,
    ew.LeOp: np.less_equal,
    ew.GtOp: np.greater,
    ew.GeOp: np.greater_equal,
    ew.LogicalAndOp: lambda a, b: (a != 0) & (b != 0),
}


@implements(*_BINARY)
def _binary(op: Operation, args: list[np.ndarray]) -> list[np.ndarray]:
    return [store(_BINARY[type(op)](widen(args[0]), widen(args[1])), result_element(op))]


@implements(*_COMPARE)
def _compare(op: Operation, args: list[np.ndarray]) -> list[np.ndarray]:
    return [np.asarray(_COMPARE[type(op)](args[0], args[1]))]


@implements(ew.PowOp)
def _pow(op: ew.PowOp, args: list[np.ndarray]) -> list[np.ndarray]:
    x = widen(args[0])
    return [store(np.power(x, x.dtype.type(op.exponent.value.data)), result_element(op))]


@implements(ew.WhereOp)
def _where(op: Operation, args: list[np.ndarray]) -> list[np.ndarray]:
    return [np.where(args[0], args[1], args[2])]


@implements(ew.ClampOp)
def _clamp(op: ew.ClampOp, args: list[np.ndarray]) -> list[np.ndarray]:
    x = widen(args[0])
    if op.min is not None:
        x = np.maximum(x, x.dtype.type(op.min.value.data))
    if op.max is not None:
        x = np.minimum(x, x.dtype.type(op.max.value.data))
    return [store(x, result_element(op))]


def full_value(op: ew.FullOp) -> np.ndarray:
    """The 0-d array every element of `ktir.full` holds, in the result's storage type."""
    result_type = op.result.type
    assert isinstance(result_type, TensorType)
    value = op.value.value.data
    if isinstance(value, int):  # exact integers (an f64 would round beyond 2**53)
        return np.array(value, dtype=numpy_dtype(result_type.element_type))
    return store(np.array(value), result_type.element_type)


@implements(ew.FullOp)
def _full(op: ew.FullOp, args: list[np.ndarray]) -> list[np.ndarray]:
    result_type = op.result.type
    assert isinstance(result_type, TensorType)
    return [np.full(tuple(result_type.get_shape()), full_value(op))]


#### Fallback argument decoding ####


def decode_argument(attr: Attribute, tensors: list[Any], dtype_of: Callable[[Attribute], Any]) -> Any:
    """
    A `ktir.cpu_fallback` argument as a Python value: `#ktir.operand<i>` -> `tensors[i]`,
    `i1` integers -> bool, other integers -> int, floats, strings, `none`, arrays -> lists,
    element types -> `dtype_of(type)`.
    """
    if isinstance(attr, OperandRefAttr):
        return tensors[attr.index.data]
    if isinstance(attr, NoneAttr | NoneType):  # `none` parses as the none type
        return None
    if isinstance(attr, IntegerAttr):
        value = attr.value.data
        return bool(value) if attr.type == IntegerType(1) else value
    if isinstance(attr, FloatAttr):
        return attr.value.data
    if isinstance(attr, StringAttr):
        return attr.data
    if isinstance(attr, ArrayAttr):
        return [decode_argument(a, tensors, dtype_of) for a in attr.data]
    if isinstance(attr, DictionaryAttr):
        return {k: decode_argument(v, tensors, dtype_of) for k, v in attr.data.items()}
    return dtype_of(attr)
