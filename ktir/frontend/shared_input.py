"""
Matmuls that read one input through weights from state become one matmul.

Attention's q, k and v projections all read the normalized hidden state: three kernels read it
three times and each pays its own pipeline fill and drain. `merge_shared_input_matmuls`
rewrites

    q = x @ Wq^T,  k = x @ Wk^T,  v = x @ Wv^T          (each weight a permute of a parameter)

into one matmul over the weights concatenated along N, and slices of its result:

    w = cat(Wq^T, Wk^T, Wv^T, dim 1)      [K, Nq + Nk + Nv]   (depends on state only)
    y = x @ w;  q = y[..., 0:Nq],  k = y[..., Nq:Nq+Nk],  v = y[..., Nq+Nk:]

The concatenation depends on no user input, so constant folding (`ktir.frontend.constants`)
computes it once at compile time and packs it like a parameter; the original weights, read by
nothing else, are dropped. Each slice starts on a stick boundary (N_i a multiple of the elements
per stick), so it is a view of `y` that moves no data.

Only matmuls whose results are read by views alone are merged (q/k/v reshaped into heads): a
matmul whose result an elementwise op reads (SwiGLU's gate and up, a bias add) can carry that op
as its epilogue (`ktir-fuse`), which a shared output would forfeit.

Example: Llama-3-8B's q/k/v projections ([4096, 4096], [4096, 1024], [4096, 1024]) become one
512 x 4096 x 6144 matmul.
"""

from __future__ import annotations

from collections import defaultdict
from typing import cast

from xdsl.dialects.builtin import IntegerAttr, TensorType, i64
from xdsl.ir import Attribute, BlockArgument, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from ktir.dialects.ktir import structured as st
from ktir.dialects.ktir.attributes import device_dtype_of_element
from ktir.frontend.fx import FxImport
from ktir.ir.values import functions_of, position_in_block, shape_of


def merge_shared_input_matmuls(imported: FxImport) -> int:
    """Merge each group of mergeable matmuls that read one input (module docstring); matmuls merged."""
    block = functions_of(imported.module)[0].body.block
    groups: dict[tuple[SSAValue, Attribute], list[st.MatmulOp]] = defaultdict(list)
    for op in block.ops:
        if isinstance(op, st.MatmulOp) and _mergeable(op, imported.user_input_count):
            groups[(op.x, cast(TensorType[Attribute], op.y.type).element_type)].append(op)
    merged = 0
    for group in groups.values():
        if len(group) > 1:
            _merge(group)
            merged += len(group)
    return merged


def _mergeable(op: st.MatmulOp, user_inputs: int) -> bool:
    """A 2-D weight from state, N on whole sticks, and a result only views read."""
    weight = op.y.owner
    if not isinstance(weight, st.PermuteOp):
        return False
    source = weight.input
    if not isinstance(source, BlockArgument) or source.index < user_inputs:
        return False
    element_type = cast(TensorType[Attribute], op.y.type).element_type
    if shape_of(op.y.type)[-1] % device_dtype_of_element(element_type).elems_per_stick:
        return False
    users = [use.operation for use in op.result.uses]
    return bool(users) and all(isinstance(user, st.ReshapeOp | st.PermuteOp) for user in users)


def _merge(group: list[st.MatmulOp]) -> None:
    """One matmul over the concatenated weights before the group's first matmul; slices for each."""
    first = min(group, key=position_in_block)
    where = InsertPoint.before(first)
    weights = [cast(st.PermuteOp, op.y.owner) for op in group]
    for weight in weights:  # a later weight's transpose moves up to the concatenation
        if position_in_block(weight) > position_in_block(first):
            weight.detach()
            Rewriter.insert_op(weight, where)
    sizes = [shape_of(op.y.type)[-1] for op in group]
    y_type = cast(TensorType[Attribute], group[0].y.type)
    k = shape_of(y_type)[0]
    cat = st.CatOp.build(
        operands=[[op.y for op in group]],
        properties={"dim": IntegerAttr(1, i64)},
        result_types=[TensorType(y_type.element_type, (k, sum(sizes)))],
    )
    out_shape = (*shape_of(first.result.type)[:-1], sum(sizes))
    out_type = TensorType(cast(TensorType[Attribute], first.result.type).element_type, out_shape)
    matmul = st.MatmulOp.build(operands=[first.x, cat.result], result_types=[out_type])
    for op in (cat, matmul):
        op.location = first.location
        Rewriter.insert_op(op, where)
    cat.result.name_hint, matmul.result.name_hint = "merged_weight", first.result.name_hint
    start = 0
    for op, size in zip(group, sizes, strict=True):
        part = _slice(matmul.result, start, start + size, cast(TensorType[Attribute], op.result.type))
        part.location = op.location
        Rewriter.insert_op(part, InsertPoint.before(op))
        part.result.name_hint = op.result.name_hint
        op.result.replace_all_uses_with(part.result)
        Rewriter.erase_op(op)
        start += size


def _slice(value: SSAValue, start: int, end: int, result_type: TensorType[Attribute]) -> st.SliceOp:
    dim = len(shape_of(value.type)) - 1
    properties = {
        "dim": IntegerAttr(dim, i64),
        "start": IntegerAttr(start, i64),
        "end": IntegerAttr(end, i64),
        "step": IntegerAttr(1, i64),
    }
    return st.SliceOp.build(operands=[value], properties=properties, result_types=[result_type])


__all__ = ["merge_shared_input_matmuls"]
