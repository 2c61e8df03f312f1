"""
The simulator's report: cycles, bytes, FLOPs, roofline and bottleneck per kernel and per op.

`Report` is what `prog.report` returns after `prog(*args)`. The roofline is the modeled chip's:
peak compute of the unit the kernel computes on (PE arrays for matmul, SFU otherwise) over the
cores it uses, and the LPDDR5 bandwidth; `efficiency` is roofline time / simulated time (1.0 is
the best the chip can do). The bottleneck is the unit busiest on the kernel's critical core.

```python
prog(x)
print(prog.report.total_cycles, prog.report.time_us)
prog.report.print()                 # rich tables
```
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from rich.console import Console
from rich.table import Table

from ktir.hardware.target import SPYRE, Target
from ktir.sim.timeline import UNITS, Event


@dataclass
class KernelReport:
    """One kernel (or function-level op) of the run."""

    index: int
    name: str
    """The SSA name of the result, e.g. `%y`."""
    op: str
    """The graph op, e.g. `ktir.matmul`; function-level ops end in ` (host)` or ` (view)`."""
    unit: str
    """Where its compute runs: `pt`, `sfu`, or `-` for ops that move no data on the chip."""
    cores: int
    chunks: int
    start: float
    cycles: float
    bytes: float
    """LPDDR5 traffic, broadcast reads counted once per cohort."""
    flops: float
    busy: np.ndarray = field(repr=False)
    """Cycles each unit is busy, shape (cores, 4) in `UNITS` order."""
    finish: np.ndarray = field(repr=False)
    """The cycle each core finishes (relative to the kernel's start)."""
    events: list[Event] = field(repr=False, default_factory=list)
    target: Target = field(repr=False, default=SPYRE)

    @property
    def roofline_cycles(self) -> float:
        """The fastest the modeled chip could run this work: max(compute at peak, bytes at full bandwidth)."""
        if not self.cores:
            return 0.0
        t = self.target
        if self.unit == "pt":
            peak = t.fp16_peak_flops / t.cores * self.cores / t.clock_hz
        else:
            peak = t.sfu_pass_elems_per_us / t.clock_mhz * self.cores
        return max(self.flops / peak, self.bytes / t.device_bytes_per_cycle)

    @property
    def efficiency(self) -> float:
        """Roofline cycles / simulated cycles (1.0 = at the roofline)."""
        return self.roofline_cycles / self.cycles if self.cycles else 1.0

    @property
    def critical_core(self) -> int:
        """The core that finishes last."""
        return int(np.argmax(self.finish)) if self.finish.size else 0

    @property
    def bottleneck(self) -> str:
        """The unit busiest on the critical core: `dma`, `pt`, `sfu` or `ring` (`-` if none)."""
        if not self.busy.size or not self.busy.any():
            return "-"
        return UNITS[int(np.argmax(self.busy[self.critical_core]))]


@dataclass
class OpSummary:
    """All kernels of one graph op added up."""

    op: str
    count: int
    cycles: float
    bytes: float
    flops: float


@dataclass
class Report:
    """A whole run: kernels in order, their sum, and per-core busy fractions."""

    kernels: list[KernelReport]
    target: Target = field(default=SPYRE, repr=False)

    @property
    def total_cycles(self) -> int:
        """Simulated cycles of the whole program (kernels run one after another)."""
        return int(np.ceil(sum(k.cycles for k in self.kernels)))

    @property
    def time_us(self) -> float:
        """Simulated microseconds at the target's clock."""
        return self.total_cycles / self.target.clock_mhz

    @property
    def bytes(self) -> float:
        """LPDDR5 traffic of the whole program."""
        return sum(k.bytes for k in self.kernels)

    @property
    def flops(self) -> float:
        """Floating-point operations of the whole program."""
        return sum(k.flops for k in self.kernels)

    @property
    def ops(self) -> list[OpSummary]:
        """Kernels grouped by graph op, most cycles first."""
        groups: dict[str, OpSummary] = {}
        for k in self.kernels:
            summary = groups.setdefault(k.op, OpSummary(k.op, 0, 0.0, 0.0, 0.0))
            summary.count += 1
            summary.cycles += k.cycles
            summary.bytes += k.bytes
            summary.flops += k.flops
        return sorted(groups.values(), key=lambda s: (-s.cycles, s.op))

    @property
    def core_busy(self) -> np.ndarray:
        """Fraction of the run each core's units are busy, shape (target cores, 4) in `UNITS` order."""
        busy = np.zeros((self.target.cores, len(UNITS)))
        for k in self.kernels:
            busy[: k.busy.shape[0]] += k.busy
        total = sum(k.cycles for k in self.kernels)
        return busy / total if total else busy

    def kernel_table(self, limit: int | None = None) -> Table:
        """Per-kernel rows (all, or the `limit` slowest): cycles, MB, GFLOP, roofline, bottleneck."""
        title = f"ktir.sim: {len(self.kernels)} ops, {self.total_cycles:,} cycles, {self.time_us:,.1f} µs"
        table = Table(title=title)
        for column in ("#", "result", "op", "cores", "chunks", "cycles", "MB", "GFLOP", "roofline", "bound"):
            table.add_column(column, justify="left" if column in ("result", "op", "bound") else "right")
        rows = self.kernels if limit is None else sorted(self.kernels, key=lambda k: -k.cycles)[:limit]
        for k in rows:
            op = k.op.removeprefix("ktir.")
            table.add_row(
                str(k.index), k.name, op, str(k.cores), str(k.chunks), f"{k.cycles:,.0f}",
                f"{k.bytes / 1e6:,.3f}", f"{k.flops / 1e9:,.4f}", f"{k.efficiency:.0%}", k.bottleneck,
            )  # fmt: skip
        return table

    def op_table(self) -> Table:
        """Per-op rows: count, cycles and share of the total."""
        table = Table(title="per op")
        for column in ("op", "kernels", "cycles", "share", "MB", "GFLOP"):
            table.add_column(column, justify="left" if column == "op" else "right")
        total = max(sum(k.cycles for k in self.kernels), 1.0)
        for s in self.ops:
            table.add_row(
                s.op, str(s.count), f"{s.cycles:,.0f}", f"{s.cycles / total:.1%}",
                f"{s.bytes / 1e6:,.3f}", f"{s.flops / 1e9:,.4f}",
            )  # fmt: skip
        return table

    def core_table(self) -> Table:
        """Busy fraction of each unit per core; consecutive cores with equal rows share one line."""
        table = Table(title="per core: busy fraction of the run")
        table.add_column("cores", justify="right")
        for unit in UNITS:
            table.add_column(unit, justify="right")
        used = max((k.cores for k in self.kernels), default=0)
        rows = [tuple(f"{v:.1%}" for v in row) for row in self.core_busy[:used]]
        first = 0
        for core in range(1, used + 1):
            if core < used and rows[core] == rows[first]:
                continue
            label = str(first) if core - 1 == first else f"{first}-{core - 1}"
            table.add_row(label, *rows[first])
            first = core
        return table

    def print(self, console: Console | None = None, limit: int | None = None) -> None:
        """Print the kernel, op and core tables (`limit`: only the slowest kernels)."""
        console = console or Console()
        console.print(self.kernel_table(limit))
        console.print(self.op_table())
        console.print(self.core_table())
