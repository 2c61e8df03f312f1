"""
Pictures of a simulated run (PNG, with matplotlib: `pip install 'ktir[plot]'`).

- `write_png`: the timeline. A top band shows the kernels one after another (alternating
  shades, the longest ones named); below it, one row per core with a lane per issue queue, DMA
  loads and stores in different colours. The legend sits below the plot, outside the data.
- `write_roofline_png`: every kernel that computes as a point (arithmetic intensity = FLOPs per
  LPDDR5 byte moved in its own time, achieved FLOP/s) under the chip's roofline, min(peak
  FLOP/s, intensity x bandwidth), with the card's sustained roof dashed under it where the
  target's sustained rates differ from its peaks. A prefetch's bytes count in the time they
  moved in: the previous kernel's, whose point is marked "+ next kernel's prefetch". So no
  kernel can sit above the roof (`roofline_points` is what is drawn; tests check it).

```python
from ktir.sim import simulate, write_png, write_roofline_png
report = simulate(module, inputs).report
write_png(report, "timeline.png")
write_roofline_png(report, "roofline.png")
```
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ktir.hardware.target import Target
from ktir.sim.report import KernelReport, Report, lpddr5_bytes
from ktir.sim.timeline import QUEUES

QUEUE_COLORS = {
    "load": "tab:blue",
    "store": "tab:cyan",
    "pt": "tab:red",
    "sfu": "tab:green",
    "ring": "tab:purple",
}
"""Colour of each issue queue's busy spans."""

NAMED_KERNELS = 8
"""The longest kernels the timeline's top band names."""


@dataclass(frozen=True)
class KernelSpan:
    """A kernel's place in the top band: start and length in µs, and its label ('' = unnamed)."""

    start: float
    length: float
    label: str


def kernel_spans(report: Report, named: int = NAMED_KERNELS) -> list[KernelSpan]:
    """The on-chip kernels in program order; the `named` longest carry `#index result op`."""
    mhz = report.target.clock_mhz
    chip = [k for k in report.kernels if k.cycles > 0]
    longest = {k.index for k in sorted(chip, key=lambda k: (-k.cycles, k.index))[:named]}
    return [KernelSpan(k.start / mhz, k.cycles / mhz, _label(k) if k.index in longest else "") for k in chip]


LABEL_CHARS = 32
"""Labels longer than this are cut with an ellipsis (a fused kernel lists all its ops)."""


def _label(kernel: KernelReport) -> str:
    """`#index result op`, e.g. `#13 %sdpa attention`, at most `LABEL_CHARS` characters."""
    text = f"#{kernel.index} {kernel.name} {kernel.op.removeprefix('ktir.')}"
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"


@dataclass(frozen=True)
class RooflinePoint:
    """One kernel on the roofline chart."""

    label: str
    intensity: float
    """FLOPs per LPDDR5 byte moved in the kernel's time (the next kernel's prefetch included)."""
    flops_per_second: float
    """Achieved: the kernel's FLOPs over its simulated time."""
    roof: float
    """The chip's best at this intensity: min(fp16 peak, intensity x LPDDR5 bandwidth)."""
    prefetch_bytes: float = 0.0
    """Bytes the next kernel's prefetches moved in this kernel's time (part of the intensity's)."""


def roofline_points(report: Report) -> list[RooflinePoint]:
    """
    Every kernel that computes and moves data in its time, as a point under the roofline. Its
    bytes are what LPDDR5 moved in its time, [start, start + cycles): its own transfers there
    (not what it prefetched before it started) and the next kernel's prefetches (only the next
    kernel can prefetch into its time). The channel moves at most the bandwidth, so no point
    is above the roof.
    """
    target = report.target
    timed = [k for k in report.kernels if k.cycles > 0]
    points = []
    for k, after in zip(timed, [*timed[1:], None], strict=True):
        end = k.start + k.cycles
        own = lpddr5_bytes(k.lpddr5_use, k.start, end)
        prefetch = lpddr5_bytes(after.lpddr5_use, k.start, end) if after is not None else 0.0
        if k.flops <= 0 or own + prefetch <= 0:
            continue
        intensity = k.flops / (own + prefetch)
        achieved = k.flops / (k.cycles / target.clock_hz)
        roof = min(target.fp16_peak_flops, intensity * target.device_memory_bandwidth)
        points.append(RooflinePoint(_label(k), intensity, achieved, roof, prefetch))
    return points


