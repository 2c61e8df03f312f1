"""
Per-core timelines of one kernel: units, in-order issue queues, and dependencies through LX.

Every core has four units: `dma`, `pt` (the two corelets' PE arrays, matmul), `sfu` (everything
else) and `ring`. The DMA unit has a load queue and a store queue, each in program order, and
all cores' transfers share one LPDDR5 channel (`Channel`): a transfer uses the channel's free
time after it is ready, so a load may go ahead of an earlier store still waiting for its data.
A unit's busy time is the union of its ops' working intervals, so the DMA unit, whose two
queues overlap, is never busy for longer than the kernel runs (`busy`).
An op starts on its queue when the queue is free and its LX operands are ready: a read waits
for the last write of that buffer slot, a write waits for the last read and write of it. So a
double-buffered loop (two slots) overlaps the load of chunk i+1 with the compute and store of
chunk i, and a single-slot program serializes. All cores are handled at once: times are NumPy
vectors over cores.

```python
line = Timeline(cores=2, start=0.0)
line.issue("load", reads=[], writes=[("x", 0)], cycles=np.array([100.0, 100.0]), label="load")
line.issue("sfu", reads=[("x", 0)], writes=[("y", 0)], cycles=np.array([50.0, 50.0]), label="exp")
line.end  # 150.0
```
"""

from __future__ import annotations

import bisect
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from ktir.cores.prefetch import PreviousKernel

UNITS = ("dma", "pt", "sfu", "ring")
"""The units of a core, in report order."""

QUEUES = {"load": "dma", "store": "dma", "pt": "pt", "sfu": "sfu", "ring": "ring"}
"""Issue queues of a core and the unit each belongs to (the trace shows one track per queue)."""


class Channel:
    """
    A resource shared by time slicing (the chip's LPDDR5): its busy intervals, and `fill`, which
    gives a transfer the free time after its ready time until it has had its duration.

    Slicing a transfer into the gaps other transfers leave is how shared bandwidth behaves in
    aggregate: the channel never idles while a transfer is ready, and the bytes per cycle never
    exceed the bandwidth. Example: with [0, 10) and [20, 30) busy, `fill(5, 15)` takes [10, 20)
    and [30, 35) and returns 35.
    """

    def __init__(self) -> None:
        self.starts: list[float] = []
        self.ends: list[float] = []

    def forget_before(self, time: float) -> None:
        """Drop the busy intervals that end by `time` (no transfer can use time before it)."""
        keep = bisect.bisect_right(self.ends, time)
        del self.starts[:keep], self.ends[:keep]

    def fill(self, ready: float, duration: float) -> float:
        """Use the channel's free time from `ready` on for `duration` cycles; returns the end."""
        return self.fill_pieces(ready, duration)[0]

    def fill_pieces(self, ready: float, duration: float) -> tuple[float, list[tuple[float, float]]]:
        """`fill`, with the [start, end) pieces of channel time the transfer took."""
        time, remaining = ready, duration
        index = bisect.bisect_right(self.ends, time)
        pieces: list[tuple[float, float]] = []
        while remaining > 0:
            if index < len(self.starts) and self.starts[index] <= time:
                time = max(time, self.ends[index])
                index += 1
                continue
            gap_end = self.starts[index] if index < len(self.starts) else float("inf")
            take = min(remaining, gap_end - time)
            pieces.append((time, time + take))
            time += take
            remaining -= take
        for start, end in pieces:
            self._insert(start, end)
        return time, pieces

    def _insert(self, start: float, end: float) -> None:
        """Add a busy interval that overlaps none, merging it with the ones it touches."""
        index = bisect.bisect_left(self.starts, start)
        if index > 0 and self.ends[index - 1] == start:
            index -= 1
            self.ends[index] = end
        else:
            self.starts.insert(index, start)
            self.ends.insert(index, end)
        if index + 1 < len(self.starts) and self.starts[index + 1] == self.ends[index]:
            self.ends[index] = self.ends.pop(index + 1)
            self.starts.pop(index + 1)


Slot = tuple[Hashable, int]
"""An LX buffer slot: (buffer key, slot index)."""


@dataclass(frozen=True)
class Event:
    """One op on one unit of every core: start and end cycle per core (end == start: idle)."""

    unit: str
    queue: str
    label: str
    start: np.ndarray
    end: np.ndarray
    channel: tuple[tuple[float, float], ...] = ()
    """A transfer's pieces of LPDDR5 time, [start, end) cycles in which it moved its bytes at
    the full bandwidth (the same for every core: the cores transfer in lockstep)."""


