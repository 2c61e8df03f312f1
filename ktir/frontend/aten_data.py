"""
ATen -> graph-level ktir converters for views, data movement and CPU fallbacks.

Views (`view`, `permute`, `expand`, `slice`, ...) become ktir view ops; layout propagation
later decides whether they move data. Ops on the reference stack's CPU-fallback list become
`ktir.cpu_fallback`, which carries the ATen name and the whole argument list.
"""

from __future__ import annotations

from typing import Any

import torch
from torch._ops import OpOverload
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FloatAttr,
    IntegerAttr,
    NoneAttr,
    StringAttr,
    TensorType,
    f64,
    i1,
    i64,
)
from xdsl.ir import Attribute, SSAValue

from ktir.dialects.ktir import structured as st
from ktir.dialects.ktir.attributes import OperandRefAttr
from ktir.frontend.aten import CONVERTERS, CPU_FALLBACK, arg, converts, f64_attr, i64_attr, make
from ktir.frontend.emitter import (
    Emitter,
    UnsupportedNode,
    int_arg,
    int_list,
    mlir_element_type,
    node_list,
    node_type,
    type_of_fake,
)
from ktir.ir.values import shape_of
from ktir.layout.shapes import clamp_slice_bounds, normalize_dim

aten = torch.ops.aten

#### Views ####


@converts(aten.permute.default, aten.transpose.int, aten.t.default)
def _permute(e: Emitter, node: torch.fx.Node) -> SSAValue:
    source = e.value(node.args[0])
    rank = len(shape_of(source))
    if node.target == aten.permute.default:
        perm = [normalize_dim(d, rank) for d in int_list(node.args[1])]
    else:
        a, b = (0, 1) if node.target == aten.t.default else node.args[1:3]
        perm = list(range(rank))
        if rank >= 2:
            a, b = normalize_dim(int_arg(a), rank), normalize_dim(int_arg(b), rank)
            perm[a], perm[b] = perm[b], perm[a]
    if perm == list(range(rank)):
        return source
    return make(e, st.PermuteOp, [source], node_type(node), perm=st.int_array(perm))


@converts(
    aten.view.default,
    aten._unsafe_view.default,
    aten.reshape.default,
    aten.unsqueeze.default,
    aten.squeeze.default,
    aten.squeeze.dim,
    aten.squeeze.dims,
    aten.flatten.using_ints,
    aten.unflatten.int,
)
def _reshape(e: Emitter, node: torch.fx.Node) -> SSAValue:
    source, result_type = e.value(node.args[0]), node_type(node)
    # A reshape of a reshape is one reshape of the first one's source (values are immutable),
    # and none when it restores that source's shape: rows flattened for a 2-D op and unflattened
    # after it keep their own layout (`_scaled_mm` below computes on the unflattened rows).
    if isinstance(source.owner, st.ReshapeOp):
        source = source.owner.operands[0]
    if shape_of(source) == tuple(result_type.get_shape()):
        return source
    return make(e, st.ReshapeOp, [source], result_type)


@converts(aten.alias.default, aten.detach.default, aten.lift_fresh_copy.default, aten.contiguous.default)
def _alias(e: Emitter, node: torch.fx.Node) -> SSAValue:
    # Values are immutable in graph-level ktir: an alias is the value itself.
    return e.value(node.args[0])


@converts(aten.clone.default, aten.copy.default)
def _clone(e: Emitter, node: torch.fx.Node) -> SSAValue:
    # copy(dst, src) is dst's shape and dtype filled from src, which broadcasts.
    result_type = node_type(node)
    source = e.convert(
        e.value(node.args[-1] if node.target == aten.copy.default else node.args[0]), result_type.element_type
    )
    if shape_of(source) == tuple(result_type.get_shape()):
        # Values are immutable and layouts are the compiler's choice: a clone (a `contiguous()`
        # that copied on the tracing device) is the value itself, whatever strides it had.
        return source
    return make(e, st.CopyOp, [make(e, st.ExpandOp, [source], result_type)], result_type)


@converts(aten.expand.default, aten.expand_as.default)
def _expand(e: Emitter, node: torch.fx.Node) -> SSAValue:
    source, result_type = e.value(node.args[0]), node_type(node)
    if shape_of(source) == tuple(result_type.get_shape()):
        return source
    return make(e, st.ExpandOp, [source], result_type)


def slice_value(e: Emitter, source: SSAValue, dim: int, start: Any, end: Any, step: int) -> SSAValue:
    """`source[..., start:end:step, ...]` along `dim` (PyTorch's clamping; the whole dim is `source`)."""
    shape = shape_of(source)
    dim = normalize_dim(dim, len(shape))
    start, end = clamp_slice_bounds(shape[dim], start, end)
    length = len(range(start, end, step))
    if (start, length, step) == (0, shape[dim], 1):
        return source
    result_type = TensorType(
        st.tensor_of(source, "input").element_type, [length if i == dim else s for i, s in enumerate(shape)]
    )
    props = {"dim": i64_attr(dim), "start": i64_attr(start), "end": i64_attr(end), "step": i64_attr(step)}
    return make(e, st.SliceOp, [source], result_type, **props)


