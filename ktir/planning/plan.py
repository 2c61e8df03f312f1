"""
Layout planning for one function of graph-level ktir: choose every tensor's stick so that the
restickify cost is minimal, then derive each tensor's full `#ktir.tiled` layout.

The problem (`build_problem`): one search variable per tensor value (function arguments
first, then op results in program order) whose domain is its candidate sticks
(`ktir.planning.rules`); arguments are fixed to their layout, except model state
(parameters, buffers, constants) without a pinned layout, which is packed once at load time and
so may take any dense stick: the one its consumers read. Every consumer edge adds a term
over the operand's variable and the consumer's result variables: 0 when the operand is read
as it is, its host element count when a restickify fixes it, infinity when nothing can (a
sparse tensor to a dense one needs a gather). A view adds a term tying its result stick to its
input's; a view that splits or offsets the stick (`through` gives None) must copy, costing its
own element count. The cost of a plan is therefore the host elements moved by relayouts:
inserted `ktir.restickify` ops plus copying views.

`plan_function` solves it exactly (`ktir.planning.search.solve_exact`, min-sum variable
elimination) or with a beam, and `assign_layouts` turns the chosen sticks into layouts:
arguments keep theirs; an operand that needs a restickify is read in the restickify target
layout (`ktir.layout.sticks.restickified_layout`); a result takes the layout of a same-shape operand
on the same stick (as the reference copies its input's layout), a view the same bytes seen
through the view where that is a layout, and otherwise the canonical layout of its stick.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from ktir.dialects.ktir import routing
from ktir.dialects.ktir import structured as st
from ktir.dialects.ktir.attributes import TiledLayoutAttr
from ktir.dialects.ktir.functions import LAYOUT_PIN, STATE_ARGS
from ktir.ir.state import updated_arguments
from ktir.ir.values import device_dtype, encoding_of, is_tensor, numel, shape_of
from ktir.layout import sticks
from ktir.layout.dtypes import ELEMENT_TYPE_TO_DEVICE_DTYPE
from ktir.layout.spyre import SpyreTensorLayout
from ktir.layout.sticks import SPARSE
from ktir.layout.tiled import LayoutError
from ktir.planning import search as layout_search
from ktir.planning.rules import Need, Rule, RuleError, rule_of


class PlanError(Exception):
    """A function whose layouts cannot be planned; `op` (if any) locates the problem."""

    def __init__(self, message: str, op: Operation | None = None) -> None:
        super().__init__(message)
        self.op = op


def describe(stick: int | None) -> str:
    """`sparse`, `split` or `dim N`, for messages."""
    if stick is None:
        return "split"
    return "sparse" if stick == SPARSE else f"dim {stick}"


@dataclass
class LayoutPlan:
    """The chosen stick of every tensor value, with the search's cost and bounds."""

    sticks: dict[SSAValue, int]
    cost: float
    lower_bound: float  # equal to `cost` when the search proved it minimal
    search: str  # the search that ran: "exact", or "beam" (asked for, or exact tables too large)
    states: int
    layouts: dict[SSAValue, SpyreTensorLayout] = field(default_factory=dict[SSAValue, SpyreTensorLayout])


@dataclass
class _Builder:
    """Variables and terms of one function's layout problem."""

    problem: layout_search.Problem = field(default_factory=layout_search.Problem)
    variables: dict[SSAValue, int] = field(default_factory=dict[SSAValue, int])
    owners: list[Operation | None] = field(default_factory=list[Operation | None])
    term_ops: list[Operation] = field(default_factory=list[Operation])  # the op behind each term

    def variable(self, value: SSAValue, domain: Sequence[int], owner: Operation | None) -> None:
        self.variables[value] = self.problem.add_variable(list(domain))
        self.owners.append(owner)

    def term(self, op: Operation, variables: Sequence[int], table: dict[tuple[int, ...], float]) -> None:
        # Terms are tables: domains are a handful of sticks, so lookups beat recomputing rules.
        if all(cost == 0 for cost in table.values()):
            return
        self.problem.add_term(variables, lambda *values: table[values])
        self.term_ops.append(op)


