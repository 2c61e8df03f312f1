"""
NumPy implementations of the graph-level ktir ops, used by `ktir.reference.run`.

Each implementation maps `(op, operand arrays)` to the list of result arrays. The precision
contract: `widen` lifts f16/bf16 storage to fp32 (fp32 and fp64 stay), the op computes in that
precision with one vectorized NumPy expression, and `store` rounds once to the result's
element type. For a single IEEE add/sub/mul/div/sqrt this equals the correctly rounded fp16
result, because fp32 carries more than twice fp16's precision.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    DictionaryAttr,
    Float8E4M3FNType,
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
from ktir.dialects.spyreop.types import DF16Type
from ktir.ir.interpreter import Implementations
from ktir.layout.df16 import round_df16
from ktir.layout.dtypes import numpy_dtype, round_binary

Implementation = Callable[[Any, list[np.ndarray]], list[np.ndarray]]


ELEMENTWISE: Implementations[Implementation] = Implementations()
"""Implementations of the ops in `ktir.dialects.ktir.elementwise` (`ktir.ir.interpreter`)."""
implements = ELEMENTWISE.impl


#### Precision ####


def to_numpy(value: Any) -> np.ndarray:
    """
    A NumPy array of `value` (an array, a number, or a torch tensor, detected without importing
    torch). bf16 tensors become float32 holding the same values: NumPy has no bf16.
    """
    if hasattr(value, "detach"):
        tensor = value.detach().cpu()
        if str(tensor.dtype) == "torch.float8_e4m3fn":  # exact in fp16, NumPy has no fp8
            return tensor.float().numpy().astype(np.float16)
        return tensor.float().numpy() if str(tensor.dtype) == "torch.bfloat16" else tensor.numpy()
    return np.asarray(value)


def widen(array: np.ndarray) -> np.ndarray:
    """The compute precision of a stored array: f16 -> f32; everything else unchanged."""
    return array.astype(np.float32) if array.dtype == np.float16 else array


def round_bf16(array: np.ndarray) -> np.ndarray:
    """
    Round float32 values to the nearest bf16 (ties to even), kept in float32 storage.

    Example: 1 + 2**-9 rounds to 1.0; 1 + 3 * 2**-9 rounds to 1 + 2**-7. NaN stays NaN.
    """
    # np.array, not np.ascontiguousarray: the latter turns a 0-d array into shape (1,).
    bits = np.array(array, dtype=np.float32).view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) & np.uint32(0xFFFF0000)
    result = rounded.view(np.float32)
    return np.where(np.isnan(array), array, result).astype(np.float32)


FP8_E4M3_MAX = 448.0
"""The largest finite float8_e4m3fn value."""


def round_e4m3(array: np.ndarray) -> np.ndarray:
    """
    Round to the nearest float8_e4m3fn value (ties to even), kept in float16 storage (every e4m3
    value is exact in fp16), as PyTorch's CPU cast does: beyond +-448 saturates to +-448, NaN stays.

    e4m3 has 3 mantissa bits: a normal value 2^e x 1.f has the quantum 2^(e-3), subnormals
    (below 2^-6) the quantum 2^-9 (`ktir.layout.dtypes.round_binary`, exact in float64, so the
    result does not depend on the CPU). Example: 0.3 -> 0.3125; 2^-10 -> 0.
    """
    x = np.asarray(array, dtype=np.float64)
    rounded = np.clip(round_binary(x, 3, -6), -FP8_E4M3_MAX, FP8_E4M3_MAX)
    return np.where(np.isnan(x), x, rounded).astype(np.float16)


def store(value: Any, element_type: Attribute) -> np.ndarray:
    """Round a computed value once to `element_type` (the per-op rounding of the contract)."""
    array = np.asarray(value)
    dtype = numpy_dtype(element_type)
    if dtype == np.bool_:
        return array != 0
    if dtype.kind == "i" and array.dtype.kind == "f":
        array = np.trunc(array)  # PyTorch converts float -> int toward zero
    if dtype == np.float16 and array.dtype == np.float64:
        array = array.astype(np.float32)  # PyTorch rounds f64 -> f16 through f32, as bf16 does
    if isinstance(element_type, Float8E4M3FNType):
        return round_e4m3(array)
    if isinstance(element_type, DF16Type):
        return round_df16(array)
    result = array.astype(dtype, copy=False)
    return round_bf16(result) if isinstance(element_type, BFloat16Type) else result


def result_element(op: Operation, index: int = 0) -> Attribute:
    """The element type of result `index`."""
    result_type = op.results[index].type
    assert isinstance(result_type, TensorType)
    return result_type.element_type


def erf(x: np.ndarray) -> np.ndarray:
    """
    The error function, vectorized: `scipy.special.erf` evaluated in float64, in `x`'s type.

    SciPy's erf (Cephes) is accurate to a few float64 ulps and does not depend on the CPU's
    SIMD features, so an fp32 GELU built on it is within one fp32 rounding of the exact value
    on every machine. Example: erf(0) = 0, erf(1) ~ 0.8427008.
    """
    exact = _erf64(np.asarray(x, dtype=np.float64))
    return exact.astype(x.dtype if x.dtype.kind == "f" else np.float64)


def _erf64(x: np.ndarray) -> np.ndarray:
    """`scipy.special.erf`, imported on first use: SciPy's import is a third of every tool's start."""
    import scipy.special

    return scipy.special.erf(x)


def in_float64(function: Callable[[np.ndarray], np.ndarray], x: np.ndarray) -> np.ndarray:
    """
    A transcendental function evaluated in float64 and returned in `x`'s float type, so the one
    rounding to fp32 (and then to the stored type) does not depend on which SIMD kernel NumPy
    picks for fp32 on this CPU. Example: `in_float64(np.cos, np.float32([0.5]))` is
    `float32(cos(0.5))`, correctly rounded.
    """
    return function(x.astype(np.float64)).astype(x.dtype)


#### Elementwise ####

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
    ew.ErfOp: lambda x: in_float64(_erf64, x),
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