@converts(aten.slice.Tensor)
def _slice_tensor(e: Emitter, node: torch.fx.Node) -> SSAValue:
    args = [*node.args, *([None] * 5)]
    dim = args[1] if args[1] is not None else node.kwargs.get("dim", 0)
    start = args[2] if args[2] is not None else node.kwargs.get("start")
    end = args[3] if args[3] is not None else node.kwargs.get("end")
    step = args[4] if args[4] is not None else node.kwargs.get("step", 1)
    return slice_value(e, e.value(node.args[0]), int_arg(dim), start, end, int_arg(step))


@converts(aten.select.int)
def _select(e: Emitter, node: torch.fx.Node) -> SSAValue:
    source = e.value(node.args[0])
    shape = shape_of(source)
    dim = normalize_dim(int_arg(node.args[1]), len(shape))
    index = int_arg(node.args[2])
    index = index + shape[dim] if index < 0 else index
    picked = slice_value(e, source, dim, index, index + 1, 1)
    return make(e, st.ReshapeOp, [picked], node_type(node))


@converts(aten.split.Tensor, aten.split_with_sizes.default)
def _split(e: Emitter, node: torch.fx.Node) -> list[SSAValue]:
    source = e.value(node.args[0])
    shape = shape_of(source)
    dim = normalize_dim(arg(node, 2, "dim", 0), len(shape))
    if node.target == aten.split.Tensor:
        size = int_arg(node.args[1])
        sizes = [min(size, shape[dim] - start) for start in range(0, shape[dim], size)]
    else:
        sizes = int_list(node.args[1])
    results, start = [], 0
    for size in sizes:
        results.append(slice_value(e, source, dim, start, start + size, 1))
        start += size
    return results


@converts(aten.cat.default)
def _cat(e: Emitter, node: torch.fx.Node) -> SSAValue:
    result_type = node_type(node)
    # Empty inputs add nothing (and torch.cat skips legacy empty (0,) tensors of any rank).
    # A lifted empty constant (a model on the meta device) is a placeholder, not a node e.empty holds.
    present = [t for t in node_list(node.args[0]) if t not in e.empty and not _empty_placeholder(t)]
    inputs = [e.convert(e.value(t), result_type.element_type) for t in present]
    dim = normalize_dim(arg(node, 1, "dim", 0), len(result_type.shape))
    if len(inputs) == 1:
        return inputs[0]
    return cat_values(e, inputs, dim)


def _empty_placeholder(node: torch.fx.Node) -> bool:
    fake = node.meta.get("val")
    return (
        node.op == "placeholder" and isinstance(fake, torch.Tensor) and fake.numel() == 0 and fake.dim() > 0
    )


def cat_values(e: Emitter, values: list[SSAValue], dim: int) -> SSAValue:
    """`ktir.cat` of `values` (one element type) along `dim`; the result's size there is their sum."""
    shape = list(shape_of(values[0]))
    shape[dim] = sum(shape_of(v)[dim] for v in values)
    result_type = TensorType(st.tensor_of(values[0], "input").element_type, shape)
    op = st.CatOp.build(operands=[values], properties={"dim": i64_attr(dim)}, result_types=[result_type])
    return e.emit(op).results[0]


@converts(aten.slice_scatter.default)
def _slice_scatter(e: Emitter, node: torch.fx.Node) -> SSAValue:
    """`input` with `input[start:end]` along `dim` replaced by `src`: the pieces around it, joined."""
    source, result_type = e.value(node.args[0]), node_type(node)
    shape = shape_of(source)
    dim = normalize_dim(arg(node, 2, "dim", 0), len(shape))
    start, end = clamp_slice_bounds(shape[dim], arg(node, 3, "start"), arg(node, 4, "end"))
    if arg(node, 5, "step", 1) != 1:
        raise UnsupportedNode("slice_scatter with a step other than 1")
    src = e.convert(e.value(node.args[1]), result_type.element_type)
    pieces = [slice_value(e, source, dim, 0, start, 1)] if start > 0 else []
    pieces.append(src)
    if end < shape[dim]:
        pieces.append(slice_value(e, source, dim, end, shape[dim], 1))
    if len(pieces) == 1:
        return make(e, st.CopyOp, [src], result_type)
    return cat_values(e, pieces, dim)


@converts(aten.repeat.default)
def _repeat(e: Emitter, node: torch.fx.Node) -> SSAValue:
    """
    `x.repeat(r0, r1, ...)`: per dim with r > 1, a new axis of r copies before it (an expand)
    merged into it (a reshape). Example: (2, 3) repeated (2, 1) is (1, 2, 3) -> (2, 2, 3) -> (4, 3).
    """
    result_type = node_type(node)
    repeats = int_list(node.args[1])
    value = e.value(node.args[0])
    value = e.reshape(value, [1] * (len(repeats) - len(shape_of(value))) + list(shape_of(value)))
    element_type = result_type.element_type
    for dim, count in enumerate(repeats):
        if count == 1:
            continue
        shape = list(shape_of(value))
        spread = e.reshape(value, [*shape[:dim], 1, *shape[dim:]])
        wide = TensorType(element_type, [*shape[:dim], count, *shape[dim:]])
        copies = make(e, st.ExpandOp, [spread], wide)
        value = e.reshape(copies, [*shape[:dim], count * shape[dim], *shape[dim + 1 :]])
    if tuple(shape_of(value)) != tuple(result_type.get_shape()):
        raise UnsupportedNode(f"repeat {repeats} of {list(shape_of(e.value(node.args[0])))}")
    return make(e, st.CopyOp, [value], result_type)


