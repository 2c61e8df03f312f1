"""The demo's report (`examples/demo.py`) at 80 columns: no number and no name is cut."""

from __future__ import annotations

import importlib.util
import io
from pathlib import Path

from rich.console import Console

DEMO = Path(__file__).resolve().parents[2] / "examples" / "demo.py"


def _demo_report():  # type: ignore[no-untyped-def]
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


def test_the_demo_report_at_80_columns_cuts_nothing() -> None:
    report = _demo_report()
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
