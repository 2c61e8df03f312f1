"""
Compile-time constants: what depends on no user input is computed once, when the model is
compiled, and becomes state the device keeps.

A model computes some tensors from its parameters and buffers alone, or from nothing at all: a
causal mask built from `arange`, rotary cos/sin tables from a buffer of frequencies, a weight
cast to another dtype. Run as kernels, they cost time on every call. `fold_constants` runs them
once with the reference executor (`ktir.reference`) and replaces each such tensor that a
run-time op reads by a new function argument marked `ktir.constant`, whose value joins the
imported state (a constant whose elements are all the same value becomes a `ktir.full` instead,
which costs no memory and fuses into its consumers); the ops that computed it and the state no
op reads any more are removed.
Layout propagation then gives the constant the layout its consumers read, and the program packs
it once with the parameters. Matmuls that read one input through weights from state are merged
first (`ktir.frontend.shared_input`): their concatenated weight is one such constant.

State on PyTorch's `meta` device (a model built for `ktir.estimate` without its weights) has no
values: what is computed from it is folded all the same, by result type alone, into state on the
`meta` device; it is never a `ktir.full` or an absorbed causal mask, which need values.

Views of state that compute nothing (a weight's transpose for `linear`) are left in place: the
parameter itself takes the layout that makes them free, and folding them would only copy it.

```python
imported = import_program(model, (ids,), {"use_cache": False})
folded = fold_constants(imported)  # e.g. 40 ops of a Llama's mask and rotary tables
```
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import numpy as np
import torch
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntegerAttr, StringAttr, TensorType, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from ktir.dialects.ktir import elementwise as ew
from ktir.dialects.ktir import structured as st
from ktir.dialects.ktir.functions import CONSTANT_ARG
from ktir.frontend.fx import FxImport
from ktir.frontend.gathered_tables import split_gathered_tables
from ktir.frontend.shared_input import merge_shared_input_matmuls
from ktir.frontend.updates import mark_contiguous_rows, whole_row_copies
from ktir.ir.diagnostics import ExecutionError
from ktir.ir.state import updated_arguments
from ktir.ir.values import functions_of, is_tensor, position_in_block, shape_of
from ktir.layout.dtypes import numpy_dtype
from ktir.reference.executor import execute_op

_VIEWS = (st.PermuteOp, st.ReshapeOp, st.ExpandOp, st.SliceOp)
"""Ops that only re-index their input: folded only as part of a chain that computes."""


class _Values:
    """Values known at compile time: arrays, or views of state evaluated on first need."""

    def __init__(self) -> None:
        self.thunks: dict[SSAValue, Callable[[], np.ndarray]] = {}
        self.arrays: dict[SSAValue, np.ndarray] = {}
        self.computed: set[SSAValue] = set()
        self.unknown: set[SSAValue] = set()  # from state on the meta device: shapes, no values

    def __contains__(self, value: SSAValue) -> bool:
        return value in self.arrays or value in self.thunks or value in self.unknown

    def get(self, value: SSAValue) -> np.ndarray:
        if value not in self.arrays:
            self.arrays[value] = self.thunks.pop(value)()
        return self.arrays[value]

    def known(self, value: SSAValue) -> np.ndarray | None:
        """`value`'s array if it is known with its elements (not only its shape), else None."""
        if value in self.unknown or value not in self:
            return None
        return self.get(value)

    def evaluate(self, op: Operation) -> bool:
        """Fold `op` if all its operands are known; whether it was."""
        if not all(v in self for v in op.operands) or isinstance(op, func.ReturnOp) or op.regions:
            return False
        computes = not isinstance(op, _VIEWS) or any(v in self.computed for v in op.operands)
        if any(v in self.unknown for v in op.operands):  # folded by its result types
            self.unknown.update(op.results)
            if computes:
                self.computed.update(op.results)
            return True
        if not computes:  # a view of state: evaluated only if a folded op reads it
            self.thunks[op.results[0]] = lambda: execute_op(op, [self.get(v) for v in op.operands])[0]
            return True
        try:
            results = execute_op(op, [self.get(v) for v in op.operands])
        except (ExecutionError, ValueError, TypeError):
            return False  # left to run at run time, where its errors are reported
        self.arrays.update(zip(op.results, results, strict=True))
        self.computed.update(op.results)
        return True


def fold_constants(imported: FxImport) -> int:
    """Fold what depends on no user input into `ktir.constant` state (module docstring); ops folded."""
    merge_shared_input_matmuls(imported)  # their concatenated weight is one of the constants
    split_gathered_tables(imported)  # a tied embedding: a copy laid out for the LM head
    function = functions_of(imported.module)[0]
    block = function.body.block
    values = _Values()
    state = imported.state_arrays(skip_meta=True)
    values.arrays.update((block.args[index], array) for index, array in state.items())
    values.unknown.update(
        a for i, a in enumerate(block.args) if i >= imported.user_input_count and i not in state
    )
    folded = [op for op in list(block.ops) if op.results and values.evaluate(op)]
    whole_row_copies(block, values.known)  # before the frontier: their indices are then unused
    mark_contiguous_rows(block, values.known)
    folded_set = set(folded)
    frontier = [
        v
        for op in folded
        for v in op.results
        if v in values.computed and is_tensor(v) and any(u.operation not in folded_set for u in v.uses)
    ]
    for value in frontier:
        if value in values.unknown:
            _to_argument(imported, function, value, meta_tensor(value))
            continue
        array = values.get(value)
        if _absorb_causal_mask(value, array):
            continue
        if (splat := _splat(array)) is not None:
            _to_full(value, splat)
        else:
            _to_argument(imported, function, value, array)
    for op in reversed(folded):
        if all(not r.uses for r in op.results):
            op.detach()
            op.erase()
    _drop_unused_state(imported, function)
    function.update_function_type()
    return sum(1 for op in folded if op.parent is None)


