"""
Layout planning (`ktir.planning.plan`): the reference's worked restickify costs, a corpus of
small graphs checked against exhaustive enumeration, pinned argument layouts, and located
errors for infeasible graphs.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
import torch
from xdsl.dialects import func
from xdsl.ir import Operation, SSAValue

import ktir
from ktir.ir.context import make_context
from ktir.ir.diagnostics import DiagnosticError, parse_module
from ktir.ir.values import numel
from ktir.passes.propagate_layouts import functions_of
from ktir.planning.plan import LayoutPlan, PlanError, build_problem, plan_function, relayout_elements
from ktir.planning.rules import rule_of

S, T = 128, 64


def function_of(fn: Callable[..., torch.Tensor], *args: torch.Tensor) -> func.FuncOp:
    return functions_of(ktir.import_fx(fn, args))[0]


def f16(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(sum(shape))).half()


# ---------------------------------------------------------------------------------------------
# The reference's worked expectations (S = 128, default input layouts)
# ---------------------------------------------------------------------------------------------

WORKED: list[tuple[str, Callable[..., torch.Tensor], tuple[tuple[int, ...], ...], int]] = [
    ("a.t() + x", lambda a, x: a.t() + x, ((S, S), (S, S)), S * S),
    ("x.t() + a", lambda x, a: x.t() + a, ((S, S), (S, S)), S * S),
    ("a.t() + x + b.t() + y", lambda a, x, b, y: a.t() + x + b.t() + y, ((S, S),) * 4, 2 * S * S),
    ("x @ y", lambda x, y: x @ y, ((S, S), (S, S)), 0),
    ("x.t() @ y", lambda x, y: x.t() @ y, ((S, S), (S, S)), S * S),
    (
        "(a + b.t() + c.t() + d.t()) @ e",
        lambda a, b, c, d, e: (a + b.t() + c.t() + d.t()) @ e,
        ((S, S),) * 5,
        2 * S * S,
    ),
    ("ones_like(x) + x.t()", lambda x: torch.ones_like(x) + x.t(), ((S, S),), 0),
    (
        "4-D a.t() + b.t() + c.t() + d",
        lambda a, b, c, d: a.transpose(2, 3) + b.transpose(2, 3) + c.transpose(2, 3) + d,
        ((T, T, T, T),) * 4,
        T**4,
    ),
]


@pytest.mark.parametrize(("name", "fn", "shapes", "expected"), WORKED, ids=[w[0] for w in WORKED])
def test_worked_expectations(
    name: str, fn: Callable[..., torch.Tensor], shapes: tuple[tuple[int, ...], ...], expected: int
) -> None:
    plan = plan_function(function_of(fn, *(f16(*s) for s in shapes)))
    assert (plan.cost, plan.lower_bound, plan.search) == (expected, expected, "exact")


# ---------------------------------------------------------------------------------------------
# Exhaustive enumeration on small graphs
# ---------------------------------------------------------------------------------------------


def op_cost(op: Operation, sticks: dict[SSAValue, int]) -> float:
    """An op's relayout cost under a full stick assignment, straight from its rule."""
    rule = rule_of(op)
    results = tuple(sticks[r] for r in op.results)
    if rule.through is not None:
        seen = rule.through(sticks[op.operands[0]])
        if seen is None:
            return float(numel(op.results[0]))
        return 0.0 if seen == results[0] else math.inf
    total = float(numel(op.results[0])) if results and results[0] in rule.shifts else 0.0
    for operand, need in zip(op.operands, rule.needs(results), strict=True):
        if need is not None:
            total += need.cost(sticks[operand], numel(operand))
    return total


def enumerate_minimum(function: func.FuncOp) -> float:
    """The minimum over every stick assignment (depth-first, pruning only provably worse branches)."""
    builder, _ = build_problem(function)
    values = list(builder.variables)
    domains = [builder.problem.domains[builder.variables[v]] for v in values]
    ops = list(function.body.block.ops)
    # An op is costed once all its operands and results are assigned.
    ready_at: dict[int, list[Operation]] = {}
    for op in ops:
        needed = [values.index(v) for v in (*op.operands, *op.results) if v in builder.variables]
        ready_at.setdefault(max(needed, default=-1), []).append(op)
    best = math.inf
    assignment: dict[SSAValue, int] = {}

    def visit(index: int, cost: float) -> None:
        nonlocal best
        if cost >= best:
            return
        if index == len(values):
            best = cost
            return
        for stick in domains[index]:
            assignment[values[index]] = cast_int(stick)
            step = sum(op_cost(op, assignment) for op in ready_at.get(index, []))
            visit(index + 1, cost + step)
        del assignment[values[index]]

    visit(0, sum(op_cost(op, assignment) for op in ready_at.get(-1, [])))
    return best


