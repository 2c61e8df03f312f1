"""
NumPy implementations of the structured graph-level ops (matmul, attention, reductions, softmax, norms,
views, data movement, restickify) and of `ktir.cpu_fallback` through PyTorch.

Same precision contract as `ktir.reference.ops`: compute in fp32 (or wider), round once per op.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Operation

from ktir.dialects.ktir import structured as st
from ktir.ir.diagnostics import ExecutionError
from ktir.ir.interpreter import Implementations
from ktir.ir.values import shape_of
from ktir.layout.dtypes import format_of_element, numpy_dtype
from ktir.reference.ops import Implementation, decode_argument, result_element
from ktir.reference.precision import store, to_numpy, widen

STRUCTURED: Implementations[Implementation] = Implementations()
"""Implementations of the ops in `ktir.dialects.ktir.structured`."""
implements = STRUCTURED.impl


@implements(st.MatmulOp, st.BmmOp)
def _matmul(op: Operation, args: list[np.ndarray]) -> list[np.ndarray]:
    # The products of fp16 or fp32 operands are exact in float64 and so, for any realistic K,
    # is their sum: the result is the exact dot product rounded once to the element type. That
    # makes it independent of the summation order, so a matmul cut into tiles along M, N or K
    # (`ktir-lower-to-cores`) gives the same bits as the whole one, whatever BLAS does inside.
    # A y padded along K (`ktir-pad-matmul`) contributes only its first K rows, as on the hardware.
    x, y = args
    k = x.shape[-1]
    return [store(np.matmul(x.astype(np.float64), y[..., :k, :].astype(np.float64)), result_element(op))]


ATTENTION_BLOCK_BYTES = 64 << 20
"""Float64 scores the reference computes at once (query rows are taken in blocks this size)."""


@implements(st.AttentionOp)
def _attention(op: st.AttentionOp, args: list[np.ndarray]) -> list[np.ndarray]:
    return [attention(op, args)]


def attention(
    op: st.AttentionOp, args: list[np.ndarray], query_start: int = 0, key_start: int = 0
) -> np.ndarray:
    """
    `ktir.attention` on q, k, v (and mask) arrays that may be tiles: `query_start` and
    `key_start` are the positions of their first query and key in the whole op, which the
    `causal` limit is measured in. Computed in float64 and rounded once to the result type.
    """
    return store(normalized(attention_partial(op, args, query_start, key_start)), result_element(op))


AttentionState = tuple[np.ndarray, np.ndarray, np.ndarray]
"""Online softmax state of attention rows over the keys seen so far, in float64: each row's
running max score `m` and sum of `exp(score - m)`, and the sum of `exp(score - m) * v`
(shapes [B, H, G, S, 1], [B, H, G, S, 1] and [B, H, G, S, E])."""


def attention_partial(
    op: st.AttentionOp, args: list[np.ndarray], query_start: int = 0, key_start: int = 0
) -> AttentionState:
    """
    The online-softmax state of `ktir.attention` over the keys of the tiles `args` (positions
    as in `attention`): `normalized` of it is the attention over those keys, and
    `combine_online` of two such states is the state over both key ranges.
    """
    q, k, v = (np.asarray(a, dtype=np.float64) for a in args[:3])  # tiles given in float64 stay as they are
    mask = args[3] if len(args) > 3 else None
    scale = op.scale.value.data
    rows, keys = q.shape[3], k.shape[2]
    per_row = math.prod(q.shape[:3]) * keys * 8
    step = max(1, ATTENTION_BLOCK_BYTES // max(per_row, 1))
    kt = np.swapaxes(k, -1, -2)[:, :, None]  # [B, H, 1, D, L]
    tops = np.empty((*q.shape[:4], 1), dtype=np.float64)
    totals = np.empty_like(tops)
    out = np.empty((*q.shape[:4], v.shape[3]), dtype=np.float64)
    key_positions = key_start + np.arange(keys)
    for start in range(0, rows, step):
        block = slice(start, min(rows, start + step))
        scores = np.matmul(q[:, :, :, block], kt) * scale  # [B, H, G, s, L]
        if mask is not None:
            part = np.broadcast_to(mask, (*q.shape[:3], rows, keys))[:, :, :, block]
            scores = np.where(part, scores, -np.inf) if part.dtype == np.bool_ else scores + part
        if op.causal is not None:
            query_positions = query_start + np.arange(block.start, block.stop)
            hidden = key_positions[None, :] > query_positions[:, None] + op.causal.value.data
            scores = np.where(hidden, -np.inf, scores)
        tops[:, :, :, block], totals[:, :, :, block], out[:, :, :, block] = _softmax_state(scores, v)
    return tops, totals, out


def _softmax_state(scores: np.ndarray, v: np.ndarray) -> AttentionState:
    """(max, sum of exp(score - max), exp(score - max) @ v) over the last dim; max 0 for an all -inf row."""
    top = np.max(scores, axis=-1, keepdims=True)
    top = np.where(np.isneginf(top), 0.0, top)
    weights = np.exp(scores - top)
    total = np.sum(weights, axis=-1, keepdims=True)
    return top, total, np.matmul(weights, v[:, :, None])  # [B, H, G, s, E]


def normalized(state: AttentionState) -> np.ndarray:
    """softmax(scores) @ v from an online state; a row that saw no visible key gives zeros."""
    _, total, weighted = state
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, weighted / np.where(total > 0, total, 1.0), 0.0)


def combine_online(seen: AttentionState, new: AttentionState) -> AttentionState:
    """
    The online-softmax state over two key ranges: both rescaled to the larger running max.
    Example: rows that saw max 2 (sum 1) and then max 3 (sum 1) have max 3 and sum e^-1 + 1.
    A range whose keys a row may not see has sum 0 and adds nothing.
    """
    (m1, s1, o1), (m2, s2, o2) = seen, new
    top = np.maximum(np.where(s1 > 0, m1, -np.inf), np.where(s2 > 0, m2, -np.inf))
    top = np.where(np.isneginf(top), 0.0, top)
    a1 = np.where(s1 > 0, np.exp(m1 - top), 0.0)
    a2 = np.where(s2 > 0, np.exp(m2 - top), 0.0)
    return top, s1 * a1 + s2 * a2, o1 * a1 + o2 * a2


def _reduction_axes(op: st.ReductionOp) -> tuple[tuple[int, ...], bool]:
    return st.ints(op.dims), op.keepdim is not None


@implements(st.SumOp, st.MeanOp)
def _sum_mean(op: st.ReductionOp, args: list[np.ndarray]) -> list[np.ndarray]:
    axes, keepdim = _reduction_axes(op)
    x = widen(args[0])
    reduce = np.mean if isinstance(op, st.MeanOp) else np.sum
    return [store(reduce(x, axis=axes, keepdims=keepdim, dtype=x.dtype), result_element(op))]


@implements(st.MaxOp, st.MinOp)
def _max_min(op: st.ReductionOp, args: list[np.ndarray]) -> list[np.ndarray]:
    axes, keepdim = _reduction_axes(op)
    reduce = np.max if isinstance(op, st.MaxOp) else np.min
    return [np.asarray(reduce(args[0], axis=axes, keepdims=keepdim))]


@implements(st.SoftmaxOp)
def _softmax(op: st.SoftmaxOp, args: list[np.ndarray]) -> list[np.ndarray]:
    x = widen(args[0])
    dim = op.dim.value.data
    shifted = np.exp(x - np.max(x, axis=dim, keepdims=True))
    return [store(shifted / np.sum(shifted, axis=dim, keepdims=True), result_element(op))]


def _normalized_axes(op: st.NormOp, rank: int) -> tuple[int, ...]:
    return tuple(range(rank - len(st.ints(op.normalized_shape)), rank))


@implements(st.LayerNormOp)
def _layer_norm(op: st.LayerNormOp, args: list[np.ndarray]) -> list[np.ndarray]:
    x = widen(args[0])
    axes = _normalized_axes(op, x.ndim)
    mean = np.mean(x, axis=axes, keepdims=True)
    centered = x - mean
    variance = np.mean(centered * centered, axis=axes, keepdims=True)
    value = centered / np.sqrt(variance + x.dtype.type(op.eps.value.data))
    operands = iter(args[1:])
    if op.weight is not None:
        value = value * widen(next(operands))
    if op.bias is not None:
        value = value + widen(next(operands))
    return [store(value, result_element(op))]


@implements(st.RmsNormOp)
def _rms_norm(op: st.RmsNormOp, args: list[np.ndarray]) -> list[np.ndarray]:
    x = widen(args[0])
    axes = _normalized_axes(op, x.ndim)
    value = x / np.sqrt(np.mean(x * x, axis=axes, keepdims=True) + x.dtype.type(op.eps.value.data))
    if op.weight is not None:
        value = value * widen(args[1])
    return [store(value, result_element(op))]


#### Views and data movement: values are moved, never recomputed ####


@implements(st.PermuteOp)
def _permute(op: st.PermuteOp, args: list[np.ndarray]) -> list[np.ndarray]:
    return [np.transpose(args[0], st.ints(op.perm))]


@implements(st.ReshapeOp)
def _reshape(op: Operation, args: list[np.ndarray]) -> list[np.ndarray]:
    return [np.reshape(args[0], shape_of(op.results[0]))]


@implements(st.ExpandOp)
def _expand(op: Operation, args: list[np.ndarray]) -> list[np.ndarray]:
    return [np.broadcast_to(args[0], shape_of(op.results[0]))]


@implements(st.SliceOp)
def _slice(op: st.SliceOp, args: list[np.ndarray]) -> list[np.ndarray]:
    index: list[slice] = [slice(None)] * args[0].ndim
    index[op.dim.value.data] = slice(op.start.value.data, op.end.value.data, op.step.value.data)
    return [args[0][tuple(index)]]


@implements(st.CatOp)
def _cat(op: st.CatOp, args: list[np.ndarray]) -> list[np.ndarray]:
    return [np.concatenate(args, axis=op.dim.value.data)]


@implements(st.PadOp)
def _pad(op: st.PadOp, args: list[np.ndarray]) -> list[np.ndarray]:
    widths = list(zip(st.ints(op.low), st.ints(op.high), strict=True))
    fill = store(np.asarray(op.value.value.data), result_element(op))
    return [np.pad(args[0], widths, constant_values=fill)]


@implements(st.CopyOp)
def _copy(op: Operation, args: list[np.ndarray]) -> list[np.ndarray]:
    return [np.array(args[0], copy=True)]


@implements(st.RestickifyOp)
def _restickify(op: Operation, args: list[np.ndarray]) -> list[np.ndarray]:
    # A relayout changes where elements live on the device, never their values.
    return [args[0]]


#### CPU fallback ####


@implements(st.CpuFallbackOp)
def _cpu_fallback(op: st.CpuFallbackOp, args: list[np.ndarray]) -> list[np.ndarray]:
    import torch  # only fallbacks need torch; the rest of the executor is pure NumPy

    def dtype_of(attr: Attribute) -> Any:
        row = format_of_element(attr)
        if row is None or not row.imported or row.torch is None:
            raise ExecutionError(f"'{op.aten.data}': cannot pass {attr} to an ATen op")
        return getattr(torch, row.torch)

    tensors = [torch.from_numpy(np.ascontiguousarray(a)) for a in args]
    name, _, overload = op.aten.data.partition("::")[2].partition(".")
    function = getattr(getattr(torch.ops.aten, name, None), overload or "default", None)
    if function is None:
        raise ExecutionError(f"'{op.aten.data}' is not an ATen op in this PyTorch")
    positional = decode_argument(op.args, tensors, dtype_of)
    keywords = decode_argument(op.kwargs, tensors, dtype_of) if op.kwargs is not None else {}
    try:
        with torch.no_grad():
            produced = function(*positional, **keywords)
    except Exception as error:  # PyTorch rejects the arguments: report it as this op's failure
        raise ExecutionError(f"'{op.aten.data}' failed: {type(error).__name__}: {error}") from error
    outputs = list(produced) if isinstance(produced, tuple | list) else [produced]
    if len(outputs) != len(op.outputs):
        raise ExecutionError(
            f"'{op.aten.data}' returned {len(outputs)} tensor(s), the op declares {len(op.outputs)}"
        )
    results = []
    for index, tensor in enumerate(outputs):
        array = to_numpy(tensor)
        declared = op.outputs[index].type
        shape = tuple(declared.get_shape()) if isinstance(declared, TensorType) else None
        if shape is not None and array.shape != shape:
            raise ExecutionError(
                f"'{op.aten.data}' returned result #{index} of shape {list(array.shape)}, "
                f"the op declares {list(shape)}"
            )
        results.append(array.astype(numpy_dtype(result_element(op, index)), copy=False))
    return results
