"""The exact / beam / lower-bound search behind layout propagation (`ktir.planning.search`)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ktir.planning.search import INF, Problem, brute_force, lower_bound, solve_beam, solve_exact


def test_docstring_example() -> None:
    problem = Problem()
    a, b = problem.add_variable([0, 1]), problem.add_variable([0, 1])
    problem.add_term([a, b], lambda x, y: 0 if x == y else 5)
    problem.add_term([a], lambda x: 1 if x == 0 else 0)
    solution = solve_exact(problem)
    assert (solution.assignment, solution.cost, solution.exact, solution.gap) == ((1, 1), 0, True, 0)


def test_infeasible_problem_has_infinite_cost() -> None:
    problem = Problem()
    a = problem.add_variable(["x", "y"])
    problem.add_term([a], lambda _value: INF)
    assert solve_exact(problem).cost == INF


@st.composite
def problems(draw: st.DrawFn) -> Problem:
    problem = Problem()
    count = draw(st.integers(1, 9))
    for _ in range(count):
        problem.add_variable(list(range(draw(st.integers(1, 3)))))
    for _ in range(draw(st.integers(1, 14))):
        arity = draw(st.integers(1, min(3, count)))
        variables = draw(st.lists(st.integers(0, count - 1), min_size=arity, max_size=arity, unique=True))
        table = {}
        for key in _keys(problem, variables):
            table[key] = draw(st.sampled_from([0, 1, 2, 5, 9, 16, INF]))
        problem.add_term(variables, lambda *values, table=table: table[values])
    return problem


def _keys(problem: Problem, variables: list[int]) -> list[tuple[int, ...]]:
    keys: list[tuple[int, ...]] = [()]
    for v in variables:
        keys = [(*k, value) for k in keys for value in problem.domains[v]]
    return keys


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(problems())
def test_exact_equals_brute_force_and_bounds_hold(problem: Problem) -> None:
    optimum = brute_force(problem)
    exact = solve_exact(problem)
    assert exact.cost == optimum
    if optimum < INF:
        assert problem.evaluate(exact.assignment) == optimum
    narrow = solve_beam(problem, width=2, bound_frontier=1)
    assert narrow.cost >= optimum
    assert narrow.lower_bound <= optimum or math.isinf(optimum)
    assert lower_bound(problem, max_frontier=1) <= optimum
    assert solve_beam(problem, width=10_000).cost == optimum


def test_a_long_chain_stays_small() -> None:
    """A chain of 200 three-valued variables: elimination never builds more than a 3x3 table."""
    problem = Problem()
    previous = problem.add_variable([0, 1, 2])
    problem.add_term([previous], lambda v: 0 if v == 2 else 3)
    for _ in range(199):
        current = problem.add_variable([0, 1, 2])
        problem.add_term([previous, current], lambda a, b: 0 if a == b else 1)
        previous = current
    problem.add_term([previous], lambda v: 0 if v == 0 else 7)
    solution = solve_exact(problem)
    assert solution.cost == 1
    assert solution.states <= 9
