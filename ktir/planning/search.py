"""
Exact and beam search for a minimum-cost assignment of discrete choices (layout choices).

The layout propagation pass states its problem as *variables* (one per tensor whose layout is
a choice, each with a finite domain, e.g. the stick dim) and *terms* (a cost for each
combination of a few variables' values, e.g. the restickify cost of one consumer edge). The
total cost of an assignment is the sum of all terms; INF marks combinations that cannot be
realized.

`solve_exact` is min-sum variable elimination: variables are eliminated one at a time in a
greedy order that keeps the intermediate tables small (the smallest table first), each
elimination adding the tables that mention the variable and minimizing it out, with NumPy doing
the arithmetic. The result is the exact minimum; its cost is exponential only in the induced
width of the term graph, which dataflow graphs keep small (a chain or a residual block has
width 1 or 2, whatever its length). `solve_beam` sweeps the variables in their given order
keeping the `width` cheapest partial assignments; `lower_bound` is the mini-bucket relaxation
of the elimination (tables over more than `max_frontier` variables are split and minimized
separately), which never exceeds the true minimum. `brute_force` enumerates everything.

Example: two variables a, b in {0, 1} and one term `cost(a, b) = 0 if a == b else 5` plus a
term `cost(a) = 1 if a == 0 else 0` have the minimum 0 at a = b = 1.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field

import numpy as np

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
        if not variables:
            raise ValueError("a term must depend on at least one variable")
        self.terms.append(Term(tuple(variables), cost))

    def evaluate(self, assignment: Sequence[Hashable]) -> float:
        """The total cost of a full assignment."""
        return sum(term.cost(*(assignment[v] for v in term.variables)) for term in self.terms)

    def table(self, term: Term) -> np.ndarray:
        """`term` evaluated on every combination of its variables' values (axis i = variable i)."""
        shape = [len(self.domains[v]) for v in term.variables]
        values = [
            term.cost(*combo) for combo in itertools.product(*(self.domains[v] for v in term.variables))
        ]
        return np.asarray(values, dtype=np.float64).reshape(shape)


@dataclass(frozen=True)
class Solution:
    """An assignment, its cost, and (for beam search) a lower bound on the optimum."""

    assignment: tuple[Hashable, ...]
    cost: float
    lower_bound: float
    exact: bool
    states: int  # the largest table (exact) or beam (beam search) the search held

    @property
    def gap(self) -> float:
        """How far the cost may be above the optimum (0 when exact)."""
        return self.cost - self.lower_bound


class TooManyStates(Exception):
    """The exact elimination would build a table larger than its limit allows."""


# ---------------------------------------------------------------------------------------------
# Variable elimination
# ---------------------------------------------------------------------------------------------


@dataclass
class _Factor:
    scope: tuple[int, ...]  # variables, increasing
    table: np.ndarray  # one axis per scope variable


def _factors(problem: Problem) -> list[_Factor]:
    factors = []
    for term in problem.terms:
        table = problem.table(term)
        # Repeated variables in one term (e.g. cost(a, a)) collapse onto the diagonal.
        scope = tuple(sorted(set(term.variables)))
        letters = "".join(chr(97 + scope.index(v)) for v in term.variables)
        if len(scope) != len(term.variables):
            table = np.einsum(f"{letters}->{''.join(chr(97 + i) for i in range(len(scope)))}", table)
        else:
            table = np.transpose(table, [term.variables.index(v) for v in scope])
        factors.append(_Factor(scope, table))
    return factors


def _combine(factors: Sequence[_Factor]) -> _Factor:
    """The sum of `factors` over the union of their scopes."""
    scope = tuple(sorted({v for f in factors for v in f.scope}))
    position = {v: i for i, v in enumerate(scope)}
    total = np.zeros([1] * len(scope))
    for factor in factors:
        shape = [1] * len(scope)
        for v, n in zip(factor.scope, factor.table.shape, strict=True):
            shape[position[v]] = n
        total = total + factor.table.reshape(shape)
    return _Factor(scope, total)


