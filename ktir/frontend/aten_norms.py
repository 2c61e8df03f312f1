"""
ATen -> graph-level ktir converters for the normalizations that are compositions of ktir ops:
group norm (a layer norm over each group's channels and positions, then the per-channel
affine), the 2-norm of a vector (`linalg_vector_norm` with `ord = 2`: weight normalization in
wav2vec2-style convolutions, ConvNeXt-V2's global response norm), batch norm over the batch's
own statistics (`_native_batch_norm_legit.no_stats`, BiT's weight standardization) and
inference batch norm (a per-channel scale and shift from the running statistics, which
`ktir.compile` folds into constants).
Each computes in fp32 for f16/bf16 inputs and rounds once, as PyTorch's CPU kernels do.

Example: group norm of (1, 32, 10) with 4 groups is a layer norm of the (1, 4, 80) reshape over
its last dim, reshaped back to (1, 32, 10), times weight (32, 1) plus bias (32, 1).
"""

from __future__ import annotations

import math

import torch
from torch.fx.node import Argument
from xdsl.dialects.builtin import Float32Type, TensorType, UnitAttr
from xdsl.ir import SSAValue

from ktir.dialects.ktir import elementwise as ew
from ktir.dialects.ktir import structured as st
from ktir.frontend.aten import arg, converts, f64_attr, make
from ktir.frontend.emitter import (
    Emitter,
    UnsupportedNode,
    float_arg,
    int_arg,
    int_list,
    node_type,
    tensor_type,
    type_of_fake,
    used_outputs,
)
from ktir.ir.values import shape_of
from ktir.layout.shapes import normalize_dim

aten = torch.ops.aten


def _only_output_used(node: torch.fx.Node) -> None:
    if used_outputs(node) - {0}:
        raise UnsupportedNode(f"{node.target}'s statistics outputs are used (ktir keeps only the output)")


def _per_channel(e: Emitter, value: Argument, rank: int, default: float) -> SSAValue:
    """A (C,) parameter in fp32, shaped (C, 1, ...) to broadcast over the positions."""
    wide = Float32Type()
    if value is None:
        return e.scalar(default, wide)
    vector = e.convert(e.value(value), wide)
    return e.reshape(vector, [shape_of(vector)[0], *([1] * (rank - 2))])


def _mean(e: Emitter, value: SSAValue, dims: list[int]) -> SSAValue:
    shape = [1 if d in dims else n for d, n in enumerate(shape_of(value))]
    props = {"dims": st.int_array(dims), "keepdim": UnitAttr()}
    return make(e, st.MeanOp, [value], TensorType(tensor_type(value).element_type, shape), **props)


