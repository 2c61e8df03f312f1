"""
The structured graph ops of a payload as `linalg` and `tensor` ops on host tiles, each the
value ktir's reference computes on the same tile (`ktir.reference.structured`):

- `ktir.sum` / `ktir.mean` / `ktir.max` / `ktir.min`: `linalg.reduce` over the dims (sums in
  f32, a mean divided by the count after), `keepdim` as an `expand_shape`;
- `ktir.softmax`: max, subtract and exp, sum, divide, all in f32, rounded once;
- `ktir.rms_norm` / `ktir.layer_norm`: the statistics over the normalized dims in f32, the
  weight and bias applied in f32, rounded once;
- `ktir.slice` / `ktir.cat` / `ktir.pad`: `tensor.extract_slice` / `insert_slice` of the tiles
  (a slice as NumPy slices the tile, a pad into a `linalg.fill` of the fill value).

Example: `ktir.rms_norm` of a 32 x 128 f16 tile over its last dim with a 128-wide weight is
`extf`, `x * x`, a sum over dim 1, `/ 128`, `+ eps`, `sqrt`, `x / rms`, `* w`, `truncf`.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import Float32Type
from xdsl.ir import Attribute, Operation

from ktir.dialects.ktir import structured as st
from ktir.export.ktdp_payload import (
    Formula,
    HostTensor,
    Writer,
    destination,
    extract_slice,
    float_literal,
    generic,
    insert_slice,
    reshaped,
    scalar_op,
)
from ktir.ir.diagnostics import op_error
from ktir.reference.ops import store

_F32 = Float32Type()
_COMBINER = {"add": "arith.addf", "max": "arith.maximumf", "min": "arith.minimumf"}


def _formula(pattern: str, constant: float | None = None) -> Formula:
    """A one-op body: `pattern` over the widened operands `{0}`, `{1}` and a constant `{c}`."""

    def body(w: Writer, a: list[str]) -> str:
        c = scalar_op(w, f"arith.constant {constant!r} : f32") if constant is not None else ""
        return scalar_op(w, pattern.format(*a, c=c))

    return body


def _exp_of_difference(w: Writer, a: list[str]) -> str:
    return scalar_op(w, f"math.exp {scalar_op(w, f'arith.subf {a[0]}, {a[1]} : f32')} : f32")


def reduce(writer: Writer, value: HostTensor, dims: list[int], kind: str, keepdim: bool) -> HostTensor:
    """`linalg.reduce` of an f32 (or exactly combined) tile over `dims`, in the tile's type."""
    kept = tuple(n for d, n in enumerate(value.shape) if d not in dims)
    out, empty = destination(writer, kept, value.element)
    writer.emit(
        f"{out.name} = linalg.reduce ins({value.name} : {value.type_text}) "
        f"outs({empty} : {out.type_text}) dimensions = {sorted(dims)}"
    )
    term, accumulator, combined = writer.fresh("a"), writer.fresh("a"), writer.fresh("v")
    writer.emit(f"({term}: {value.element}, {accumulator}: {value.element}) {{", 2)
    writer.emit(f"{combined} = {_COMBINER[kind]} {term}, {accumulator} : {value.element}", 3)
    writer.emit(f"linalg.yield {combined} : {value.element}", 3)
    writer.emit("}", 2)
    if not keepdim:
        return out
    return reshaped(writer, out, tuple(1 if d in dims else n for d, n in enumerate(value.shape)))


def _widen(writer: Writer, op: Operation, value: HostTensor) -> HostTensor:
    if isinstance(value.element, Float32Type):
        return value
    return generic(writer, op, [value], _F32, lambda w, a: a[0])


def _dims(op: Operation, dims: tuple[int, ...], rank: int) -> list[int]:
    return sorted(d % rank for d in dims) if rank else []


def _reduction(writer: Writer, op: st.ReductionOp, operands: list[HostTensor]) -> HostTensor:
    x = operands[0]
    dims = _dims(op, st.ints(op.dims), len(x.shape))
    keepdim = op.keepdim is not None
    element = op.result.type.element_type
    if isinstance(op, st.MaxOp | st.MinOp):  # exact in any type: the tile's own elements
        kind = "max" if isinstance(op, st.MaxOp) else "min"
        return _round(writer, op, reduce(writer, x, dims, kind, keepdim), element)
    total = reduce(writer, _widen(writer, op, x), dims, "add", keepdim)
    if isinstance(op, st.MeanOp):
        count = math.prod(x.shape[d] for d in dims)
        total = generic(writer, op, [total], _F32, _formula("arith.divf {0}, {c} : f32", float(count)))
    return _round(writer, op, total, element)


def _round(writer: Writer, op: Operation, value: HostTensor, element: Attribute) -> HostTensor:
    if value.element == element:
        return value
    return generic(writer, op, [value], element, lambda w, a: a[0])


