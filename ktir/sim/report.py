"""
The simulator's report: cycles, bytes, FLOPs, the two bounds and the bottleneck per kernel
and for the whole program.

`Report` is what `prog.report` returns after `prog(*args)`. Its ratios use two yardsticks
(docs/performance.md), both `max(matmul FLOPs / PE rate, compulsory bytes / LPDDR5 rate)`:

- the *datasheet roofline* (`bound_cycles`, `vs_bound`), at the chip's datasheet peaks
  (98.304 TFLOP/s fp16 and 204.8 GB/s for Spyre): physics, nothing runs below it;
- the *sustained bound* (`sustained_bound_cycles`, `vs_sustained`), at the rates the card
  sustains (`Target.sustained_macs_per_us_per_core`, 1.14e6 MAC/µs per core, 72.96 TFLOP/s on
  32 cores, and `Target.sustained_memory_bandwidth`, 150 GB/s): the yardstick of schedule
  quality, since the simulator moves bytes and runs the PE arrays no faster than these. On
  `spyre-datasheet` the sustained rates are the peaks and the two bounds are one.

The compulsory bytes are each tensor it must read or write in device memory, once, at its
device-layout size (for the program: every parameter and input an op reads, and every output;
for a kernel: its distinct inputs and outputs not kept in LX). A ratio is simulated / bound (1.0 is the best
that rate allows), and `traffic_ratio` is moved / compulsory bytes. The bottleneck is the unit
busiest on the kernel's critical core.

```python
prog(x)
print(prog.report.total_cycles, prog.report.vs_sustained, prog.report.vs_bound, prog.report.traffic_ratio)
prog.report.print()                 # rich tables, slowest kernels first, as wide as the console
text = prog.report.to_json()        # every number of the tables, for scripts and dashboards
same = Report.from_json(text)       # the report back (without the per-event timeline)
```
"""

from __future__ import annotations

import dataclasses
import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from ktir.hardware.target import Target, target_from_fields
from ktir.ir.json_format import read_envelope
from ktir.sim.tables import Column, fitted_table
from ktir.sim.timeline import UNITS, Event


class Yardstick(ABC):
    """
    The two bounds and their ratios for a kernel or a program (module docstring), from its
    `matmul_flops`, `compulsory_bytes`, moved `bytes`, `simulated_cycles` and `target`.
    """

    matmul_flops: float
    compulsory_bytes: float
    bytes: float
    target: Target

    @property
    @abstractmethod
    def simulated_cycles(self) -> float:
        """Cycles the simulator took."""

    @property
    def bound_bytes(self) -> float:
        """The compulsory bytes both bounds count (a kernel leaves out those it prefetched)."""
        return self.compulsory_bytes

    @property
    def bound_cycles(self) -> float:
        """The datasheet roofline in cycles: the work cannot run faster (`bound_cycles()`)."""
        return bound_cycles(self.matmul_flops, self.bound_bytes, self.target)

    @property
    def sustained_bound_cycles(self) -> float:
        """The sustained bound in cycles: the work at the card's sustained rates (`bound_cycles()`)."""
        return bound_cycles(self.matmul_flops, self.bound_bytes, self.target, sustained=True)

    @property
    def bound_us(self) -> float:
        """The datasheet roofline in microseconds."""
        return self.bound_cycles / self.target.clock_mhz

    @property
    def sustained_bound_us(self) -> float:
        """The sustained bound in microseconds."""
        return self.sustained_bound_cycles / self.target.clock_mhz

    @property
    def vs_bound(self) -> float:
        """Simulated / datasheet roofline (1.0 = at the roofline); 1.0 for work with no bound."""
        bound = self.bound_cycles
        return self.simulated_cycles / bound if bound else 1.0

    @property
    def vs_sustained(self) -> float:
        """Simulated / sustained bound (1.0 = at the card's sustained rates); 1.0 for work with no bound."""
        bound = self.sustained_bound_cycles
        return self.simulated_cycles / bound if bound else 1.0

    @property
    def traffic_ratio(self) -> float:
        """Moved / compulsory LPDDR5 bytes (1.0 = each byte moved once)."""
        return self.bytes / self.compulsory_bytes if self.compulsory_bytes else 1.0


