"""
The lock-step core of ktir's kernel interpreters: `arith` index arithmetic and `scf` control flow
run once for every unit (core or tile) at once, each value a NumPy vector over the units.

`Lockstep` is the base of the core executor (`ktir.sim.executor.KernelInterpreter`, and so the
simulator) and of the ktdp engine (`ktir.ktdp_engine.engine.TileProgram`). It runs a block op by op
through its class's table (`ktir.ir.interpreter`) up to a terminator, and implements:

- index arithmetic (`arith.addi`, `muli`, `remui`, ... : `INDEX_ARITHMETIC`), one NumPy (or,
  on the core executor's Python integers, one Python) operation for all units;
- an integer `arith.constant`;
- `scf.for` with loop-carried values: its body once per iteration for all units; when the trip
  counts differ between units, to the longest, a unit past its last iteration running masked
  (`active`: its carried values keep their last value);
- `scf.if`: the region every running unit takes, or both regions each masked to its units;
- the yield: `run_block` returns the values a terminator (`TERMINATORS`) passes on.

What the two genuinely do differently are hooks, overridden by the ktdp engine: `active` (the
mask of running units; the core executor runs every core always, and a loop or branch that
would mask some is an error there), `loop_bounds` (the ktdp engine's bounds of a masked tile
and its check of the step), `index_operands` and `index_value` (its operands as arrays, a
division's divisor checked on running tiles, results as int64), `count_iterations` (its
iteration budget) and `alias` (its schedule's buffers follow a carried or yielded value).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, cast

import numpy as np
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr, TensorType
from xdsl.ir import Operation, Region, SSAValue

from ktir.ir.diagnostics import ExecutionError
from ktir.ir.interpreter import Interpreter, impl


def _divsi(a: Any, b: Any) -> Any:
    """Signed division rounding toward zero."""
    return np.sign(a) * np.sign(b) * (np.abs(a) // np.abs(b))


def _ceildivsi(a: Any, b: Any) -> Any:
    """Signed division rounding up."""
    return -((-a) // b)


INDEX_ARITHMETIC: dict[type[Operation], Callable[[Any, Any], Any]] = {
    arith.AddiOp: operator.add,
    arith.SubiOp: operator.sub,
    arith.MuliOp: operator.mul,
    arith.DivUIOp: operator.floordiv,
    arith.DivSIOp: _divsi,
    arith.RemUIOp: operator.mod,
    arith.RemSIOp: np.fmod,
    arith.FloorDivSIOp: operator.floordiv,
    arith.CeilDivSIOp: _ceildivsi,
    arith.MaxSIOp: np.maximum,
    arith.MinSIOp: np.minimum,
}
"""The integer `arith` ops, on per-unit integer vectors (or integers the same on every unit)."""

DIVIDING = (arith.DivUIOp, arith.DivSIOp, arith.RemUIOp, arith.RemSIOp, arith.FloorDivSIOp, arith.CeilDivSIOp)
"""The index ops that divide (their divisor is checked)."""


class Lockstep(Interpreter):
    """The `arith` + `scf` core of a kernel interpreter over `units` cores or tiles (module docstring)."""

    TERMINATORS: ClassVar[tuple[type[Operation], ...]] = (scf.YieldOp,)
    """The ops that end a block: `run_block` returns their operands' values."""

    def __init__(self, units: int) -> None:
        self.units = units
        self.env: dict[SSAValue, Any] = {}

    # -- running ops --------------------------------------------------------------------------

    def run_block(self, ops: Any) -> list[Any]:
        """Run ops in order up to a terminator; the values it yields or returns."""
        terminators = self.TERMINATORS
        for op in ops:
            if isinstance(op, terminators):
                return [self.env[v] for v in op.operands]
            self.run_op(op)
        return []

    def run_op(self, op: Operation) -> None:
        """Run one op through the class's table and bind its results."""
        implementation = self.IMPLS.lookup(op)
        if implementation is None:
            raise self.unsupported(op)
        results = implementation(self, op)
        if results is not None:
            self.env.update(zip(op.results, results, strict=True))

    def unsupported(self, op: Operation) -> Exception:
        """The error for an op the interpreter has no implementation of."""
        return ExecutionError(f"'{op.name}' is not supported here")

    # -- hooks --------------------------------------------------------------------------------

    @property
    def active(self) -> np.ndarray | None:
        """The units running now (a mask), None when all are; the base runs all, always."""
        return None

    @active.setter
    def active(self, mask: np.ndarray | None) -> None:
        if mask is not None:
            raise ExecutionError(
                "the loop's or branch's units differ: this interpreter runs every unit always"
            )

    def loop_bounds(self, op: scf.ForOp) -> tuple[Any, Any, Any]:
        """An `scf.for`'s lower bound, upper bound and step (per unit, or one for all)."""
        env = self.env
        return env[op.lb], env[op.ub], env[op.step]

    def index_operands(self, op: Operation) -> tuple[Any, Any]:
        """The two operands of an index op."""
        return self.env[op.operands[0]], self.env[op.operands[1]]

    def index_value(self, value: Any) -> Any:
        """An index op's result as the interpreter keeps it."""
        return value

    def count_iterations(self, op: Operation, iterations: int) -> None:
        """Charge `iterations` of a loop to a budget (none in the base)."""

    def alias(self, values: Sequence[SSAValue], sources: Sequence[SSAValue]) -> None:
        """`values` now hold what `sources` held (a carried or yielded value); nothing in the base."""

    # -- arith --------------------------------------------------------------------------------

    @impl(*INDEX_ARITHMETIC)
    def _index_arithmetic(self, op: Operation) -> list[Any]:
        a, b = self.index_operands(op)
        return [self.index_value(INDEX_ARITHMETIC[type(op)](a, b))]

    @impl(arith.ConstantOp)
    def _constant(self, op: arith.ConstantOp) -> list[Any]:
        return [cast(IntegerAttr, op.value).value.data]

    # -- scf ----------------------------------------------------------------------------------

    @impl(scf.ForOp)
    def _for(self, op: scf.ForOp) -> list[Any]:
        """
        An `scf.for`, its body run once per iteration for all units. When every unit runs the
        same trip count, that is all; otherwise `_masked_for`.
        """
        lower, upper, step = self.loop_bounds(op)
        trips = np.maximum(0, -((lower - upper) // step))
        longest = int(trips.max(initial=0)) if isinstance(trips, np.ndarray) else int(trips)
        self.count_iterations(op, longest)
        carried = [self.env[v] for v in op.iter_args]
        if self.active is not None or (isinstance(trips, np.ndarray) and (trips != longest).any()):
            return self._masked_for(op, lower, step, trips, longest, carried)
        block = op.body.block
        env = self.env
        first, *carried_args = block.args
        sources = list(op.iter_args)
        yielded = list(block.last_op.operands) if block.last_op is not None else []
        for k in range(longest):
            env[first] = lower + k * step
            env.update(zip(carried_args, carried, strict=True))
            self.alias(carried_args, sources)
            carried = self.run_block(block.ops)
            sources = yielded
        self.alias(op.results, sources)
        return carried

    def _masked_for(
        self, op: scf.ForOp, lower: Any, step: Any, trips: np.ndarray, longest: int, carried: list[Any]
    ) -> list[Any]:
        """
        An `scf.for` whose trip counts differ between units (a Triton-style `for row = pid to n
        step grid`): it runs to the longest, and a unit past its last iteration (or with none)
        runs the rest masked (`active`): its carried values keep their last value.
        """
        outer = self.active
        block = op.body.block
        first, *carried_args = block.args
        shapes = [(self.units, *_shape_of(v)) for v in op.iter_args]
        sources = list(op.iter_args)
        yielded = list(block.last_op.operands) if block.last_op is not None else []
        self.active = trips > 0 if outer is None else outer & (trips > 0)  # one that cannot mask says so here
        for k in range(longest):
            live = trips > k if outer is None else outer & (trips > k)
            if not live.any():
                continue
            induction = lower + k * step
            self.active = None if live.all() else live
            self.env[first] = np.where(live, induction, induction[np.argmax(live)])
            self.env.update(zip(carried_args, carried, strict=True))
            self.alias(carried_args, sources)
            results = self.run_block(block.ops)
            sources = yielded
            carried = [
                _select(live, new, old, shape) if self.active is not None else new
                for new, old, shape in zip(results, carried, shapes, strict=True)
            ]
        self.active = outer
        self.alias(op.results, sources)
        return carried

    @impl(scf.IfOp)
    def _if(self, op: scf.IfOp) -> list[Any]:
        """
        An `scf.if`. A condition that differs between the running units runs each region masked
        (`_masked_if`) to the units that take it, as a loop past a unit's last iteration does: a
        K-split kernel's `if id mod 2 == 0 { store }` stores on the even tiles only.
        """
        condition = np.broadcast_to(np.asarray(self.env[op.cond]).astype(bool), (self.units,))
        outer = self.active
        running = condition if outer is None else condition[outer]
        if (running != running[0]).any():
            return self._masked_if(op, condition, outer)
        return self._region(op, op.true_region if running[0] else op.false_region)

    def _region(self, op: scf.IfOp, region: Region) -> list[Any]:
        """One region of an `scf.if` on the running units; the values it yields."""
        if not region.blocks:
            return []
        results = self.run_block(region.block.ops)
        terminator = region.block.last_op
        if terminator is not None:
            self.alias(op.results, terminator.operands)
        return results

    def _masked_if(self, op: scf.IfOp, condition: np.ndarray, outer: np.ndarray | None) -> list[Any]:
        """
        Both regions of an `scf.if`, each on the units that take it only (the others' accesses
        take a running unit's addresses), its results picked per unit.
        """
        everywhere = np.ones(self.units, dtype=bool) if outer is None else outer
        taken: list[tuple[np.ndarray, list[Any]]] = []
        for region, live in (
            (op.true_region, everywhere & condition),
            (op.false_region, everywhere & ~condition),
        ):
            if not live.any() or not region.blocks:
                continue
            self.active = live
            try:
                taken.append((live, self._region(op, region)))
            finally:
                self.active = outer
        if not op.results:
            return []
        shapes = [(self.units, *_shape_of(r)) for r in op.results]
        values = taken[0][1]
        for live, other in taken[1:]:
            values = [
                _select(live, new, old, shape) for new, old, shape in zip(other, values, shapes, strict=True)
            ]
        return values


def _shape_of(value: SSAValue) -> tuple[int, ...]:
    return tuple(value.type.get_shape()) if isinstance(value.type, TensorType) else ()


def _select(live: np.ndarray, new: Any, old: Any, shape: tuple[int, ...]) -> np.ndarray:
    """Per unit: `new` where the unit ran (`live`), `old` where it did not."""
    new, old = (np.broadcast_to(np.asarray(v), shape) for v in (new, old))
    return np.where(live.reshape(-1, *[1] * (len(shape) - 1)), new, old).astype(new.dtype, copy=False)


__all__ = ["DIVIDING", "INDEX_ARITHMETIC", "Lockstep"]