def cast_int(value: object) -> int:
    assert isinstance(value, int)
    return value


CORPUS: list[tuple[str, Callable[..., torch.Tensor], tuple[tuple[int, ...], ...]]] = [
    ("transpose chain", lambda a, b: (a.t() + b).t() * b.t(), ((S, 64), (64, S))),
    ("sum over stick then broadcast", lambda x: x - x.sum(dim=1, keepdim=True), ((S, 96),)),
    ("sum over rows", lambda x, y: x.sum(dim=0) + y, ((S, 64), (64,))),
    ("reduce transposed", lambda x: x.t().amax(dim=1, keepdim=True) * x.t(), ((64, S),)),
    ("softmax of transpose", lambda x: torch.softmax(x.t(), dim=-1) + x.t(), ((S, 64),)),
    ("matmul of transposes", lambda x, y: x.t() @ y.t(), ((64, S), (S, 64))),
    ("bmm with permute", lambda x, y: torch.bmm(x.transpose(1, 2), y), ((2, 64, 32), (2, 64, 64))),
    ("matmul then transpose add", lambda x, w, b: (x @ w).t() + b, ((32, 64), (64, 32), (32, 32))),
    (
        "layer norm of transpose",
        lambda x, w: torch.nn.functional.layer_norm(x.t(), (64,), w),
        ((64, S), (64,)),
    ),
    ("reshape split heads", lambda x: x.reshape(4, 32, 64).transpose(0, 1).sum(dim=2), ((S, 64),)),
    ("reshape splitting a stick", lambda x: x.reshape(S, 4, 16) * 2.0, ((S, 64),)),
    ("slice mid stick", lambda x: x[:, 8:40] + x[:, 40:72], ((S, 128),)),
    ("cat unaligned", lambda x, y: torch.cat([x, y], dim=1).t() * 3.0, ((S, 24), (S, 40))),
    ("outer product broadcast", lambda p, f: p[:, None] * f[None, :] + 1.0, ((S,), (32,))),
    ("where with transposed mask", lambda x, y: torch.where(x.t() > 0, y, y.t()), ((S, S), (S, S))),
    (
        "residual rms",
        lambda x, w: x + x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * w,
        ((S, 64), (64,)),
    ),
    ("expand then add", lambda x, y: x[None].expand(4, S, 64) + y, ((S, 64), (4, S, 64))),
    ("3-D majority", lambda a, b, c: a.transpose(1, 2) + b.transpose(1, 2) + c, ((8, 64, 64),) * 3),
]


@pytest.mark.parametrize(("name", "fn", "shapes"), CORPUS, ids=[c[0] for c in CORPUS])
def test_exact_equals_enumeration(
    name: str, fn: Callable[..., torch.Tensor], shapes: tuple[tuple[int, ...], ...]
) -> None:
    function = function_of(fn, *(f16(*s) for s in shapes))
    assert sum(1 for _ in function.body.block.ops) <= 13  # up to 12 ops and the return
    plan = plan_function(function)
    assert plan.cost == enumerate_minimum(function)
    assert plan.search == "exact"
    # The chosen assignment really costs what the plan says.
    assert sum(op_cost(op, plan.sticks) for op in function.body.block.ops) == plan.cost
    beam = plan_function(function, "beam", beam_width=1)
    assert beam.lower_bound <= plan.cost <= beam.cost
    # Materialized, the plan moves exactly its cost: inserted restickifies plus copies.
    module = function.parent_op()
    assert module is not None
    ktir.run_pipeline(module, "ktir-propagate-layouts,ktir-insert-restickify,ktir-verify-layouts")  # type: ignore[arg-type]
    assert relayout_elements(functions_of(module)[0]) == plan.cost


def test_plans_are_deterministic() -> None:
    def layouts(plan: LayoutPlan) -> list[str]:
        return [repr(layout) for layout in plan.layouts.values()]

    fn, shapes = CORPUS[-1][1], CORPUS[-1][2]
    first = plan_function(function_of(fn, *(f16(*s) for s in shapes)))
    second = plan_function(function_of(fn, *(f16(*s) for s in shapes)))
    assert layouts(first) == layouts(second)


# ---------------------------------------------------------------------------------------------
# Pinned arguments and infeasible graphs
# ---------------------------------------------------------------------------------------------

