"""
How the reference stores and computes values of each element type: the precision contract of
`ktir.reference` (`widen` lifts f16/bf16 storage to fp32, fp32 and fp64 stay; an op computes in
that precision; `store` rounds once to the result's element type), the roundings NumPy lacks
(bf16, float8_e4m3fn, df16), and transcendental functions evaluated in float64 so that their
one rounding does not depend on the CPU. It imports no dialect's ops: the simulator and the
ktdp engine round with it without building them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects.builtin import BFloat16Type, Float8E4M3FNType
from xdsl.ir import Attribute

from ktir.dialects.spyreop.types import DF16Type
from ktir.layout.df16 import round_df16
from ktir.layout.dtypes import numpy_dtype, round_binary


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


def erf(x: np.ndarray) -> np.ndarray:
    """
    The error function, vectorized: `scipy.special.erf` evaluated in float64, in `x`'s type.

    SciPy's erf (Cephes) is accurate to a few float64 ulps and does not depend on the CPU's
    SIMD features, so an fp32 GELU built on it is within one fp32 rounding of the exact value
    on every machine. Example: erf(0) = 0, erf(1) ~ 0.8427008.
    """
    exact = erf64(np.asarray(x, dtype=np.float64))
    return exact.astype(x.dtype if x.dtype.kind == "f" else np.float64)


def erf64(x: np.ndarray) -> np.ndarray:
    """
    `scipy.special.erf` of float64 `x`, imported on first use: SciPy's import is a third of
    every tool's start.
    """
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
