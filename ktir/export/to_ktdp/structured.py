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

import math as pymath

import numpy as np
from xdsl.dialects import arith, math, tensor
from xdsl.dialects.builtin import DenseArrayBase, Float32Type, i64
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from ktir.dialects.ktir import structured as st
from ktir.dialects.linalg_ext import ReduceOp
from ktir.export.to_ktdp.emitter import Emitter, HostTensor, tensor_type
from ktir.export.to_ktdp.formulas import Formula, binary, float_attr, float_constant, scalar, unary
from ktir.export.to_ktdp.payload import generic
from ktir.export.to_ktdp.tensors import destination, extract_slice, insert_slice, reshaped
from ktir.ir.diagnostics import op_error
from ktir.reference.precision import store

_F32 = Float32Type()
COMBINERS: dict[str, type[arith.FloatingPointLikeBinaryOperation]] = {
    "add": arith.AddfOp,
    "max": arith.MaximumfOp,
    "min": arith.MinimumfOp,
}
"""A reduction's combining `arith` op, by kind."""


def _with_constant(op_type: type[arith.FloatingPointLikeBinaryOperation], constant: float) -> Formula:
    """`{0} op c`: the widened operand and an f32 constant."""
    return lambda e, a: scalar(e, op_type(a[0], float_constant(e, constant)))


def _exp_of_difference(e: Emitter, a: list[SSAValue]) -> SSAValue:
    return scalar(e, math.ExpOp(scalar(e, arith.SubfOp(a[0], a[1]))))


def reduce(emitter: Emitter, value: HostTensor, dims: list[int], kind: str, keepdim: bool) -> HostTensor:
    """`linalg.reduce` of an f32 (or exactly combined) tile over `dims`, in the tile's type."""
    kept = tuple(n for d, n in enumerate(value.shape) if d not in dims)
    name, empty = destination(emitter, kept, value.element)
    body = Block(arg_types=[value.element, value.element])
    emitter.name([body.args[0]], "a")
    emitter.name([body.args[1]], "a")
    with emitter.inside(body):
        combined = scalar(emitter, COMBINERS[kind](body.args[0], body.args[1]))
        emitter.add(linalg.YieldOp(combined))
    dimensions = DenseArrayBase.from_list(i64, sorted(dims))
    out = HostTensor(emitter.named(ReduceOp(value.value, empty.value, dimensions, Region(body)), name))
    if not keepdim:
        return out
    return reshaped(emitter, out, tuple(1 if d in dims else n for d, n in enumerate(value.shape)))


def _identity(e: Emitter, a: list[SSAValue]) -> SSAValue:
    return a[0]


def _widen(emitter: Emitter, op: Operation, value: HostTensor) -> HostTensor:
    if isinstance(value.element, Float32Type):
        return value
    return generic(emitter, op, [value], _F32, _identity)


def _dims(dims: tuple[int, ...], rank: int) -> list[int]:
    return sorted(d % rank for d in dims) if rank else []


def _reduction(emitter: Emitter, op: st.ReductionOp, operands: list[HostTensor]) -> HostTensor:
    x = operands[0]
    dims = _dims(st.ints(op.dims), len(x.shape))
    keepdim = op.keepdim is not None
    element = op.result.type.element_type
    if isinstance(op, st.MaxOp | st.MinOp):  # exact in any type: the tile's own elements
        kind = "max" if isinstance(op, st.MaxOp) else "min"
        return _round(emitter, op, reduce(emitter, x, dims, kind, keepdim), element)
    total = reduce(emitter, _widen(emitter, op, x), dims, "add", keepdim)
    if isinstance(op, st.MeanOp):
        count = pymath.prod(x.shape[d] for d in dims)
        total = generic(emitter, op, [total], _F32, _with_constant(arith.DivfOp, float(count)))
    return _round(emitter, op, total, element)


def _round(emitter: Emitter, op: Operation, value: HostTensor, element: Attribute) -> HostTensor:
    if value.element == element:
        return value
    return generic(emitter, op, [value], element, _identity)


def _softmax(emitter: Emitter, op: st.SoftmaxOp, operands: list[HostTensor]) -> HostTensor:
    x = _widen(emitter, op, operands[0])
    dims = _dims((op.dim.value.data,), len(x.shape))
    top = reduce(emitter, x, dims, "max", True)
    shifted = generic(emitter, op, [x, top], _F32, _exp_of_difference)
    total = reduce(emitter, shifted, dims, "add", True)
    element = op.result.type.element_type
    return generic(emitter, op, [shifted, total], element, binary(arith.DivfOp))


