"""
The layout legality check: after layout propagation and restickify insertion, every op of
graph-level ktir reads its operands in layouts its stick rule accepts (`ktir.planning.rules`).

`layout_violations(function)` lists what fails, each located at its op:

- a tensor without a `#ktir.tiled` encoding;
- a result sticked where the op cannot put it (e.g. a matmul result not on N);
- a view whose result stick is not its input's stick seen through the view (unless the view
  splits the stick and so copies);
- an operand in a layout the op cannot read (e.g. a matmul x not sticked on K), which
  `ktir-insert-restickify` would fix, or, with `pending=True` (between propagation and
  insertion), only those no restickify can fix.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from xdsl.dialects import func
from xdsl.ir import Operation, SSAValue

from ktir.ir.values import encoding_of, is_tensor, shape_of
from ktir.layout import sticks
from ktir.layout.tiled import LayoutError
from ktir.planning.plan import describe
from ktir.planning.rules import Need, Rule, RuleError, rule_of


class LayoutViolation(Exception):
    """One broken layout rule, located at `op`."""

    def __init__(self, op: Operation, message: str) -> None:
        super().__init__(message)
        self.op = op


def value_stick(value: SSAValue, op: Operation, what: str) -> int | None:
    """The stick of a tensor value's encoding; raises `LayoutViolation` if it has none."""
    layout = encoding_of(value)
    if layout is None:
        raise LayoutViolation(op, f"{what} has no #ktir.tiled layout (run ktir-propagate-layouts first)")
    try:
        return sticks.layout_stick(layout, shape_of(value.type))
    except LayoutError as error:  # the type verifier reports this one in detail
        raise LayoutViolation(op, f"{what}: {error}") from error


def layout_violations(function: func.FuncOp, pending: bool = False) -> list[LayoutViolation]:
    """Every layout rule `function` breaks, in program order (see the module docstring)."""
    found: list[LayoutViolation] = []
    for op in function.body.block.ops:
        try:
            found.extend(_check(op, pending))
        except (LayoutViolation, RuleError) as error:
            found.append(
                error if isinstance(error, LayoutViolation) else LayoutViolation(error.op, str(error))
            )
    return found


def _check(op: Operation, pending: bool) -> Iterator[LayoutViolation]:
    rule = rule_of(op)
    operand_sticks = {
        i: value_stick(v, op, f"operand #{i}") for i, v in enumerate(op.operands) if is_tensor(v)
    }
    results = [r for r in op.results if is_tensor(r)]
    chosen = tuple(value_stick(r, op, f"result #{i}") for i, r in enumerate(results))
    for index, (stick, domain) in enumerate(zip(chosen, rule.domains, strict=True)):
        if stick not in domain:
            allowed = ", ".join(describe(s) for s in domain)
            yield LayoutViolation(op, f"result #{index} is sticked on {describe(stick)}; allowed: {allowed}")
            return
    if rule.through is not None:
        yield from _check_view(op, rule, operand_sticks[0], chosen[0])
        return
    if rule.copies:  # copy / restickify move data into any layout of the same density
        yield from _check_copy(op, operand_sticks[0], chosen[0])
        return
    needs = rule.needs(tuple(s for s in chosen if s is not None))
    for index, stick in operand_sticks.items():
        yield from _check_operand(op, index, stick, needs[index], pending)


def _check_view(
    op: Operation, rule: Rule, source: int | None, result: int | None
) -> Iterator[LayoutViolation]:
    """A view's result stick is the one its input's stick maps to."""
    assert rule.through is not None  # the caller checks
    seen = rule.through(source) if source is not None else None
    if seen is not None and seen != result:
        yield LayoutViolation(
            op,
            f"view of an input sticked on {describe(source)} is sticked on "
            f"{describe(seen)}, but its result claims {describe(result)}",
        )


def _check_copy(op: Operation, source: int | None, result: int | None) -> Iterator[LayoutViolation]:
    """A copy may change the stick, but cannot gather a sparse input into dense sticks."""
    if source == sticks.SPARSE and result != sticks.SPARSE and math.prod(shape_of(op.operands[0].type)) > 1:
        yield LayoutViolation(
            op, f"copies a sparse input into {describe(result)}: sparse elements cannot be gathered"
        )


def _check_operand(
    op: Operation, index: int, stick: int | None, need: Need | None, pending: bool
) -> Iterator[LayoutViolation]:
    """One operand against what the op needs of it (`pending`: restickifies still to insert)."""
    if need is None or (stick is not None and need.satisfied_by(stick)):
        return
    if stick is None:
        yield LayoutViolation(op, f"operand #{index} has a split-stick layout, which no op reads")
        return
    fixable = stick != sticks.SPARSE and need.target is not None
    if pending and fixable:
        return
    wanted = "any layout" if need.accept is None else ", ".join(describe(s) for s in sorted(need.accept))
    hint = "; ktir-insert-restickify would fix it" if fixable else "; no restickify can fix it"
    yield LayoutViolation(
        op, f"operand #{index} is sticked on {describe(stick)}, but the op reads it on {wanted}{hint}"
    )
