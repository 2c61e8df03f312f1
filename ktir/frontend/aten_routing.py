"""
ATen -> graph-level ktir converters for mixture-of-experts routing (`dialects/ktir/routing.py`):
`topk`, `sort`, `histc`, `index_put` with one row index, and transformers' `grouped_mm_fallback`
custom op (its MoE layers' per-expert matmuls). Forms the ops do not cover (a `topk` of the
smallest, a descending sort, a `histc` over the data's own range, an accumulating `index_put`)
become `ktir.cpu_fallback`.
"""

from __future__ import annotations

import torch
from xdsl.dialects.builtin import TensorType, i64
from xdsl.ir import SSAValue

from ktir.dialects.ktir import routing
from ktir.dialects.ktir import structured as st
from ktir.frontend.aten import arg, converts, converts_named, cpu_fallback_of, f64_attr, i64_attr
from ktir.frontend.emitter import (
    Emitter,
    int_arg,
    node_arg,
    node_type,
    optional_node_list,
    tensor_type,
    type_of_fake,
)
from ktir.ir.values import shape_of
from ktir.layout.shapes import normalize_dim

aten = torch.ops.aten


def _is_last(node: torch.fx.Node, index: int, name: str, default: int = -1) -> bool:
    rank = len(node_arg(node.args[0]).meta["val"].shape)
    return rank > 0 and normalize_dim(arg(node, index, name, default), rank) == rank - 1


def _two_results(
    e: Emitter, op_class: type, node: torch.fx.Node, source: SSAValue, **props
) -> list[SSAValue]:
    values_type, indices_type = (
        type_of_fake(f, f"result {i} of '{node.name}'") for i, f in enumerate(node.meta["val"])
    )
    indices_type = TensorType(i64, list(indices_type.get_shape()))
    op = op_class.build(operands=[source], properties=props, result_types=[values_type, indices_type])
    return list(e.emit(op).results)


@converts(aten.topk.default)
def _topk(e: Emitter, node: torch.fx.Node) -> SSAValue | list[SSAValue]:
    if not (_is_last(node, 2, "dim") and arg(node, 3, "largest", True)):
        return cpu_fallback_of(e, node)
    return _two_results(e, routing.TopkOp, node, e.value(node.args[0]), k=i64_attr(int_arg(node.args[1])))


@converts(aten.sort.default, aten.sort.stable)
def _sort(e: Emitter, node: torch.fx.Node) -> SSAValue | list[SSAValue]:
    if node.target == aten.sort.stable:
        dim, descending = node.kwargs.get("dim", -1), node.kwargs.get("descending", False)
    else:
        dim, descending = arg(node, 1, "dim", -1), arg(node, 2, "descending", False)
    rank = len(node_arg(node.args[0]).meta["val"].shape)
    if descending or rank == 0 or normalize_dim(int_arg(dim), rank) != rank - 1:
        return cpu_fallback_of(e, node)
    return _two_results(e, routing.SortOp, node, e.value(node.args[0]))


@converts(aten.histc.default)
def _histc(e: Emitter, node: torch.fx.Node) -> SSAValue | list[SSAValue]:
    bins, low, high = arg(node, 1, "bins", 100), arg(node, 2, "min", 0), arg(node, 3, "max", 0)
    if not low < high:  # min == max: PyTorch takes the data's own range
        return cpu_fallback_of(e, node)
    props = {"bins": i64_attr(int(bins)), "min": f64_attr(low), "max": f64_attr(high)}
    op = routing.HistcOp.build(
        operands=[e.value(node.args[0])], properties=props, result_types=[node_type(node)]
    )
    return e.emit(op).results[0]


@converts(aten.index_put.default)
def _index_put(e: Emitter, node: torch.fx.Node) -> SSAValue | list[SSAValue]:
    indices = optional_node_list(node.args[1])
    row_index = indices[0] if len(indices) == 1 else None  # the one index tensor, on dim 0
    if (
        row_index is None
        or len(row_index.meta["val"].shape) != 1
        or arg(node, 3, "accumulate", False)
        or row_index.meta["val"].dtype == torch.bool
    ):
        return cpu_fallback_of(e, node)
    dest = e.value(node.args[0])
    rows = e.value(row_index)
    values = e.convert(e.value(node.args[2]), tensor_type(dest).element_type)
    wanted = [shape_of(rows)[0], *shape_of(dest)[1:]]
    if list(shape_of(values)) != wanted:
        expanded = TensorType(tensor_type(dest).element_type, wanted)
        values = e.emit(st.ExpandOp.build(operands=[values], result_types=[expanded])).results[0]
    op = routing.ScatterRowsOp.build(operands=[values, dest, rows], result_types=[node_type(node)])
    return e.emit(op).results[0]


@converts(aten.index_copy.default)
def _index_copy(e: Emitter, node: torch.fx.Node) -> SSAValue:
    # index_copy(dest, dim, index, source): slices of dest along dim replaced (a static KV cache's
    # update); index is one-dimensional.
    dest = e.value(node.args[0])
    dim = normalize_dim(int_arg(node.args[1]), len(shape_of(dest)))
    values = e.convert(e.value(node.args[3]), tensor_type(dest).element_type)
    props = {"dim": i64_attr(dim)} if dim else {}
    op = routing.ScatterRowsOp.build(
        operands=[values, dest, e.value(node.args[2])], properties=props, result_types=[node_type(node)]
    )
    return e.emit(op).results[0]


@converts_named("transformers.grouped_mm_fallback.default", "transformers.grouped_mm.default")
def _grouped_mm(e: Emitter, node: torch.fx.Node) -> SSAValue:
    x, weights, offsets = (e.value(a) for a in node.args[:3])
    op = routing.GroupedMatmulOp.build(operands=[x, weights, offsets], result_types=[node_type(node)])
    return e.emit(op).results[0]
