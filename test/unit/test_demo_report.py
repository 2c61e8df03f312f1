"""The demo's report (`examples/demo.py`) at 80 columns: no number and no name is cut."""

from __future__ import annotations

import importlib.util
import io
from pathlib import Path

import pytest
from rich.console import Console

from ktir.sim.pictures import roofline_points, roofline_title
from ktir.sim.report import OpCounts

DEMO = Path(__file__).resolve().parents[2] / "examples" / "demo.py"


@pytest.fixture(scope="module")
def demo_report():  # type: ignore[no-untyped-def]
    """The demo's report after one run (the demo's own model, inputs and compile)."""
    spec = importlib.util.spec_from_file_location("ktir_demo", DEMO)
    assert spec is not None and spec.loader is not None
    demo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(demo)
    model, ids = demo.build()
    program = demo.compiled(model, ids)
    program(ids)
    return program.report


def _cells(text: str, columns: int) -> list[list[str]]:
    """A rendered table's rows, each cell with its folded lines joined (a row starts at a '#')."""
    rows: list[list[str]] = []
    for line in text.splitlines():
        if not line.startswith("│"):
            continue
        cells = [c.strip() for c in line.split("│")[1:-1]]
        assert len(cells) == columns
        if cells[0]:
            rows.append(cells)
        else:  # a continuation line of the row above
            rows[-1] = [a + b for a, b in zip(rows[-1], cells, strict=True)]
    return rows


@pytest.mark.slow
def test_the_demo_report_at_80_columns_cuts_nothing(demo_report) -> None:  # type: ignore[no-untyped-def]
    report = demo_report
    console = Console(width=80, file=io.StringIO(), record=True)
    report.print(console)
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "…" not in text
    table = text.split("per op")[0]
    header = next(line for line in table.splitlines() if line.startswith("┃"))
    headers = [h.strip() for h in header.split("┃")[1:-1]]
    rows = _cells(table, len(headers))
    assert len(rows) == len(report.kernels)  # every kernel, slowest first
    by_index = {k.index: k for k in report.kernels}
    for row in rows:
        kernel = by_index[int(row[0])]
        assert row[headers.index("result")] == kernel.name
        assert row[headers.index("op")] == kernel.op.removeprefix("ktir.")
        assert row[headers.index("cycles")] == f"{kernel.cycles:,.0f}"
    assert [int(r[0]) for r in rows] == [k.index for k in report.ordered("time")]


@pytest.mark.slow
def test_the_demo_counts_its_ops_one_way(demo_report) -> None:  # type: ignore[no-untyped-def]
    """
    The demo printed 36 kernels (ktir.kernel ops in the module), its table 60 ops and its
    roofline chart 24 kernels: now all three say `Report.counts`. The 60 ops are 36 kernels
    and a gather (37 on the chip) and 23 views; 24 of the 37 compute and are the chart's points.
    """
    report = demo_report
    assert report.counts == OpCounts(ops=60, on_chip=37, views=23, host=0, computing=24)
    text = "60 ops (37 on the chip, 23 views)"
    assert str(report.counts) == text
    assert str(report.kernel_table().title).startswith(f"ktir.sim: {text}\n")
    points = roofline_points(report)
    assert len(points) == 24
    assert roofline_title(report, points).endswith(f"\n24 points: the ops that compute, of {text}")