def argument_layout(function: func.FuncOp, index: int) -> SpyreTensorLayout:
    """An argument's layout: its `ktir.layout` argument attribute, its encoding, or the default."""
    argument = function.body.block.args[index]
    if function.arg_attrs is not None:
        pinned = function.arg_attrs.data[index].data.get(LAYOUT_PIN)
        if isinstance(pinned, TiledLayoutAttr):
            element = cast(TensorType[Attribute], argument.type).element_type
            return pinned.layout_for(element)
    if (encoded := encoding_of(argument)) is not None:
        return encoded
    return SpyreTensorLayout(shape_of(argument.type), device_dtype(argument.type))


def _argument_stick(function: func.FuncOp, index: int) -> int:
    argument = function.body.block.args[index]
    layout = argument_layout(function, index)
    try:
        stick = sticks.layout_stick(layout, shape_of(argument.type))
    except LayoutError as error:
        raise PlanError(
            f"argument #{index}: layout {layout} does not fit its type: {error}", function
        ) from error
    if stick is None:
        raise PlanError(
            f"argument #{index}: layout {layout} splits its sticks across host dims; "
            "pin a layout whose stick walks one dim",
            function,
        )
    return stick


def free_state_argument(function: func.FuncOp, index: int) -> bool:
    """
    Whether argument `index` is model state (`ktir.dialects.ktir.functions.STATE_ARGS`) with no pinned
    or encoded layout: it is packed once at load time, so its stick is the planner's choice.
    """
    if function.arg_attrs is None or encoding_of(function.body.block.args[index]) is not None:
        return False
    attributes = function.arg_attrs.data[index].data
    return LAYOUT_PIN not in attributes and any(name in attributes for name in STATE_ARGS)


def _argument_domain(function: func.FuncOp, index: int) -> tuple[int, ...]:
    """An argument's candidate sticks: its layout's, or for free state every dense stick too."""
    default = _argument_stick(function, index)
    if not free_state_argument(function, index):
        return (default,)
    dense = [s for s in sticks.candidate_sticks(shape_of(function.body.block.args[index])) if s != SPARSE]
    # The default stick first: the search keeps it on ties, so state nobody relayouts keeps it.
    return (default, *(s for s in dense if s != default))


def check_tensor_type(value_type: Attribute, what: str, op: Operation) -> None:
    """A tensor that can have a Spyre layout: static, non-empty, with a device format."""
    tensor = cast(TensorType[Attribute], value_type)
    shape = tensor.get_shape()
    if any(n < 0 for n in shape):
        raise PlanError(f"{what} {tensor} has a dynamic shape; layouts need static shapes", op)
    if any(n == 0 for n in shape):
        raise PlanError(f"{what} {tensor} is empty; layouts need non-zero dims", op)
    if str(tensor.element_type) not in ELEMENT_TYPE_TO_DEVICE_DTYPE:
        known = ", ".join(ELEMENT_TYPE_TO_DEVICE_DTYPE)
        raise PlanError(f"{what} {tensor}: {tensor.element_type} has no Spyre device format ({known})", op)


def build_problem(function: func.FuncOp) -> tuple[_Builder, dict[Operation, Rule]]:
    """The layout problem of `function` and the rule of each op (see the module docstring)."""
    builder = _Builder()
    rules: dict[Operation, Rule] = {}
    for index, argument in enumerate(function.body.block.args):
        if is_tensor(argument):
            check_tensor_type(argument.type, f"argument #{index}", function)
            builder.variable(argument, _argument_domain(function, index), None)
    for op in function.body.block.ops:
        for index, result in enumerate(op.results):
            if is_tensor(result):
                check_tensor_type(result.type, f"result #{index}", op)
        try:
            rule = rule_of(op)
        except RuleError as error:
            raise PlanError(str(error), error.op) from error
        rules[op] = rule
        tensors = [r for r in op.results if is_tensor(r)]
        for result, domain in zip(tensors, rule.domains, strict=True):
            builder.variable(result, domain, op)
        _add_terms(builder, op, rule)
    return builder, rules


