"""
Timelines of a simulated run: Chrome trace-event JSON (Perfetto, chrome://tracing) and a PNG.

The JSON has one process per core (`core 0` ...) with one thread per issue queue (`dma load`,
`dma store`, `pt`, `sfu`, `ring`), plus a `chip` process whose track shows the kernels. Times are simulated
microseconds, the trace format's unit.

```python
from ktir.sim import simulate, write_trace
write_trace(simulate(module, inputs).report, "trace.json")
```
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from ktir.sim.report import Report
from ktir.sim.timeline import QUEUES, UNITS

_CHIP = 0
"""Process id of the chip-level track; core c is process c + 1."""


def trace_events(report: Report) -> list[dict[str, Any]]:
    """The trace events of `report`: metadata, one span per kernel, one per op, unit and core."""
    mhz = report.target.clock_mhz
    cores = max((k.cores for k in report.kernels), default=0)
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
    for k in report.kernels:
        if k.cycles <= 0:
            continue
        events.append(
            {
                "ph": "X", "name": f"{k.name} = {k.op}", "cat": "kernel", "pid": _CHIP, "tid": 0,
                "ts": k.start / mhz, "dur": k.cycles / mhz,
                "args": {"cores": k.cores, "chunks": k.chunks, "bytes": k.bytes, "flops": k.flops,
                         "bottleneck": k.bottleneck, "vs_bound": round(k.vs_bound, 4)},
            }
        )  # fmt: skip
        for event in k.events:
            tid = list(QUEUES).index(event.queue)
            for c in np.flatnonzero(event.end > event.start):
                events.append(
                    {
                        "ph": "X", "name": event.label, "cat": event.unit, "pid": int(c) + 1, "tid": tid,
                        "ts": float(event.start[c]) / mhz, "dur": float(event.end[c] - event.start[c]) / mhz,
                        "args": {"kernel": k.index},
                    }
                )  # fmt: skip
    return events


def write_trace(report: Report, path: str | Path) -> None:
    """Write `report`'s timeline as Chrome trace-event JSON to `path`."""
    document = {"traceEvents": trace_events(report), "displayTimeUnit": "ns"}
    Path(path).write_text(json.dumps(document))


def write_png(report: Report, path: str | Path) -> None:
    """Draw every core's units over time to a PNG (needs matplotlib: `pip install ktir[plot]`)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise ImportError("a PNG timeline needs matplotlib: pip install 'ktir[plot]'") from error
    mhz = report.target.clock_mhz
    cores = max((k.cores for k in report.kernels), default=1)
    colors = {"dma": "tab:blue", "pt": "tab:red", "sfu": "tab:green", "ring": "tab:purple"}
    figure, axes = plt.subplots(figsize=(12, max(3.0, cores * 0.35)))
    bars: dict[tuple[int, str], list[tuple[float, float]]] = {}
    for k in report.kernels:
        for event in k.events:
            for c in np.flatnonzero(event.end > event.start):
                span = (float(event.start[c]) / mhz, float(event.end[c] - event.start[c]) / mhz)
                bars.setdefault((int(c), event.queue), []).append(span)
    lanes = list(QUEUES)
    for (c, queue), spans in sorted(bars.items()):
        lane = lanes.index(queue)
        axes.broken_barh(spans, (c + lane / len(lanes), 1 / len(lanes)), color=colors[QUEUES[queue]])
    axes.set_xlabel("simulated µs")
    axes.set_ylabel("core (rows: dma load, dma store, pt, sfu, ring)")
    axes.set_ylim(0, cores)
    axes.invert_yaxis()
    handles = [plt.Rectangle((0, 0), 1, 1, color=colors[u]) for u in UNITS]
    axes.legend(handles, UNITS, loc="upper right")
    axes.set_title(f"{report.total_cycles:,} cycles, {report.time_us:,.1f} µs")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