def elimination_order(problem: Problem) -> list[int]:
    """
    A greedy elimination order: always the variable whose elimination builds the smallest
    table (the product of its and its neighbours' domain sizes), ties by index.
    """
    neighbours: list[set[int]] = [set() for _ in problem.domains]
    for term in problem.terms:
        for v in term.variables:
            neighbours[v].update(u for u in term.variables if u != v)
    sizes = [len(d) for d in problem.domains]

    def weight(v: int) -> int:
        return sizes[v] * math.prod(sizes[u] for u in neighbours[v])

    heap = [(weight(v), v) for v in range(len(sizes))]
    heapq.heapify(heap)
    done = [False] * len(sizes)
    order: list[int] = []
    while heap:
        w, v = heapq.heappop(heap)
        if done[v] or w != weight(v):
            continue  # eliminated already, or a stale weight
        done[v] = True
        order.append(v)
        around = neighbours[v]
        for u in around:
            neighbours[u].discard(v)
            neighbours[u].update(x for x in around if x != u)
        for u in around:
            heapq.heappush(heap, (weight(u), u))
    return order


class _FactorPool:
    """The factors still to eliminate, indexed by variable, and the constant of scope-free ones."""

    def __init__(self, factors: list[_Factor]) -> None:
        self.factors: list[_Factor] = []
        self.alive: list[bool] = []
        self.by_variable: dict[int, list[int]] = {}
        self.constant = 0.0
        for factor in factors:
            self.add(factor)

    def add(self, factor: _Factor) -> None:
        """Keep `factor` (a scope-free one only adds to the constant)."""
        if not factor.scope:
            self.constant += float(factor.table)
            return
        self.factors.append(factor)
        self.alive.append(True)
        for v in factor.scope:
            self.by_variable.setdefault(v, []).append(len(self.factors) - 1)

    def take(self, variable: int) -> list[_Factor]:
        """Remove and return the live factors that mention `variable` (its bucket)."""
        bucket = [i for i in self.by_variable.get(variable, []) if self.alive[i]]
        for i in bucket:
            self.alive[i] = False
        return [self.factors[i] for i in bucket]


def _eliminate(
    problem: Problem, state_limit: int | None, max_scope: int | None
) -> tuple[float, list[tuple[int, _Factor]], int]:
    """
    Min-sum elimination. Exact unless `max_scope` splits buckets (mini-bucket lower bound).
    Returns the minimum, the argmin tables for traceback (exact runs only) and the largest table.
    """
    pool = _FactorPool(_factors(problem))
    traceback: list[tuple[int, _Factor]] = []
    largest = 1
    for v in elimination_order(problem):
        for group in _mini_buckets(pool.take(v), max_scope):
            combined = _combine(group) if group else _Factor((v,), np.zeros(len(problem.domains[v])))
            largest = max(largest, combined.table.size)
            if state_limit is not None and combined.table.size > state_limit:
                raise TooManyStates(f"a table of {combined.table.size} entries at variable {v}")
            axis = combined.scope.index(v)
            rest = combined.scope[:axis] + combined.scope[axis + 1 :]
            if max_scope is None:
                traceback.append((v, _Factor(rest, np.argmin(combined.table, axis=axis))))
            pool.add(_Factor(rest, np.min(combined.table, axis=axis)))
    return pool.constant, traceback, largest


def _mini_buckets(bucket: list[_Factor], max_scope: int | None) -> list[list[_Factor]]:
    """Split a bucket into groups whose scopes stay within `max_scope` variables (None: one group)."""
    if max_scope is None or len(bucket) <= 1:
        return [bucket]
    groups: list[tuple[set[int], list[_Factor]]] = []
    for factor in sorted(bucket, key=lambda f: -len(f.scope)):
        for scope, members in groups:
            if len(scope | set(factor.scope)) <= max(max_scope, len(factor.scope)):
                scope.update(factor.scope)
                members.append(factor)
                break
        else:
            groups.append((set(factor.scope), [factor]))
    return [members for _, members in groups]


def solve_exact(problem: Problem, state_limit: int | None = None) -> Solution:
    """
    The minimum-cost assignment, by min-sum variable elimination (ties go to the first value
    of a domain). With `state_limit`, raises `TooManyStates` instead of building a larger table.
    """
    cost, traceback, largest = _eliminate(problem, state_limit, None)
    if cost == INF:
        return Solution((), INF, INF, True, largest)
    picked = [0] * len(problem.domains)
    for v, argmin in reversed(traceback):
        picked[v] = int(argmin.table[tuple(picked[u] for u in argmin.scope)])
    assignment = tuple(problem.domains[v][i] for v, i in enumerate(picked))
    return Solution(assignment, problem.evaluate(assignment), cost, True, largest)


def lower_bound(problem: Problem, max_frontier: int) -> float:
    """A lower bound on the minimum: mini-bucket elimination with scopes of `max_frontier` variables."""
    return _eliminate(problem, None, max(1, max_frontier))[0]


