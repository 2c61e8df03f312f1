"""
In-place updates of model state: the buffers a static KV cache writes.

`torch.export` records `cache.index_copy_(2, positions, keys)` (and `cumulative_length.copy_(p)`)
as a functional op whose result is the buffer's new value, listed in the graph signature as a
`BUFFER_MUTATION` output. Graph-level ktir keeps values immutable: the importer returns each new
value as an extra function result after the model's outputs and marks the buffer's argument with
`ktir.updated_by = <result index>` (`UPDATED_BY_ARG`); the program writes that result back to
the buffer's device memory after each call (`ktir.compile.Program`).

A `ktir.scatter_rows` (`index_copy`) whose destination is the buffer and which nothing else reads
becomes `in_place`: it writes only its rows where the buffer lives, so a decode step moves one
token's keys and values, not the whole cache.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind, OutputKind
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntegerAttr, UnitAttr, i64
from xdsl.ir import BlockArgument, SSAValue

from ktir.dialects.ktir import routing
from ktir.dialects.ktir.functions import UPDATED_BY_ARG


def split_outputs(program: ExportedProgram, output: torch.fx.Node) -> tuple[list[Any], list[tuple[Any, str]]]:
    """
    The graph's user outputs, and each buffer update with the placeholder name of the buffer
    it updates (the argument's name), in the graph signature's order.
    """
    buffer_argument = {
        spec.target: spec.arg.name  # type: ignore[union-attr]
        for spec in program.graph_signature.input_specs
        if spec.kind == InputKind.BUFFER
    }
    items = list(output.args[0])
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


__all__ = ["mark_updates", "split_outputs"]
