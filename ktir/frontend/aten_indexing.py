"""
ATen -> graph-level ktir converters for the data-dependent ops that run on the chip:
`embedding`, `index_select`, `index` (advanced indexing on consecutive dims) as
`ktir.gather_rows`, and `cumsum` as `ktir.cumsum`. Forms ktir has no on-chip lowering for (index
tensors on dims that are not consecutive, a boolean mask) become `ktir.cpu_fallback`.
"""

from __future__ import annotations

import math

import torch
from xdsl.dialects.builtin import IntegerType, TensorType, i64
from xdsl.ir import SSAValue

from ktir.dialects.ktir import data
from ktir.dialects.ktir import elementwise as ew
from ktir.dialects.ktir import structured as st
from ktir.frontend.aten import arg, converts, cpu_fallback_of, i64_attr, make
from ktir.frontend.emitter import Emitter, int_arg, node_type, optional_node_list, tensor_type
from ktir.ir.values import shape_of
from ktir.layout.shapes import broadcast_shapes, normalize_dim

aten = torch.ops.aten


def gather_rows(e: Emitter, table: SSAValue, indices: SSAValue) -> SSAValue:
    """Rows of `table` (its dim 0) named by `indices`: shape `indices.shape + table.shape[1:]`."""
    table_type = tensor_type(table)
    shape = [*shape_of(indices), *shape_of(table)[1:]]
    return make(e, data.GatherRowsOp, [table, indices], TensorType(table_type.element_type, shape))


def _gather_along(e: Emitter, source: SSAValue, dim: int, indices: SSAValue, index_rank: int) -> SSAValue:
    """
    `source` indexed along `dim` by `indices` (of rank `index_rank`), PyTorch's placement: the
    index dims replace `dim`. Built as a gather of rows of `source` with `dim` moved first.
    Example: source (4, 10, 8), dim 1, indices (3,) -> (4, 3, 8).
    """
    rank = len(shape_of(source))
    front = e.permute(source, [dim, *(d for d in range(rank) if d != dim)])
    rows = gather_rows(e, front, indices)
    # rows: (*index dims, the other dims in order); put the index dims back where `dim` was.
    others = list(range(index_rank, index_rank + rank - 1))
    perm = [*others[:dim], *range(index_rank), *others[dim:]]
    return e.permute(rows, perm)


@converts(aten.embedding.default)
def _embedding(e: Emitter, node: torch.fx.Node) -> SSAValue:
    return gather_rows(e, e.value(node.args[0]), e.value(node.args[1]))


@converts(aten.index_select.default)
def _index_select(e: Emitter, node: torch.fx.Node) -> SSAValue:
    source, indices = e.value(node.args[0]), e.value(node.args[2])
    dim = normalize_dim(int_arg(node.args[1]), max(len(shape_of(source)), 1))
    return _gather_along(e, source, dim, indices, len(shape_of(indices)))


@converts(aten.index.Tensor)
def _index(e: Emitter, node: torch.fx.Node) -> SSAValue | list[SSAValue]:
    """
    `source[i0, i1, ...]` with index tensors on consecutive dims `d..d+k-1`: the indices
    broadcast together, wrap negatives, and combine into one row number of `source` with those
    dims flattened (`i0 * n1 + i1`), whose rows `ktir.gather_rows` reads.
    """
    source = e.value(node.args[0])
    entries = optional_node_list(node.args[1])
    indexed = [d for d, entry in enumerate(entries) if entry is not None]
    index_nodes = [entry for entry in entries if entry is not None]
    kinds = [node.meta["val"].dtype] + [entry.meta["val"].dtype for entry in index_nodes]
    consecutive = indexed == list(range(indexed[0], indexed[0] + len(indexed))) if indexed else False
    if not consecutive or any(k == torch.bool for k in kinds[1:]):
        return cpu_fallback_of(e, node)
    shape = list(shape_of(source))
    first, count = indexed[0], len(indexed)
    values = [e.value(entry) for entry in index_nodes]
    index_shape = list(broadcast_shapes(*(shape_of(v) for v in values)))
    row = _row_numbers(e, values, [shape[d] for d in indexed], index_shape)
    merged = [*shape[:first], math.prod(shape[first : first + count]), *shape[first + count :]]
    flat = e.reshape(source, merged)
    result = _gather_along(e, flat, first, row, len(index_shape))
    return e.reshape(result, list(node_type(node).get_shape()))


