"""
ATen -> graph-level ktir converters for convolutions and pooling.

A convolution becomes a matmul on the PE arrays over an im2col of its input, built from ops ktir
already has, so layouts, work division, fusion and traffic treat it like any matmul:

1. the input is padded (`ktir.pad`), and each kernel tap `t` reads a strided window of it
   (`ktir.slice` per spatial dim: start `t * dilation`, step `stride`);
2. the taps join along the channels (`ktir.cat`), move the channels last and flatten the
   positions: x' of shape `(B * positions, taps * C)`;
3. the weight `(O, C, *K)` moves its channels last the same way, `(O, taps * C)`, and
   `x' @ w'^T` (+ the bias) is the output, reshaped and moved back to `(B, O, *spatial)`.

Two common shapes need no slices: a patch embedding (stride = kernel, no padding or dilation:
ViT, CLIP, Swin) is a reshape and a permute of the input, and a 1x1 convolution a permute. A
depthwise convolution (groups = channels, one filter each) has no contraction over channels: it
is a multiply-add per tap on the SFU, in fp32, rounded once. Other grouped convolutions run one
such matmul per group. Max and average pooling take the same taps and combine them with
`ktir.maximum` / `ktir.add`. Batch norm is in `ktir.frontend.aten_norms`.

Example: a 3x3 convolution, stride 1, padding 1, of x (1, 16, 8, 8) with w (32, 16, 3, 3) is nine
slices of the padded (1, 16, 10, 10) input, a cat to (1, 144, 8, 8), a permute and reshape to
(64, 144), and a (64, 144) @ (144, 32) matmul, reshaped to (1, 32, 8, 8).
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Sequence

import torch
from xdsl.dialects.builtin import Float32Type, TensorType, UnitAttr
from xdsl.ir import SSAValue

from ktir.dialects.ktir import elementwise as ew
from ktir.dialects.ktir import structured as st
from ktir.frontend.aten import arg, converts, f64_attr, make
from ktir.frontend.aten_data import cat_values, slice_value
from ktir.frontend.emitter import Emitter, UnsupportedNode, int_arg, int_list, node_type, tensor_type
from ktir.ir.values import shape_of

aten = torch.ops.aten


def _ints(value: object, count: int) -> list[int]:
    """An ATen int list argument (one value repeats over `count` spatial dims)."""
    values = int_list(value) if isinstance(value, list | tuple) else [int(int_arg(value))]
    return values * count if len(values) == 1 else values


def _pad(
    e: Emitter, x: SSAValue, padding: Sequence[int], value: float, extra: Sequence[int] | None = None
) -> SSAValue:
    """
    `x` padded by `padding[i]` on both sides of spatial dim i (dims 2, 3, ...), and by
    `extra[i]` more after it (the windows `ceil_mode` adds past the end).
    """
    extra = list(extra or [0] * len(padding))
    if not any(padding) and not any(extra):
        return x
    shape = shape_of(x)
    low = [0, 0, *padding]
    high = [0, 0, *(p + x for p, x in zip(padding, extra, strict=True))]
    padded = [n + lo + hi for n, lo, hi in zip(shape, low, high, strict=True)]
    props = {"low": st.int_array(low), "high": st.int_array(high), "value": f64_attr(value)}
    return make(e, st.PadOp, [x], TensorType(tensor_type(x).element_type, padded), **props)


def _ceil_extra(
    lengths: Sequence[int], inside: Sequence[tuple[int, int]], geometry: _Geometry, out: Sequence[int]
) -> list[int]:
    """
    How far past `lengths` (the padded extent per spatial dim) the last of `out` windows
    reaches (ceil_mode), counting only the taps that read some of `inside` (the pooled part).
    """
    kernel, stride, _, dilation = geometry
    extra = []
    for length, (first, end), k, s, d, o in zip(lengths, inside, kernel, stride, dilation, out, strict=True):
        kept = [t for t in range(k) if _reads(t * d, s, o, first, end)]
        reach = max((t * d + (o - 1) * s + 1 for t in kept), default=0)
        extra.append(max(0, reach - length))
    return extra


def _taps(
    e: Emitter,
    x: SSAValue,
    kernel: Sequence[int],
    stride: Sequence[int],
    dilation: Sequence[int],
    out: Sequence[int],
    inside: Sequence[tuple[int, int]] | None = None,
) -> list[SSAValue]:
    """
    Each kernel tap's strided window of the (padded) input, shape `(B, C, *out)`, taps in
    row-major order; taps that share a row share its slice along the first spatial dim.

    With `inside` (per spatial dim, the [first, end) of the padded input that is not padding),
    taps whose window lies wholly in the padding are left out: pooling ignores them (they add
    0 to a sum, -inf to a max). EfficientNet pools a 1 x 1 map with a 320 x 320 kernel in
    ceil mode: one tap instead of 102,400.
    """
    ranges = []
    for i, k in enumerate(kernel):
        taps = range(k)
        if inside is not None:
            first, end = inside[i]
            taps = [t for t in range(k) if _reads(t * dilation[i], stride[i], out[i], first, end)]
        ranges.append(taps)
    windows: dict[tuple[int, ...], SSAValue] = {(): x}
    for tap in itertools.product(*ranges):
        for i in range(len(tap)):
            if tap[: i + 1] in windows:
                continue
            start = tap[i] * dilation[i]
            end = start + (out[i] - 1) * stride[i] + 1
            windows[tap[: i + 1]] = slice_value(e, windows[tap[:i]], 2 + i, start, end, stride[i])
    return [windows[tap] for tap in itertools.product(*ranges)]


def _reads(start: int, stride: int, count: int, first: int, end: int) -> bool:
    """Whether positions `start + j * stride` (j < count) reach into [first, end)."""
    if start >= end:
        return False
    last = start + (count - 1) * stride
    if last < first:
        return False
    # the first position at or after `first`
    j = max(0, -(-(first - start) // stride))
    return start + j * stride < end and j < count


def _channels_last_rows(e: Emitter, x: SSAValue) -> SSAValue:
    """`(B, C, *S)` -> `(B * prod(S), C)`: every position a row of its channels."""
    shape = shape_of(x)
    rank = len(shape)
    moved = e.permute(x, [0, *range(2, rank), 1])
    return e.reshape(moved, [math.prod(shape) // shape[1], shape[1]])


def _matmul_conv(e: Emitter, columns: SSAValue, weight: SSAValue, out_shape: Sequence[int]) -> SSAValue:
    """`columns (P, K) @ weight (O, K)^T` reshaped from `(B, *S, O)` to `out_shape` `(B, O, *S)`."""
    element_type = tensor_type(columns).element_type
    rows = shape_of(columns)[0]
    channels = shape_of(weight)[0]
    weight_t = e.permute(weight, [1, 0])
    product = make(e, st.MatmulOp, [columns, weight_t], TensorType(element_type, [rows, channels]))
    batch, spatial = out_shape[0], list(out_shape[2:])
    grid = e.reshape(product, [batch, *spatial, channels])
    return e.permute(grid, [0, len(spatial) + 1, *range(1, len(spatial) + 1)])


def _is_patch_embedding(shape: Sequence[int], kernel, stride, padding, dilation) -> bool:
    return (
        any(k > 1 for k in kernel)
        and list(stride) == list(kernel)
        and not any(padding)
        and all(d == 1 for d in dilation)
        and all(n % k == 0 for n, k in zip(shape[2:], kernel, strict=True))
    )


def _patch_columns(e: Emitter, x: SSAValue, kernel: Sequence[int]) -> SSAValue:
    """`(B, C, n0*k0, n1*k1)` -> `(B * n0 * n1, C * k0 * k1)`: each patch a row, channel-major."""
    shape = shape_of(x)
    batch, channels, spatial = shape[0], shape[1], shape[2:]
    counts = [n // k for n, k in zip(spatial, kernel, strict=True)]
    split = [batch, channels, *itertools.chain.from_iterable(zip(counts, kernel, strict=True))]
    blocks = e.reshape(x, split)
    dims = len(kernel)
    perm = [0, *(2 + 2 * i for i in range(dims)), 1, *(3 + 2 * i for i in range(dims))]
    moved = e.permute(blocks, perm)
    return e.reshape(moved, [batch * math.prod(counts), channels * math.prod(kernel)])


def _dense_conv(
    e: Emitter, x: SSAValue, weight: SSAValue, geometry: _Geometry, out_shape: list[int]
) -> SSAValue:
    """One group: im2col (or a patch view) and a matmul."""
    kernel, stride, padding, dilation = geometry
    w_shape = shape_of(weight)
    if _is_patch_embedding(shape_of(x), kernel, stride, padding, dilation):
        columns = _patch_columns(e, x, kernel)
        return _matmul_conv(e, columns, e.reshape(weight, [w_shape[0], math.prod(w_shape[1:])]), out_shape)
    taps = _taps(e, _pad(e, x, padding, 0.0), kernel, stride, dilation, out_shape[2:])
    stacked = taps[0] if len(taps) == 1 else cat_values(e, taps, 1)
    columns = _channels_last_rows(e, stacked)
    # The weight's taps go first, its channels last, as the columns are ordered (tap, channel).
    rank = len(w_shape)
    tap_major = e.permute(weight, [0, *range(2, rank), 1])
    return _matmul_conv(e, columns, e.reshape(tap_major, [w_shape[0], math.prod(w_shape[1:])]), out_shape)


def _depthwise(
    e: Emitter,
    x: SSAValue,
    weight: SSAValue,
    bias: SSAValue | None,
    geometry: _Geometry,
    out_shape: list[int],
) -> SSAValue:
    """groups = channels, one filter each: `sum_t window_t * w[:, 0, t] (+ bias)` in fp32, rounded once."""
    kernel, stride, padding, dilation = geometry
    element_type = tensor_type(x).element_type
    wide = Float32Type()
    taps = _taps(e, _pad(e, x, padding, 0.0), kernel, stride, dilation, out_shape[2:])
    channels = shape_of(weight)[0]
    flat = e.convert(e.reshape(weight, [channels, math.prod(kernel)]), wide)
    spatial_ones = [1] * len(kernel)
    total: SSAValue | None = None
    for index, window in enumerate(taps):
        column = slice_value(e, flat, 1, index, index + 1, 1)
        scale = e.reshape(column, [channels, *spatial_ones])
        term = make(e, ew.MulOp, [e.convert(window, wide), scale], TensorType(wide, out_shape))
        total = term if total is None else make(e, ew.AddOp, [total, term], TensorType(wide, out_shape))
    assert total is not None
    if bias is not None:
        shaped = e.reshape(e.convert(bias, wide), [channels, *spatial_ones])
        total = make(e, ew.AddOp, [total, shaped], TensorType(wide, out_shape))
    return e.convert(total, element_type)


_Geometry = tuple[list[int], list[int], list[int], list[int]]


@converts(aten.convolution.default)
def _convolution(e: Emitter, node: torch.fx.Node) -> SSAValue:
    x, weight = e.value(node.args[0]), e.value(node.args[1])
    result_type = node_type(node)
    out_shape = list(result_type.get_shape())
    dims = len(shape_of(x)) - 2
    if node.args[6]:
        raise UnsupportedNode("transposed convolution")
    if dims < 1:
        raise UnsupportedNode("convolution without spatial dims")
    geometry: _Geometry = (
        list(shape_of(weight)[2:]),
        _ints(node.args[3], dims),
        _ints(node.args[4], dims),
        _ints(node.args[5], dims),
    )
    groups = int_arg(node.args[8])
    channels = shape_of(x)[1]
    bias = node.args[2]
    if groups == channels and shape_of(weight)[0] == channels and groups > 1:
        return _depthwise(e, x, weight, None if bias is None else e.value(bias), geometry, out_shape)
    if groups == 1:
        out = _dense_conv(e, x, weight, geometry, out_shape)
    else:
        out = _grouped(e, x, weight, geometry, out_shape, groups)
    if bias is None:
        return out
    shaped = e.reshape(e.value(bias), [out_shape[1], *([1] * dims)])
    return make(e, ew.AddOp, [out, shaped], result_type)


def _grouped(
    e: Emitter, x: SSAValue, weight: SSAValue, geometry: _Geometry, out_shape: list[int], groups: int
) -> SSAValue:
    """One dense convolution per group of channels, the outputs joined along the channels."""
    per_in = shape_of(x)[1] // groups
    per_out = shape_of(weight)[0] // groups
    outputs = []
    for g in range(groups):
        part = slice_value(e, x, 1, g * per_in, (g + 1) * per_in, 1)
        filters = slice_value(e, weight, 0, g * per_out, (g + 1) * per_out, 1)
        outputs.append(_dense_conv(e, part, filters, geometry, [out_shape[0], per_out, *out_shape[2:]]))
    return cat_values(e, outputs, 1)


#### Pooling ####


def _pool_geometry(node: torch.fx.Node, dims: int) -> _Geometry:
    kernel = _ints(node.args[1], dims)
    stride_arg = arg(node, 2, "stride", [])
    stride = _ints(stride_arg, dims) if stride_arg else kernel
    padding = _ints(arg(node, 3, "padding", 0), dims)
    return kernel, stride, padding, [1] * dims


@converts(aten.max_pool2d_with_indices.default, aten.max_pool2d.default)
def _max_pool(e: Emitter, node: torch.fx.Node) -> SSAValue | list[SSAValue]:
    x = e.value(node.args[0])
    dims = len(shape_of(x)) - 2
    kernel, stride, padding, _ = _pool_geometry(node, dims)
    dilation = _ints(arg(node, 4, "dilation", 1), dims)
    if node.target == aten.max_pool2d_with_indices.default and _indices_used(node):
        raise UnsupportedNode("max pooling whose indices are used")
    fake = node.meta["val"]
    out_shape = list((fake[0] if isinstance(fake, tuple | list) else fake).shape)
    inside = [(p, p + n) for p, n in zip(padding, shape_of(x)[2:], strict=True)]
    padded = [n + 2 * p for p, n in zip(padding, shape_of(x)[2:], strict=True)]
    extra = _ceil_extra(padded, inside, (kernel, stride, padding, dilation), out_shape[2:])
    taps = _taps(e, _pad(e, x, padding, -math.inf, extra), kernel, stride, dilation, out_shape[2:], inside)
    result = taps[0]
    for window in taps[1:]:
        result = make(e, ew.MaximumOp, [result, window], tensor_type(window))
    if node.target == aten.max_pool2d_with_indices.default:
        return [result, result]  # the indices are unused (checked above); never read
    return result


def _indices_used(node: torch.fx.Node) -> bool:
    return any(user.args[1] == 1 for user in node.users if user.target is operator.getitem)


@converts(aten.avg_pool2d.default)
def _avg_pool(e: Emitter, node: torch.fx.Node) -> SSAValue:
    x = e.value(node.args[0])
    dims = len(shape_of(x)) - 2
    kernel, stride, padding, dilation = _pool_geometry(node, dims)
    if arg(node, 6, "divisor_override") is not None:
        raise UnsupportedNode("average pooling with divisor_override")
    result_type = node_type(node)
    out_shape = list(result_type.get_shape())
    element_type = result_type.element_type
    wide = Float32Type()
    inside = [(p, p + n) for p, n in zip(padding, shape_of(x)[2:], strict=True)]
    padded = [n + 2 * p for p, n in zip(padding, shape_of(x)[2:], strict=True)]
    extra = _ceil_extra(padded, inside, (kernel, stride, padding, dilation), out_shape[2:])
    taps = _taps(e, _pad(e, x, padding, 0.0, extra), kernel, stride, dilation, out_shape[2:], inside)
    total = e.convert(taps[0], wide)
    for window in taps[1:]:
        total = make(e, ew.AddOp, [total, e.convert(window, wide)], TensorType(wide, out_shape))
    include_pad = arg(node, 5, "count_include_pad", True)
    whole = all(  # every window lies in the padded input: each divides by the kernel's size
        (o - 1) * s + (k - 1) * d + 1 <= n
        for n, k, s, d, o in zip(padded, kernel, stride, dilation, out_shape[2:], strict=True)
    )
    if whole and (include_pad or not any(padding)):
        divisor = e.scalar(math.prod(kernel), wide)
    else:
        # Each window divides by what it covers of the input (and of the padding, when counted,
        # but never of the windows ceil_mode adds past it): the same windows over ones.
        counted = [n + 2 * p for n, p in zip(shape_of(x)[2:], padding, strict=True)] if include_pad else None
        shape = list(shape_of(x)[:2]) + (counted or list(shape_of(x)[2:]))
        ones = e.emit(ew.FullOp(1.0, TensorType(wide, shape))).results[0]
        counted_range = [(0, n) for n in shape[2:]] if include_pad else inside
        mask_extra = _ceil_extra(padded, counted_range, (kernel, stride, padding, dilation), out_shape[2:])
        low = [0] * dims if include_pad else padding
        mask = _pad(e, ones, low, 0.0, mask_extra)
        windows = _taps(e, mask, kernel, stride, dilation, out_shape[2:], counted_range)
        divisor = windows[0]
        for window in windows[1:]:
            divisor = make(e, ew.AddOp, [divisor, window], TensorType(wide, out_shape))
    mean = make(e, ew.DivOp, [total, divisor], TensorType(wide, out_shape))
    return e.convert(mean, element_type)


@converts(aten._adaptive_avg_pool2d.default, aten.adaptive_avg_pool2d.default)
def _adaptive_avg_pool(e: Emitter, node: torch.fx.Node) -> SSAValue:
    x = e.value(node.args[0])
    if int_list(node.args[1]) != [1, 1]:
        raise UnsupportedNode(f"adaptive average pooling to {int_list(node.args[1])} (only to 1x1)")
    rank = len(shape_of(x))
    result_type = node_type(node)
    op = st.MeanOp.build(
        operands=[x],
        properties={"dims": st.int_array([rank - 2, rank - 1]), "keepdim": UnitAttr()},
        result_types=[result_type],
    )
    return e.emit(op).results[0]
