"""`ktir-insert-restickify`: the plan's cost is what the inserted ops move; idempotence; targets."""

from __future__ import annotations

import math

import torch
from helpers import import_f16
from xdsl.dialects.builtin import ModuleOp

import ktir
from ktir.dialects.ktir.functions import LAYOUT_PLAN
from ktir.dialects.ktir.structured import RestickifyOp
from ktir.ir.values import encoding_of
from ktir.layout.spyre import SpyreTensorLayout, restickify_target
from ktir.passes.propagate_layouts import functions_of

S = 128


def restickifies(module: ModuleOp) -> list[RestickifyOp]:
    return [op for op in functions_of(module)[0].body.block.ops if isinstance(op, RestickifyOp)]


def planned(fn, *shapes: tuple[int, ...]) -> ModuleOp:
    module = import_f16(fn, *shapes)
    ktir.run_pipeline(module, "ktir-propagate-layouts,ktir-insert-restickify")
    return module


def test_inserted_restickifies_move_exactly_the_plan_cost() -> None:
    module = planned(lambda a, b, c, d, e: (a + b.t() + c.t() + d.t()) @ e, *[(S, S)] * 5)
    cost = functions_of(module)[0].attributes[LAYOUT_PLAN].data["cost"].value.data  # type: ignore[attr-defined]
    moved = sum(math.prod(op.input.type.get_shape()) for op in restickifies(module))  # type: ignore[attr-defined]
    assert moved == cost == 2 * S * S
    assert len(restickifies(module)) == 2


def test_restickify_sits_right_before_its_consumer_with_the_formula_target() -> None:
    module = planned(lambda x, y: x.t() @ y, (256, S), (256, 64))
    (restickify,) = restickifies(module)
    consumer = restickify.next_op
    assert consumer is not None and consumer.name == "ktir.matmul"
    assert consumer.operands[0] is restickify.result
    source = encoding_of(restickify.input)
    assert source is not None
    # x.t() is (128, 256) sticked on dim 0; the matmul reads it on K = dim 1.
    expected = restickify_target(source, (S, 256), 0, 1)
    assert encoding_of(restickify.result) == expected
    assert expected == SpyreTensorLayout((S, 256), "float16")


def test_idempotent() -> None:
    module = planned(lambda a, x: torch.softmax(a.t(), dim=1) + x, (S, S), (S, S))
    once = str(module)
    ktir.run_pipeline(module, "ktir-insert-restickify")
    assert str(module) == once
    ktir.run_pipeline(module, "ktir-verify-layouts")
