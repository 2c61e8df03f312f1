"""
The timeline of a simulated run as Chrome trace-event JSON (Perfetto, chrome://tracing); the
PNG pictures are `ktir.sim.pictures`.

The JSON has one process per core (`core 0` ...) with one thread per issue queue (`dma load`,
`dma store`, `pt`, `sfu`, `ring`), plus a `chip` process whose track shows the kernels as
slices (with their index, cores, chunks, work division, bytes, FLOPs, bound and bottleneck).
Every unit event names its kernel: index, result, op and work division. Times are simulated
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
from ktir.sim.timeline import QUEUES

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
        division = ", ".join(f"{d}={n}" for d, n in k.division.items())
        events.append(
            {
                "ph": "X", "name": f"{k.name} = {k.op}", "cat": "kernel", "pid": _CHIP, "tid": 0,
                "ts": k.start / mhz, "dur": k.cycles / mhz,
                "args": {"kernel": k.index, "cores": k.cores, "chunks": k.chunks, "work_division": division,
                         "bytes": k.bytes, "flops": k.flops, "bound_us": k.bound_cycles / mhz,
                         "bottleneck": k.bottleneck, "vs_bound": round(k.vs_bound, 4)},
            }
        )  # fmt: skip
        # Every unit event names its kernel, so a slice on a core's track says what it belongs to.
        owner = {"kernel": k.index, "result": k.name, "op": k.op, "work_division": division}
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
    return events


def write_trace(report: Report, path: str | Path) -> None:
    """Write `report`'s timeline as Chrome trace-event JSON to `path`."""
    document = {"traceEvents": trace_events(report), "displayTimeUnit": "ns"}
    Path(path).write_text(json.dumps(document))