@converts(aten.native_group_norm.default)
def _group_norm(e: Emitter, node: torch.fx.Node) -> list[SSAValue]:
    _only_output_used(node)
    x = e.value(node.args[0])
    groups, eps = int_arg(node.args[6]), float(float_arg(node.args[7]))
    shape = list(shape_of(x))
    wide = Float32Type()
    grouped = e.reshape(e.convert(x, wide), [shape[0], groups, math.prod(shape[1:]) // groups])
    props = {"normalized_shape": st.int_array([shape_of(grouped)[-1]]), "eps": f64_attr(eps)}
    normed = make(e, st.LayerNormOp, [grouped, None, None], tensor_type(grouped), **props)
    restored = e.reshape(normed, shape)
    out_type = TensorType(wide, shape)
    scaled = make(e, ew.MulOp, [restored, _per_channel(e, node.args[1], len(shape), 1.0)], out_type)
    shifted = make(e, ew.AddOp, [scaled, _per_channel(e, node.args[2], len(shape), 0.0)], out_type)
    out = e.convert(shifted, tensor_type(x).element_type)
    empty = e.emit(ew.FullOp(0.0, TensorType(wide, [0]))).results[0]
    return [out, empty, empty]


@converts(aten.linalg_vector_norm.default)
def _vector_norm(e: Emitter, node: torch.fx.Node) -> SSAValue:
    if float(arg(node, 1, "ord", 2)) != 2.0:
        raise UnsupportedNode(f"vector norm of order {arg(node, 1, 'ord', 2)} (only 2)")
    if arg(node, 4, "dtype") is not None:
        raise UnsupportedNode("vector norm with a dtype argument")
    x = e.value(node.args[0])
    rank = len(shape_of(x))
    dim = arg(node, 2, "dim")
    dims = sorted(normalize_dim(d, rank) for d in int_list(dim)) if dim is not None else list(range(rank))
    keepdim = bool(arg(node, 3, "keepdim", False))
    wide = Float32Type()
    x32 = e.convert(x, wide)
    squares = make(e, ew.MulOp, [x32, x32], tensor_type(x32))
    kept = [1 if d in dims else n for d, n in enumerate(shape_of(x))]
    props = {"dims": st.int_array(dims), "keepdim": UnitAttr()}
    total = make(e, st.SumOp, [squares], TensorType(wide, kept), **props)
    root = make(e, ew.SqrtOp, [total], TensorType(wide, kept))
    result_type = node_type(node)
    if not keepdim:
        root = e.reshape(root, list(result_type.get_shape()))
    return e.convert(root, result_type.element_type)


@converts(aten._native_batch_norm_legit.no_stats)
def _batch_norm_batch_statistics(e: Emitter, node: torch.fx.Node) -> list[SSAValue]:
    """`(x - mean) / sqrt(var + eps) * weight + bias`, the statistics over every dim but 1."""
    _only_output_used(node)
    x = e.value(node.args[0])
    eps = float(float_arg(node.args[5]))
    shape = list(shape_of(x))
    dims = [d for d in range(len(shape)) if d != 1]
    wide = Float32Type()
    x32 = e.convert(x, wide)
    full = TensorType(wide, shape)
    centered = make(e, ew.SubOp, [x32, _mean(e, x32, dims)], full)
    variance = _mean(e, make(e, ew.MulOp, [centered, centered], full), dims)
    spread = make(e, ew.AddOp, [variance, e.scalar(eps, wide)], tensor_type(variance))
    normed = make(e, ew.MulOp, [centered, make(e, ew.RsqrtOp, [spread], tensor_type(spread))], full)
    scaled = make(e, ew.MulOp, [normed, _per_channel(e, node.args[1], len(shape), 1.0)], full)
    shifted = make(e, ew.AddOp, [scaled, _per_channel(e, node.args[2], len(shape), 0.0)], full)
    out = e.convert(shifted, tensor_type(x).element_type)
    stats = [type_of_fake(f, "statistics") for f in node.meta["val"][1:]]
    empties = [e.emit(ew.FullOp(0.0, t)).results[0] for t in stats]
    return [out, *empties]


#### Batch norm (inference) ####


@converts(aten._native_batch_norm_legit_no_training.default)
def _batch_norm(e: Emitter, node: torch.fx.Node) -> list[SSAValue]:
    """`(x - mean) / sqrt(var + eps) * weight + bias` per channel, in fp32: a scale and a shift."""
    x = e.value(node.args[0])
    weight, bias, mean, var = (
        arg(node, i, name)
        for i, name in ((1, "weight"), (2, "bias"), (3, "running_mean"), (4, "running_var"))
    )
    eps = float(float_arg(node.args[6]))
    shape = list(shape_of(x))
    wide = Float32Type()
    vector = TensorType(wide, [shape[1], *([1] * (len(shape) - 2))])

    def channel(value: torch.fx.Node | None, default: float) -> SSAValue:
        return _per_channel(e, value, len(shape), default)

    spread = make(e, ew.AddOp, [channel(var, 1.0), e.scalar(eps, wide)], vector)
    inverse = make(e, ew.RsqrtOp, [spread], vector)
    scale = make(e, ew.MulOp, [inverse, channel(weight, 1.0)], vector)
    shift = make(
        e, ew.SubOp, [channel(bias, 0.0), make(e, ew.MulOp, [channel(mean, 0.0), scale], vector)], vector
    )
    wide_shape = TensorType(wide, shape)
    scaled = make(e, ew.MulOp, [e.convert(x, wide), scale], wide_shape)
    out = e.convert(make(e, ew.AddOp, [scaled, shift], wide_shape), tensor_type(x).element_type)
    empty = e.emit(ew.FullOp(0.0, TensorType(wide, [0]))).results[0]
    return [out, empty, empty]
