"""
`aten.scaled_dot_product_attention` -> `ktir.attention`.

The FX importer keeps PyTorch's attention whole (`ktir.frontend.fx.KEPT_WHOLE`) so that
lowering sees one op it can tile along the keys, instead of a bmm, a mask add, a softmax with
its fully-masked-row guard and a second bmm with the scores in device memory between them.

`ktir.attention` is grouped (`[B, H, G, S, D]` queries over `[B, H, L, D]` keys): the
converter reshapes the `[B, H*G, S, D]` query into that form and the result back, views that
move no data. Grouped-query attention arrives in two ways and both become one kernel that
reads each key and value head once:

- `enable_gqa=True`: the key and value have `H` heads, the query `H * G`;
- Hugging Face's `repeat_kv`: the key and value were copied `G` times first,
  `view(clone(expand(unsqueeze(x, 2))))`; the converter reads `x` instead, and the copies,
  now unused, are removed after import.

`is_causal=True` becomes the op's `causal 0`; a mask that is a compile-time constant and
causal becomes `causal c` when constants are folded (`ktir.frontend.constants`). Keys that
`causal c` hides from every query (key l >= S + c: a prefill of S tokens after c cached ones
in a static cache of more positions) are then sliced off the key and value in whole blocks of
64 keys (`trim_hidden_keys`, which `ktir.compile` runs), so the kernel neither loads nor walks
them. What
`ktir.attention` does not model runs on the host through `ktir.cpu_fallback`: dropout, and
inputs that are not 4-D floating-point tensors of one dtype.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Block, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from ktir.dialects.ktir import structured as st
from ktir.frontend.aten import arg, converts, f64_attr, i64_attr, make
from ktir.frontend.aten_data import cpu_fallback
from ktir.frontend.emitter import Emitter, float_arg, node_arg, node_type, tensor_type
from ktir.hardware.cost_model import ATTENTION_BLOCK
from ktir.ir.values import shape_of

aten = torch.ops.aten

_VIEWS = (aten.view.default, aten._unsafe_view.default, aten.reshape.default)


def repeated_source(node: Any, heads: int) -> tuple[Any, int]:
    """
    The tensor a `repeat_kv` copy was made from, and the copy count; `(node, 1)` otherwise.

    Matches `view(clone(expand(unsqueeze(x, 2))))` where x is [B, Hkv, L, D], the expand
    makes [B, Hkv, G, L, D] and the view [B, Hkv * G, L, D] with Hkv * G = `heads`.
    Example: x [1, 8, 512, 128] repeated 4 times for 32 query heads gives (x, 4).
    """
    view = node
    if not _is_call(view, _VIEWS):
        return node, 1
    clone = view.args[0]
    expand = clone.args[0] if _is_call(clone, (aten.clone.default,)) else clone
    if not _is_call(expand, (aten.expand.default,)):
        return node, 1
    unsqueeze = expand.args[0]
    if not _is_call(unsqueeze, (aten.unsqueeze.default,)) or unsqueeze.args[1] != 2:
        return node, 1
    source = unsqueeze.args[0]
    source_shape = tuple(source.meta["val"].shape)
    expanded = tuple(expand.meta["val"].shape)
    if len(source_shape) != 4 or len(expanded) != 5:
        return node, 1
    copies = expanded[2]
    if expanded != (*source_shape[:2], copies, *source_shape[2:]) or source_shape[1] * copies != heads:
        return node, 1
    return source, copies


def _is_call(node: Any, targets: tuple[Any, ...]) -> bool:
    return isinstance(node, torch.fx.Node) and node.op == "call_function" and node.target in targets


def _supported(node: torch.fx.Node) -> bool:
    """Whether `ktir.attention` models this call (otherwise it runs on the host)."""
    query, key, value = (node_arg(a).meta["val"] for a in node.args[:3])
    if arg(node, 4, "dropout_p", 0.0):
        return False
    if any(t.dim() != 4 for t in (query, key, value)) or not query.dtype.is_floating_point:
        return False
    if not query.dtype == key.dtype == value.dtype:
        return False
    mask = arg(node, 3, "attn_mask")
    if mask is not None:
        mask_value = mask.meta["val"]
        if mask_value.dtype not in (torch.bool, query.dtype) or mask_value.dim() > 4:
            return False
    heads, kv_heads = query.shape[1], key.shape[1]
    return heads % kv_heads == 0 and value.shape[1] == kv_heads


@converts(aten.scaled_dot_product_attention.default)
def _attention(e: Emitter, node: torch.fx.Node) -> SSAValue | list[SSAValue]:
    if not _supported(node):
        return cpu_fallback(e, node)
    query = e.value(node.args[0])
    batch, heads, rows, size = shape_of(query)
    key_node, copies = repeated_source(node.args[1], heads)
    value_node, value_copies = repeated_source(node.args[2], heads)
    if copies != value_copies:  # only one of them repeated: use both as given
        key_node, value_node = node.args[1], node.args[2]
    key, value = e.value(key_node), e.value(value_node)
    kv_heads = shape_of(key)[1]
    group = heads // kv_heads
    element_type = tensor_type(query).element_type
    grouped = _reshape(e, query, (batch, kv_heads, group, rows, size))
    mask_node = arg(node, 3, "attn_mask")
    mask = [] if mask_node is None else [_grouped_mask(e, e.value(mask_node), kv_heads, group)]
    scale = node.kwargs.get("scale")
    scale = 1.0 / math.sqrt(size) if scale is None else float(float_arg(scale))
    out_size = shape_of(value)[3]
    result_type = TensorType(element_type, (batch, kv_heads, group, rows, out_size))
    properties: dict[str, Attribute] = {"scale": f64_attr(scale)}
    if arg(node, 5, "is_causal", False):
        properties["causal"] = i64_attr(0)
    attention = e.emit(
        st.AttentionOp.build(
            operands=[grouped, key, value, mask], properties=properties, result_types=[result_type]
        )
    ).results[0]
    return _reshape(e, attention, tuple(node_type(node).get_shape()))


def _grouped_mask(e: Emitter, mask: SSAValue, kv_heads: int, group: int) -> SSAValue:
    """A [.., H*G or 1, S, L] mask as [.., H or 1, G or 1, S, L] (a view)."""
    shape = shape_of(mask)
    padded = (1,) * (4 - len(shape)) + tuple(shape)
    if padded[1] == 1:
        return _reshape(e, mask, (padded[0], 1, 1, *padded[2:]))
    return _reshape(e, mask, (padded[0], kv_heads, group, *padded[2:]))


def _reshape(e: Emitter, value: SSAValue, shape: tuple[int, ...]) -> SSAValue:
    if tuple(shape_of(value)) == shape:
        return value
    element_type: Attribute = tensor_type(value).element_type
    return make(e, st.ReshapeOp, [value], TensorType(element_type, shape))


__all__ = ["repeated_source"]


def visible_keys(op: st.AttentionOp) -> int:
    """
    How many leading keys `op` must keep: all L without `causal` or with a mask; with `causal c`
    and S queries, key l is hidden from every query when l >= S + c, and the S + c others are
    kept in whole blocks of `cost_model.ATTENTION_BLOCK` keys (the kernel's unit: a cut inside a
    block would leave a length that divides into no equal key chunks). Example: a prefill of
    1,024 tokens after none, over a static cache of 3,072 keys, keeps 1,024; 64 after 956, over
    1,024, keeps them all.
    """
    keys = shape_of(op.k)[2]
    if op.causal is None or op.mask is not None:
        return keys
    seen = shape_of(op.q)[3] + op.causal.value.data
    return max(0, min(keys, -(-seen // ATTENTION_BLOCK) * ATTENTION_BLOCK))


def trim_hidden_keys(block: Block) -> int:
    """
    Slice off the keys and values every query of a `ktir.attention` in `block` is hidden from
    (`visible_keys`; at least one key is kept), so its kernel neither loads nor walks them. The
    result is the same: a hidden key adds nothing to a softmax. How many ops were trimmed.
    """
    trimmed = 0
    for op in list(block.ops):
        if not isinstance(op, st.AttentionOp):
            continue
        visible = visible_keys(op)
        if not 0 < visible < shape_of(op.k)[2]:
            continue
        for index in (1, 2):  # k, v: [B, H, L, D] sliced along L
            op.operands[index] = _first_keys(op, op.operands[index], visible)
        trimmed += 1
    return trimmed


def _first_keys(op: st.AttentionOp, source: SSAValue, keys: int) -> SSAValue:
    """`source[:, :, :keys]`, a `ktir.slice` inserted before `op` at its location."""
    shape = list(shape_of(source))
    shape[2] = keys
    result_type = TensorType(st.tensor_of(source, "input").element_type, shape)
    props = {"dim": i64_attr(2), "start": i64_attr(0), "end": i64_attr(keys), "step": i64_attr(1)}
    sliced = st.SliceOp.build(operands=[source], properties=props, result_types=[result_type])
    sliced.location = op.location
    Rewriter.insert_op(sliced, InsertPoint.before(op))
    return sliced.results[0]