def _add_terms(builder: _Builder, op: Operation, rule: Rule) -> None:
    results = [builder.variables[r] for r in op.results if r in builder.variables]
    domains = cast("list[tuple[int, ...]]", builder.problem.domains)  # sticks
    if rule.through is not None:
        source, result = builder.variables[op.operands[0]], results[0]
        size = float(numel(op.results[0]))
        table = {
            (a, r): _view_cost(rule.through(a), r, size)
            for a, r in itertools.product(domains[source], domains[result])
        }
        builder.term(op, (source, result), table)
        return
    if rule.shifts:
        result, size = results[0], float(numel(op.results[0]))
        builder.term(op, (result,), {(r,): size if r in rule.shifts else 0.0 for r in domains[result]})
    free = [v for v in results if len(domains[v]) > 1]  # fixed results add nothing to a term
    fixed = {v: domains[v][0] for v in results if len(domains[v]) == 1}
    for index, operand in enumerate(op.operands):
        if operand not in builder.variables:
            continue
        source, size = builder.variables[operand], float(numel(operand))
        table: dict[tuple[int, ...], float] = {}
        for chosen in itertools.product(*(domains[v] for v in free)):
            picked = dict(zip(free, chosen, strict=True)) | fixed
            need = rule.needs(tuple(picked[v] for v in results))[index]
            for stick in domains[source]:
                table[(stick, *chosen)] = 0.0 if need is None else need.cost(stick, int(size))
        builder.term(op, (source, *free), table)


def _view_cost(through: int | None, result: int, size: float) -> float:
    if through is None:
        return size  # the view cannot re-index the stick: it copies into `result`'s layout
    return 0.0 if through == result else math.inf


def plan_function(
    function: func.FuncOp, strategy: str = "exact", beam_width: int = 64, state_limit: int = 200_000
) -> LayoutPlan:
    """
    Choose the sticks of every tensor in `function` (see the module docstring).

    `strategy="exact"` solves by variable elimination and falls back to the beam (reporting a
    lower bound) if a table would exceed `state_limit` entries; `"beam"` always uses the beam
    of `beam_width` (and the exact search if the beam pruned away every feasible state).
    Raises `PlanError` naming the op where no layout is feasible.
    """
    builder, rules = build_problem(function)
    problem = builder.problem
    solution: layout_search.Solution | None = None
    search = "beam"
    if strategy == "exact":
        try:
            solution, search = layout_search.solve_exact(problem, state_limit), "exact"
        except layout_search.TooManyStates:
            solution = None
    if solution is None:
        solution = layout_search.solve_beam(problem, beam_width)
    if solution.cost == math.inf and not solution.exact:  # the beam pruned every feasible state
        try:
            solution, search = layout_search.solve_exact(problem, state_limit), "exact"
        except layout_search.TooManyStates:
            raise PlanError(
                f"the beam search (width {beam_width}) lost every feasible layout assignment and the "
                "exact search is too large; use a wider beam-width",
                function,
            ) from None
    if solution.cost == math.inf:
        raise _infeasible(builder, layout_search.infeasible_term(problem))
    chosen = dict(zip(builder.variables, solution.assignment, strict=True))
    plan = LayoutPlan(
        {v: cast(int, s) for v, s in chosen.items()},
        solution.cost,
        solution.lower_bound,
        search,
        solution.states,
    )
    plan.layouts = assign_layouts(function, plan.sticks, rules)
    # A permute or reshape whose stick survives but whose input layout cannot be seen through
    # it (a hand-pinned layout, or dims merged against their device order) copies as well.
    forced = relayout_elements(function, plan.layouts, rules) - solution.cost
    plan.cost += forced
    return plan


