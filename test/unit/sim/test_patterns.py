"""
Access patterns the card runs at a measured rate of their own (`ktir.sim.patterns.access_pattern`):
the simulator moves such a kernel's bytes at that rate, the read/write turnaround folded in.

The card's rates (docs/hardware.md, "The card as measured"): a restickify 116 GB/s, an
elementwise op with a broadcast operand 118, a reduction across rows 113, a reduction along the
last dim min(150, 114 + 61 exp(-rows / 3700)) times the share its cores drive (0.11 per core, at
most 0.54 up to 16 cores of 32).
"""

from __future__ import annotations

import pytest
from helpers import compiled, t, transpose_module
from xdsl.dialects.builtin import ModuleOp

import ktir.sim
from ktir.hardware import cost_model
from ktir.hardware.target import SPYRE, SPYRE_DATASHEET, Target
from ktir.sim import KernelReport


def rate(kernel: KernelReport, target: Target = SPYRE) -> float:
    """GB/s at which the kernel's transfers move their bytes in their channel time (one rate)."""
    (per_cycle,) = {event.rate for event in kernel.events if event.channel}
    return per_cycle * target.clock_hz / 1e9


def only_kernel(module: ModuleOp, target: Target = SPYRE) -> KernelReport:
    (kernel,) = [k for k in ktir.sim.estimate(module, target=target).kernels if k.cores]
    return kernel


def graph(op: str, x: str, out: str, extra: str = "", operand: str = "") -> str:
    """Graph-level IR of one op on `x` (and `operand`)."""
    args = f"%x: {x}" + (f", %b: {operand}" if operand else "")
    uses = "%x" + (", %b" if operand else "")
    types = x + (f", {operand}" if operand else "")
    body = f"  %y = {op} {uses}{extra} : {types} -> {out}\n  return %y : {out}\n"
    return f"func.func @f({args}) -> {out} {{\n{body}}}"


@pytest.mark.parametrize(("cores", "expected"), [(32, 120.7), (16, 65.2), (8, 65.2), (4, 53.1), (1, 13.3)])
def test_a_row_reduction_reads_at_the_rows_curve_times_its_cores_share(cores: int, expected: float) -> None:
    """8192 rows: 114 + 61 exp(-8192 / 3700) = 120.7 GB/s on 32 cores; x0.54 on 8-16, x0.44 on 4."""
    assert cost_model.row_reduction_bandwidth(8192, cores, target=SPYRE) / 1e9 == pytest.approx(
        expected, abs=0.05
    )
    text = graph("ktir.sum", t("8192x2048"), t("8192"), " dims [1]")
    assert rate(only_kernel(compiled(text, cores))) == pytest.approx(expected, abs=0.05)


def test_the_rows_curve_is_the_sustained_rate_for_few_rows() -> None:
    """min(150, 114 + 61 exp(-rows / 3700)): 150 GB/s up to 1,816 rows, then falling to 114."""
    assert cost_model.row_reduction_bandwidth(1024, 32, target=SPYRE) == 150e9
    assert cost_model.row_reduction_bandwidth(2048, 32, target=SPYRE) / 1e9 == pytest.approx(
        149.07, abs=0.005
    )
    assert cost_model.row_reduction_bandwidth(10**6, 32, target=SPYRE) / 1e9 == pytest.approx(114.0)


def test_a_column_reduction_a_broadcast_and_an_ordinary_add() -> None:
    """x.sum(0) at 113 GB/s, a + b[1, C] at 118; a + b of one shape pays the turnaround instead."""
    column = graph("ktir.sum", t("4096x2048"), t("2048"), " dims [0]")
    assert rate(only_kernel(compiled(column, 32))) == pytest.approx(113.0, rel=1e-9)
    row = graph("ktir.add", t("4096x2048"), t("4096x2048"), operand=t("1x2048"))
    assert rate(only_kernel(compiled(row, 32))) == pytest.approx(118.0, rel=1e-9)
    same = graph("ktir.add", t("4096x2048"), t("4096x2048"), operand=t("4096x2048"))
    plain = only_kernel(compiled(same, 32))
    # 150 GB/s, then 0.00574 ns per byte written that meets the next chunk's loads (7 of 8
    # chunks), in which the DMA unit works too, with the setups that no transfer overlaps
    assert plain.chunks == 8 and rate(plain) == pytest.approx(150.0, rel=1e-12)
    channel = (plain.bytes / 100 + 0.00574 * 1.5 * plain.bytes / 3 * 7 / 8) / SPYRE.clock_mhz
    assert channel <= plain.busy[0, 0] / SPYRE.clock_mhz <= channel + 3 * 8 * 500 / SPYRE.clock_mhz


def test_a_restickify_moves_at_116_gbps_and_the_datasheet_at_its_peak() -> None:
    """The transpose of 2048 x 1024 on 32 cores; `spyre-datasheet` runs every pattern at 204.8 GB/s."""
    module = transpose_module(2048, 1024, 32)
    kernel = only_kernel(module)
    assert kernel.op == "ktir.restickify" and kernel.bytes == 2 * 2048 * 1024 * 2
    assert rate(kernel) == pytest.approx(116.0, rel=1e-9)
    assert rate(only_kernel(module, SPYRE_DATASHEET), SPYRE_DATASHEET) == pytest.approx(204.8, rel=1e-9)


def test_a_fused_kernel_is_ordinary_traffic() -> None:
    """exp(a + b[1, C]) fuses into one kernel: no single pattern, so the sustained rate and the turnaround."""
    x, b = t("4096x2048"), t("1x2048")
    text = (
        f"func.func @f(%x: {x}, %b: {b}) -> {x} {{\n  %s = ktir.add %x, %b : {x}, {b} -> {x}\n"
        f"  %y = ktir.exp %s : {x} -> {x}\n  return %y : {x}\n}}"
    )
    kernel = only_kernel(compiled(text, 32))
    assert kernel.op.startswith("ktir.fused")
    assert rate(kernel) == pytest.approx(150.0, rel=1e-12)
