"""
The arithmetic of the `spyreop` intrinsics (`ktir.dialects.spyreop`), as the ktdp engine runs
them: float intrinsics compute in float32 (float64 for the transcendental part, so the result
does not depend on the CPU's SIMD kernels) and round once to their result type (f16, df16 with
`ktir.layout.df16.round_df16`, f32), as every elementwise op of a ktdp program does
(`ktir.ktdp_engine.numerics`). Integer intrinsics wrap to their width.

| op | value |
|---|---|
| `exp`, `sqrt`, `rsqrt`, `reciprocal` | e^x, sqrt(x), 1/sqrt(x), 1/x |
| `sigmoid`, `silu` | 1 / (1 + e^-x), x / (1 + e^-x) |
| `gelu` | x * Phi(x) = x/2 * (1 + erf(x / sqrt 2)), the exact (erf) form |
| `softplus` | log(1 + e^(beta x)) / beta, or x where beta x > threshold (PyTorch's rule) |
| `realdiv` | a / b |
| `compare <p>` | 1.0 where `a p b` holds, else 0.0 (NaN compares unequal) |
| `select` | b where c != 0, else d |
| `addi32toi32`, `muli32toi32`, `addi64toi64` | a + b, a * b, wrapping |
| `idx32toaddr` | base + stride * index, wrapping to 32 bits |

The LayerNorm parts (`exx2`, `exx2_fused`, `layernormscale`, `layernormscale_fused`,
`layernormnorm`) and `slice_reduction` are not run: upstream documents what they are for but not
their arithmetic (which elements a mean covers, the epsilon, the slice width), and ktir does not
guess. `UNRUN` names them; the engine refuses them with a located error.

Example: `spyreop.silu` of the f16 value 1.0 is 1 / (1 + e^-1) = 0.7310586, rounded to f16
0.731. On a tensor an intrinsic is charged as `ktir.hardware.accounting` charges the function it
computes; inside a `linalg.generic` body, as one op of the body (`accounting.body_passes`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation

from ktir.dialects.spyreop import ops as sp
from ktir.ir.diagnostics import location_of
from ktir.ir.interpreter import Implementations
from ktir.ir.values import element_type_of
from ktir.ktdp_engine.compute import charge_result
from ktir.ktdp_engine.memory import KtdpError
from ktir.ktdp_engine.numerics import elementwise
from ktir.reference.precision import erf, in_float64

if TYPE_CHECKING:
    from ktir.ktdp_engine.engine import Handler, TileProgram

FloatIntrinsic = Callable[[Operation, list[np.ndarray]], np.ndarray]
"""The unrounded value of a float intrinsic from its operands in compute precision."""


def _in_float64(function: Callable[[np.ndarray], np.ndarray]) -> FloatIntrinsic:
    """`function` of the one operand, evaluated in float64 (`ktir.reference.precision.in_float64`)."""
    return lambda _, args: in_float64(function, args[0])


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + erf(x / np.sqrt(2.0)))


def _softplus(op: Operation, args: list[np.ndarray]) -> np.ndarray:
    assert isinstance(op, sp.SoftplusOp)
    beta, threshold = op.beta.value.data, op.threshold.value.data
    x = args[0].astype(np.float64)
    with np.errstate(over="ignore"):  # e^(beta x) past float64: only where beta x > threshold
        soft = np.log1p(np.exp(beta * x)) / beta
    return np.where(beta * x > threshold, x, soft).astype(args[0].dtype)


_COMPARISONS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "equal": np.equal,
    "notequal": np.not_equal,
    "greaterthan": np.greater,
    "greaterequal": np.greater_equal,
    "lesserthan": np.less,
    "lesserequal": np.less_equal,
}


def _compare(op: Operation, args: list[np.ndarray]) -> np.ndarray:
    assert isinstance(op, sp.CompareOp)
    holds = _COMPARISONS[op.predicate.data.value](args[0], args[1])
    return holds.astype(args[0].dtype)


def _select(_: Operation, args: list[np.ndarray]) -> np.ndarray:
    condition, on_true, on_false = args
    return np.where(condition != 0, on_true, on_false)


FLOAT_INTRINSICS: dict[type[Operation], FloatIntrinsic] = {
    sp.ExpOp: _in_float64(np.exp),
    sp.SqrtOp: _in_float64(np.sqrt),
    sp.RsqrtOp: _in_float64(lambda x: 1.0 / np.sqrt(x)),
    sp.ReciprocalOp: lambda _, args: 1.0 / args[0],
    sp.SigmoidOp: _in_float64(_sigmoid),
    sp.SiluOp: _in_float64(lambda x: x * _sigmoid(x)),
    sp.GeluOp: _in_float64(_gelu),
    sp.SoftplusOp: _softplus,
    sp.RealDivOp: lambda _, args: args[0] / args[1],
    sp.CompareOp: _compare,
    sp.SelectOp: _select,
}
"""Each float intrinsic's value before the one rounding to its result type."""

INTEGER_INTRINSICS: dict[type[Operation], tuple[Callable[..., np.ndarray], type[np.integer]]] = {
    sp.AddI32Op: (lambda a, b: a + b, np.int32),
    sp.MulI32Op: (lambda a, b: a * b, np.int32),
    sp.AddI64Op: (lambda a, b: a + b, np.int64),
    sp.Idx32ToAddrOp: (lambda index, base, stride: base + stride * index, np.int32),
}
"""Each integer intrinsic's value (computed in int64, or uint64 for i64) and its width."""


def integer_intrinsic(op: Operation, args: list[np.ndarray]) -> np.ndarray:
    """An integer intrinsic's value, wrapping to its width (two's complement)."""
    function, width = INTEGER_INTRINSICS[type(op)]
    if width is np.int64:  # unsigned arithmetic wraps without NumPy's overflow checks
        unsigned = [np.asarray(a).astype(np.int64).view(np.uint64) for a in args]
        return function(*unsigned).view(np.int64)
    return function(*(np.asarray(a).astype(np.int64) for a in args)).astype(np.int32)


UNRUN: tuple[type[Operation], ...] = (
    sp.Exx2Op,
    sp.Exx2FusedOp,
    sp.LayerNormScaleOp,
    sp.LayerNormScaleFusedOp,
    sp.LayerNormNormOp,
    sp.SliceReductionOp,
)
"""Intrinsics whose arithmetic upstream does not document (module docstring)."""


IMPLS: Implementations[Handler] = Implementations()
"""The ktdp engine's implementations of the `spyreop` ops."""


@IMPLS.impl(*FLOAT_INTRINSICS)
def _float_intrinsic(run: TileProgram, op: Operation) -> list[np.ndarray]:
    """A float intrinsic on every tile, rounded once to its result type; on a tensor, SFU time."""
    function = FLOAT_INTRINSICS[type(op)]
    if isinstance(op.results[0].type, TensorType):
        charge_result(run, op)
    operands = [run.env[v] for v in op.operands]
    return [elementwise(lambda *args: function(op, list(args)), operands, element_type_of(op.results[0]))]


@IMPLS.impl(*INTEGER_INTRINSICS)
def _integer_intrinsic(run: TileProgram, op: Operation) -> list[np.ndarray]:
    return [integer_intrinsic(op, [np.asarray(run.env[v]) for v in op.operands])]


@IMPLS.impl(*UNRUN)
def _unrun(run: TileProgram, op: Operation) -> list[np.ndarray]:
    raise KtdpError(
        f"'{op.name}' is not run by the ktdp engine: upstream does not document its arithmetic",
        location_of(op),
    )
