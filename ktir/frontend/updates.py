"""
In-place updates of model state: the buffers a static KV cache writes.

`torch.export` records `cache.index_copy_(2, positions, keys)` (and `cumulative_length.copy_(p)`)
as a functional op whose result is the buffer's new value, listed in the graph signature as a
`BUFFER_MUTATION` output. Graph-level ktir keeps values immutable: the importer returns each new
value as an extra function result after the model's outputs and marks the buffer's argument with
`ktir.updated_by = <result index>` (`UPDATED_BY_ARG`); the program writes that result back to
the buffer's device memory after each call (`ktir.program.Program`).

A `ktir.scatter_rows` (`index_copy`) whose destination is the buffer and which nothing else reads
becomes `in_place`: it writes only its rows where the buffer lives, so a decode step moves one
token's keys and values, not the whole cache.

A scatter whose indices are known when the model is compiled (`ktir.frontend.constants`) and
name every row of the destination in order (a prefill's positions `arange(n)` into a cache of
`n` positions, as `ktir-estimate` compiles it) replaces the whole destination: it becomes a
`ktir.copy` of its values (`whole_row_copies`), as `slice_scatter` over the whole range does.
The copy is one contiguous transfer, not one DMA per row (8 heads x 512 positions of 256 bytes
for a Llama-3-8B key cache), and it is an ordinary kernel the compiler may fuse. A scatter whose
known indices are one ascending run of fewer rows (a prefill chunk of 1,024 positions into a
cache of 3,072) is marked `contiguous` (`mark_contiguous_rows`): its rows are one box of the
cache, which each core writes with one strided DMA.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np
import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind, OutputKind
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntegerAttr, UnitAttr, i64
from xdsl.ir import Block, BlockArgument, SSAValue
from xdsl.rewriter import Rewriter

from ktir.dialects.ktir import routing
from ktir.dialects.ktir import structured as st
from ktir.dialects.ktir.functions import UPDATED_BY_ARG
from ktir.ir.diagnostics import ExecutionError
from ktir.ir.values import shape_of
from ktir.reference.data import checked_rows, is_run


def split_outputs(program: ExportedProgram, output: torch.fx.Node) -> tuple[list[Any], list[tuple[Any, str]]]:
    """
    The graph's user outputs, and each buffer update with the placeholder name of the buffer
    it updates (the argument's name), in the graph signature's order.
    """
    buffer_argument = {
        spec.target: spec.arg.name
        for spec in program.graph_signature.input_specs
        if spec.kind == InputKind.BUFFER
    }
    # An exported graph's output node has one argument: the tuple of everything it returns.
    items = list(cast("Sequence[Any]", output.args[0]))
    user, updates = [], []
    for spec, item in zip(program.graph_signature.output_specs, items, strict=True):
        if spec.kind == OutputKind.BUFFER_MUTATION and spec.target in buffer_argument:
            updates.append((item, buffer_argument[spec.target]))
        else:
            user.append(item)
    return user, updates


def mark_updates(
    function: func.FuncOp, names: list[str], updates: list[tuple[SSAValue, str]], first_result: int
) -> None:
    """
    Mark each updated argument (`names` are the arguments' names, in order) with the result
    that holds its new value (results from `first_result` on, in `updates` order) and make the
    scatters that write it `in_place`.
    """
    block = function.body.block
    attributes = list(function.arg_attrs.data) if function.arg_attrs is not None else []
    for offset, (value, name) in enumerate(updates):
        argument = block.args[names.index(name)]
        entries = dict(attributes[argument.index].data)
        entries[UPDATED_BY_ARG] = IntegerAttr(first_result + offset, i64)
        attributes[argument.index] = DictionaryAttr(entries)
        _scatter_in_place(value, argument)
    function.arg_attrs = ArrayAttr(attributes)


def _scatter_in_place(value: SSAValue, argument: BlockArgument) -> None:
    """A scatter of new rows into the argument, its only reader, writes them where it lives."""
    op = value.owner
    if isinstance(op, routing.ScatterRowsOp) and op.dest is argument and argument.has_one_use():
        op.properties["in_place"] = UnitAttr()


def _wrapped(indices: np.ndarray, rows: int) -> np.ndarray | None:
    """One-dimensional integer `indices` within `rows` as row numbers (negative from the end), else None."""
    if indices.ndim != 1 or indices.dtype.kind not in "iu":
        return None
    try:
        return checked_rows(indices, rows)
    except ExecutionError:  # out of range: left to the scatter, which reports it at run time
        return None


def is_contiguous_run(indices: np.ndarray, rows: int) -> bool:
    """
    Whether `indices` (wrapping from the end) are one ascending run `s, s + 1, ..., s + n - 1`
    of the `rows`: the rows a scatter of them writes form one box. Example: over 8 rows,
    `[2, 3, 4]` and `[-2, -1]` are; `[2, 4]`, `[3, 2]` and `[]` are not.
    """
    wrapped = _wrapped(indices, rows)
    return wrapped is not None and len(wrapped) > 0 and is_run(wrapped)


def names_every_row(indices: np.ndarray, rows: int) -> bool:
    """
    Whether `indices` (one-dimensional, wrapping from the end as a scatter's do) are exactly
    `0, 1, ..., rows - 1`: a scatter of them replaces every row, each by its own value.
    Example: `[0, 1, 2]` and `[-3, 1, -1]` over 3 rows do; `[0, 2, 1]` and `[0, 1]` do not.
    """
    wrapped = _wrapped(indices, rows)
    return wrapped is not None and len(wrapped) == rows and bool(np.array_equal(wrapped, np.arange(rows)))


def whole_row_copies(block: Block, known: Callable[[SSAValue], np.ndarray | None]) -> int:
    """
    Replace each `ktir.scatter_rows` whose indices (`known`: their compile-time value, or None)
    name every row of its destination in order by a `ktir.copy` of its values: the result is the
    values, laid out as the destination. How many were replaced.
    """
    replaced = 0
    for op in list(block.ops):
        if not isinstance(op, routing.ScatterRowsOp):
            continue
        indices = known(op.indices)
        if indices is None or not names_every_row(indices, shape_of(op.dest.type)[op.scatter_dim()]):
            continue
        copy = st.CopyOp.build(operands=[op.values], result_types=[op.result.type])
        copy.location = op.location
        copy.results[0].name_hint = op.result.name_hint
        Rewriter.replace_op(op, copy)
        replaced += 1
    return replaced


def mark_contiguous_rows(block: Block, known: Callable[[SSAValue], np.ndarray | None]) -> int:
    """
    Mark `contiguous` each `ktir.scatter_rows` whose indices (`known`: their compile-time value,
    or None) are one ascending run of its destination's rows: a prefill chunk of 1,024 positions
    written into a static cache of 3,072. How many were marked.
    """
    marked = 0
    for op in block.ops:
        if not isinstance(op, routing.ScatterRowsOp):
            continue
        indices = known(op.indices)
        if indices is not None and is_contiguous_run(indices, shape_of(op.dest.type)[op.scatter_dim()]):
            op.properties["contiguous"] = UnitAttr()
            marked += 1
    return marked


__all__ = [
    "is_contiguous_run",
    "mark_contiguous_rows",
    "mark_updates",
    "names_every_row",
    "split_outputs",
    "whole_row_copies",
]