@dataclass
class KernelReport(Yardstick):
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
    compulsory_bytes: float = 0.0
    """Bytes the kernel must move at least: its distinct device-memory inputs and outputs once."""
    matmul_flops: float = 0.0
    """The FLOPs of matmul work (PE arrays); the bound counts only these as compute."""
    busy: np.ndarray = field(repr=False, default_factory=lambda: np.zeros((0, 4)))
    """Cycles each unit is busy, shape (cores, 4) in `UNITS` order."""
    finish: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0))
    """The cycle each core finishes (relative to the kernel's start)."""
    events: list[Event] = field(repr=False, default_factory=list)
    target: Target = field(repr=False, kw_only=True)
    """The chip it ran on (its rates give the bounds)."""
    division: dict[str, int] = field(default_factory=dict)
    """The kernel's work division (`ktir.work_division`): slices per iteration dim; empty off-chip."""
    host_bytes: float = 0.0
    """Bytes a host op (CPU fallback) sent over the host link, both directions (part of `bytes`)."""
    link_bytes: float = 0.0
    """Bytes a collective (`ktir.all_reduce`, `ktir.all_gather`) sent to the next card over the
    card-to-card link (`accounting.collective_link_bytes`; part of `bytes`)."""
    early_bytes: float = 0.0
    """Bytes its prefetch loads moved before it started, in the previous kernel's time (part of
    `bytes`; its bound counts only the compulsory bytes left for its own time)."""
    lx_bytes: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0))
    """LX bytes allocated on each core of the target while it runs: its buffers and the resident
    tensors still live (a function-level op: the resident tensors)."""
    prefetch_lx_bytes: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0))
    """LX bytes per core of the buffers its prefetch loads fill before it starts (part of
    `lx_bytes`, in use from its first prefetch on)."""

    @property
    def simulated_cycles(self) -> float:
        """The kernel's cycles (what `vs_bound` compares with the bound)."""
        return self.cycles

    @property
    def bound_bytes(self) -> float:
        """The compulsory bytes of the kernel's own time: less the bytes it prefetched before it."""
        return max(0.0, self.compulsory_bytes - self.early_bytes)

    @property
    def lost_cycles(self) -> float:
        """Cycles above the datasheet roofline."""
        return max(0.0, self.cycles - self.bound_cycles)

    @property
    def lpddr5_use(self) -> np.ndarray:
        """
        When its transfers used LPDDR5: rows [start, end, bytes per cycle], in cycles of the run.
        A transfer moves its bytes at its rate in the pieces of channel time it gets
        (`Event.channel`, `Event.rate`; a prefetch's lie before the kernel's start, in the previous kernel's
        time). An op without a timeline (a function-level op, or a kernel read from JSON) is
        spread evenly over its own time: its device bytes, less those sent over the host link or
        to another card and those it prefetched.
        """
        pieces = [(start, end, event.rate) for event in self.events for start, end in event.channel]
        if pieces:
            return np.array(pieces)
        moved = self.bytes - self.host_bytes - self.link_bytes - self.early_bytes
        if self.cycles <= 0 or moved <= 0:
            return np.zeros((0, 3))
        return np.array([(self.start, self.start + self.cycles, moved / self.cycles)])

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


REPORT_FORMAT = "ktir-report"
REPORT_VERSION = 1
"""`to_json` writes `{"format": REPORT_FORMAT, "version": REPORT_VERSION, ...}`; `from_json` checks both."""

_KERNEL_FIELDS = (
    "index", "name", "op", "unit", "cores", "chunks", "start", "cycles", "bytes", "flops",
    "compulsory_bytes", "matmul_flops", "early_bytes", "host_bytes", "link_bytes",
)  # fmt: skip
"""The scalar fields of a `KernelReport` the JSON form carries (plus `busy` and `finish`)."""


class ReportFormatError(ValueError):
    """JSON that is not a ktir report `from_json` can read; the message says what is wrong."""


def bound_cycles(
    matmul_flops: float, compulsory_bytes: float, target: Target, *, sustained: bool = False
) -> float:
    """
    The one home of both bounds, in cycles: max(matmul FLOPs at the PE rate of all the target's
    cores, compulsory bytes at the LPDDR5 rate). The datasheet roofline uses the peaks
    (`peak_macs_per_us_per_core`, `device_memory_bandwidth`); with `sustained`, the sustained
    bound uses the rates the card sustains (`sustained_macs_per_us_per_core`,
    `sustained_memory_bandwidth`). Both count the whole chip: a program run on fewer cores is
    measured against all of them (a `Target` with `cores = N` is an N-core chip).
    Spyre: 1 GFLOP of matmul is 15,259 cycles at the roofline, 20,559 sustained; 1 MB is 7,324
    and 10,000.
    """
    macs = target.sustained_macs_per_us_per_core if sustained else target.peak_macs_per_us_per_core
    bandwidth = target.sustained_memory_bandwidth if sustained else target.device_memory_bandwidth
    compute = matmul_flops / (2 * macs * 1e6 * target.cores) * target.clock_hz
    return max(compute, compulsory_bytes / (bandwidth / target.clock_hz))


