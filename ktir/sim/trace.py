"""
The timeline of a simulated run as Chrome trace-event JSON (Perfetto, chrome://tracing); the
PNG pictures are `ktir.sim.pictures`.

The JSON has one process per core (`core 0` ...) with one thread per issue queue (`dma load`,
`dma store`, `pt`, `sfu`, `ring`), plus a `chip` process whose track shows the kernels as
slices (with their index, cores, chunks, work division, bytes, FLOPs, both bounds and bottleneck).
Every slice names its kernel: index, result, op and work division. Times are simulated
microseconds, the trace format's unit.

Two counters show the memories over time:
- `LPDDR5 in use` (chip process, GB/s): the bytes the shared channel moved, averaged over bins
  of `bin_us` (1, 2 or 5 x a power of ten, at most `BINS` bins in the run). It reaches the
  target's bandwidth where the channel is saturated and never exceeds it.
- `LX live` (each core's process, bytes): what is allocated in the core's LX, from each op's
  start (its buffers and the resident tensors still live), and from a kernel's first prefetch
  its prefetched buffers on top of the previous kernel's.
A counter event's arguments are its plotted values (each a series), so counters carry no
kernel names; the slices under them say which kernel runs.

```python
from ktir.sim import simulate, write_trace
write_trace(simulate(module, inputs).report, "trace.json")
```
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from ktir.sim.report import KernelReport, Report
from ktir.sim.timeline import QUEUES

_CHIP = 0
"""Process id of the chip-level track; core c is process c + 1."""

BINS = 1000
"""The most bins the LPDDR5 counter averages over (so that a long run stays a small file)."""


def trace_events(report: Report) -> list[dict[str, Any]]:
    """
    The trace events of `report`: metadata, one span per kernel, one per op, unit and core,
    and the counters (module docstring).
    """
    mhz = report.target.clock_mhz
    cores = max((k.cores for k in report.kernels), default=0)
    events = _metadata(cores)
    for k in report.kernels:
        if k.cycles <= 0:
            continue
        # Every slice names its kernel, so a slice on a core's track says what it belongs to.
        division = ", ".join(f"{d}={n}" for d, n in k.division.items())
        owner = {"kernel": k.index, "result": k.name, "op": k.op, "work_division": division}
        events.append(
            {
                "ph": "X", "name": f"{k.name} = {k.op}", "cat": "kernel", "pid": _CHIP, "tid": 0,
                "ts": k.start / mhz, "dur": k.cycles / mhz,
                "args": owner | {"cores": k.cores, "chunks": k.chunks, "bytes": k.bytes, "flops": k.flops,
                                 "bound_us": k.bound_cycles / mhz, "bottleneck": k.bottleneck,
                                 "vs_bound": round(k.vs_bound, 4),
                                 "sustained_bound_us": k.sustained_bound_cycles / mhz,
                                 "vs_sustained": round(k.vs_sustained, 4)},
            }
        )  # fmt: skip
        for event in k.events:
            tid = list(QUEUES).index(event.queue)
            for c in np.flatnonzero(event.end > event.start):
                events.append(
                    {
                        "ph": "X", "name": event.label, "cat": event.unit, "pid": int(c) + 1, "tid": tid,
                        "ts": float(event.start[c]) / mhz, "dur": float(event.end[c] - event.start[c]) / mhz,
                        "args": owner,
                    }
                )  # fmt: skip
    return events + bandwidth_counter(report) + lx_counters(report, cores)


def _metadata(cores: int) -> list[dict[str, Any]]:
    """Names of the chip process and of each core's process and queue threads."""
    events: list[dict[str, Any]] = [
        {"ph": "M", "name": "process_name", "pid": _CHIP, "tid": 0, "args": {"name": "chip"}},
        {"ph": "M", "name": "thread_name", "pid": _CHIP, "tid": 0, "args": {"name": "kernels"}},
    ]
    for c in range(cores):
        events.append(
            {"ph": "M", "name": "process_name", "pid": c + 1, "tid": 0, "args": {"name": f"core {c}"}}
        )
        events.append(
            {"ph": "M", "name": "process_sort_index", "pid": c + 1, "tid": 0, "args": {"sort_index": c + 1}}
        )
        for t, queue in enumerate(QUEUES):
            name = f"dma {queue}" if QUEUES[queue] == "dma" else queue
            events.append({"ph": "M", "name": "thread_name", "pid": c + 1, "tid": t, "args": {"name": name}})
    return events


def bin_us(run_us: float) -> float:
    """The LPDDR5 counter's bin: the smallest 1, 2 or 5 x 10^k µs (from 0.01 µs) giving <= `BINS` bins."""
    exponent = -2
    while True:
        for mantissa in (1, 2, 5):
            width = mantissa * 10.0**exponent
            if run_us / width <= BINS:
                return width
        exponent += 1


