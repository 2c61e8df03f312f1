"""The one registration convention of ktir's interpreters (`ktir.ir.interpreter`) and its lock-step core."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from xdsl.dialects import arith, scf, test
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Block, Region

from ktir.dialects.scf_ext import ForOp
from ktir.ir.diagnostics import ExecutionError
from ktir.ir.interpreter import Implementations, Interpreter, impl, impl_dialect
from ktir.ir.lockstep import Lockstep


def test_a_table_finds_an_op_by_class_else_by_its_dialect() -> None:
    table: Implementations[Any] = Implementations()
    table.impl(arith.AddiOp, arith.MuliOp)(lambda op: "integer")
    table.impl_dialect("arith")(lambda op: "arith")
    add, other, foreign = (
        arith.AddiOp(_index(1), _index(2)),
        arith.SubiOp(_index(1), _index(2)),
        test.TestOp(),
    )
    assert [found(None) for found in (table.lookup(add), table.lookup(other))] == ["integer", "arith"]
    assert table.lookup(foreign) is None


def test_a_subclass_of_a_registered_op_finds_its_base_s_entry() -> None:
    # ktir's scf.for (dialects/scf_ext.py) subclasses xDSL's only to parse more forms.
    table: Implementations[Any] = Implementations()
    table.impl(scf.ForOp)(lambda op: "loop")
    zero = _index(0)
    loop = ForOp(zero, zero, zero, [], Region(Block(arg_types=[IndexType()])))
    assert table.lookup(loop)(None) == "loop"


def test_composed_tables_let_later_ones_win() -> None:
    first: Implementations[Any] = Implementations({arith.AddiOp: "first"})
    second: Implementations[Any] = Implementations({arith.AddiOp: "second"})
    second.impl_dialect("arith")("fallback")
    union = Implementations.compose(first, second)
    assert union[arith.AddiOp] == "second" and union.dialects == {"arith": "fallback"}
    assert first[arith.AddiOp] == "first"  # the parts stay as they were


class _Base(Interpreter):
    @impl(arith.AddiOp)
    def _add(self, op: Any) -> list[str]:
        return ["base"]

    @impl_dialect("test")
    def _test(self, op: Any) -> list[str]:
        return ["test"]


class _Timed(_Base):
    @impl(arith.AddiOp)
    def _add(self, op: Any) -> list[str]:
        return ["timed", *_Base._add(self, op)]


def test_a_subclass_overrides_an_op_by_marking_its_method() -> None:
    add = arith.AddiOp(_index(1), _index(2))
    assert _Base.IMPLS.lookup(add)(_Base(), add) == ["base"]  # pyright: ignore[reportOptionalCall]
    assert _Timed.IMPLS.lookup(add)(_Timed(), add) == ["timed", "base"]  # pyright: ignore[reportOptionalCall]
    assert _Timed.IMPLS.dialects["test"] is _Base.IMPLS.dialects["test"]


def test_overriding_a_marked_method_without_marking_it_is_an_error() -> None:
    with pytest.raises(TypeError, match=r"_Unmarked\._add overrides an op implementation of _Base"):

        class _Unmarked(_Base):
            def _add(self, op: Any) -> list[str]:
                return []


def _index(value: int) -> arith.ConstantOp:
    return arith.ConstantOp(IntegerAttr(value, IndexType()))


def _loop(lower: int, upper: int, step: int) -> tuple[list[Any], scf.ForOp]:
    """`sum = 0; for i = lower to upper step step: sum += i * 2`; its ops and the loop."""
    bounds = [_index(v) for v in (lower, upper, step, 0, 2)]
    body = Block(arg_types=[IndexType(), IndexType()])
    twice = arith.MuliOp(body.args[0], bounds[4])
    total = arith.AddiOp(body.args[1], twice)
    body.add_ops([twice, total, scf.YieldOp(total)])
    loop = scf.ForOp(bounds[0], bounds[1], bounds[2], [bounds[3]], Region(body))
    return [*bounds, loop], loop


def test_the_lockstep_core_runs_index_arithmetic_and_a_loop_with_a_carried_value() -> None:
    ops, loop = _loop(1, 10, 3)
    run = Lockstep(4)
    run.run_block(ops)
    assert run.env[loop.results[0]] == 2 * (1 + 4 + 7)


def test_a_loop_whose_units_differ_is_an_error_where_nothing_is_masked() -> None:
    ops, loop = _loop(0, 4, 1)
    run = Lockstep(2)
    run.run_block(ops[:-1])
    run.env[loop.ub] = np.array([2, 4])  # trip counts 2 and 4: one core would have to wait masked
    with pytest.raises(ExecutionError, match="runs every unit always"):
        run.run_op(loop)