def lpddr5_bytes(use: np.ndarray, start: float, end: float) -> float:
    """The bytes `use` (`KernelReport.lpddr5_use`) moved in [start, end) cycles."""
    overlap = np.clip(np.minimum(use[:, 1], end) - np.maximum(use[:, 0], start), 0.0, None)
    return float((overlap * use[:, 2]).sum())


@dataclass(frozen=True)
class OpCounts:
    """
    What the report's lines are: one per function-level op, by where it runs. `str` is how the
    report, the demo and the roofline chart say it, e.g. "60 ops (37 on the chip, 23 views)".
    """

    ops: int
    """Every line: kernels, function-level ops on the chip, views and host ops."""
    on_chip: int
    """Ops that run on the cores: `ktir.kernel`s and chip ops such as `ktir.gather_rows`."""
    views: int
    """Ops that move no data (`reshape`, `permute`, ... as views): no time."""
    host: int
    """CPU fallbacks, run on the host."""
    computing: int
    """Ops on the chip that compute (FLOPs > 0): the roofline chart's points at most."""
    collectives: int = 0
    """Collectives between cards (`ktir.all_reduce`, `ktir.all_gather`), over the card link."""

    def __str__(self) -> str:
        parts = [f"{self.on_chip:,} on the chip"]
        parts += [f"{self.views:,} view{'s' * (self.views != 1)}"] if self.views else []
        parts += [f"{self.host:,} on the host"] if self.host else []
        parts += [f"{self.collectives:,} between cards"] if self.collectives else []
        return f"{self.ops:,} op{'s' * (self.ops != 1)} ({', '.join(parts)})"


@dataclass
class OpSummary:
    """All kernels of one graph op added up."""

    op: str
    count: int
    cycles: float
    bytes: float
    flops: float


