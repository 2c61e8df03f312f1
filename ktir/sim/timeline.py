"""
Per-core timelines of one kernel: units, in-order issue, and dependencies through LX buffers.

Every core has four units: `dma` (one engine, loads and stores in program order), `pt` (the two
corelets' PE arrays, matmul), `sfu` (everything else) and `ring`. An op starts on its unit when
the unit is free and its LX operands are ready: a read waits for the last write of that buffer
slot, a write waits for the last read and write of it. So a double-buffered loop (two slots)
overlaps the load of chunk i+1 with the compute of chunk i, and a single-slot program
serializes. All cores are handled at once: times are NumPy vectors over cores.

```python
line = Timeline(cores=2, start=0.0)
line.issue("dma", reads=[], writes=[("x", 0)], cycles=np.array([100.0, 100.0]), label="load")
line.issue("sfu", reads=[("x", 0)], writes=[("y", 0)], cycles=np.array([50.0, 50.0]), label="exp")
line.end  # 150.0
```
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

UNITS = ("dma", "pt", "sfu", "ring")
"""The units of a core, in report order."""

Slot = tuple[Hashable, int]
"""An LX buffer slot: (buffer key, slot index)."""


@dataclass(frozen=True)
class Event:
    """One op on one unit of every core: start and end cycle per core (end == start: idle)."""

    unit: str
    label: str
    start: np.ndarray
    end: np.ndarray


class Timeline:
    """The units and buffer-slot readiness of all cores of one kernel, from cycle `start`."""

    def __init__(self, cores: int, start: float) -> None:
        self.cores = cores
        self.start = float(start)
        self.free = {unit: np.full(cores, self.start) for unit in UNITS}
        self.busy = {unit: np.zeros(cores) for unit in UNITS}
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
        self, unit: str, reads: Sequence[Slot], writes: Sequence[Slot], cycles: np.ndarray, label: str
    ) -> np.ndarray:
        """
        Run an op of `cycles` (per core; 0 where a core does nothing) on `unit`; returns its end.

        It starts when the unit is free, every slot it reads has been written, and every slot
        it writes has been read and written by the ops before it.
        """
        start = np.maximum(self.free[unit], self._ready(reads, self.written))
        start = np.maximum(start, self._ready(writes, self.read))
        start = np.maximum(start, self._ready(writes, self.written))
        return self._occupy(unit, reads, writes, start, cycles, label)

    def issue_group(
        self, unit: str, slots: Sequence[Slot], cycles: np.ndarray, group: int, label: str
    ) -> np.ndarray:
        """
        A collective over consecutive groups of `group` cores (a ring reduction): every member
        starts when all members are ready, and the slots are read and written by all of them.
        """
        start = np.maximum(self.free[unit], self._ready(slots, self.written))
        start = np.maximum(start, self._ready(slots, self.read))
        start = np.repeat(start.reshape(-1, group).max(axis=1), group)
        return self._occupy(unit, slots, slots, start, cycles, label)

    def _occupy(
        self,
        unit: str,
        reads: Sequence[Slot],
        writes: Sequence[Slot],
        start: np.ndarray,
        cycles: np.ndarray,
        label: str,
    ) -> np.ndarray:
        end = start + cycles
        active = cycles > 0
        self.free[unit] = np.where(active, end, self.free[unit])
        self.busy[unit] += cycles
        for slot in reads:
            self.read[slot] = np.maximum(self.read.get(slot, end), end)
        for slot in writes:
            self.written[slot] = end
        self.events.append(Event(unit, label, start, end))
        return end

    @property
    def end_per_core(self) -> np.ndarray:
        """The cycle each core finishes its last op."""
        ends = [self.free[unit] for unit in UNITS]
        return np.maximum.reduce(ends)

    @property
    def end(self) -> float:
        """The kernel's end: the last core's finish (kernels are separated by a barrier)."""
        return float(self.end_per_core.max())