def _softmax(writer: Writer, op: st.SoftmaxOp, operands: list[HostTensor]) -> HostTensor:
    x = _widen(writer, op, operands[0])
    dims = _dims(op, (op.dim.value.data,), len(x.shape))
    top = reduce(writer, x, dims, "max", True)
    shifted = generic(writer, op, [x, top], _F32, _exp_of_difference)
    total = reduce(writer, shifted, dims, "add", True)
    element = op.result.type.element_type
    return generic(writer, op, [shifted, total], element, _formula("arith.divf {0}, {1} : f32"))


def _mean_over(writer: Writer, op: Operation, value: HostTensor, dims: list[int]) -> HostTensor:
    total = reduce(writer, value, dims, "add", True)
    count = float(math.prod(value.shape[d] for d in dims))
    return generic(writer, op, [total], _F32, _formula("arith.divf {0}, {c} : f32", count))


def _norm(writer: Writer, op: st.NormOp, operands: list[HostTensor]) -> HostTensor:
    x = _widen(writer, op, operands[0])
    rank = len(x.shape)
    dims = list(range(rank - len(st.ints(op.normalized_shape)), rank))
    eps = float(np.float32(op.eps.value.data))
    if isinstance(op, st.LayerNormOp):
        mean = _mean_over(writer, op, x, dims)
        x = generic(writer, op, [x, mean], _F32, _formula("arith.subf {0}, {1} : f32"))
    squares = generic(writer, op, [x], _F32, _formula("arith.mulf {0}, {0} : f32"))
    spread = _mean_over(writer, op, squares, dims)
    shifted = generic(writer, op, [spread], _F32, _formula("arith.addf {0}, {c} : f32", eps))
    root = generic(writer, op, [shifted], _F32, _formula("math.sqrt {0} : f32"))
    value = generic(writer, op, [x, root], _F32, _formula("arith.divf {0}, {1} : f32"))
    affine = ("arith.mulf {0}, {1} : f32", "arith.addf {0}, {1} : f32")  # the weight, then the bias
    for operand, pattern in zip(operands[1:], affine, strict=False):
        value = generic(writer, op, [value, operand], _F32, _formula(pattern))
    return _round(writer, op, value, op.result.type.element_type)


def _slice(writer: Writer, op: st.SliceOp, operands: list[HostTensor]) -> HostTensor:
    x = operands[0]
    dim = op.dim.value.data % len(x.shape)
    start, stop, step = slice(op.start.value.data, op.end.value.data, op.step.value.data).indices(
        x.shape[dim]
    )
    count = len(range(start, stop, step))
    shape = tuple(count if d == dim else n for d, n in enumerate(x.shape))
    offsets = [start if d == dim else 0 for d in range(len(shape))]
    strides = [step if d == dim else 1 for d in range(len(shape))]
    return extract_slice(writer, x, offsets, shape, strides)


def _cat(writer: Writer, op: st.CatOp, operands: list[HostTensor]) -> HostTensor:
    rank = len(operands[0].shape)
    dim = op.dim.value.data % rank
    total = sum(t.shape[dim] for t in operands)
    shape = tuple(total if d == dim else n for d, n in enumerate(operands[0].shape))
    result = HostTensor(writer.fresh("e"), shape, operands[0].element)
    writer.emit(f"{result.name} = tensor.empty() : {result.type_text}")
    offset = 0
    for t in operands:
        result = insert_slice(writer, t, result, [offset if d == dim else 0 for d in range(rank)])
        offset += t.shape[dim]
    return result


def _pad(writer: Writer, op: st.PadOp, operands: list[HostTensor]) -> HostTensor:
    x = operands[0]
    low, high = st.ints(op.low), st.ints(op.high)
    if min(low + high, default=0) < 0:
        raise op_error(op, "a pad with negative amounts (a crop) is not written yet")
    shape = tuple(n + a + b for n, a, b in zip(x.shape, low, high, strict=True))
    element = op.result.type.element_type
    fill = float_literal(float(store(np.asarray(op.value.value.data), element)), element)
    # tensor.pad's decomposition: fill the padded tile (the pass over it ktir charges a pad),
    # then insert the source.
    value, empty = writer.fresh("c"), writer.fresh("e")
    filled = HostTensor(writer.fresh("t"), shape, element)
    writer.emit(f"{value} = arith.constant {fill} : {element}")
    writer.emit(f"{empty} = tensor.empty() : {filled.type_text}")
    writer.emit(
        f"{filled.name} = linalg.fill ins({value} : {element}) outs({empty} : {filled.type_text}) "
        f"-> {filled.type_text}"
    )
    return insert_slice(writer, x, filled, list(low))


STRUCTURED = {
    st.SumOp: _reduction,
    st.MeanOp: _reduction,
    st.MaxOp: _reduction,
    st.MinOp: _reduction,
    st.SoftmaxOp: _softmax,
    st.RmsNormOp: _norm,
    st.LayerNormOp: _norm,
    st.SliceOp: _slice,
    st.CatOp: _cat,
    st.PadOp: _pad,
}
"""The structured graph ops the emitter writes, by class (module docstring)."""


__all__ = ["STRUCTURED", "reduce"]
