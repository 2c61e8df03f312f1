"""
LX placement: which buffers live in a core's LX scratchpad, and at which address (the pass
`ktir-plan-scratchpad`, after the reference's "scratchpad solvers"; the LX itself at run time is
`ktir.sim.memory.Scratchpad`, the ktdp engine's capacity check `ktir.ktdp_engine.lx_capacity`).

A buffer has a per-core `size` in bytes and the indices of the ops that use it (`uses`); it is
live from its first use up to and including its last, i.e. over `[uses[0], uses[-1] + 1)`.
A buffer may name `in_place_parents`: buffers whose address it may reuse when the parent dies
at the child's first use (an elementwise op writing over its input). `plan` places the buffers
at multiples of `alignment` so that each ends by `limit` and no two live buffers overlap,
except a child over the parent it replaces, and returns each buffer's address, or None for a
buffer left in device memory. As in the reference, a buffer occupies its own `size` bytes:
sizes are not rounded up to the alignment, only addresses are (with limit 10 and alignment 128,
a 3-byte buffer fits at 0, and nothing fits beside it).

The three solvers are the reference stack's (`torch_spyre/_inductor/scratchpad/greedy_solver.py`
and `firstfit_bestfit_solver.py`; docs/scratchpad.md):

- `greedy`: walk the times at which buffers start or end; at each, free the buffers that
  ended, then place the ones that start, in order, trying: in place on a live parent that dies
  here; address 0 if every live buffer lies above the new one; the aligned high-water mark; the
  first gap between live buffers, from the aligned end of the lower one; else leave it out.
- `firstfit` / `bestfit`: rank the buffers by
  `((end - start) - 0.25·[has parent] - 0.25·[is parent]) / (len(uses) + 0.5·[first use is a write])`,
  ascending (short, densely used buffers first; ties by lifetime, then input order), and take
  them in that rank, a buffer only once its parents are taken (Kahn's algorithm). Each goes
  into the free ranges left by the buffers already placed that overlap it in time. First in
  place: with the parents it may replace counted as free, a free range that holds a whole
  parent offers that parent's address. Else with every live buffer in the way. A range holds
  the buffer when it fits from the range's aligned start; `firstfit` takes the first such
  range, `bestfit` the one it leaves the fewest bytes of (the first on ties).

Example: two 1000-byte buffers used by ops [0, 1] and [1, 2] overlap at op 1, so with the
default 128-byte alignment `plan([a, b])` gives addresses [0, 1024]; if b lists a as an in-place
parent it reuses address 0.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from ktir.hardware.target import Target

SOLVERS = ("greedy", "firstfit", "bestfit")


@dataclass(frozen=True)
class Buffer:
    """One buffer to place: `size` bytes (as given, not rounded), live over `[start, end)`."""

    name: str
    size: int
    uses: tuple[int, ...]
    parents: tuple[str, ...] = ()
    first_use_is_read: bool = False

    @property
    def start(self) -> int:
        """The first op using the buffer."""
        return self.uses[0]

    @property
    def end(self) -> int:
        """One past the last op using the buffer."""
        return self.uses[-1] + 1


def default_budget(target: Target) -> int:
    """
    LX bytes per core for resident tensors unless told otherwise: half the usable LX, the rest
    left to the kernels' staging buffers (838,860 on Spyre)."""
    return target.lx_usable_bytes // 2