def roofline_title(report: Report, points: list[RooflinePoint]) -> str:
    """
    The chart's title: the target's roofs and which ops are points, in the report's counts
    (`Report.counts`), e.g. "spyre: 98.3 TFLOP/s fp16, 204.8 GB/s (sustained 73.0, 150.0)" and
    "24 points: the ops that compute, of 60 ops (37 on the chip, 23 views)".
    """
    target, counts = report.target, report.counts
    hidden = counts.computing - len(points)  # ops that compute on data already in LX
    peak, bandwidth = target.fp16_peak_flops / 1e12, target.device_memory_bandwidth / 1e9
    roofs = f"{peak:.1f} TFLOP/s fp16, {bandwidth:.1f} GB/s"
    sustained = _sustained_roof(target)
    if sustained is not None:
        roofs += f" (sustained {sustained[0] / 1e12:.1f}, {sustained[1] / 1e9:.1f})"
    what = f"{len(points)} point{'s' * (len(points) != 1)}: the ops that compute"
    what += f" ({hidden} more move no LPDDR5 bytes)" if hidden else ""
    return f"{target.name}: {roofs}\n{what}, of {counts}"


def _sustained_roof(target: Target) -> tuple[float, float] | None:
    """The sustained FLOP/s and LPDDR5 bytes/s of the whole chip, or None where they are the peaks."""
    flops = 2 * target.sustained_macs_per_us_per_core * 1e6 * target.cores
    roof = (flops, target.sustained_memory_bandwidth)
    return None if roof == (target.fp16_peak_flops, target.device_memory_bandwidth) else roof


def labelled_points(points: list[RooflinePoint], named: int) -> list[tuple[RooflinePoint, int]]:
    """
    The points the chart names: kernels on one spot (within a tenth of a decade on both axes,
    e.g. the same op in every layer) are one label with the count of the others; the `named`
    spots furthest below the roof, furthest first.
    """
    spots: dict[tuple[float, float], list[RooflinePoint]] = {}
    for p in sorted(points, key=lambda p: p.flops_per_second / p.roof):
        key = (round(np.log10(p.intensity), 1), round(np.log10(p.flops_per_second), 1))
        spots.setdefault(key, []).append(p)
    return [(group[0], len(group) - 1) for group in list(spots.values())[:named]]


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise ImportError("a PNG needs matplotlib: pip install 'ktir[plot]'") from error
    return plt


