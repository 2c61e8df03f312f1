"""
`ktir.attention` of one core's tiles as `linalg`, in the reference's float64
(`ktir.reference.structured.attention`): q [B, H, G, S, D], k [B, H, L, D], v [B, H, L, E].

- q, k, v widened to f64; the scores `q @ k^T` a `linalg.batch_matmul` over the B x H heads
  (the G query heads of a KV head and their S rows as one M = G S), times `scale`;
- the mask (additive, or an i1 keep mask) and the causal limit (a key past `query + causal`
  hidden, positions counted from the tile's first query and key: `linalg.index` plus the
  core's start, a table indexed by `%id`) as one `linalg.generic`;
- softmax as the reference's online state: the row max (0 for a row with every key hidden),
  `exp(score - max)`, its sum, `weights @ v` (a second `batch_matmul`), then `out / sum` where
  the sum is positive (else 0), rounded once to the result type.

Example: BERT's attention tile of 1 x 4 x 1 x 32 x 16 queries over 32 keys is one 4 x 32 x 16 by
4 x 16 x 32 product, the scaled scores with the additive mask, and a 4 x 32 x 32 by 4 x 32 x 16
product.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from xdsl.dialects import arith
from xdsl.dialects.builtin import Float64Type, IndexType, IntegerAttr, i1
from xdsl.dialects.linalg.ops import IndexOp
from xdsl.dialects.math import ExpOp
from xdsl.ir import SSAValue

from ktir.dialects.ktir import structured as st
from ktir.export.to_ktdp.emitter import Emitter, HostTensor
from ktir.export.to_ktdp.formulas import Formula, float_constant, scalar
from ktir.export.to_ktdp.payload import generic
from ktir.export.to_ktdp.structured import reduce
from ktir.export.to_ktdp.tensors import product, reshaped, transpose
from ktir.ir.diagnostics import op_error

_F64 = Float64Type()

StartOf = Callable[[int, int], SSAValue]
"""(operand, host dim) -> the index of the core's host start of that operand's tile there."""


def _product(emitter: Emitter, x: HostTensor, y: HostTensor) -> HostTensor:
    """`x @ y` over the leading dims (collapsed to one batch dim), in f64."""
    batch = x.shape[:-2]
    x3 = reshaped(emitter, x, (math.prod(batch), *x.shape[-2:]))
    y3 = reshaped(emitter, y, (math.prod(batch), *y.shape[-2:]))
    out = product(emitter, "batch_matmul", x3, y3, _F64)
    return reshaped(emitter, out, (*batch, x.shape[-2], y.shape[-1]))


def _hidden(e: Emitter) -> SSAValue:
    """-inf in f64: a hidden score."""
    return float_constant(e, -math.inf, _F64)


def _index(e: Emitter, value: int) -> SSAValue:
    return scalar(e, arith.ConstantOp(IntegerAttr(value, IndexType())))


def _causal(
    e: Emitter, op: st.AttentionOp, score: SSAValue, hidden: SSAValue, starts: tuple[SSAValue, SSAValue]
) -> SSAValue:
    """`score`, `hidden` where the key is past `query + causal` (positions from the core's starts)."""
    assert op.causal is not None
    query = scalar(e, arith.AddiOp(scalar(e, IndexOp(3)), starts[0]))
    key = scalar(e, arith.AddiOp(scalar(e, IndexOp(4)), starts[1]))
    limit = scalar(e, arith.AddiOp(query, _index(e, op.causal.value.data)))
    past = scalar(e, arith.CmpiOp(key, limit, "sgt"))
    return scalar(e, arith.SelectOp(past, hidden, score))


def _scores_formula(
    op: st.AttentionOp, masked: str | None, starts: tuple[SSAValue, SSAValue] | None
) -> Formula:
    scale = float(op.scale.value.data)

    def body(e: Emitter, a: list[SSAValue]) -> SSAValue:
        score = scalar(e, arith.MulfOp(a[0], float_constant(e, scale, _F64)))
        hidden = _hidden(e)
        if masked == "keep":
            score = scalar(e, arith.SelectOp(a[1], score, hidden))
        elif masked == "add":
            score = scalar(e, arith.AddfOp(score, a[1]))
        if starts is not None and op.causal is not None:
            score = _causal(e, op, score, hidden, starts)
        return score

    return body


def _zero_if_hidden(e: Emitter, a: list[SSAValue]) -> SSAValue:
    every = scalar(e, arith.CmpfOp(a[0], _hidden(e), "oeq"))
    return scalar(e, arith.SelectOp(every, float_constant(e, 0.0, _F64), a[0]))


def _exp_shifted(e: Emitter, a: list[SSAValue]) -> SSAValue:
    return scalar(e, ExpOp(scalar(e, arith.SubfOp(a[0], a[1]))))


def _normalized(e: Emitter, a: list[SSAValue]) -> SSAValue:
    zero = float_constant(e, 0.0, _F64)
    seen = scalar(e, arith.CmpfOp(a[1], zero, "ogt"))
    return scalar(e, arith.SelectOp(seen, scalar(e, arith.DivfOp(a[0], a[1])), zero))


def _identity(e: Emitter, a: list[SSAValue]) -> SSAValue:
    return a[0]  # a widening copy


def attention(
    emitter: Emitter,
    op: st.AttentionOp,
    operands: list[HostTensor],
    starts: tuple[SSAValue, SSAValue] | None,
) -> HostTensor:
    """
    One core's `ktir.attention` tile (module docstring); `starts`: the indices of the core's
    first query and first key (a causal op's).
    """
    q, k, v = operands[:3]
    if len(q.shape) != 5 or len(k.shape) != 4 or len(v.shape) != 4:
        raise op_error(op, f"its tiles {q.shape}, {k.shape}, {v.shape} are not q [B,H,G,S,D], k, v [B,H,L,*]")
    q64 = generic(emitter, op, [q], _F64, _identity, _F64)
    kt = generic(emitter, op, [transpose(emitter, k, (0, 1, 3, 2))], _F64, _identity, _F64)
    v64 = generic(emitter, op, [v], _F64, _identity, _F64)
    heads = kt.shape[:2]
    q_rows = reshaped(emitter, q64, (*heads, q.shape[2] * q.shape[3], q.shape[4]))  # one K^T for G heads
    scores = reshaped(emitter, _product(emitter, q_rows, kt), (*q.shape[:4], k.shape[2]))
    ins, masked = [scores], None
    if len(operands) > 3:
        mask = operands[3]
        masked = "keep" if mask.element == i1 else "add"
        ins.append(mask)
    scores = generic(emitter, op, ins, _F64, _scores_formula(op, masked, starts), _F64)
    top = reduce(emitter, scores, [4], "max", True)
    top = generic(emitter, op, [top], _F64, _zero_if_hidden, _F64)
    weights = generic(emitter, op, [scores, top], _F64, _exp_shifted, _F64)
    total = reduce(emitter, weights, [4], "add", True)
    rows = reshaped(emitter, weights, (*heads, q.shape[2] * q.shape[3], k.shape[2]))
    out = reshaped(emitter, _product(emitter, rows, v64), (*q.shape[:4], v.shape[3]))
    element = op.result.type.element_type
    return generic(emitter, op, [out, total], element, _normalized, _F64)


__all__ = ["StartOf", "attention"]