@dataclass
class PrefetchWindow:
    """
    Where a kernel's prefetch loads (`ktir.dma_load ... prefetch`) run: on each core's load
    queue after the previous kernel's loads (`load_free`, per core), sharing the previous
    kernel's LPDDR5 channel, whose transfers keep their time: a prefetch only fills the gaps
    they leave. `previous` is what a prefetch may not read or fill (`ktir.cores.prefetch`).
    """

    load_free: np.ndarray
    channel: Channel
    previous: PreviousKernel | None = None


class Timeline:
    """
    The units and buffer-slot readiness of all cores of one kernel, from cycle `start`; with a
    `window`, its prefetch loads may run before `start` (`prefetch`).
    """

    def __init__(self, cores: int, start: float, window: PrefetchWindow | None = None) -> None:
        self.cores = cores
        self.start = float(start)
        self.free = {queue: np.full(cores, self.start) for queue in QUEUES}
        self.queued = {unit: np.zeros(cores) for unit in UNITS}  # `busy`, but for the DMA unit
        self.dma_spans: list[tuple[np.ndarray, np.ndarray]] = []  # per core: [start, end) worked
        self.window = window
        self.channel = window.channel if window is not None else Channel()
        self.written: dict[Slot, np.ndarray] = {}
        self.read: dict[Slot, np.ndarray] = {}
        self.events: list[Event] = []

    def _ready(self, slots: Sequence[Slot], table: dict[Slot, np.ndarray]) -> np.ndarray:
        ready = np.full(self.cores, self.start)
        for slot in slots:
            if (time := table.get(slot)) is not None:
                ready = np.maximum(ready, time)
        return ready

    def issue(
        self, queue: str, reads: Sequence[Slot], writes: Sequence[Slot], cycles: np.ndarray, label: str
    ) -> np.ndarray:
        """
        Run an op of `cycles` (per core; 0 where a core does nothing) on `queue`; returns its end.

        It starts when the queue is free, every slot it reads has been written, and every slot
        it writes has been read and written by the ops before it.
        """
        start = self._ready_to_start(queue, reads, writes)
        if QUEUES[queue] == "dma":
            self.dma_spans.append((start, start + cycles))
        return self._occupy(queue, reads, writes, start, start + cycles, cycles, label)

    def transfer(
        self,
        queue: str,
        reads: Sequence[Slot],
        writes: Sequence[Slot],
        setup: np.ndarray,
        chip_cycles: float,
        label: str,
    ) -> np.ndarray:
        """
        A DMA issued by the cores where `setup` > 0, in lockstep: after its setup, the chip-wide
        transfer of `chip_cycles` uses the LPDDR5 channel's free time from when every
        participating core is ready; all of them finish together.
        """
        start = self._ready_to_start(queue, reads, writes)
        active = setup > 0
        if not active.any():
            return self._occupy(queue, reads, writes, start, start, setup, label)
        ready = float((start + setup)[active].max())
        finish, pieces = self.channel.fill_pieces(ready, chip_cycles)
        self._worked(active, start, setup, pieces)
        end = np.where(active, finish, start)
        busy = np.where(active, setup + chip_cycles, 0.0)
        return self._occupy(queue, reads, writes, start, end, busy, label, tuple(pieces))

    def prefetch(self, writes: Sequence[Slot], setup: np.ndarray, chip_cycles: float, label: str) -> float:
        """
        A load issued before the kernel starts (`PrefetchWindow`): after the previous kernel's
        loads on each core's queue, in the channel time the previous kernel leaves free. The
        kernel's own loads queue behind it. Without a window it is an ordinary load. Returns the
        share of the transfer that ran before the kernel's start.
        """
        if self.window is None:
            self.transfer("load", [], writes, setup, chip_cycles, label)
            return 0.0
        start = self.window.load_free.copy()
        active = setup > 0
        if not active.any():
            return 0.0
        ready = float((start + setup)[active].max())
        finish, pieces = self.channel.fill_pieces(ready, chip_cycles)
        end = np.where(active, finish, start)
        early = sum(max(0.0, min(hi, self.start) - lo) for lo, hi in pieces)
        self.window.load_free = np.where(active, end, start)
        queue_free = self.free["load"]
        # busy time counts from the kernel's start (each kernel's busy lies in its own time);
        # what ran under the previous kernel shows in the trace, not in either kernel's busy
        self._worked(active, start, setup, pieces, after=self.start)
        busy = np.where(active, setup + chip_cycles, 0.0)
        self._occupy("load", [], writes, start, end, busy, label, tuple(pieces))
        self.free["load"] = np.maximum(queue_free, np.where(active, end, queue_free))
        return early / chip_cycles if chip_cycles else 1.0

    def _ready_to_start(self, queue: str, reads: Sequence[Slot], writes: Sequence[Slot]) -> np.ndarray:
        start = np.maximum(self.free[queue], self._ready(reads, self.written))
        start = np.maximum(start, self._ready(writes, self.read))
        return np.maximum(start, self._ready(writes, self.written))

    def issue_group(
        self, queue: str, slots: Sequence[Slot], cycles: np.ndarray, group: int, label: str
    ) -> np.ndarray:
        """
        A collective over consecutive groups of `group` cores (a ring reduction): every member
        starts when all members are ready, and the slots are read and written by all of them.
        """
        start = np.maximum(self.free[queue], self._ready(slots, self.written))
        start = np.maximum(start, self._ready(slots, self.read))
        start = np.repeat(start.reshape(-1, group).max(axis=1), group)
        return self._occupy(queue, slots, slots, start, start + cycles, cycles, label)

    def _occupy(
        self,
        queue: str,
        reads: Sequence[Slot],
        writes: Sequence[Slot],
        start: np.ndarray,
        end: np.ndarray,
        cycles: np.ndarray,
        label: str,
        channel: tuple[tuple[float, float], ...] = (),
    ) -> np.ndarray:
        """
        Mark the queue occupied from `start` to `end` where `cycles` > 0. On the SFU, PE arrays
        and ring (one in-order queue each) `cycles` count as busy time; a DMA that is not a
        transfer (an LX copy) works from `start` for `cycles` (`transfer` records its own).
        """
        active = cycles > 0
        self.free[queue] = np.where(active, end, self.free[queue])
        unit = QUEUES[queue]
        if unit != "dma":
            self.queued[unit] += cycles
        for slot in reads:
            self.read[slot] = np.maximum(self.read.get(slot, end), end)
        for slot in writes:
            self.written[slot] = end
        self.events.append(Event(QUEUES[queue], queue, label, start, end, channel))
        return end

    def _worked(
        self,
        active: np.ndarray,
        start: np.ndarray,
        setup: np.ndarray,
        pieces: list[tuple[float, float]],
        after: float = -np.inf,
    ) -> None:
        """
        A transfer's working time on each active core: its setup from `start`, then the LPDDR5
        channel time it took (`pieces`, the same for every core in lockstep), from `after` on.
        The wait between them (for the other cores, or for the channel) is not work.
        """
        lo = np.maximum(start, after)
        hi = np.maximum(start + setup, lo)
        self.dma_spans.append((np.where(active, lo, 0.0), np.where(active, hi, 0.0)))
        for piece_start, piece_end in pieces:
            lo_piece = max(piece_start, after)
            hi_piece = max(piece_end, lo_piece)
            self.dma_spans.append((np.where(active, lo_piece, 0.0), np.where(active, hi_piece, 0.0)))

    @property
    def busy(self) -> dict[str, np.ndarray]:
        """
        Cycles each unit of each core works, per unit: the union of its working intervals. The
        DMA unit's load and store queues run at once (a double-buffered loop loads chunk i+1
        while it stores chunk i), so its intervals are merged, not added: busy <= the kernel's
        time. Example: a load and a store issued together at cycle 0, each a 500-cycle setup
        and 30 cycles of the channel, work [0, 530) and [0, 500) + [530, 560): the DMA unit
        is busy 560 cycles, not 1,060.
        """
        return self.queued | {"dma": covered(self.dma_spans, self.cores)}

    def busy_table(self) -> np.ndarray:
        """`busy` as one array, shape (cores, units) in `UNITS` order (the report's `busy`)."""
        busy = self.busy
        return np.stack([busy[unit] for unit in UNITS], axis=1)

    @property
    def end_per_core(self) -> np.ndarray:
        """The cycle each core finishes its last op."""
        ends = [self.free[queue] for queue in QUEUES]
        return np.maximum.reduce(ends)

    @property
    def end(self) -> float:
        """The kernel's end: the last core's finish (kernels are separated by a barrier)."""
        return float(self.end_per_core.max())


def covered(spans: Sequence[tuple[np.ndarray, np.ndarray]], cores: int) -> np.ndarray:
    """
    The length of the union of the intervals [start, end) per core (each span holds one
    interval per core; start == end: none). Sorted by start, an interval adds what reaches past
    the furthest end before it. Example: [0, 4), [2, 6), [8, 9) cover 7.
    """
    if not spans:
        return np.zeros(cores)
    starts = np.stack([s for s, _ in spans])
    ends = np.stack([e for _, e in spans])
    order = np.argsort(starts, axis=0, kind="stable")
    starts, ends = np.take_along_axis(starts, order, 0), np.take_along_axis(ends, order, 0)
    reach = np.maximum.accumulate(ends, axis=0)
    before = np.vstack([np.full((1, cores), -np.inf), reach[:-1]])
    return np.maximum(ends - np.maximum(starts, before), 0.0).sum(axis=0)