def _row_numbers(e: Emitter, values: list[SSAValue], sizes: list[int], shape: list[int]) -> SSAValue:
    """`sum_j wrap(i_j) * stride_j` in i64 over the broadcast `shape` (one index: itself)."""
    if len(values) == 1:
        return values[0]
    wide = TensorType(i64, shape)
    total: SSAValue | None = None
    stride = math.prod(sizes)
    for value, size in zip(values, sizes, strict=True):
        stride //= size
        index = e.convert(value, i64)
        rank = min(len(shape_of(index)), 1)
        zero = e.scalar(0, i64, rank=rank)
        negative = make(e, ew.LtOp, [index, zero], TensorType(IntegerType(1), list(shape_of(index))))
        shifted = make(e, ew.AddOp, [index, e.scalar(size, i64, rank=rank)], tensor_type(index))
        index = make(e, ew.WhereOp, [negative, shifted, index], tensor_type(index))
        if stride != 1:
            index = make(e, ew.MulOp, [index, e.scalar(stride, i64, rank=rank)], tensor_type(index))
        if total is None:
            total = index
            continue
        total = make(e, ew.AddOp, [total, index], wide)
    assert total is not None
    if list(shape_of(total)) != shape:
        total = make(e, st.ExpandOp, [total], wide)
    return total


@converts(aten.gather.default)
def _gather(e: Emitter, node: torch.fx.Node) -> SSAValue:
    """`torch.gather(source, dim, index)`: `ktir.take_along` with `dim` moved last and back."""
    source, index = e.value(node.args[0]), e.value(node.args[2])
    rank = len(shape_of(source))
    if rank == 0:
        return make(e, st.CopyOp, [source], node_type(node))
    dim = normalize_dim(int_arg(node.args[1]), rank)
    perm = [*(d for d in range(rank) if d != dim), dim]
    moved_source, moved_index = e.permute(source, perm), e.permute(index, perm)
    moved_type = TensorType(tensor_type(source).element_type, list(shape_of(moved_index)))
    picked = make(e, data.TakeAlongOp, [moved_source, moved_index], moved_type)
    inverse = [perm.index(d) for d in range(rank)]
    return e.permute(picked, inverse)


@converts(aten.scatter.value)
def _scatter_value(e: Emitter, node: torch.fx.Node) -> SSAValue | list[SSAValue]:
    """
    `input.scatter(dim, index, value)`: `value` where some index of the row names the position,
    the input elsewhere (MoE routers' one-hot masks). Built from elementwise ops: the positions
    are a cumsum of ones, each index compared with them, an any over the indices, a where.
    Example: a (2, 4) input, index [[1], [3]], value 1.0 sets [0][1] and [1][3].
    """
    source, index = e.value(node.args[0]), e.value(node.args[2])
    rank = len(shape_of(source))
    if rank == 0 or len(shape_of(index)) != rank:
        return cpu_fallback_of(e, node)
    dim = normalize_dim(int_arg(node.args[1]), rank)
    perm = [*(d for d in range(rank) if d != dim), dim]
    moved, moved_index = e.permute(source, perm), e.permute(index, perm)
    if shape_of(moved_index)[:-1] != shape_of(moved)[:-1]:
        return cpu_fallback_of(e, node)
    count = shape_of(moved)[-1]
    ones = e.emit(ew.FullOp(1, TensorType(i64, [count]))).results[0]
    positions = make(e, data.CumsumOp, [ones], TensorType(i64, [count]), dim=i64_attr(0))
    positions = make(e, ew.SubOp, [positions, e.scalar(1, i64)], TensorType(i64, [count]))
    rows = [*shape_of(moved_index), 1]
    named = e.reshape(e.convert(moved_index, i64), rows)
    compared = TensorType(IntegerType(1), [*rows[:-1], count])
    hits = make(e, ew.EqOp, [named, positions], compared)
    props = {"dims": st.int_array([len(rows) - 2])}
    hit = make(e, st.MaxOp, [hits], TensorType(IntegerType(1), [*rows[:-2], count]), **props)
    element_type = tensor_type(source).element_type
    value = e.operand(node.args[3], moved, element_type)
    chosen = make(e, ew.WhereOp, [hit, value, moved], tensor_type(moved))
    return e.permute(chosen, [perm.index(d) for d in range(rank)])


@converts(aten.cumsum.default)
def _cumsum(e: Emitter, node: torch.fx.Node) -> SSAValue:
    result_type = node_type(node)
    source = e.convert(e.value(node.args[0]), result_type.element_type)
    dim = normalize_dim(arg(node, 1, "dim"), max(len(shape_of(source)), 1))
    return make(e, data.CumsumOp, [source], result_type, dim=i64_attr(dim))
