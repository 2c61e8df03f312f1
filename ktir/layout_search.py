"""
Exact and beam search for a minimum-cost assignment of discrete choices (layout choices).

The layout propagation pass states its problem as *variables* (one per op whose layout is a
choice, each with a finite domain, e.g. the stick dim) and *terms* (a cost for each combination
of a few variables' values, e.g. the restickify cost of one consumer edge). The total cost of an
assignment is the sum of all terms; INF marks combinations that cannot be realized.

`solve_exact` is dynamic programming over the variables in order (bucket elimination): the state
is the assignment of the variables that later terms still reference (the frontier), so the
minimum is exact and the state count is the product of the frontier's domain sizes.
`solve_beam` is the same sweep keeping the `width` cheapest states. `lower_bound` is a
relaxation of the same sweep (mini-bucket): when the frontier grows past a limit, the oldest
variable is dropped and every later term minimizes over it on its own, so the result never
exceeds the true minimum. `brute_force` enumerates everything (for tests).

Example: two variables a, b in {0, 1} and one term `cost(a, b) = 0 if a == b else 5` plus a
term `cost(a) = 1 if a == 0 else 0` have the minimum 0 at a = b = 1.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field

INF = math.inf


@dataclass(frozen=True)
class Term:
    """A cost over the values of `variables` (indices into the problem's variables)."""

    variables: tuple[int, ...]
    cost: Callable[..., float]


@dataclass
class Problem:
    """Variables (each a domain of hashable values, searched in order) and cost terms."""

    domains: list[tuple[Hashable, ...]] = field(default_factory=list)
    terms: list[Term] = field(default_factory=list)

    def add_variable(self, domain: Sequence[Hashable]) -> int:
        """Add a variable with a non-empty domain; returns its index."""
        if not domain:
            raise ValueError("a variable needs at least one value")
        self.domains.append(tuple(domain))
        return len(self.domains) - 1

    def add_term(self, variables: Sequence[int], cost: Callable[..., float]) -> None:
        """Add `cost(*values of variables)` to the objective."""
        self.terms.append(Term(tuple(variables), cost))

    def evaluate(self, assignment: Sequence[Hashable]) -> float:
        """The total cost of a full assignment."""
        return sum(term.cost(*(assignment[v] for v in term.variables)) for term in self.terms)


@dataclass(frozen=True)
class Solution:
    """An assignment, its cost, and (for beam search) a lower bound on the optimum."""

    assignment: tuple[Hashable, ...]
    cost: float
    lower_bound: float
    exact: bool
    states: int  # the largest number of states the sweep held
    failed_at: int | None = None  # infeasible: the variable whose terms no state survived

    @property
    def gap(self) -> float:
        """How far the cost may be above the optimum (0 when exact)."""
        return self.cost - self.lower_bound


def _terms_by_last_variable(problem: Problem) -> list[list[Term]]:
    """Each term is charged when its last variable (in search order) is assigned."""
    buckets: list[list[Term]] = [[] for _ in problem.domains]
    for term in problem.terms:
        if not term.variables:
            raise ValueError("a term must depend on at least one variable")
        buckets[max(term.variables)].append(term)
    return buckets


def _last_reference(problem: Problem) -> list[int]:
    """For each variable, the last variable index whose bucket references it."""
    last = list(range(len(problem.domains)))
    for term in problem.terms:
        top = max(term.variables)
        for v in term.variables:
            last[v] = max(last[v], top)
    return last


class TooManyStates(Exception):
    """The exact sweep would hold more states than its limit allows."""


def _sweep(problem: Problem, width: int | None, state_limit: int | None = None) -> Solution:
    """
    Bucket elimination in variable order; `width` keeps only the cheapest states, and
    `state_limit` (exact sweeps only) raises `TooManyStates` when the frontier grows past it.
    """
    buckets = _terms_by_last_variable(problem)
    last = _last_reference(problem)
    # A state maps the live variables (in increasing index) to values; it carries its cost and
    # the full assignment so far (the back pointer, kept as a tuple: problems are small).
    live: tuple[int, ...] = ()
    states: dict[tuple[Hashable, ...], tuple[float, tuple[Hashable, ...]]] = {(): (0.0, ())}
    largest = 1
    pruned = False
    for index, domain in enumerate(problem.domains):
        grown = (*live, index)
        position = {v: i for i, v in enumerate(grown)}
        next_states: dict[tuple[Hashable, ...], tuple[float, tuple[Hashable, ...]]] = {}
        keep = tuple(v for v in grown if last[v] > index)
        keep_positions = [position[v] for v in keep]
        for key, (cost, history) in states.items():
            for value in domain:
                values = (*key, value)
                total = cost
                for term in buckets[index]:
                    total += term.cost(*(values[position[v]] for v in term.variables))
                    if total == INF:
                        break
                if total == INF:
                    continue
                reduced = tuple(values[p] for p in keep_positions)
                best = next_states.get(reduced)
                if best is None or total < best[0]:
                    next_states[reduced] = (total, (*history, value))
        if not next_states:
            return Solution((), INF, INF, width is None, largest, failed_at=index)
        if state_limit is not None and len(next_states) > state_limit:
            raise TooManyStates(f"{len(next_states)} states at variable {index}")
        if width is not None and len(next_states) > width:
            ranked = sorted(next_states.items(), key=lambda item: (item[1][0], repr(item[0])))
            next_states = dict(ranked[:width])
            pruned = True
        live, states = keep, next_states
        largest = max(largest, len(states))
    cost, assignment = min(states.values(), key=lambda item: (item[0], repr(item[1])))
    return Solution(assignment, cost, cost if not pruned else -INF, not pruned, largest)


def solve_exact(problem: Problem, state_limit: int | None = None) -> Solution:
    """
    The minimum-cost assignment, by exact dynamic programming (ties broken deterministically).

    With `state_limit`, raises `TooManyStates` instead of holding more states than that.
    """
    return _sweep(problem, None, state_limit)


def solve_beam(problem: Problem, width: int = 64, bound_frontier: int = 12) -> Solution:
    """
    The sweep keeping the `width` cheapest states, with a lower bound from `lower_bound`
    (`bound_frontier` live variables at most); exact when nothing was pruned.
    """
    found = _sweep(problem, width)
    if found.exact:
        return found
    bound = min(lower_bound(problem, bound_frontier), found.cost)
    return Solution(found.assignment, found.cost, bound, False, found.states)


def lower_bound(problem: Problem, max_frontier: int) -> float:
    """
    A lower bound on the minimum: the sweep where, past `max_frontier` live variables, the
    oldest is forgotten and each later term referencing it minimizes over it independently.
    """
    relaxed = Problem(list(problem.domains), [])
    last = _last_reference(problem)
    live: list[int] = []
    forgotten: set[int] = set()
    for index in range(len(problem.domains)):
        live = [v for v in live if last[v] >= index] + [index]
        while len(live) > max_frontier:
            forgotten.add(live.pop(0))
    for term in problem.terms:
        relaxed.terms.append(_relax(term, forgotten, problem.domains))
    return _sweep(relaxed, None).cost


def _relax(term: Term, forgotten: set[int], domains: list[tuple[Hashable, ...]]) -> Term:
    """`term` with its forgotten variables minimized out (a valid lower bound of the term)."""
    free = [v for v in term.variables if v in forgotten]
    kept = tuple(v for v in term.variables if v not in forgotten)
    if not free:
        return term
    if not kept:  # every variable forgotten: a constant, charged to the term's first variable
        constant = min(
            term.cost(*values) for values in itertools.product(*(domains[v] for v in term.variables))
        )
        return Term((term.variables[0],), lambda _value: constant)
    slots = [kept.index(v) if v in kept else None for v in term.variables]
    choices = [domains[v] for v in term.variables if v in forgotten]

    def relaxed(*values: Hashable) -> float:
        best = INF
        for picked in itertools.product(*choices):
            it = iter(picked)
            arguments = [values[s] if s is not None else next(it) for s in slots]
            best = min(best, term.cost(*arguments))
        return best

    return Term(kept, relaxed)


def brute_force(problem: Problem) -> float:
    """The minimum by enumerating every assignment (for testing small problems)."""
    return min(
        (problem.evaluate(assignment) for assignment in itertools.product(*problem.domains)), default=INF
    )
