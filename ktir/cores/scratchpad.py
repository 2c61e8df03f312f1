"""
Scratchpad (LX) address planning: which buffers live in a core's LX, and at which address.

A buffer has a per-core `size` in bytes and the indices of the ops that use it (`uses`); it is
live from its first use up to and including its last, i.e. over `[uses[0], uses[-1] + 1)`.
A buffer may name `in_place_parents`: buffers whose address it may reuse when the parent dies
at the child's first use (an elementwise op writing over its input). `plan` places the buffers
in `[0, limit)` at multiples of `alignment` (sizes are rounded up to it) so that no two live
buffers overlap, except a child over the parent it replaces, and returns each buffer's address,
or None for a buffer left in device memory.

The three solvers are the reference stack's (`torch_spyre/_inductor/scratchpad/plan_solver.py`
and `firstfit_bestfit_solver.py`; docs/scratchpad.md):

- `greedy`: walk the times at which buffers start or end; at each, free the buffers that
  ended, then place the ones that start, in order, trying: in place on a live parent that dies
  here; address 0 if every live buffer lies above the new one; the aligned high-water mark; the
  first aligned gap; else leave it out.
- `firstfit` / `bestfit`: order the buffers by
  `((end - start) - 0.25·[has parent] - 0.25·[is parent]) / (len(uses) + 0.5·[first use is a write])`,
  ascending (short, densely used buffers first), then parents before their children; place each
  in the free ranges left by the buffers already placed that overlap it in time (the range of a
  parent it may replace counts as free): a free range holding such a parent's address reuses
  that address, else the first range that fits (`firstfit`) or the tightest (`bestfit`).

Example: two 1000-byte buffers used by ops [0, 1] and [1, 2] overlap at op 1, so with the
default 128-byte alignment `plan([a, b])` gives addresses [0, 1024]; if b lists a as an in-place
parent it reuses address 0.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from ktir.hardware.target import SPYRE

SOLVERS = ("greedy", "firstfit", "bestfit")

T = TypeVar("T")


@dataclass(frozen=True)
class Buffer:
    """One buffer to place: `size` bytes (already aligned), live over `[start, end)`."""

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


def align(value: int, alignment: int) -> int:
    """`value` rounded up to a multiple of `alignment`: `align(1000, 128)` is 1024."""
    return -(-value // alignment) * alignment


def _buffers(specs: Sequence[Mapping[str, object]], alignment: int) -> list[Buffer]:
    """Check and normalize the buffer dictionaries of `plan`."""
    buffers: list[Buffer] = []
    for index, spec in enumerate(specs):
        missing = [key for key in ("name", "size", "uses") if key not in spec]
        if missing:
            raise ValueError(f"buffer #{index} lacks {', '.join(missing)}")
        name, size, uses = spec["name"], spec["size"], spec["uses"]
        if isinstance(size, bool) or not isinstance(size, int | float) or not 0 < size < math.inf:
            raise ValueError(f"buffer {name!r}: size must be a positive number of bytes, not {size!r}")
        if not isinstance(uses, Sequence) or not uses or list(uses) != sorted(set(uses)):  # type: ignore[arg-type]
            raise ValueError(f"buffer {name!r}: uses must be a non-empty increasing list of op indices")
        parents = tuple(spec.get("in_place_parents", ()))  # type: ignore[arg-type]
        first_read = bool(spec.get("first_use_is_read", False))
        # The reference's per-core size (`128 * sticks / cores`) may be a fraction of a stick;
        # like the reference, a buffer takes whole alignment units.
        aligned = align(math.ceil(size), alignment)
        buffers.append(Buffer(str(name), aligned, tuple(uses), parents, first_read))  # type: ignore[arg-type]
    names = [b.name for b in buffers]
    if len(set(names)) != len(names):
        raise ValueError("buffer names must be unique")
    for buffer in buffers:
        if unknown := [p for p in buffer.parents if p not in names]:
            raise ValueError(f"buffer {buffer.name!r}: unknown in-place parents {unknown}")
    return buffers


def plan(
    buffers: Sequence[Mapping[str, object]],
    limit: int = SPYRE.lx_usable_bytes,
    alignment: int = SPYRE.lx_alignment,
    solver: str = "greedy",
) -> list[int | None]:
    """
    Each buffer's LX address, in order, or None when it is not placed (see the module docstring).

    Buffers are dicts with `name`, `size` (bytes), `uses` (increasing op indices) and optionally
    `in_place_parents` (names) and `first_use_is_read` (default False: the first use writes it).
    Raises `ValueError` for malformed buffers or an unknown solver.
    """
    if solver not in SOLVERS:
        raise ValueError(f"unknown solver {solver!r} (expected one of: {', '.join(SOLVERS)})")
    if limit < 0 or alignment <= 0:
        raise ValueError("limit must be >= 0 and alignment > 0")
    checked = _buffers(buffers, alignment)
    limit = limit // alignment * alignment  # an address range must end on the alignment too
    placed = _greedy(checked, limit, alignment) if solver == "greedy" else _fit(checked, limit, solver)
    return [placed.get(b.name) for b in checked]


def _can_reuse(child: Buffer, parent: Buffer, address: dict[str, int], replaced: set[str]) -> bool:
    """
    In place: the parent is in LX, dies at the child's first use, is large enough, and no other
    child has replaced it already.
    """
    return (
        parent.name in address
        and parent.name not in replaced
        and parent.end == child.start + 1
        and child.size <= parent.size
    )


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
        if parent in live and _can_reuse(buffer, parent, address, replaced):
            return address[name], name
    # A parent whose address the child could not take still occupies its range.
    ranges = sorted((address[b.name], address[b.name] + b.size) for b in live)
    if not ranges or ranges[0][0] >= buffer.size:
        return (0 if buffer.size <= limit else None), None
    high = align(max(end for _, end in ranges), alignment)
    if high + buffer.size <= limit:
        return high, None
    cursor = 0
    for low, end in ranges:
        if low - cursor >= buffer.size:
            return cursor, None
        cursor = max(cursor, align(end, alignment))
    return None, None


def _fit_order(buffers: list[Buffer]) -> list[Buffer]:
    """The reference's priority order, then parents before children (stable)."""
    parents = {p for b in buffers for p in b.parents}

    def priority(b: Buffer) -> float:
        span = (b.end - b.start) - 0.25 * bool(b.parents) - 0.25 * (b.name in parents)
        return span / (len(b.uses) + 0.5 * (not b.first_use_is_read))

    ranked = sorted(buffers, key=priority)
    ordered: list[Buffer] = []
    done: set[str] = set()
    by_name = {b.name: b for b in buffers}

    def visit(b: Buffer, path: frozenset[str]) -> None:
        if b.name in done or b.name in path:  # already placed, or an in-place cycle
            return
        for name in b.parents:
            visit(by_name[name], path | {b.name})
        done.add(b.name)
        ordered.append(b)

    for b in ranked:
        visit(b, frozenset())
    return ordered