def align(value: int, alignment: int) -> int:
    """`value` rounded up to a multiple of `alignment`: `align(1000, 128)` is 1024."""
    return -(-value // alignment) * alignment


def _buffers(specs: Sequence[Mapping[str, object]]) -> list[Buffer]:
    """Check and normalize the buffer dictionaries of `plan`."""
    buffers: list[Buffer] = []
    for index, spec in enumerate(specs):
        missing = [key for key in ("name", "size", "uses") if key not in spec]
        if missing:
            raise ValueError(f"buffer #{index} lacks {', '.join(missing)}")
        name, size, uses = spec["name"], spec["size"], spec["uses"]
        if isinstance(size, bool) or not isinstance(size, int | float) or not 0 < size < math.inf:
            raise ValueError(f"buffer {name!r}: size must be a positive number of bytes, not {size!r}")
        if not isinstance(uses, Sequence) or not uses or list(uses) != sorted(set(uses)):
            raise ValueError(f"buffer {name!r}: uses must be a non-empty increasing list of op indices")
        parents = tuple(cast("Iterable[str]", spec.get("in_place_parents", ())))  # the names of buffers
        first_read = bool(spec.get("first_use_is_read", False))
        # A per-core share of a tensor may be a fraction of a byte count; like the reference's
        # `ceil_div`, it takes the whole bytes it touches (and no more: sizes are not aligned).
        buffers.append(Buffer(str(name), math.ceil(size), tuple(uses), parents, first_read))
    names = [b.name for b in buffers]
    if len(set(names)) != len(names):
        raise ValueError("buffer names must be unique")
    for buffer in buffers:
        if unknown := [p for p in buffer.parents if p not in names]:
            raise ValueError(f"buffer {buffer.name!r}: unknown in-place parents {unknown}")
    _check_acyclic(buffers)
    return buffers


def _check_acyclic(buffers: list[Buffer]) -> None:
    """Refuse in-place parents that lead back to the buffer: no order puts parents first."""
    by_name = {b.name: b for b in buffers}
    state: dict[str, bool] = {}  # True: on the path being walked; False: walked, no cycle
    for root in buffers:
        if root.name in state:
            continue
        state[root.name] = True
        path, pending = [root.name], [iter(root.parents)]
        while path:
            parent = next(pending[-1], None)
            if parent is None:
                state[path.pop()] = False
                pending.pop()
            elif state.get(parent):
                cycle = " -> ".join([*path[path.index(parent) :], parent])
                raise ValueError(f"buffer {parent!r}: in-place parents form a cycle: {cycle}")
            elif parent not in state:
                state[parent] = True
                path.append(parent)
                pending.append(iter(by_name[parent].parents))


def plan(
    buffers: Sequence[Mapping[str, object]],
    limit: int,
    alignment: int,
    solver: str = "greedy",
) -> list[int | None]:
    """
    Each buffer's LX address, in order, or None when it is not placed (see the module docstring).

    Buffers are dicts with `name`, `size` (bytes), `uses` (increasing op indices) and optionally
    `in_place_parents` (names) and `first_use_is_read` (default False: the first use writes it).
    Raises `ValueError` for malformed buffers, an in-place cycle or an unknown solver.
    """
    if solver not in SOLVERS:
        raise ValueError(f"unknown solver {solver!r} (expected one of: {', '.join(SOLVERS)})")
    if limit < 0 or alignment <= 0:
        raise ValueError("limit must be >= 0 and alignment > 0")
    checked = _buffers(buffers)
    placed = (
        _greedy(checked, limit, alignment) if solver == "greedy" else _fit(checked, limit, alignment, solver)
    )
    return [placed.get(b.name) for b in checked]


def _can_reuse(child: Buffer, parent: Buffer, address: dict[str, int]) -> bool:
    """In place: the parent is in LX, dies at the child's first use and is large enough."""
    return parent.name in address and parent.end == child.start + 1 and child.size <= parent.size


def _greedy(buffers: list[Buffer], limit: int, alignment: int) -> dict[str, int]:
    by_name = {b.name: b for b in buffers}
    address: dict[str, int] = {}
    replaced: set[str] = set()
    live: list[Buffer] = []  # placed and not yet ended
    times = sorted({t for b in buffers for t in (b.start, b.end)})
    for time in times:
        live = [b for b in live if b.end > time]
        for buffer in (b for b in buffers if b.start == time):
            found, parent = _greedy_address(buffer, live, address, by_name, replaced, limit, alignment)
            if parent is not None:
                replaced.add(parent)
            if found is not None:
                address[buffer.name] = found
                live.append(buffer)
    return address


def _greedy_address(
    buffer: Buffer,
    live: list[Buffer],
    address: dict[str, int],
    by_name: dict[str, Buffer],
    replaced: set[str],
    limit: int,
    alignment: int,
) -> tuple[int | None, str | None]:
    """The greedy address of `buffer` (None: evicted) and the parent it replaces, if any."""
    for name in buffer.parents:
        parent = by_name[name]
        # A slot is handed over once: a second child of the same parent goes elsewhere.
        if parent in live and name not in replaced and _can_reuse(buffer, parent, address):
            return address[name], name
    if buffer.size > limit:
        return None, None
    # A parent whose address the child could not take still occupies its range.
    ranges = sorted((address[b.name], address[b.name] + b.size) for b in live)
    if not ranges or ranges[0][0] >= buffer.size:
        return 0, None
    high = align(max(end for _, end in ranges), alignment)
    if high + buffer.size <= limit:
        return high, None
    # The gaps between live buffers, each from the aligned end of the buffers below it.
    cursor = 0
    for low, end in ranges:
        if low - cursor >= buffer.size:
            return cursor, None
        cursor = max(cursor, align(end, alignment))
    return None, None


def _fit_order(buffers: list[Buffer]) -> list[Buffer]:
    """
    The reference's order: rank by priority (then lifetime, then input order), then take
    repeatedly the best-ranked buffer whose in-place parents are all taken (Kahn's algorithm).
    """
    parents = {p for b in buffers for p in b.parents}

    def priority(b: Buffer) -> tuple[float, int]:
        span = b.end - b.start
        discount = 0.25 * bool(b.parents) + 0.25 * (b.name in parents)
        return (span - discount) / (len(b.uses) + 0.5 * (not b.first_use_is_read)), span

    ranked = sorted(buffers, key=priority)
    rank = {b.name: i for i, b in enumerate(ranked)}
    waiting = {b.name: len(b.parents) for b in ranked}
    children: dict[str, list[str]] = {b.name: [] for b in ranked}
    for b in ranked:
        for name in b.parents:
            children[name].append(b.name)
    ready = [rank[b.name] for b in ranked if not b.parents]
    heapq.heapify(ready)
    ordered: list[Buffer] = []
    while ready:
        taken = ranked[heapq.heappop(ready)]
        ordered.append(taken)
        for child in children[taken.name]:
            waiting[child] -= 1
            if waiting[child] == 0:
                heapq.heappush(ready, rank[child])
    return ordered


def _fit(buffers: list[Buffer], limit: int, alignment: int, solver: str) -> dict[str, int]:
    address: dict[str, int] = {}
    placed: list[Buffer] = []
    by_name = {b.name: b for b in buffers}

    def gaps(buffer: Buffer, free: set[str]) -> list[tuple[int, int]]:
        """Free ranges of `[0, limit)` that can hold `buffer` while it lives; `free` do not block."""
        used = [
            (address[p.name], address[p.name] + p.size)
            for p in placed
            if p.start < buffer.end and buffer.start < p.end and p.name not in free
        ]
        return [(low, high) for low, high in free_ranges(used, limit) if high - low >= buffer.size]

    for buffer in _fit_order(buffers):
        # First in place: the parents it may replace do not block, and a free range that holds
        # a whole parent offers that parent's address...
        parents = [by_name[n] for n in buffer.parents if _can_reuse(buffer, by_name[n], address)]
        offers = {
            gap: owner
            for gap in gaps(buffer, {p.name for p in parents})
            if (owner := _first_inside(parents, gap, address)) is not None
        }
        chosen = _pick(list(offers), buffer.size, alignment, solver)
        if chosen is not None:
            address[buffer.name] = address[offers[chosen]]
        # ...else a free range with every live buffer, parents included, in the way.
        elif (chosen := _pick(gaps(buffer, set()), buffer.size, alignment, solver)) is not None:
            address[buffer.name] = align(chosen[0], alignment)
        if buffer.name in address:
            placed.append(buffer)
    return address


def _first_inside(parents: list[Buffer], gap: tuple[int, int], address: dict[str, int]) -> str | None:
    """The first of `parents` whose whole range lies in `gap`, if any."""
    low, high = gap
    return next(
        (p.name for p in parents if low <= address[p.name] and address[p.name] + p.size <= high), None
    )


def _pick(gaps: list[tuple[int, int]], size: int, alignment: int, solver: str) -> tuple[int, int] | None:
    """
    The range a buffer of `size` goes into from its aligned start: the first that holds it
    (`firstfit`), or the one it leaves the fewest bytes of above it (`bestfit`, first on ties).
    """
    fitting = [(high - align(low, alignment) - size, (low, high)) for low, high in gaps]
    fitting = [(waste, gap) for waste, gap in fitting if waste >= 0]
    if not fitting:
        return None
    if solver == "firstfit":
        return fitting[0][1]
    return min(fitting, key=lambda item: item[0])[1]


def free_ranges(used: list[tuple[int, int]], limit: int) -> list[tuple[int, int]]:
    """
    `[0, limit)` minus the `used` half-open ranges, as sorted disjoint non-empty ranges.
    Example: `free_ranges([(64, 128), (0, 32)], 256) == [(32, 64), (128, 256)]`.
    """
    free: list[tuple[int, int]] = []
    cursor = 0
    for low, high in sorted(used):
        if low > cursor:
            free.append((cursor, min(low, limit)))
        cursor = max(cursor, high)
    if cursor < limit:
        free.append((cursor, limit))
    return [(low, high) for low, high in free if high > low]