def _infeasible(builder: _Builder, term: int | None) -> PlanError:
    if term is None:
        return PlanError("no layout assignment is feasible")
    op = builder.term_ops[term]
    domains = cast("list[tuple[int, ...]]", builder.problem.domains)  # sticks
    parts = []
    for index, operand in enumerate(op.operands):
        if operand in builder.variables:
            options = ", ".join(describe(s) for s in domains[builder.variables[operand]])
            parts.append(f"operand #{index} can be {options}")
    results = [builder.variables[r] for r in op.results if r in builder.variables]
    wanted = ", ".join(describe(s) for v in results for s in domains[v])
    return PlanError(
        f"has no feasible layout: {'; '.join(parts)}; its result can be {wanted}. "
        "A sparse tensor (one element per stick) cannot be restickified to a dense one or back "
        "(no gather/scatter)",
        op,
    )


def read_layout(
    layout: SpyreTensorLayout, value: SSAValue, stick: int, need: Need | None
) -> tuple[SpyreTensorLayout, int]:
    """
    The layout and stick an op reads `value` in: as it is when `need` accepts it, otherwise
    the restickify target (to `need.target`).
    """
    if need is None or need.satisfied_by(stick) or need.target is None:
        return layout, stick
    shape = shape_of(value.type)
    return sticks.restickified_layout(layout, shape, stick, need.target), need.target


def assign_layouts(
    function: func.FuncOp, chosen: dict[SSAValue, int], rules: dict[Operation, Rule]
) -> dict[SSAValue, SpyreTensorLayout]:
    """The full layout of every tensor value for the chosen sticks (see the module docstring)."""
    layouts: dict[SSAValue, SpyreTensorLayout] = {}
    for index, argument in enumerate(function.body.block.args):
        if is_tensor(argument):
            layouts[argument] = argument_layout(function, index)
            if chosen[argument] != _argument_stick(function, index):  # free state, restuck
                shape = shape_of(argument.type)
                layouts[argument] = sticks.stick_layout(shape, device_dtype(argument.type), chosen[argument])
    for op in function.body.block.ops:
        rule = rules[op]
        results = [r for r in op.results if is_tensor(r)]
        result_sticks = tuple(chosen[r] for r in results)
        needs = rule.needs(result_sticks)
        reads = [
            read_layout(layouts[v], v, chosen[v], needs[i]) if v in layouts else None
            for i, v in enumerate(op.operands)
        ]
        for result, stick in zip(results, result_sticks, strict=True):
            layouts[result] = _result_layout(op, rule, result, stick, reads)
    _unread_updates_take_their_layout(function, layouts)
    return layouts


def _unread_updates_take_their_layout(
    function: func.FuncOp, layouts: dict[SSAValue, SpyreTensorLayout]
) -> None:
    """
    Free state that a call replaces without reading it (a KV cache a prefill fills whole,
    `ktir.frontend.updates.whole_row_copies`) is only the memory of its new value: it takes that
    value's layout, which the update must have (`ktir.updated_by`), so no relayout is needed.
    """
    terminator = function.body.block.last_op
    if not isinstance(terminator, func.ReturnOp):
        return
    for index, result in updated_arguments(function).items():
        argument = function.body.block.args[index]
        new = terminator.operands[result] if result < len(terminator.operands) else None
        if argument.uses or new not in layouts or not free_state_argument(function, index):
            continue
        layouts[argument] = layouts[cast(SSAValue, new)]  # not None: in layouts