@converts(aten.constant_pad_nd.default)
def _pad(e: Emitter, node: torch.fx.Node) -> SSAValue:
    source = e.value(node.args[0])
    rank = len(shape_of(source))
    pad = int_list(node.args[1])
    value = arg(node, 2, "value", 0.0)
    low, high = [0] * rank, [0] * rank
    for i in range(len(pad) // 2):  # PyTorch lists (low, high) pairs from the last dim backwards
        low[rank - 1 - i], high[rank - 1 - i] = pad[2 * i], pad[2 * i + 1]
    # A negative amount crops (RWKV's time shift pads 1 before and crops 1 after): a slice first.
    for dim in range(rank):
        if low[dim] < 0 or high[dim] < 0:
            length = shape_of(source)[dim]
            source = slice_value(e, source, dim, max(0, -low[dim]), length - max(0, -high[dim]), 1)
            low[dim], high[dim] = max(0, low[dim]), max(0, high[dim])
    if not any(low) and not any(high):
        return make(e, st.CopyOp, [source], node_type(node))
    props = {"low": st.int_array(low), "high": st.int_array(high), "value": f64_attr(value)}
    return make(e, st.PadOp, [source], node_type(node), **props)


#### CPU fallbacks ####

CPU_FALLBACK_OPS = frozenset(
    {
        "arange",
        "tril",
        "triu",
        "index_copy",
        "argmax",
        "argmin",
        "isin",
        "bitwise_or",
        "bitwise_xor",
        "bitwise_and",
        "bitwise_not",
        "normal",
        "random",
    }
)
"""ATen op names (without overload) that run on the CPU, after the reference stack's list."""

_DROPPED_KWARGS = {"device", "layout", "pin_memory", "memory_format"}


def fallback_attr(e: Emitter, value: Any, operands: list[SSAValue]) -> Attribute:
    """
    Encode one ATen argument: a tensor becomes `#ktir.operand<i>` (appended to `operands`),
    numbers, strings, None and dtypes become builtin attributes, lists become arrays.
    """
    if isinstance(value, torch.fx.Node):
        operands.append(e.value(value))
        return OperandRefAttr(len(operands) - 1)
    if value is None:
        return NoneAttr()
    if isinstance(value, bool):
        return IntegerAttr(int(value), i1)
    if isinstance(value, int):
        return IntegerAttr(value, i64)
    if isinstance(value, float):
        return FloatAttr(value, f64)
    if isinstance(value, str):
        return StringAttr(value)
    if isinstance(value, torch.dtype):
        return mlir_element_type(value)
    if isinstance(value, list | tuple):
        return ArrayAttr([fallback_attr(e, v, operands) for v in value])
    raise UnsupportedNode(f"cannot encode argument {value!r} of a CPU fallback")


def cpu_fallback(e: Emitter, node: torch.fx.Node) -> SSAValue | list[SSAValue]:
    """Emit `ktir.cpu_fallback` for `node`, keeping its full argument list."""
    operands: list[SSAValue] = []
    args = ArrayAttr([fallback_attr(e, a, operands) for a in node.args])
    kwargs = {k: fallback_attr(e, v, operands) for k, v in node.kwargs.items() if k not in _DROPPED_KWARGS}
    fake = node.meta.get("val")
    multi = isinstance(fake, list | tuple)
    fakes = list(fake) if multi else [fake]
    result_types = [type_of_fake(f, f"result {i} of '{node.name}'") for i, f in enumerate(fakes)]
    if not isinstance(node.target, OpOverload):
        raise UnsupportedNode(f"{node.target!r} is not an ATen op overload")
    schema = node.target._schema
    name = f"{schema.name}.{schema.overload_name or 'default'}"
    props: dict[str, Attribute] = {"aten": StringAttr(name), "args": args}
    if kwargs:
        props["kwargs"] = DictionaryAttr(kwargs)
    op = st.CpuFallbackOp.build(operands=[operands], properties=props, result_types=[result_types])
    results: list[SSAValue] = list(e.emit(op).results)
    return results if multi else results[0]


CONVERTERS[CPU_FALLBACK] = cpu_fallback


def is_cpu_fallback(target: Any) -> bool:
    """True when an ATen overload belongs to the CPU-fallback list."""
    packet = getattr(target, "_overloadpacket", None)
    return packet is not None and getattr(packet, "__name__", "") in CPU_FALLBACK_OPS


IGNORED = frozenset(
    {
        aten._assert_tensor_metadata.default,
        aten._assert_scalar.default,
        aten.sym_constrain_range_for_size.default,
        aten._assert_async.msg,
    }
)
"""Runtime assertions with no value: dropped (shapes are static and checked on import)."""
