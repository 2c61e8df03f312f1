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
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

if TYPE_CHECKING:  # a type only: the ktdp engine schedules on a Timeline without ktir's op classes
    from ktir.cores.prefetch import PreviousKernel

UNITS = ("dma", "pt", "sfu", "ring")
"""The units of a core, in report order."""

QUEUES = {"load": "dma", "store": "dma", "pt": "pt", "sfu": "sfu", "ring": "ring"}
"""Issue queues of a core and the unit each belongs to (the trace shows one track per queue)."""

DIRECTIONS = {"load": "read", "store": "write"}
"""The direction of LPDDR5 traffic of each DMA queue (`Channel`'s read/write turnaround)."""


class Fill(NamedTuple):
    """
    Where a transfer went on the `Channel`: its end, the pieces in which it moved its bytes, the
    turnaround it paid (cycles) and the pieces of channel time that took.
    """

    end: float
    pieces: list[tuple[float, float]]
    turnaround: float = 0.0
    switches: list[tuple[float, float]] = []


class Channel:
    """
    A resource shared by time slicing (the chip's LPDDR5): its busy intervals, and `fill`, which
    gives a transfer the free time after its ready time until it has had its duration.

    Slicing a transfer into the gaps other transfers leave is how shared bandwidth behaves in
    aggregate: the channel never idles while a transfer is ready, and the bytes per cycle never
    exceed the bandwidth. Example: with [0, 10) and [20, 30) busy, `fill(5, 15)` takes [10, 20)
    and [30, 35) and returns 35.

    **Read/write turnaround.** The bus turns around when it switches between reads and writes.
    A transfer given a `direction` ("read" or "write") and its bytes shares the channel in time
    with the transfers of the other direction whose slices lie between its ready time and its
    end: the memory controller interleaves the two, switching direction every few bursts, and
    every switch leaves the bus idle. The switches grow with the bytes the two directions
    interleave, so the channel pays `turnaround_cycles_per_byte` on the overlapped bytes,
    min(this transfer's bytes, the other direction's bytes not yet paired), as busy time right
    after the transfer. A read-only or write-only stream pays nothing, and no byte is paired
    twice: on the card's figures (150 GB/s, 0.00574 ns per overlapped byte) a balanced copy runs
    at 2 / (2 / 150 + 0.00574) = 105 GB/s. Example: with 0.5 cycles per byte, a read of 1000
    bytes in [0, 10) and a write of 600 bytes ready at 0 for 6 cycles: the write takes
    [10, 16), pairs its 600 bytes with the read's and pays 300 cycles: it returns 316. Ready
    at 5, it shares the channel with the read's last 500 bytes only, and returns 266.
    """

    def __init__(self, turnaround_cycles_per_byte: float = 0.0) -> None:
        self.turnaround = turnaround_cycles_per_byte
        self.starts: list[float] = []
        self.ends: list[float] = []
        self.kinds: list[str] = []  # "read", "write", or "" (turnaround, or a transfer without one)
        self.unpaired: list[float] = []  # bytes of each interval not yet paired with the other direction

    def forget_before(self, time: float) -> None:
        """Drop the busy intervals that end by `time` (no transfer can use time before it)."""
        keep = bisect.bisect_right(self.ends, time)
        del self.starts[:keep], self.ends[:keep], self.kinds[:keep], self.unpaired[:keep]

    def fill(self, ready: float, duration: float, direction: str = "", nbytes: float = 0.0) -> float:
        """Use the channel's free time from `ready` on for `duration` cycles; returns the end."""
        return self.fill_pieces(ready, duration, direction, nbytes).end

    def fill_pieces(self, ready: float, duration: float, direction: str = "", nbytes: float = 0.0) -> Fill:
        """
        `fill`, with the [start, end) pieces of channel time the transfer took. A `direction`
        with `nbytes` pays the turnaround on the bytes it overlaps (the class docstring): the
        end includes it, the pieces do not.
        """
        end, pieces = self._take(ready, duration)
        paired = self._pair(ready, end, direction, nbytes) if direction and self.turnaround else 0.0
        left = nbytes - paired
        for start, stop in pieces:
            share = left * (stop - start) / duration if direction and duration else 0.0
            self._insert(start, stop, direction, share)
        turnaround = paired * self.turnaround
        switches: list[tuple[float, float]] = []
        if turnaround > 0:
            end, switches = self._take(end, turnaround)
            for start, stop in switches:
                self._insert(start, stop, "", 0.0)
        return Fill(end, pieces, turnaround, switches)

    def _take(self, ready: float, duration: float) -> tuple[float, list[tuple[float, float]]]:
        """The free [start, end) pieces from `ready` on that add up to `duration`, and their end."""
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
        return time, pieces

    def _pair(self, ready: float, end: float, direction: str, nbytes: float) -> float:
        """
        Pair up to `nbytes` with the other direction's unpaired bytes in [ready, end) (an
        interval's bytes count in proportion to its time inside); returns the bytes paired.
        """
        paired = 0.0
        index = bisect.bisect_right(self.ends, ready)
        while index < len(self.starts) and self.starts[index] < end and paired < nbytes:
            kind, free = self.kinds[index], self.unpaired[index]
            if kind and kind != direction and free > 0:
                start, stop = self.starts[index], self.ends[index]
                inside = (min(stop, end) - max(start, ready)) / (stop - start)
                take = min(free * inside, nbytes - paired)
                self.unpaired[index] -= take
                paired += take
            index += 1
        return paired

    def _insert(self, start: float, end: float, kind: str, unpaired: float) -> None:
        """Add a busy interval that overlaps none, merging it with the touching ones of its kind."""
        index = bisect.bisect_left(self.starts, start)
        if index > 0 and self.ends[index - 1] == start and self.kinds[index - 1] == kind:
            index -= 1
            self.ends[index] = end
            self.unpaired[index] += unpaired
        else:
            self.starts.insert(index, start)
            self.ends.insert(index, end)
            self.kinds.insert(index, kind)
            self.unpaired.insert(index, unpaired)
        following = index + 1
        if (
            following < len(self.starts)
            and self.starts[following] == self.ends[index]
            and self.kinds[following] == kind
        ):
            self.ends[index] = self.ends.pop(following)
            self.unpaired[index] += self.unpaired.pop(following)
            self.starts.pop(following)
            self.kinds.pop(following)