def _fit(buffers: list[Buffer], limit: int, solver: str) -> dict[str, int]:
    address: dict[str, int] = {}
    replaced: set[str] = set()
    placed: list[Buffer] = []
    by_name = {b.name: b for b in buffers}

    def fitting(buffer: Buffer, free_parents: set[str]) -> list[tuple[int, int]]:
        """Free ranges that hold `buffer` while it lives; `free_parents` do not block."""
        used = sorted(
            (address[p.name], address[p.name] + p.size)
            for p in placed
            if p.start < buffer.end and buffer.start < p.end and p.name not in free_parents
        )
        return [(low, high) for low, high in free_ranges(used, limit) if high - low >= buffer.size]

    for buffer in _fit_order(buffers):
        # A parent the buffer may replace in place does not block its own range...
        replaceable = [n for n in buffer.parents if _can_reuse(buffer, by_name[n], address, replaced)]
        gaps = fitting(buffer, set(replaceable))
        reuse = next(
            (
                n
                for n in replaceable
                if any(low <= address[n] and address[n] + buffer.size <= high for low, high in gaps)
            ),
            None,
        )
        if reuse is not None:
            address[buffer.name] = address[reuse]
            replaced.add(reuse)
            placed.append(buffer)
            continue
        # ...but when the buffer goes elsewhere, every live parent is in the way.
        gaps = fitting(buffer, set())
        if gaps:
            low, _ = gaps[0] if solver == "firstfit" else min(gaps, key=lambda g: (g[1] - g[0], g[0]))
            address[buffer.name] = low
            placed.append(buffer)
    return address


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


def live_sets(lifetimes: Sequence[tuple[int, int, T]], count: int) -> Iterator[list[T]]:
    """
    For each position `0 .. count-1`, the payloads whose closed lifetime `[first, last]`
    holds it, in one sweep (O(n log n + output), not a scan of every lifetime per position).
    Example: `list(live_sets([(0, 1, "a"), (1, 2, "b")], 3))` is `[["a"], ["a", "b"], ["b"]]`.
    """
    pending = sorted(range(len(lifetimes)), key=lambda i: lifetimes[i][0])
    active: dict[int, T] = {}
    ending: list[tuple[int, int]] = []
    cursor = 0
    for position in range(count):
        while cursor < len(pending) and lifetimes[pending[cursor]][0] <= position:
            i = pending[cursor]
            active[i] = lifetimes[i][2]
            heapq.heappush(ending, (lifetimes[i][1], i))
            cursor += 1
        while ending and ending[0][0] < position:
            active.pop(heapq.heappop(ending)[1], None)
        yield [active[i] for i in sorted(active)]