def write_png(report: Report, path: str | Path) -> None:
    """Draw the run's timeline (module docstring) to a PNG."""
    plt = _pyplot()
    mhz = report.target.clock_mhz
    cores = max((k.cores for k in report.kernels), default=1)
    lanes = list(QUEUES)
    height = 1.6 + 0.32 * cores
    figure, (band, axes) = plt.subplots(
        2, 1, figsize=(14, height), sharex=True, gridspec_kw={"height_ratios": [1.2, 0.32 * cores]}
    )
    named = 0
    for i, span in enumerate(kernel_spans(report)):
        band.broken_barh([(span.start, span.length)], (0, 1), color="0.85" if i % 2 else "0.65")
        if span.label:  # names on three staggered rows above the band, so neighbours do not collide
            band.text(span.start, 1.15 + 0.6 * (named % 3), span.label, fontsize=7, ha="left", va="bottom")
            named += 1
    band.set_ylim(0, 3.2)
    band.set_yticks([0.5], ["kernels"])
    figure.suptitle(
        f"{report.total_cycles:,} cycles, {report.time_us:,.1f} µs; {report.vs_sustained:.2f}x the sustained "
        f"bound of {report.sustained_bound_us:,.1f} µs, {report.vs_bound:.2f}x the datasheet roofline of "
        f"{report.bound_us:,.1f} µs"
    )
    bars: dict[tuple[int, str], list[tuple[float, float]]] = {}
    for k in report.kernels:
        for event in k.events:
            for c in np.flatnonzero(event.end > event.start):
                span = (float(event.start[c]) / mhz, float(event.end[c] - event.start[c]) / mhz)
                bars.setdefault((int(c), event.queue), []).append(span)
    for (c, queue), spans in sorted(bars.items()):
        lane = lanes.index(queue)
        axes.broken_barh(spans, (c + lane / len(lanes), 1 / len(lanes)), color=QUEUE_COLORS[queue])
    axes.set_ylim(0, cores)
    axes.invert_yaxis()
    axes.set_yticks([c + 0.5 for c in range(cores)], [f"core {c}" for c in range(cores)], fontsize=7)
    axes.set_xlabel("simulated µs")
    handles = [plt.Rectangle((0, 0), 1, 1, color=QUEUE_COLORS[q]) for q in lanes]
    names = [f"dma {q}" if QUEUES[q] == "dma" else q for q in lanes]
    figure.legend(handles, [f"{n} (lane {i + 1})" for i, n in enumerate(names)], loc="lower center", ncol=5)
    figure.tight_layout(rect=(0, 0.05, 1, 0.97))
    figure.savefig(path, dpi=100)
    plt.close(figure)


def write_roofline_png(report: Report, path: str | Path, named: int = NAMED_KERNELS) -> None:
    """Draw every kernel under the chip's roofline (module docstring) to a PNG."""
    plt = _pyplot()
    target = report.target
    points = roofline_points(report)
    figure, axes = plt.subplots(figsize=(9, 6))
    ridge = target.fp16_peak_flops / target.device_memory_bandwidth
    lowest = min([p.intensity for p in points] + [ridge]) / 4
    highest = max([p.intensity for p in points] + [ridge]) * 4
    x = np.geomspace(lowest, highest, 200)
    axes.plot(
        x, np.minimum(target.fp16_peak_flops, x * target.device_memory_bandwidth), "k-", label="roofline"
    )
    sustained = _sustained_roof(target)
    if sustained is not None:
        axes.plot(x, np.minimum(sustained[0], x * sustained[1]), "k--", label="sustained (the card)")
    styles = (  # a kernel whose time carries the next kernel's prefetch has its own marker
        ("kernel", False, {"marker": "o", "color": "tab:red"}),
        (
            "kernel + next kernel's prefetch",
            True,
            {"marker": "D", "facecolors": "none", "edgecolors": "tab:red"},
        ),
    )
    for name, prefetching, style in styles:
        group = [p for p in points if (p.prefetch_bytes > 0) == prefetching]
        if group:
            xs, ys = [p.intensity for p in group], [p.flops_per_second for p in group]
            axes.scatter(xs, ys, zorder=3, label=name, **style)
    offsets = ((6, -12), (6, 6), (-6, -12), (-6, 6))  # right/left, below/above, in turn
    for rank, (p, others) in enumerate(labelled_points(points, named)):
        dx, dy = offsets[rank % len(offsets)]
        axes.annotate(
            p.label
            + (f" (+{others} alike)" if others else "")
            + (f", {p.prefetch_bytes / 1e3:,.1f} kB prefetch" if p.prefetch_bytes else ""),
            (p.intensity, p.flops_per_second),
            fontsize=7,
            xytext=(dx, dy),
            textcoords="offset points",
            ha="left" if dx > 0 else "right",
        )
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("arithmetic intensity (FLOPs per LPDDR5 byte moved in the kernel's time)")
    axes.set_ylabel("achieved FLOP/s")
    axes.set_title(roofline_title(report, points))
    axes.legend(loc="upper left")  # above the roof: never a point there
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


__all__ = [
    "KernelSpan",
    "RooflinePoint",
    "kernel_spans",
    "labelled_points",
    "roofline_points",
    "roofline_title",
    "write_png",
    "write_roofline_png",
]
