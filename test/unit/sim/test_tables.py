"""Report tables that fit the console (`ktir.sim.tables`, `Report.kernel_table`)."""

from __future__ import annotations

import io

import numpy as np
import pytest
from helpers import compiled
from rich.console import Console

from ktir.sim import Report, simulate
from ktir.sim.tables import Column, fitted_table

T = "tensor<64x256xf16>"
PROGRAM = f"""
func.func @f(%x: {T}, %y: {T}) -> tensor<256x64xf16> {{
  %a = ktir.exp %x : {T} -> {T}
  %b = ktir.add %a, %y : {T}, {T} -> {T}
  %c = ktir.softmax %b dim 1 : {T} -> {T}
  %d = ktir.permute %c perm [1, 0] : {T} -> tensor<256x64xf16>
  return %d : tensor<256x64xf16>
}}
"""


def rendered(table: object, width: int) -> list[str]:
    console = Console(width=width, record=True, file=io.StringIO())
    console.print(table)
    return console.export_text().splitlines()


@pytest.fixture(scope="module")
def report() -> Report:
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((64, 256)).astype(np.float16) for _ in range(2)]
    return simulate(compiled(PROGRAM, 8, fuse=False), inputs).report


@pytest.mark.parametrize("width", [60, 80, 100, 160])
def test_kernel_tables_fit_and_never_cut_numbers(report: Report, width: int) -> None:
    lines = rendered(report.kernel_table(width=width), width)
    assert max(len(line) for line in lines) <= width
    text = "\n".join(lines)
    for kernel in report.kernels:
        assert f"{kernel.cycles:,.0f}" in text  # every cycle count whole
    assert "…" not in text  # nothing is cut: a long name folds onto more lines


def test_columns_give_way_by_priority(report: Report) -> None:
    narrow = next(line for line in rendered(report.kernel_table(width=80), 80) if "result" in line)
    wide = next(line for line in rendered(report.kernel_table(width=200), 200) if "result" in line)
    assert [h for h in ("cycles", "x sust", "x roof", "MB", "traffic") if h in narrow] == [
        "cycles", "x sust", "x roof", "MB", "traffic",
    ]  # fmt: skip
    assert "sustained" not in narrow  # the sustained bound's cycles give way first
    assert "chunks" not in narrow and "cores" not in narrow
    assert "chunks" in wide and "cores" in wide and "min MB" in wide and " sustained " in wide


def test_rows_are_slowest_first_or_in_program_order(report: Report) -> None:
    by_time = report.ordered("time")
    assert [k.cycles for k in by_time] == sorted((k.cycles for k in report.kernels), reverse=True)
    assert [k.index for k in report.ordered("program")] == sorted(k.index for k in report.kernels)
    with pytest.raises(ValueError, match="order must be"):
        report.ordered("name")


def test_views_have_no_ratios(report: Report) -> None:
    lines = rendered(report.kernel_table(width=160), 160)
    (view,) = [line for line in lines if "(view)" in line]
    cells = [c.strip() for c in view.split("│")[1:-1]]
    assert cells[2] == "permute (view)" and cells[4] == cells[5] == "-"  # x sust, x roof


def test_markup_in_names_is_shown() -> None:
    columns = [Column("op", ["fused[matmul+silu]"], numeric=False), Column("cycles", ["1,234"])]
    assert "fused[matmul+silu]" in "\n".join(rendered(fitted_table(None, columns, 80), 80))


def test_text_columns_shrink_numbers_do_not() -> None:
    columns = [
        Column("name", ["a" * 40], numeric=False, min_width=10),
        Column("cycles", ["123,456,789"]),
        Column("extra", ["x"], priority=1),
    ]
    lines = rendered(fitted_table(None, columns, 40), 40)
    assert max(len(line) for line in lines) <= 40
    assert "123,456,789" in lines[3] and "extra" not in lines[1]
    folded = "".join(line.split("│")[1].strip() for line in lines[3:-1])
    assert folded == "a" * 40  # the name goes on over more lines, whole
