"""
A state table read both by row gathers and by other ops gets a second device copy.

A tied embedding is the usual case: `embed_tokens.weight` (V x H) is read by the embedding's
row gather, which needs each row whole (the stick on H), and by the LM head's matmul as its
transposed weight, which needs the stick on V. With one device copy, one of them reads it
through a restickify of the whole table on every call (Granite-3.3-8B: 400 MB moved twice per
call, and more LX than a core has for one chunk). State is laid out once, at load time, in the
layout its readers want, so the compiler keeps two copies instead: the original argument for
the gathers and a new state argument (the same tensor, `ktir.constant` named `c<N>_<name>`) for
every other reader, each laid out for its readers. It costs device memory, not time; the bound
counts the copy in full and the table's gathered rows only, which is what the program reads.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, StringAttr

from ktir.dialects.ktir import data
from ktir.dialects.ktir.functions import CONSTANT_ARG
from ktir.frontend.fx import FxImport
from ktir.ir.values import functions_of


def split_gathered_tables(imported: FxImport) -> int:
    """Give each state table read by gathers and by other ops a copy for the others; how many."""
    function = functions_of(imported.module)[0]
    block = function.body.block
    split = 0
    for index in range(imported.user_input_count, len(block.args)):
        table = block.args[index]
        gathers = [u for u in table.uses if isinstance(u.operation, data.GatherRowsOp) and u.index == 0]
        others = [u for u in table.uses if u not in gathers]
        if not gathers or not others:
            continue
        name = f"c{len(block.args)}_{imported.input_names[index]}"
        copy = block.insert_arg(table.type, len(block.args))
        copy.name_hint = name
        for use in others:
            use.operation.operands[use.index] = copy
        attributes = list(function.arg_attrs.data) if function.arg_attrs is not None else []
        attributes.append(DictionaryAttr({"ktir.name": StringAttr(name), CONSTANT_ARG: StringAttr(name)}))
        function.arg_attrs = ArrayAttr(attributes)
        imported.input_names.append(name)
        imported.state[name] = imported.state[imported.input_names[index]]
        split += 1
    if split:
        function.update_function_type()
    return split


__all__ = ["split_gathered_tables"]
