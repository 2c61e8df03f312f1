"""
A state table read by row gathers and by other ops gets a second device copy
(`ktir.frontend.gathered_tables`): a tied embedding's LM head reads the copy, laid out for it,
and no restickify of the table runs per call.
"""

from __future__ import annotations

import torch

import ktir
from ktir.dialects.ktir import data
from ktir.dialects.ktir import structured as st
from ktir.frontend.fx import import_program
from ktir.frontend.gathered_tables import split_gathered_tables
from ktir.ir.values import functions_of


class TiedLM(torch.nn.Module):
    """An embedding whose table is also the output projection (tied weights)."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(512, 64)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.embed(ids) @ self.embed.weight.T


def test_the_table_and_its_copy_have_one_kind_of_reader_each() -> None:
    model = TiedLM().half()
    imported = import_program(model, (torch.tensor([[3, 7, 9, 3]]),), {})
    assert split_gathered_tables(imported) == 1
    function = functions_of(imported.module)[0]
    table, copy = function.body.block.args[1], function.body.block.args[-1]
    assert {type(u.operation) for u in table.uses} == {data.GatherRowsOp}
    assert all(not isinstance(u.operation, data.GatherRowsOp) for u in copy.uses)
    name = imported.input_names[-1]
    assert name == "c2_p_embed_weight" and imported.state[name] is imported.state["p_embed_weight"]
    assert split_gathered_tables(imported) == 0  # nothing left to split


def test_a_tied_model_runs_without_restickifying_its_table() -> None:
    torch.manual_seed(0)
    model = TiedLM().half()
    ids = torch.tensor([[3, 7, 9, 3]])
    program = ktir.compile(model, (ids,), quiet=True)
    torch.testing.assert_close(program(ids), model(ids), rtol=2e-2, atol=2e-2)
    ops = [k.op for k in program.report.kernels]
    assert "ktir.restickify" not in ops
    restickifies = [op for op in functions_of(program.module)[0].walk() if isinstance(op, st.RestickifyOp)]
    assert not restickifies