Slot = tuple[Hashable, Hashable]
"""An LX buffer slot: (buffer key, slot index); the timeline only compares them (`ktir.ktdp_engine.schedule`
also orders memory accesses by slots ("memory", key))."""


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
    `rate` (the same for every core: the cores transfer in lockstep); not its turnaround, in
    which the bus moves nothing."""
    rate: float = 0.0
    """Bytes per cycle the transfer moved in its `channel` pieces (0 when it gave none)."""


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

    def __init__(
        self,
        cores: int,
        start: float,
        window: PrefetchWindow | None = None,
        turnaround_cycles_per_byte: float = 0.0,
    ) -> None:
        self.cores = cores
        self.start = float(start)
        self.free = {queue: np.full(cores, self.start) for queue in QUEUES}
        self.queued = {unit: np.zeros(cores) for unit in UNITS}  # `busy`, but for the DMA unit
        self.dma_spans: list[tuple[np.ndarray, np.ndarray]] = []  # per core: [start, end) worked
        self.window = window
        self.channel = window.channel if window is not None else Channel(turnaround_cycles_per_byte)
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
        chip_bytes: float = 0.0,
        turnaround: bool = True,
    ) -> np.ndarray:
        """
        A DMA issued by the cores where `setup` > 0, in lockstep: after its setup, the chip-wide
        transfer of `chip_cycles` uses the LPDDR5 channel's free time from when every
        participating core is ready; all of them finish together. A load reads and a store
        writes its `chip_bytes`, which pay the channel's read/write turnaround where they share
        it in time with the other direction (`Channel`; not with `turnaround` False: a rate
        with the turnaround folded in); the turnaround counts as busy time.
        """
        start = self._ready_to_start(queue, reads, writes)
        active = setup > 0
        if not active.any():
            return self._occupy(queue, reads, writes, start, start, setup, label)
        ready = float((start + setup)[active].max())
        direction = DIRECTIONS[queue] if turnaround else ""
        fill = self.channel.fill_pieces(ready, chip_cycles, direction, chip_bytes)
        self._worked(active, start, setup, fill.pieces + fill.switches)
        end = np.where(active, fill.end, start)
        busy = np.where(active, setup + chip_cycles + fill.turnaround, 0.0)
        rate = chip_bytes / chip_cycles if chip_bytes and chip_cycles else 0.0
        return self._occupy(queue, reads, writes, start, end, busy, label, tuple(fill.pieces), rate)

    def prefetch(
        self,
        writes: Sequence[Slot],
        setup: np.ndarray,
        chip_cycles: float,
        label: str,
        chip_bytes: float = 0.0,
        turnaround: bool = True,
    ) -> float:
        """
        A load issued before the kernel starts (`PrefetchWindow`): after the previous kernel's
        loads on each core's queue, in the channel time the previous kernel leaves free. The
        kernel's own loads queue behind it. Without a window it is an ordinary load. Returns the
        share of the transfer that ran before the kernel's start.
        """
        if self.window is None:
            self.transfer("load", [], writes, setup, chip_cycles, label, chip_bytes, turnaround)
            return 0.0
        start = self.window.load_free.copy()
        active = setup > 0
        if not active.any():
            return 0.0
        ready = float((start + setup)[active].max())
        direction = "read" if turnaround else ""
        finish, pieces, paid, switches = self.channel.fill_pieces(ready, chip_cycles, direction, chip_bytes)
        end = np.where(active, finish, start)
        early = sum(max(0.0, min(hi, self.start) - lo) for lo, hi in pieces)
        self.window.load_free = np.where(active, end, start)
        queue_free = self.free["load"]
        # busy time counts from the kernel's start (each kernel's busy lies in its own time);
        # what ran under the previous kernel shows in the trace, not in either kernel's busy
        self._worked(active, start, setup, pieces + switches, after=self.start)
        busy = np.where(active, setup + chip_cycles + paid, 0.0)
        rate = chip_bytes / chip_cycles if chip_bytes and chip_cycles else 0.0
        self._occupy("load", [], writes, start, end, busy, label, tuple(pieces), rate)
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
        rate: float = 0.0,
    ) -> np.ndarray:
        """
        Mark the queue occupied from `start` to `end` where `cycles` > 0. On the SFU, PE arrays
        and ring (one in-order queue each) `cycles` count as busy time; a DMA that is not a
        transfer (an LX copy) works from `start` for `cycles` (`transfer` records its own, and
        the `channel` pieces in which it moved its bytes at `rate` per cycle).
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
        self.events.append(Event(QUEUES[queue], queue, label, start, end, channel, rate))
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
