"""
Liveness over positions in program order: the one sweep every LX check and planner uses.

A lifetime is closed, `[first, last]`: a buffer or a tensor is live at every position from the
op that makes it to its last reader, both included. `live_sets` gives, at each position, what
is live; `live_bytes` the bytes live there, from one difference array. The address planner
(`ktir.cores.lx_placement`), a fused kernel's LX need (`ktir.cores.fusion.scratch_bytes`), the
static check of core-level IR (`ktir.cores.check`) and the ktdp engine's LX capacity check
(`ktir.ktdp_engine.lx_capacity`) all count live bytes this way.

Example: `live_bytes([(0, 1, 8), (1, 2, 4)], 3)` is `[8, 12, 4]`: both are live at 1.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Sequence
from typing import TypeVar

import numpy as np

T = TypeVar("T")


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


def live_bytes(lifetimes: Sequence[tuple[int, int, int]], count: int) -> np.ndarray:
    """
    The bytes live at each position `0 .. count-1` (int64): the sum of the sizes whose closed
    lifetime `[first, last]` holds it. A lifetime reaching past `count - 1` counts to the end;
    one starting there counts nowhere. Sizes whose sum would not fit int64 (a tensor of 2^62
    rows) are summed as Python integers, exactly, so the overflow is reported, not raised.
    Example: `live_bytes([(0, 1, 8), (1, 2, 4)], 3)` is `[8, 12, 4]`.
    """
    exact = sum(size for _, _, size in lifetimes) >= 2**63
    change = np.zeros(count + 1, dtype=object if exact else np.int64)
    for first, last, size in lifetimes:
        if first >= count:
            continue
        change[first] += size
        change[min(last + 1, count)] -= size
    return np.cumsum(change[:count])


__all__ = ["live_bytes", "live_sets"]