def _mean_over(emitter: Emitter, op: Operation, value: HostTensor, dims: list[int]) -> HostTensor:
    total = reduce(emitter, value, dims, "add", True)
    count = float(pymath.prod(value.shape[d] for d in dims))
    return generic(emitter, op, [total], _F32, _with_constant(arith.DivfOp, count))


def _norm(emitter: Emitter, op: st.NormOp, operands: list[HostTensor]) -> HostTensor:
    x = _widen(emitter, op, operands[0])
    rank = len(x.shape)
    dims = list(range(rank - len(st.ints(op.normalized_shape)), rank))
    eps = float(np.float32(op.eps.value.data))
    if isinstance(op, st.LayerNormOp):
        mean = _mean_over(emitter, op, x, dims)
        x = generic(emitter, op, [x, mean], _F32, binary(arith.SubfOp))
    squares = generic(emitter, op, [x], _F32, lambda e, a: scalar(e, arith.MulfOp(a[0], a[0])))
    spread = _mean_over(emitter, op, squares, dims)
    shifted = generic(emitter, op, [spread], _F32, _with_constant(arith.AddfOp, eps))
    root = generic(emitter, op, [shifted], _F32, unary(math.SqrtOp))
    value = generic(emitter, op, [x, root], _F32, binary(arith.DivfOp))
    affine = (binary(arith.MulfOp), binary(arith.AddfOp))  # the weight, then the bias
    for operand, formula in zip(operands[1:], affine, strict=False):
        value = generic(emitter, op, [value, operand], _F32, formula)
    return _round(emitter, op, value, op.result.type.element_type)


def _slice(emitter: Emitter, op: st.SliceOp, operands: list[HostTensor]) -> HostTensor:
    x = operands[0]
    dim = op.dim.value.data % len(x.shape)
    start, stop, step = slice(op.start.value.data, op.end.value.data, op.step.value.data).indices(
        x.shape[dim]
    )
    count = len(range(start, stop, step))
    shape = tuple(count if d == dim else n for d, n in enumerate(x.shape))
    offsets = [start if d == dim else 0 for d in range(len(shape))]
    strides = [step if d == dim else 1 for d in range(len(shape))]
    return extract_slice(emitter, x, offsets, shape, strides)


def _cat(emitter: Emitter, op: st.CatOp, operands: list[HostTensor]) -> HostTensor:
    rank = len(operands[0].shape)
    dim = op.dim.value.data % rank
    total = sum(t.shape[dim] for t in operands)
    shape = tuple(total if d == dim else n for d, n in enumerate(operands[0].shape))
    result = emitter.tensor(tensor.EmptyOp([], tensor_type(shape, operands[0].element)), "e")
    offset = 0
    for t in operands:
        result = insert_slice(emitter, t, result, [offset if d == dim else 0 for d in range(rank)])
        offset += t.shape[dim]
    return result


def filled(emitter: Emitter, shape: tuple[int, ...], element: Attribute, value: float) -> HostTensor:
    """`linalg.fill` of a new `shape` tensor with `value` (an accumulator's start, a pad's fill)."""
    scalar_value = emitter.value(arith.ConstantOp(float_attr(value, element)), "c")
    name, empty = destination(emitter, shape, element)
    return HostTensor(emitter.named(linalg.FillOp([scalar_value], [empty.value]), name))


def _pad(emitter: Emitter, op: st.PadOp, operands: list[HostTensor]) -> HostTensor:
    x = operands[0]
    low, high = st.ints(op.low), st.ints(op.high)
    if min(low + high, default=0) < 0:
        raise op_error(op, "a pad with negative amounts (a crop) is not written yet")
    shape = tuple(n + a + b for n, a, b in zip(x.shape, low, high, strict=True))
    element = op.result.type.element_type
    fill = float(store(np.asarray(op.value.value.data), element))
    # tensor.pad's decomposition: fill the padded tile (the pass over it ktir charges a pad),
    # then insert the source.
    value = emitter.value(arith.ConstantOp(float_attr(fill, element)), "c")
    empty_name, name = emitter.fresh("e"), emitter.fresh("t")
    empty = emitter.named(tensor.EmptyOp([], tensor_type(shape, element)), empty_name)
    padded = HostTensor(emitter.named(linalg.FillOp([value], [empty]), name))
    return insert_slice(emitter, x, padded, list(low))


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


__all__ = ["COMBINERS", "STRUCTURED", "filled", "reduce"]