@dataclass
class Report(Yardstick):
    """A whole run: kernels in order, their sum, and per-core busy fractions."""

    kernels: list[KernelReport]
    target: Target = field(repr=False)
    compulsory_bytes: float = 0.0
    """Every parameter, input and output of the program once, at its device-layout size."""
    load_bytes: float = 0.0
    """Parameter bytes transferred host -> device before this call (0 once they are resident)."""
    assumptions: list[str] = field(default_factory=list)
    """
    What a timing-only run assumed where time depends on values (`ktir.sim.estimate`): e.g.
    uniform MoE routing. Empty for a run on values.
    """

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
    def counts(self) -> OpCounts:
        """How many ops the report has, by where they run (`OpCounts`)."""
        chip = [k for k in self.kernels if k.unit != "-"]
        host = sum(1 for k in self.kernels if k.unit == "-" and k.op.endswith(" (host)"))
        link = len(self.collectives)
        computing = sum(1 for k in chip if k.flops > 0)
        views = len(self.kernels) - len(chip) - host - link
        return OpCounts(len(self.kernels), len(chip), views, host, computing, link)

    @property
    def collectives(self) -> list[KernelReport]:
        """The lines of collectives between cards (`ktir.all_reduce`, `ktir.all_gather`), in order."""
        return [k for k in self.kernels if k.link_bytes > 0 or k.op.endswith(" (link)")]

    @property
    def collective_cycles(self) -> float:
        """Cycles the program waits for collectives between cards (part of `total_cycles`)."""
        return sum(k.cycles for k in self.collectives)

    @property
    def device_kernels(self) -> int:
        """Ops that run on the chip (views that move no data and host ops left out): `counts.on_chip`."""
        return self.counts.on_chip

    @property
    def flops(self) -> float:
        """Floating-point operations of the whole program."""
        return sum(k.flops for k in self.kernels)

    @property
    def matmul_flops(self) -> float:
        """FLOPs of the program's matmul work."""
        return sum(k.matmul_flops for k in self.kernels)

    @property
    def simulated_cycles(self) -> float:
        """The program's cycles (what `vs_bound` compares with the bound)."""
        return self.total_cycles

    @property
    def load_us(self) -> float:
        """Time of the one-time parameter load over the host link (0 once parameters are resident)."""
        return self.load_bytes / self.target.host_link_bandwidth * 1e6

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

    def kernel_table(self, limit: int | None = None, order: str = "time", width: int = 80) -> Table:
        """
        Per-kernel rows, slowest first (`order="time"`) or in program order (`"program"`); all,
        or the first `limit`: cycles, simulated / sustained bound, simulated / datasheet roofline,
        moved MB, traffic ratio, the sustained bound's cycles, bottleneck, compulsory MB, cores
        and chunks, as many columns as fit `width` (`ktir.sim.tables`). Views and host ops have no
        bound: their ratios show `-`. `x sust` is simulated / sustained bound, `x roof` simulated /
        datasheet roofline; rows are coloured by `x sust` (the yardstick).
        """
        title = (  # three lines, each short enough for 80 columns
            f"ktir.sim: {self.counts}\n{self.total_cycles:,} cycles, {self.time_us:,.1f} µs "
            f"= {self.vs_sustained:.2f}x the sustained bound of {self.sustained_bound_us:,.1f} µs,\n"
            f"{self.vs_bound:.2f}x the datasheet roofline of {self.bound_us:,.1f} µs; "
            f"traffic {self.traffic_ratio:.2f}x"
        )
        rows = self.ordered(order)[:limit]
        on_chip = [k.unit != "-" for k in rows]

        def measured(values: list[str]) -> list[str]:
            return [v if chip else "-" for v, chip in zip(values, on_chip, strict=True)]

        columns = [
            Column("#", [str(k.index) for k in rows]),
            Column("result", [k.name for k in rows], numeric=False, min_width=8),
            Column("op", [k.op.removeprefix("ktir.") for k in rows], numeric=False, min_width=12),
            Column("cycles", [f"{k.cycles:,.0f}" for k in rows]),
            Column("x sust", measured([f"{k.vs_sustained:.2f}" for k in rows])),
            Column("x roof", measured([f"{k.vs_bound:.2f}" for k in rows]), priority=1),
            Column("sustained", measured([f"{k.sustained_bound_cycles:,.0f}" for k in rows]), priority=4),
            Column("MB", [f"{k.bytes / 1e6:,.3f}" for k in rows], priority=2),
            Column("traffic", measured([f"{k.traffic_ratio:.2f}" for k in rows]), priority=3),
            Column("bottleneck", [k.bottleneck for k in rows], numeric=False, priority=5),
            Column("min MB", [f"{k.compulsory_bytes / 1e6:,.3f}" for k in rows], priority=6),
            Column("cores", [str(k.cores) for k in rows], priority=7),
            Column("chunks", [str(k.chunks) for k in rows], priority=7),
        ]
        styles = [
            "red" if chip and k.vs_sustained > 2 else "yellow" if chip and k.vs_sustained > 1.15 else None
            for k, chip in zip(rows, on_chip, strict=True)
        ]
        return fitted_table(title, columns, width, styles)

    def ordered(self, order: str = "time") -> list[KernelReport]:
        """The kernels slowest first (`"time"`, ties in program order) or in program order."""
        if order not in ("time", "program"):
            raise ValueError(f"order must be 'time' or 'program', not {order!r}")
        if order == "program":
            return sorted(self.kernels, key=lambda k: k.index)
        return sorted(self.kernels, key=lambda k: (-k.cycles, k.index))

    def op_table(self, width: int = 80) -> Table:
        """Per-op rows, the most cycles first: how many, cycles, share of the total, MB, GFLOP."""
        total = max(sum(k.cycles for k in self.kernels), 1.0)
        ops = self.ops
        columns = [
            Column("op", [s.op for s in ops], numeric=False, min_width=12),
            Column("count", [str(s.count) for s in ops]),
            Column("cycles", [f"{s.cycles:,.0f}" for s in ops]),
            Column("share", [f"{s.cycles / total:.1%}" for s in ops]),
            Column("MB", [f"{s.bytes / 1e6:,.3f}" for s in ops], priority=1),
            Column("GFLOP", [f"{s.flops / 1e9:,.4f}" for s in ops], priority=2),
        ]
        return fitted_table("per op", columns, width)

    def core_table(self, width: int = 80) -> Table:
        """Busy fraction of each unit per core; consecutive cores with equal rows share one line."""
        used = max((k.cores for k in self.kernels), default=0)
        rows = [tuple(f"{v:.1%}" for v in row) for row in self.core_busy[:used]]
        labels: list[str] = []
        values: list[tuple[str, ...]] = []
        first = 0
        for core in range(1, used + 1):
            if core < used and rows[core] == rows[first]:
                continue
            labels.append(str(first) if core - 1 == first else f"{first}-{core - 1}")
            values.append(rows[first])
            first = core
        columns = [Column("cores", labels)] + [
            Column(unit, [v[i] for v in values]) for i, unit in enumerate(UNITS)
        ]
        return fitted_table("per core: busy fraction of the run", columns, width)

    def to_dict(self) -> dict[str, Any]:
        """
        Every number of the tables as plain data: the target, the program's totals and ratios,
        each kernel (its measured fields, per-core unit busy cycles `busy[core][unit]` in
        `units` order, finish cycles, and its two bounds, ratios and bottleneck), the per-op
        summary and the per-core busy fractions. Events (the trace's timeline) are left out.
        """
        totals = {
            "total_cycles": self.total_cycles, "time_us": self.time_us, "bound_cycles": self.bound_cycles,
            "bound_us": self.bound_us, "vs_bound": self.vs_bound,
            "sustained_bound_cycles": self.sustained_bound_cycles,
            "sustained_bound_us": self.sustained_bound_us, "vs_sustained": self.vs_sustained,
            "bytes": self.bytes,
            "compulsory_bytes": self.compulsory_bytes, "traffic_ratio": self.traffic_ratio,
            "flops": self.flops, "matmul_flops": self.matmul_flops, "device_kernels": self.device_kernels,
            "load_bytes": self.load_bytes, "load_us": self.load_us,
        }  # fmt: skip
        kernels = [
            {name: getattr(k, name) for name in _KERNEL_FIELDS}
            | {"busy": k.busy.tolist(), "finish": k.finish.tolist(), "division": dict(k.division)}
            | {
                "bound_cycles": k.bound_cycles,
                "vs_bound": k.vs_bound,
                "sustained_bound_cycles": k.sustained_bound_cycles,
                "vs_sustained": k.vs_sustained,
                "traffic_ratio": k.traffic_ratio,
                "lost_cycles": k.lost_cycles,
                "critical_core": k.critical_core,
                "bottleneck": k.bottleneck,
            }
            for k in self.kernels
        ]
        return {
            "format": REPORT_FORMAT,
            "version": REPORT_VERSION,
            "units": list(UNITS),
            "target": dataclasses.asdict(self.target),
            "totals": totals,
            "kernels": kernels,
            "ops": [dataclasses.asdict(s) for s in self.ops],
            "core_busy": self.core_busy.tolist(),
            "assumptions": list(self.assumptions),
        }

    def to_json(self, indent: int | None = 2) -> str:
        """`to_dict` as JSON text (deterministic: the same run gives the same text)."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    @classmethod
    def from_json(cls, text: str) -> Report:
        """
        The report `to_json` wrote (its kernels' measured fields, the target and the program's
        compulsory and load bytes; derived numbers are computed again). Raises
        `ReportFormatError` for anything else.
        """
        data = read_envelope(text, REPORT_FORMAT, REPORT_VERSION, "ktir report", ReportFormatError)
        try:
            target = target_from_fields(data["target"], "the report's target")
            kernels = [_kernel_from_dict(k, target) for k in data["kernels"]]
            totals = data["totals"]
            assumptions = [str(a) for a in data.get("assumptions", [])]  # absent before timing-only runs
            return cls(
                kernels, target, float(totals["compulsory_bytes"]), float(totals["load_bytes"]), assumptions
            )
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise ReportFormatError(f"malformed ktir report: {type(error).__name__}: {error}") from None

    def print(self, console: Console | None = None, limit: int | None = None, order: str = "time") -> None:
        """
        Print the kernel, op and core tables at the console's width (80 columns when not a
        terminal, unless `COLUMNS` says otherwise); `limit`: only the first kernels of `order`.
        """
        console = console or Console()
        console.print(self.kernel_table(limit, order, console.width))
        console.print(self.op_table(console.width))
        console.print(self.core_table(console.width))
        for assumption in self.assumptions:
            console.print(f"assumed (timing only): {assumption}")


def _kernel_from_dict(data: dict[str, Any], target: Target) -> KernelReport:
    """One kernel of `Report.from_json` (its measured fields; the rest is computed)."""
    optional = ("early_bytes", "host_bytes", "link_bytes")  # reports written before they existed
    fields = {name: data[name] for name in _KERNEL_FIELDS if name not in optional}
    fields.update({name: data.get(name, 0.0) for name in optional})
    busy = np.asarray(data["busy"], dtype=float).reshape(-1, len(UNITS))
    finish = np.asarray(data["finish"], dtype=float)
    if not isinstance(data["division"], dict):
        raise TypeError(f"a kernel's division must be a table of dims, not {data['division']!r}")
    division = {str(d): int(n) for d, n in data["division"].items()}
    return KernelReport(**fields, busy=busy, finish=finish, target=target, division=division)