def bandwidth(report: Report) -> tuple[np.ndarray, np.ndarray]:
    """
    LPDDR5 bandwidth in use over the run: (bin starts in µs, GB/s in each bin), the bytes every
    op moved (`KernelReport.lpddr5_use`) over each bin's time; the last bin ends with the run.
    """
    mhz = report.target.clock_mhz
    run_us = sum(k.cycles for k in report.kernels) / mhz
    if run_us <= 0:
        return np.zeros(0), np.zeros(0)
    width = bin_us(run_us)
    # Whole bins and a last partial one; never a zero-width bin at the end (its rate is 0 / 0).
    bins = max(1, math.ceil(run_us / width - 1e-9))
    edges = np.minimum(np.arange(bins + 1) * width, run_us)
    uses = [k.lpddr5_use for k in report.kernels]
    moved = _moved_by(np.concatenate(uses) if uses else np.zeros((0, 3)), edges * mhz)
    return edges[:-1], np.diff(moved) / (np.diff(edges) * 1e-6) / 1e9


def _moved_by(use: np.ndarray, times: np.ndarray) -> np.ndarray:
    """
    Bytes `use` (rows [start, end, bytes per cycle]) has moved by each of `times`: each row
    contributes rate x (t - start) once started, less rate x (t - end) once ended (prefix sums
    over the rows sorted by start and by end).
    """
    moved = np.zeros(len(times))
    for column, sign in ((0, 1.0), (1, -1.0)):
        order = np.argsort(use[:, column], kind="stable")
        points, rates = use[order, column], use[order, 2]
        rate_sum = np.concatenate([[0.0], np.cumsum(rates)])
        weighted = np.concatenate([[0.0], np.cumsum(rates * points)])
        passed = np.searchsorted(points, times, side="right")
        moved += sign * (rate_sum[passed] * times - weighted[passed])
    return moved


def bandwidth_counter(report: Report) -> list[dict[str, Any]]:
    """The `LPDDR5 in use` counter on the chip process: a sample where the value changes, 0 at the end."""
    starts, gbps = bandwidth(report)
    events: list[dict[str, Any]] = []
    last = None
    for start, value in zip(starts.tolist(), np.round(gbps, 3).tolist(), strict=True):
        if value != last:
            events.append(_counter("LPDDR5 in use", _CHIP, start, "GB/s", value))
            last = value
    if events:  # back to 0 when the run ends
        end = sum(k.cycles for k in report.kernels) / report.target.clock_mhz
        events.append(_counter("LPDDR5 in use", _CHIP, end, "GB/s", 0.0))
    return events


def lx_steps(report: Report, cores: int) -> list[tuple[float, np.ndarray]]:
    """
    The LX bytes live on each of `cores` cores over the run: (cycle, bytes per core) where they
    change. Each timed op sets them at its start (`KernelReport.lx_bytes`); a kernel that
    prefetches adds its prefetched buffers to the previous op's at its first prefetch.
    """
    steps: list[tuple[float, np.ndarray]] = []
    live = np.zeros(cores)
    for k in report.kernels:
        if k.cycles <= 0:
            continue
        if k.prefetch_lx_bytes.any() and (early := _first_prefetch(k)) < k.start:
            steps.append((early, live + _per_core(k.prefetch_lx_bytes, cores)))
        live = _per_core(k.lx_bytes, cores)
        steps.append((k.start, live))
    steps.append((float(sum(k.cycles for k in report.kernels)), np.zeros(cores)))
    return steps


def _first_prefetch(kernel: KernelReport) -> float:
    """The cycle its first load starts (a prefetch's is before the kernel's start)."""
    return min((float(e.start.min()) for e in kernel.events if e.queue == "load"), default=kernel.start)


def _per_core(values: np.ndarray, cores: int) -> np.ndarray:
    """`values` (per core of the target; empty: none recorded) on the trace's `cores` cores."""
    out = np.zeros(cores)
    out[: min(cores, len(values))] = values[:cores]
    return out


def lx_counters(report: Report, cores: int) -> list[dict[str, Any]]:
    """The `LX live` counter of every core's process: a sample where its value changes."""
    mhz = report.target.clock_mhz
    events: list[dict[str, Any]] = []
    last = np.full(cores, -1.0)
    for cycle, live in lx_steps(report, cores):
        for c in np.flatnonzero(live != last):
            events.append(_counter("LX live", int(c) + 1, cycle / mhz, "bytes", float(live[c])))
        last = live
    return events


def _counter(name: str, pid: int, ts: float, series: str, value: float) -> dict[str, Any]:
    return {"ph": "C", "name": name, "pid": pid, "tid": 0, "ts": ts, "args": {series: value}}


def write_trace(report: Report, path: str | Path) -> None:
    """Write `report`'s timeline as Chrome trace-event JSON to `path`."""
    document = {"traceEvents": trace_events(report), "displayTimeUnit": "ns"}
    Path(path).write_text(json.dumps(document))
