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

from xdsl.dialects.builtin import Float64Type, i1

from ktir.dialects.ktir import structured as st
from ktir.export.ktdp_payload import HostTensor, Writer, generic, product, reshaped, scalar_op, transpose
from ktir.export.ktdp_structured import reduce
from ktir.ir.diagnostics import op_error

_F64 = Float64Type()
_NEG_INF = "0xFFF0000000000000"

StartOf = Callable[[int, int], str]
"""(operand, host dim) -> the SSA index of the core's host start of that operand's tile there."""


def _product(writer: Writer, x: HostTensor, y: HostTensor) -> HostTensor:
    """`x @ y` over the leading dims (collapsed to one batch dim), in f64."""
    batch = x.shape[:-2]
    x3 = reshaped(writer, x, (math.prod(batch), *x.shape[-2:]))
    y3 = reshaped(writer, y, (math.prod(batch), *y.shape[-2:]))
    out = product(writer, "linalg.batch_matmul", x3, y3, _F64)
    return reshaped(writer, out, (*batch, x.shape[-2], y.shape[-1]))


def _scores_formula(op: st.AttentionOp, masked: str | None, starts: tuple[str, str] | None) -> Callable:
    scale = float(op.scale.value.data)

    def body(w: Writer, a: list[str]) -> str:
        score = scalar_op(w, f"arith.mulf {a[0]}, {scalar_op(w, f'arith.constant {scale!r} : f64')} : f64")
        hidden = scalar_op(w, f"arith.constant {_NEG_INF} : f64")
        if masked == "keep":
            score = scalar_op(w, f"arith.select {a[1]}, {score}, {hidden} : f64")
        elif masked == "add":
            score = scalar_op(w, f"arith.addf {score}, {a[1]} : f64")
        if starts is not None and op.causal is not None:
            query = scalar_op(w, f"arith.addi {scalar_op(w, 'linalg.index 3 : index')}, {starts[0]} : index")
            key = scalar_op(w, f"arith.addi {scalar_op(w, 'linalg.index 4 : index')}, {starts[1]} : index")
            causal = scalar_op(w, f"arith.constant {op.causal.value.data} : index")
            limit = scalar_op(w, f"arith.addi {query}, {causal} : index")
            past = scalar_op(w, f"arith.cmpi sgt, {key}, {limit} : index")
            score = scalar_op(w, f"arith.select {past}, {hidden}, {score} : f64")
        return score

    return body


def _zero_if_hidden(w: Writer, a: list[str]) -> str:
    hidden = scalar_op(w, f"arith.constant {_NEG_INF} : f64")
    every = scalar_op(w, f"arith.cmpf oeq, {a[0]}, {hidden} : f64")
    return scalar_op(w, f"arith.select {every}, {scalar_op(w, 'arith.constant 0.0 : f64')}, {a[0]} : f64")


def _exp_shifted(w: Writer, a: list[str]) -> str:
    return scalar_op(w, f"math.exp {scalar_op(w, f'arith.subf {a[0]}, {a[1]} : f64')} : f64")


def _normalized(w: Writer, a: list[str]) -> str:
    zero = scalar_op(w, "arith.constant 0.0 : f64")
    seen = scalar_op(w, f"arith.cmpf ogt, {a[1]}, {zero} : f64")
    return scalar_op(
        w, f"arith.select {seen}, {scalar_op(w, f'arith.divf {a[0]}, {a[1]} : f64')}, {zero} : f64"
    )


def attention(
    writer: Writer, op: st.AttentionOp, operands: list[HostTensor], starts: tuple[str, str] | None
) -> HostTensor:
    """
    One core's `ktir.attention` tile (module docstring); `starts`: the SSA indices of the core's
    first query and first key (a causal op's).
    """
    q, k, v = operands[:3]
    if len(q.shape) != 5 or len(k.shape) != 4 or len(v.shape) != 4:
        raise op_error(op, f"its tiles {q.shape}, {k.shape}, {v.shape} are not q [B,H,G,S,D], k, v [B,H,L,*]")
    identity: Callable = lambda w, a: a[0]  # noqa: E731 - a widening copy
    q64 = generic(writer, op, [q], _F64, identity, _F64)
    kt = generic(writer, op, [transpose(writer, k, (0, 1, 3, 2))], _F64, identity, _F64)
    v64 = generic(writer, op, [v], _F64, identity, _F64)
    heads = kt.shape[:2]
    q_rows = reshaped(writer, q64, (*heads, q.shape[2] * q.shape[3], q.shape[4]))  # one K^T for G heads
    scores = reshaped(writer, _product(writer, q_rows, kt), (*q.shape[:4], k.shape[2]))
    ins, masked = [scores], None
    if len(operands) > 3:
        mask = operands[3]
        masked = "keep" if mask.element == i1 else "add"
        ins.append(mask)
    scores = generic(writer, op, ins, _F64, _scores_formula(op, masked, starts), _F64)
    top = reduce(writer, scores, [4], "max", True)
    top = generic(writer, op, [top], _F64, _zero_if_hidden, _F64)
    weights = generic(writer, op, [scores, top], _F64, _exp_shifted, _F64)
    total = reduce(writer, weights, [4], "add", True)
    rows = reshaped(writer, weights, (*heads, q.shape[2] * q.shape[3], k.shape[2]))
    out = reshaped(writer, _product(writer, rows, v64), (*q.shape[:4], v.shape[3]))
    element = op.result.type.element_type
    return generic(writer, op, [out, total], element, _normalized, _F64)


__all__ = ["StartOf", "attention"]