def infeasible_term(problem: Problem) -> int | None:
    """
    Why a problem has no finite assignment, locally: prune values that no finite combination
    of a term supports (arc consistency) until a domain empties; returns that term's index, or
    None if pruning alone finds no contradiction.
    """
    alive = [np.ones(len(d), dtype=bool) for d in problem.domains]
    finite = [(term, np.isfinite(problem.table(term))) for term in problem.terms]
    changed = True
    while changed:
        changed = False
        for index, (term, ok) in enumerate(finite):
            mask = ok.copy()
            for axis, v in enumerate(term.variables):
                shape = [1] * len(term.variables)
                shape[axis] = len(alive[v])
                mask &= alive[v].reshape(shape)
            for axis, v in enumerate(term.variables):
                others = tuple(a for a in range(len(term.variables)) if a != axis)
                supported = mask.any(axis=others) if others else mask
                if not supported.any():
                    return index
                if (alive[v] & ~supported).any():
                    alive[v] &= supported
                    changed = True
    return None


# ---------------------------------------------------------------------------------------------
# Beam search
# ---------------------------------------------------------------------------------------------


def _last_reference(problem: Problem) -> list[int]:
    """For each variable, the last variable index whose bucket references it."""
    last = list(range(len(problem.domains)))
    for term in problem.terms:
        top = max(term.variables)
        for v in term.variables:
            last[v] = max(last[v], top)
    return last


def _beam(problem: Problem, width: int) -> tuple[tuple[Hashable, ...], float, bool, int]:
    """The sweep in variable order keeping the `width` cheapest states (keyed by live values)."""
    buckets: list[list[Term]] = [[] for _ in problem.domains]
    for term in problem.terms:
        buckets[max(term.variables)].append(term)
    last = _last_reference(problem)
    index_of = [{value: i for i, value in enumerate(domain)} for domain in problem.domains]

    def positions(history: tuple[Hashable, ...]) -> tuple[int, ...]:
        return tuple(index_of[v][value] for v, value in enumerate(history))

    live: tuple[int, ...] = ()
    states: dict[tuple[Hashable, ...], tuple[float, tuple[Hashable, ...]]] = {(): (0.0, ())}
    largest, pruned = 1, False
    for index, domain in enumerate(problem.domains):
        position = {v: i for i, v in enumerate((*live, index))}
        keep = [position[v] for v in (*live, index) if last[v] > index]
        next_states: dict[tuple[Hashable, ...], tuple[float, tuple[Hashable, ...]]] = {}
        for key, (cost, history) in states.items():
            for value in domain:
                values = (*key, value)
                total = cost + sum(
                    term.cost(*(values[position[v]] for v in term.variables)) for term in buckets[index]
                )
                if total == INF:
                    continue
                reduced = tuple(values[p] for p in keep)
                best = next_states.get(reduced)
                if best is None or total < best[0]:
                    next_states[reduced] = (total, (*history, value))
        if not next_states:
            return (), INF, pruned, largest
        if len(next_states) > width:
            # Ties go to the earliest domain values (the preferred ones), deterministically.
            ranked = sorted(next_states.items(), key=lambda item: (item[1][0], positions(item[1][1])))
            next_states = dict(ranked[:width])
            pruned = True
        live = tuple(v for v in (*live, index) if last[v] > index)
        states = next_states
        largest = max(largest, len(states))
    cost, assignment = min(states.values(), key=lambda item: (item[0], positions(item[1])))
    return assignment, cost, pruned, largest


def solve_beam(problem: Problem, width: int = 64, bound_frontier: int = 8) -> Solution:
    """
    The sweep keeping the `width` cheapest states, with a mini-bucket lower bound
    (`bound_frontier` variables per table); exact when nothing was pruned. A pruned sweep can
    lose every feasible state: its cost is then INF with `exact` False (not a proof).
    """
    assignment, cost, pruned, largest = _beam(problem, width)
    if cost == INF:
        return Solution((), INF, -INF if pruned else INF, not pruned, largest)
    if not pruned:
        return Solution(assignment, cost, cost, True, largest)
    bound = min(lower_bound(problem, bound_frontier), cost)
    return Solution(assignment, cost, bound, False, largest)


def brute_force(problem: Problem) -> float:
    """The minimum by enumerating every assignment (for testing small problems)."""
    return min(
        (problem.evaluate(assignment) for assignment in itertools.product(*problem.domains)), default=INF
    )