TRANSPOSED = "#ktir.tiled<device_size = [2, 128, 64], stride_map = [8192, 1, 128]>"
SPARSE_128 = "#ktir.tiled<device_size = [128, 1, 128, 64], stride_map = [1, -1, 128, -1]>"


def parse(text: str) -> func.FuncOp:
    return functions_of(parse_module(make_context(), text, "test.mlir"))[0]


def test_pinned_argument_layout_changes_the_cost() -> None:
    text = """
    func.func @f(%a: tensor<128x128xf16>,
                 %x: tensor<128x128xf16> {{ktir.layout = {pin}}}) -> tensor<128x128xf16> {{
      %t = ktir.permute %a perm [1, 0] : tensor<128x128xf16> -> tensor<128x128xf16>
      %s = ktir.add %t, %x : tensor<128x128xf16>, tensor<128x128xf16> -> tensor<128x128xf16>
      func.return %s : tensor<128x128xf16>
    }}
    """
    # x pinned sticked on dim 0 matches a.t(): nothing to move.
    assert plan_function(parse(text.format(pin=TRANSPOSED))).cost == 0
    # The same pin written as the argument's encoding.
    x_type = f"tensor<128x128xf16, {TRANSPOSED}>"
    encoded = parse(f"""
    func.func @f(%a: tensor<128x128xf16>, %x: {x_type}) -> tensor<128x128xf16> {{
      %t = ktir.permute %a perm [1, 0] : tensor<128x128xf16> -> tensor<128x128xf16>
      %s = ktir.add %t, %x : tensor<128x128xf16>, {x_type} -> tensor<128x128xf16>
      func.return %s : tensor<128x128xf16>
    }}
    """)
    assert plan_function(encoded).cost == 0
    # Without a pin, one side of the add is restickified.
    assert (
        plan_function(
            parse(text.replace(" {{ktir.layout = {pin}}}", "").replace("{{", "{").replace("}}", "}"))
        ).cost
        == S * S
    )


def test_sparse_argument_feeding_a_matmul_is_a_located_error() -> None:
    function = parse(f"""
    func.func @f(%a: tensor<128x128xf16, {SPARSE_128}>, %b: tensor<128x128xf16>) -> tensor<128x128xf16> {{
      %s = ktir.matmul %a, %b : tensor<128x128xf16, {SPARSE_128}>, tensor<128x128xf16> -> tensor<128x128xf16>
      func.return %s : tensor<128x128xf16>
    }}
    """)
    # A matmul reads x in dense sticks along K; a sparse x cannot be gathered into them.
    with pytest.raises(PlanError, match="operand #0 can be sparse; operand #1 can be dim 1") as caught:
        plan_function(function)
    assert caught.value.op is not None and caught.value.op.name == "ktir.matmul"
    module = function.parent_op()
    assert module is not None
    with pytest.raises(DiagnosticError, match=r"'ktir.matmul' op has no feasible layout"):
        ktir.run_pipeline(module, "ktir-propagate-layouts")  # type: ignore[arg-type]


def test_ops_without_a_rule_are_rejected() -> None:
    function = parse("""
    func.func @f(%a: tensor<4xf16>) -> tensor<4xf16> {
      %c = "test.op"(%a) : (tensor<4xf16>) -> tensor<4xf16>
      func.return %c : tensor<4xf16>
    }
    """)
    with pytest.raises(PlanError, match="has no layout rule"):
        plan_function(function)


def test_exact_on_a_45_op_decoder_block_equals_exhaustive_dynamic_programming() -> None:
    """
    Beyond enumeration's reach: the program-order dynamic program with an unbounded beam keeps
    every distinct state, so it is exhaustive too; variable elimination must agree with it.
    """
    from model_zoo import DecoderBlock, pair

    from ktir.planning import search as layout_search

    model, _ = pair(DecoderBlock)
    function = functions_of(ktir.import_fx(model, (f16(2, 32, 128), torch.zeros(32, 32).half())))[0]
    assert sum(1 for _ in function.body.block.ops) >= 41
    builder, _ = build_problem(function)
    exhaustive = layout_search.solve_beam(builder.problem, width=10**7)
    assert exhaustive.exact
    plan = plan_function(function)
    assert plan.search == "exact" and plan.cost == exhaustive.cost > 0


def test_exact_falls_back_to_beam_with_a_bound_when_tables_grow_too_large() -> None:
    fn, shapes = WORKED[5][1], WORKED[5][2]
    function = function_of(fn, *(f16(*s) for s in shapes))
    fallback = plan_function(function, "exact", beam_width=2, state_limit=1)
    assert fallback.search == "beam"
    assert fallback.lower_bound <= 2 * S * S <= fallback.cost
