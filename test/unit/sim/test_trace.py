"""The Chrome trace (`ktir.sim.trace`): slices that name their kernel, and the memory counters."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import ktir
from ktir.dialects.ktir import core
from ktir.program import Program
from ktir.sim import write_trace
from ktir.sim.trace import bandwidth, bin_us


@pytest.fixture(scope="module")
def program() -> Program:
    """The docs' small MLP on 32 cores, run once: its second kernel prefetches its weight."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.SiLU(), torch.nn.Linear(128, 32)).half()
    x = torch.randn(16, 64).half()
    program = ktir.compile(model, (x,), cores=32, quiet=True)
    program(x)
    return program


@pytest.fixture(scope="module")
def events(program: Program, tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    path = tmp_path_factory.mktemp("trace") / "trace.json"
    write_trace(program.report, path)
    return json.loads(Path(path).read_text())["traceEvents"]


def test_every_slice_names_its_kernel(program: Program, events: list[dict[str, Any]]) -> None:
    """Kernel slices on the chip track and op slices on the cores: index, result and op."""
    kernels = {k.index: k for k in program.report.kernels}
    slices = [e for e in events if e["ph"] == "X"]
    assert len(slices) > 100
    for event in slices:
        kernel = kernels[event["args"]["kernel"]]
        assert (event["args"]["result"], event["args"]["op"]) == (kernel.name, kernel.op)
    chip = [e for e in slices if e["pid"] == 0]
    assert [e["name"] for e in chip] == [f"{k.name} = {k.op}" for k in program.report.kernels if k.cycles > 0]
    # the other events are the process and thread names and the counters
    assert {e["ph"] for e in events} == {"X", "M", "C"}


def _counter(events: list[dict[str, Any]], name: str, pid: int) -> list[tuple[float, float]]:
    """(µs, value) of a counter's samples on process `pid`."""
    samples = [e for e in events if e["ph"] == "C" and e["name"] == name and e["pid"] == pid]
    return [(e["ts"], *e["args"].values()) for e in samples]


def test_lpddr5_bandwidth_never_exceeds_the_channel(program: Program, events: list[dict[str, Any]]) -> None:
    """
    The counter reaches the sustained 150 GB/s where the channel is saturated and never more
    (its datasheet 204.8 is the roofline's); over the run it adds up to the bytes the program
    moved.
    """
    report = program.report
    peak = report.target.sustained_memory_bandwidth / 1e9
    samples = _counter(events, "LPDDR5 in use", 0)
    values = [v for _, v in samples]
    assert max(values) == peak and min(values) == 0.0 and values[-1] == 0.0
    starts, gbps = bandwidth(report)
    assert np.all(gbps <= peak * (1 + 1e-12))
    run_us = sum(k.cycles for k in report.kernels) / report.target.clock_mhz
    assert bin_us(run_us) == 0.01 and len(starts) == int(np.ceil(run_us / 0.01))
    widths = np.diff(np.append(starts, run_us)) * 1e-6
    assert float((gbps * 1e9 * widths).sum()) == pytest.approx(report.bytes, rel=1e-9)


def _lx_allocs(kernel: core.KernelOp) -> dict[int, int]:
    return {op.address.value.data: op.bytes for op in kernel.walk() if isinstance(op, core.LxAllocOp)}


def test_lx_live_bytes_follow_the_kernels_buffers(program: Program, events: list[dict[str, Any]]) -> None:
    """
    Core 0's LX: the first kernel's buffers; from the second kernel's first prefetch, its
    prefetched weight buffer on top; then the second kernel's buffers; 0 at the end. Never
    more than the usable LX.
    """
    report = program.report
    first, second = [op for op in program.module.walk() if isinstance(op, core.KernelOp)]
    loads = [op for op in second.walk() if isinstance(op, core.DmaLoadOp) and op.prefetch is not None]
    prefetched = {
        op.target.owner.address.value.data for op in loads if isinstance(op.target.owner, core.LxAllocOp)
    }
    assert prefetched
    one, two = (sum(_lx_allocs(k).values()) for k in (first, second))
    early = sum(_lx_allocs(second)[a] for a in prefetched)
    samples = _counter(events, "LX live", 1)
    assert [v for _, v in samples] == [one, one + early, two, 0.0]
    launched = [k for k in report.kernels if k.cycles > 0]
    mhz = report.target.clock_mhz
    assert samples[0][0] == launched[0].start / mhz and samples[2][0] == launched[1].start / mhz
    assert launched[0].start < samples[1][0] * mhz < launched[1].start  # under the first kernel
    usable = report.target.lx_usable_bytes
    assert all(0 <= v <= usable for c in range(1, 33) for _, v in _counter(events, "LX live", c))


def test_the_bandwidth_bin_keeps_a_run_under_a_thousand_bins() -> None:
    assert [bin_us(t) for t in (2.5, 10.0, 39.1, 1e4, 12_345.0)] == [0.01, 0.01, 0.05, 10.0, 20.0]


@pytest.mark.parametrize("cycles", [105, 1500, 7 * 15, 10**6 + 3])
def test_the_bandwidth_bins_end_with_the_run_and_are_never_empty(cycles: int) -> None:
    """
    A run whose length is a whole number of bins in floating point gets no zero-width last bin
    (0 / 0 bytes per second: NaN, which is not JSON)."""
    from types import SimpleNamespace

    from ktir.hardware.target import SPYRE

    use = np.array([[0.0, float(cycles), 1.0]])  # one byte per cycle throughout
    kernel = SimpleNamespace(cycles=cycles, lpddr5_use=use)
    starts, rates = bandwidth(SimpleNamespace(target=SPYRE, kernels=[kernel]))
    assert np.all(np.isfinite(rates)) and len(starts) == len(rates) >= 1
    assert np.allclose(rates, SPYRE.clock_hz / 1e9)  # 1 B/cycle at 1.5 GHz = 1.5 GB/s
