"""The report's JSON form (`Report.to_json` / `Report.from_json`, ktir/sim/report.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import compiled

from ktir.hardware.target import SPYRE
from ktir.sim import Report, ReportFormatError, simulate

T = "tensor<64x256xf16>"
PROGRAM = f"""
func.func @f(%x: {T}, %y: {T}) -> {T} {{
  %a = ktir.exp %x : {T} -> {T}
  %b = ktir.add %a, %y : {T}, {T} -> {T}
  %c = ktir.softmax %b dim 1 : {T} -> {T}
  return %c : {T}
}}
"""


@pytest.fixture(scope="module")
def report() -> Report:
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((64, 256)).astype(np.float16) for _ in range(2)]
    return simulate(compiled(PROGRAM, 8, fuse=False), inputs).report


def test_json_holds_every_number_of_the_tables(report: Report) -> None:
    data = json.loads(report.to_json())
    assert data["format"] == "ktir-report" and data["version"] == 1
    assert data["units"] == ["dma", "pt", "sfu", "ring"]
    totals = data["totals"]
    assert totals["total_cycles"] == report.total_cycles
    assert totals["vs_bound"] == report.vs_bound and totals["traffic_ratio"] == report.traffic_ratio
    assert totals["bytes"] == report.bytes and totals["flops"] == report.flops
    assert [k["op"] for k in data["kernels"]] == [k.op for k in report.kernels]
    for row, kernel in zip(data["kernels"], report.kernels, strict=True):
        assert row["cycles"] == kernel.cycles and row["bound_cycles"] == kernel.bound_cycles
        assert row["bottleneck"] == kernel.bottleneck and row["cores"] == kernel.cores
        assert np.array_equal(np.array(row["busy"]), kernel.busy)
    assert [o["op"] for o in data["ops"]] == [s.op for s in report.ops]
    assert np.array_equal(np.array(data["core_busy"]), report.core_busy)
    assert data["target"]["name"] == "spyre"


def test_from_json_gives_the_same_report(report: Report) -> None:
    again = Report.from_json(report.to_json())
    assert again.to_json() == report.to_json()
    assert again.total_cycles == report.total_cycles and again.bound_cycles == report.bound_cycles
    assert [k.critical_core for k in again.kernels] == [k.critical_core for k in report.kernels]
    assert again.kernels[0].events == []  # the per-event timeline is the trace's, not the JSON's


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "not JSON"),
        ("[]", "not a ktir report"),
        ('{"format": "ktir-report", "version": 9}', "report version 9, expected 1"),
        ('{"format": "ktir-report", "version": 1, "target": {}}', "malformed ktir report: KeyError"),
        (
            '{"format": "ktir-report", "version": 1, "target": {"bogus": 1}, "kernels": []}',
            "malformed ktir report: ValueError: the report's target: unknown target fields: bogus",
        ),
        (
            '{"format": "ktir-report", "version": 1, "target": {"cores": "many"}, "kernels": []}',
            "cores must be int, not 'many'",
        ),
    ],
)
def test_bad_json_is_a_report_format_error(text: str, message: str) -> None:
    with pytest.raises(ReportFormatError, match=message):
        Report.from_json(text)


def test_kernels_are_named_by_what_they_do() -> None:
    """A restickify has no SSA name of its own: the report names it by what it moves."""
    text = """
func.func @f(%x: tensor<64x64xf16>) -> tensor<64x64xf16> {
  %t = ktir.permute %x perm [1, 0] : tensor<64x64xf16> -> tensor<64x64xf16>
  %y = ktir.add %x, %t : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
  return %y : tensor<64x64xf16>
}
"""
    x = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float16)
    report = simulate(compiled(text, 4), [x]).report
    names = {k.op: k.name for k in report.kernels}
    assert names["ktir.restickify"] == "%restickify(%t)"
    assert names["ktir.add"] == "%y"
    assert all("%kernel" not in k.name for k in report.kernels)


def test_counts_say_what_the_lines_are() -> None:
    """One count for the table, the demo and the roofline chart: ops, by where they run."""
    from ktir.sim.pictures import roofline_points, roofline_title
    from ktir.sim.report import KernelReport, OpCounts

    lines = [
        KernelReport(0, "%e", "ktir.exp", "sfu", 4, 1, 0.0, 100.0, 4096.0, 2048.0, target=SPYRE),
        KernelReport(1, "%v", "ktir.reshape (view)", "-", 0, 0, 100.0, 0.0, 0.0, 0.0, target=SPYRE),
        KernelReport(2, "%r", "ktir.restickify", "sfu", 4, 1, 100.0, 50.0, 4096.0, 0.0, target=SPYRE),
        KernelReport(3, "%g", "ktir.gather_rows", "dma", 2, 1, 150.0, 600.0, 512.0, 0.0, target=SPYRE),
        KernelReport(
            4, "%a", "ktir.cpu_fallback aten::argmax (host)", "-", 0, 0, 750.0, 1e4, 8.0, 0.0, target=SPYRE
        ),
    ]
    report = Report(lines, SPYRE)
    assert report.counts == OpCounts(ops=5, on_chip=3, views=1, host=1, computing=1)
    assert str(report.counts) == "5 ops (3 on the chip, 1 view, 1 on the host)"
    assert report.device_kernels == 3
    assert "ktir.sim: 5 ops (3 on the chip, 1 view, 1 on the host)\n" in str(report.kernel_table().title)
    points = roofline_points(report)
    assert len(points) == 1
    assert roofline_title(report, points).endswith(
        "\n1 point: the ops that compute, of 5 ops (3 on the chip, 1 view, 1 on the host)"
    )
    assert str(Report(lines[:1], SPYRE).counts) == "1 op (1 on the chip)"
