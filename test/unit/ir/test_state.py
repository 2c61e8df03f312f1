"""The IR state accessors (`ktir.ir.state`): what they write, what they read back, located errors."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, StringAttr, i64

from ktir.dialects.ktir.core import CHUNK_PLAN_ATTR, CORE_ORDER_ATTR, LX_HANDOFF_ATTR, PREFETCH_ATTR
from ktir.ir.context import make_context
from ktir.ir.diagnostics import DiagnosticError, parse_module
from ktir.ir.state import (
    clear_kernel_plan,
    handed_off,
    read_chunk_plan,
    read_core_order,
    read_lx_buffers,
    read_prefetch,
    set_core_order,
    set_division,
    set_kernel_plan,
    set_lx_handoff,
)
from ktir.ir.values import functions_of

TEXT = """
func.func @f(%x: tensor<64x64xf16>, %w: tensor<64x64xf16>) -> tensor<64x64xf16> {
  %y = ktir.matmul %x, %w : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
  return %y : tensor<64x64xf16>
}
"""


def matmul():
    module = parse_module(make_context(), TEXT)
    return next(op for op in functions_of(module)[0].body.block.ops if op.name == "ktir.matmul")


def test_a_core_order_and_a_handoff_read_back_as_written() -> None:
    op = matmul()
    assert read_core_order(op) == () and not handed_off(op)
    set_division(op, {"m": 2, "n": 2, "k": 1})
    set_core_order(op, ["n", "m", "k"])
    set_lx_handoff(op)
    assert read_core_order(op) == ("n", "m", "k") and handed_off(op)
    assert str(op.attributes[CORE_ORDER_ATTR]) == '["n", "m", "k"]'


@pytest.mark.parametrize(
    "order",
    [
        ArrayAttr([StringAttr("n"), StringAttr("m")]),  # k is missing
        ArrayAttr([StringAttr("n"), StringAttr("n"), StringAttr("k")]),  # n twice
        ArrayAttr([StringAttr("n"), StringAttr("m"), IntegerAttr(0, i64)]),
        StringAttr("n"),
    ],
)
def test_a_core_order_that_is_not_the_divisions_dims_is_a_located_error(order: object) -> None:
    op = matmul()
    set_division(op, {"m": 2, "n": 2, "k": 1})
    op.attributes[CORE_ORDER_ATTR] = order  # type: ignore[assignment]
    with pytest.raises(
        DiagnosticError, match=r"'ktir\.core_order' must list each dim of its work division once"
    ):
        read_core_order(op)


def test_a_handoff_that_is_not_a_unit_attribute_is_a_located_error() -> None:
    op = matmul()
    op.attributes[LX_HANDOFF_ATTR] = IntegerAttr(1, i64)
    with pytest.raises(DiagnosticError, match=r"'ktir\.lx_handoff' must be a unit attribute"):
        handed_off(op)


def test_a_kernel_plan_reads_back_as_written_and_clears() -> None:
    op = matmul()
    assert read_chunk_plan(op) is None and read_lx_buffers(op) is None and read_prefetch(op) == frozenset()
    set_kernel_plan(op, {"m": 1, "n": 4, "k": 2}, {"in0": 0, "in1": 8192, "acc": 16384}, prefetch=[1])
    assert read_chunk_plan(op) == ({"m": 1, "n": 4, "k": 2}, False)
    assert read_lx_buffers(op) == {"in0": 0, "in1": 8192, "acc": 16384}
    assert read_prefetch(op) == frozenset({1})
    assert str(op.attributes[CHUNK_PLAN_ATTR]) == "#ktir.chunk_plan<m = 1, n = 4, k = 2>"
    set_kernel_plan(op, {"m": 2}, {"in0": 0}, whole_x=True)  # planned anew: no prefetch left over
    assert read_chunk_plan(op) == ({"m": 2}, True) and PREFETCH_ATTR not in op.attributes
    clear_kernel_plan(op)
    assert read_chunk_plan(op) is None and read_lx_buffers(op) is None


def test_a_plan_attribute_of_the_wrong_kind_is_a_located_error() -> None:
    op = matmul()
    op.attributes[CHUNK_PLAN_ATTR] = IntegerAttr(2, i64)
    with pytest.raises(DiagnosticError, match=r"'ktir\.chunk_plan' must be a #ktir\.chunk_plan, not 2 : i64"):
        read_chunk_plan(op)