def _result_layout(
    op: Operation,
    rule: Rule,
    result: SSAValue,
    stick: int,
    reads: Sequence[tuple[SpyreTensorLayout, int] | None],
) -> SpyreTensorLayout:
    shape = shape_of(result.type)
    dtype = device_dtype(result.type)
    if rule.through is not None:
        source_layout, source_stick = cast(tuple[SpyreTensorLayout, int], reads[0])
        if rule.through(source_stick) == stick:
            seen = _seen_through(op, source_layout, stick)
            if seen is not None:
                return seen
        return sticks.stick_layout(shape, dtype, stick)
    if not rule.copies:
        eps = SpyreTensorLayout(shape, dtype).elems_per_stick
        pairs = list(zip(op.operands, reads, strict=True))
        if isinstance(op, routing.ScatterRowsOp):  # the destination's memory: keep its layout
            pairs = [pairs[1], *pairs[:1], *pairs[2:]]
        for operand, read in pairs:
            if read is None or shape_of(operand.type) != shape or read[1] != stick:
                continue
            if read[0].elems_per_stick == eps:
                return SpyreTensorLayout.from_device(read[0].device_size, read[0].stride_map, dtype)
    return sticks.stick_layout(shape, dtype, stick)


def _seen_through(op: Operation, layout: SpyreTensorLayout, stick: int) -> SpyreTensorLayout | None:
    """A permute's or reshape's result layout holding the input's device bytes, if any."""
    source, target = shape_of(op.operands[0].type), shape_of(op.results[0].type)
    if isinstance(op, st.PermuteOp):
        seen = sticks.permuted_layout(layout, source, st.ints(op.perm))
    elif isinstance(op, st.ReshapeOp):
        seen = sticks.reshaped_layout(layout, target)
    else:
        return None
    if seen is None or sticks.layout_stick(seen, target) != stick:
        return None
    return seen


def copying_view(op: Operation, rule: Rule, source: SpyreTensorLayout, result: SpyreTensorLayout) -> bool:
    """
    Whether a view must copy its input: it splits or offsets the stick, or (permute, reshape)
    its result layout is not the input's device bytes seen through it.
    """
    assert rule.through is not None
    source_shape, result_shape = shape_of(op.operands[0].type), shape_of(op.results[0].type)
    stick = sticks.layout_stick(source, source_shape)
    through = rule.through(stick) if stick is not None else None
    if through is None or through != sticks.layout_stick(result, result_shape):
        return True
    if isinstance(op, (st.PermuteOp, st.ReshapeOp)):
        return _seen_through(op, source, through) != result
    return False


def relayout_elements(
    function: func.FuncOp,
    layouts: dict[SSAValue, SpyreTensorLayout] | None = None,
    rules: dict[Operation, Rule] | None = None,
) -> float:
    """
    Host elements moved by relayouts in `function` with these layouts (default: the types'
    encodings): every operand its op reads in another layout (a restickify, inserted or still
    to insert), every restickify op that changes the stick, every copying view, and the result
    of every cat or pad that shifts its stick. After `ktir-insert-restickify` this is what the
    inserted ops and the copies move; it equals the plan's cost.
    """
    total = 0.0
    for op in function.body.block.ops:
        rule = rules[op] if rules is not None else rule_of(op)
        layout = {
            v: (layouts[v] if layouts is not None else encoding_of(v))
            for v in (*op.operands, *op.results)
            if is_tensor(v)
        }
        stick = {
            v: sticks.layout_stick(cast(SpyreTensorLayout, known), shape_of(v.type))
            for v, known in layout.items()
        }
        if rule.through is not None:
            source, result = op.operands[0], op.results[0]
            if copying_view(
                op, rule, cast(SpyreTensorLayout, layout[source]), cast(SpyreTensorLayout, layout[result])
            ):
                total += numel(result)
            continue
        results = tuple(cast(int, stick[r]) for r in op.results if is_tensor(r))
        if results and results[0] in rule.shifts:
            total += numel(op.results[0])
        needs = rule.needs(results)
        for operand, need in zip(op.operands, needs, strict=True):
            if need is not None and is_tensor(operand):
                total += need.cost(cast(int, stick[operand]), numel(operand))
    return total