def causal_offset(mask: np.ndarray) -> int | None:
    """
    The `c` for which an attention mask hides exactly the keys l > s + c from every query s
    (the same for every leading index), or None. A bool mask keeps where true; a float mask
    must hold only 0 and -inf. A mask that hides nothing gives `keys - 1`.

    Example: a 4 x 4 lower-triangular bool mask gives 0; the last 2 rows of a 6-key causal
    mask (a prefill of 2 tokens after 4 cached) give 4.
    """
    if mask.ndim < 2:
        return None
    if mask.dtype == np.bool_:
        keep = mask
    elif mask.dtype.kind == "f" and np.all((mask == 0) | np.isneginf(mask)):
        keep = mask == 0
    else:
        return None
    rows, keys = keep.shape[-2:]
    planes = keep.reshape(-1, rows, keys)
    counts = planes[0].sum(axis=1)
    partial = np.flatnonzero((counts > 0) & (counts < keys))
    if len(partial):
        offset = int(counts[partial[0]]) - 1 - int(partial[0])
    else:
        offset = keys - 1 if counts[0] == keys else -rows
    expected = np.arange(keys)[None, :] <= np.arange(rows)[:, None] + offset
    return offset if bool(np.all(planes == expected)) else None


def meta_tensor(value: SSAValue) -> torch.Tensor:
    """A `meta` tensor of `value`'s shape and element type."""
    dtype = torch.from_numpy(
        np.empty(0, numpy_dtype(cast(TensorType[Attribute], value.type).element_type))
    ).dtype
    return torch.empty(shape_of(value.type), dtype=dtype, device="meta")


def _absorb_causal_mask(value: SSAValue, array: np.ndarray) -> bool:
    """
    If `value` is read only as the mask of `ktir.attention` ops and is causal (`causal_offset`),
    drop it from them in favour of their `causal` property, which a kernel can act on: it skips
    the key blocks a query block cannot see. True when it did.
    """
    uses = list(value.uses)
    if not uses or any(not isinstance(u.operation, st.AttentionOp) or u.index != 3 for u in uses):
        return False
    offset = causal_offset(array)
    if offset is None:
        return False
    keys = array.shape[-1]
    for use in uses:
        old = cast(st.AttentionOp, use.operation)
        properties = dict(old.properties)
        if offset < keys - 1:
            properties["causal"] = IntegerAttr(offset, i64)
        new = st.AttentionOp.build(
            operands=[old.q, old.k, old.v, []],
            properties=properties,
            result_types=[old.result.type],
        )
        new.location = old.location
        new.result.name_hint = old.result.name_hint
        Rewriter.replace_op(old, new)
    return True


def _splat(array: np.ndarray) -> float | int | None:
    """
    The one value every element of `array` holds (bit for bit), if it has more than one
    element: such a constant is a `ktir.full`, not state. Example: HF's fully-masked-row guard
    `where(..., zeros_like(scores), ...)` folds to 32 x 512 x 512 fp32 zeros, 32 MiB that would
    otherwise be packed, loaded and read on every call.
    """
    if array.size < 2:
        return None
    first = array.reshape(-1)[:1]
    if array.tobytes() != np.broadcast_to(first, array.shape).tobytes():
        return None
    return int(first[0]) if array.dtype.kind in "iub" else float(first[0])


def _to_full(value: SSAValue, splat: float | int) -> None:
    """Replace `value` by a `ktir.full` of `splat`, placed before its first reader."""
    first = min((u.operation for u in value.uses), key=position_in_block)
    full = ew.FullOp(splat, cast(TensorType[Attribute], value.type))
    full.results[0].name_hint = value.name_hint
    Rewriter.insert_op(full, InsertPoint.before(first))
    value.replace_all_uses_with(full.results[0])


def _to_argument(
    imported: FxImport, function: func.FuncOp, value: SSAValue, array: np.ndarray | torch.Tensor
) -> None:
    """Replace `value` by a new `ktir.constant` argument holding `array`."""
    block = function.body.block
    hint = value.name_hint or "constant"
    name = f"c{len(block.args)}_{hint}"
    argument = block.insert_arg(value.type, len(block.args))
    argument.name_hint = name
    value.replace_all_uses_with(argument)
    attributes = [
        *_arg_attrs(function),
        DictionaryAttr({"ktir.name": StringAttr(name), CONSTANT_ARG: StringAttr(name)}),
    ]
    function.arg_attrs = ArrayAttr(attributes)
    imported.input_names.append(name)
    imported.state[name] = array


def _drop_unused_state(imported: FxImport, function: func.FuncOp) -> None:
    """
    Remove state arguments no op reads any more (their values need not reach the device); state
    a call updates (`ktir.updated_by`) stays, as the memory of its new value.
    """
    block = function.body.block
    updated = updated_arguments(function)
    for index in reversed(range(imported.user_input_count, len(block.args))):
        argument = block.args[index]
        if argument.uses or index in updated:
            continue
        block.erase_arg(argument)
        function.arg_attrs = ArrayAttr([a for i, a in enumerate(_arg_attrs(function)) if i != index])
        name = imported.input_names.pop(index)
        imported.state.pop(name, None)


def _arg_attrs(function: func.FuncOp) -> list[DictionaryAttr]:
    """The function's argument attribute dictionaries (the importer writes one per argument)."""
    return list(function.arg_attrs.data) if function.arg_attrs is not None else []


__all__ = ["fold_constants"]
