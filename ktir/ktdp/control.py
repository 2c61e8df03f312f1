"""
Control flow of a ktdp program on every tile at once: `scf.for` (trip counts may differ between
tiles: masked replay), `scf.if`, and `ktdp.runtime_arg_extract`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects import scf
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from ktir.ir.diagnostics import location_of
from ktir.ktdp.memory import KtdpError

if TYPE_CHECKING:
    from ktir.ktdp.engine import Handler, TileProgram


def _if(run: TileProgram, op: Any) -> list[Any]:
    """
    An `scf.if`. A condition that differs between the running tiles runs each region masked
    (`_masked`) to the tiles that take it, as a loop past a tile's last iteration does: a K-split
    kernel's `if id mod 2 == 0 { store }` stores on the even tiles only.
    """
    condition = np.broadcast_to(np.asarray(run.env[op.cond]).astype(bool), (run.tiles,))
    outer = run.charges.active
    running = condition if outer is None else condition[outer]
    if (running != running[0]).any():
        return _masked(run, op, condition, outer)
    region = op.true_region if running[0] else op.false_region
    return _region(run, op, region)


def _region(run: TileProgram, op: Any, region: Any) -> list[Any]:
    """One region of an `scf.if` on the running tiles; the values it yields."""
    if not region.blocks:
        return []
    results = run.run_block(region.block.ops)
    terminator = region.block.last_op
    if terminator is not None:
        run.schedule.alias(op.results, terminator.operands)
    return results


def _masked(run: TileProgram, op: Any, condition: np.ndarray, outer: np.ndarray | None) -> list[Any]:
    """
    Both regions of an `scf.if`, each on the tiles that take it only (their stores, charges and
    yielded values; the others' accesses take a running tile's addresses), its results picked
    per tile.
    """
    everywhere = np.ones(run.tiles, dtype=bool) if outer is None else outer
    taken: list[tuple[np.ndarray, list[Any]]] = []
    for region, live in (
        (op.true_region, everywhere & condition),
        (op.false_region, everywhere & ~condition),
    ):
        if not live.any() or not region.blocks:
            continue
        run.charges.active = live
        try:
            taken.append((live, _region(run, op, region)))
        finally:
            run.charges.active = outer
    if not op.results:
        return []
    shapes = [(run.tiles, *_shape_of(r)) for r in op.results]
    values = taken[0][1]
    for live, other in taken[1:]:
        values = [
            _select(live, new, old, shape) for new, old, shape in zip(other, values, shapes, strict=True)
        ]
    return values


def _runtime_arg(run: TileProgram, op: Any) -> list[Any]:
    kind = op.kind.data
    if kind == "value":
        return [run.env[op.input]]
    return [run.per_tile(getattr(op.input.type, kind).data)]


def _for(run: TileProgram, op: scf.ForOp) -> list[Any]:
    """
    An `scf.for`, its body run once per iteration for all tiles. Bounds may differ between
    tiles (a Triton-style `for row = pid to n step grid`): the loop runs to the longest trip
    count, and a tile past its last iteration (or with none) runs the rest masked: its stores,
    charges and carried values skip it, and its accesses take a running tile's addresses
    (`TileProgram.addressed`), so they stay inside the views without being performed.

    Example: rows `pid to 1151 step 32` on 32 tiles: 36 iterations; tile 31 runs rows 31 to
    1119 (35) and is masked in the 36th, while tiles 0 to 30 run rows 1120 to 1150.
    """
    lower, upper, step = (run.addressed(run.env[v]) for v in (op.lb, op.ub, op.step))
    if (step <= 0).any():
        raise KtdpError("an scf.for step must be positive", location_of(op))
    trips = np.maximum(0, -((lower - upper) // step))
    outer = run.charges.active
    block = op.body.block
    carried = [run.env[v] for v in op.iter_args]
    shapes = [(run.tiles, *_shape_of(v)) for v in op.iter_args]
    longest = int(trips.max(initial=0))
    run.count_iterations(op, longest)
    schedule = run.schedule
    carried_values = list(op.iter_args)
    yielded = list(block.last_op.operands) if block.last_op is not None else []
    for k in range(longest):
        live = trips > k if outer is None else outer & (trips > k)
        if not live.any():
            continue
        induction = lower + k * step
        run.charges.active = None if live.all() else live
        run.env[block.args[0]] = np.where(live, induction, induction[np.argmax(live)])
        for arg, value in zip(block.args[1:], carried, strict=True):
            run.env[arg] = value
        schedule.alias(block.args[1:], carried_values)
        results = run.run_block(block.ops)
        carried_values = yielded
        carried = [
            _select(live, new, old, shape) if run.charges.active is not None else new
            for new, old, shape in zip(results, carried, shapes, strict=True)
        ]
    run.charges.active = outer
    schedule.alias(op.results, carried_values)
    return carried


def _shape_of(value: SSAValue) -> tuple[int, ...]:
    return tuple(value.type.get_shape()) if isinstance(value.type, TensorType) else ()


def _select(live: np.ndarray, new: Any, old: Any, shape: tuple[int, ...]) -> np.ndarray:
    """Per tile: `new` where the tile ran the iteration, `old` where it did not."""
    new, old = (np.broadcast_to(np.asarray(v), shape) for v in (new, old))
    return np.where(live.reshape(-1, *[1] * (len(shape) - 1)), new, old).astype(new.dtype, copy=False)


HANDLERS: dict[str, Handler] = {
    "scf.for": _for,
    "scf.if": _if,
    "ktdp.runtime_arg_extract": _runtime_arg,
}
"""The control-flow ops, by name."""


__all__ = ["HANDLERS"]
