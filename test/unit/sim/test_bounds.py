"""
The report's two yardsticks (`ktir.sim.report.bound_cycles`, docs/performance.md): the datasheet
roofline, which nothing may beat, and the sustained bound at the card's sustained rates, which
no program beats either, since the simulator runs the PE arrays and LPDDR5 no faster.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from helpers import check_never_faster_than_physics, compiled, matmul
from hypothesis import given, settings
from hypothesis import strategies as st

from ktir.hardware.target import SPYRE, SPYRE_DATASHEET
from ktir.sim import Report, estimate
from ktir.sim.report import bound_cycles

GFLOP, MB = 1e9, 1e6


def test_both_bounds_of_a_gflop_and_a_megabyte_on_spyre() -> None:
    # Roofline: 98.304 TFLOP/s and 204.8 GB/s; sustained: 2 x 1.14e6 MAC/us x 32 cores =
    # 72.96 TFLOP/s and 150 GB/s; both at 1.5 GHz.
    assert bound_cycles(GFLOP, 0, SPYRE) == pytest.approx(1e9 / 98.304e12 * 1.5e9)  # 15,258.8
    assert bound_cycles(GFLOP, 0, SPYRE, sustained=True) == pytest.approx(1e9 / 72.96e12 * 1.5e9)  # 20,559.2
    assert bound_cycles(0, MB, SPYRE) == pytest.approx(7324.21875)
    assert bound_cycles(0, MB, SPYRE, sustained=True) == pytest.approx(10000.0)
    assert bound_cycles(GFLOP, MB, SPYRE, sustained=True) == pytest.approx(1e9 / 72.96e12 * 1.5e9)  # the max
    # On the datasheet target the card sustains its peaks: the two bounds are one.
    for flops, moved in ((GFLOP, 0), (0, MB), (GFLOP, 3 * MB)):
        roofline = bound_cycles(flops, moved, SPYRE_DATASHEET)
        assert bound_cycles(flops, moved, SPYRE_DATASHEET, sustained=True) == roofline
        assert roofline == bound_cycles(flops, moved, SPYRE)


def _matmul_report(m: int, k: int, n: int, target: str = "") -> Report:
    chip = SPYRE_DATASHEET if target else SPYRE
    return estimate(compiled(matmul(m, k, n), 32, target=target), target=chip)


def test_a_memory_bound_matmul_on_spyre() -> None:
    """512 x 4096 x 4096: 17.2 GFLOP on 41.9 MB, memory-bound at either rate."""
    report = _matmul_report(512, 4096, 4096)
    (kernel,) = report.kernels
    assert report.matmul_flops == 2 * 512 * 4096 * 4096
    assert report.compulsory_bytes == 2 * (512 * 4096 + 4096 * 4096 + 512 * 4096)
    for line in (report, kernel):
        assert line.bound_cycles == pytest.approx(41_943_040 / (204.8e9 / 1.5e9))  # 307,200: 204.8 us
        assert line.sustained_bound_cycles == pytest.approx(419_430.4)  # 279.6 us at 150 GB/s
    assert report.bound_us == pytest.approx(204.8) and report.sustained_bound_us == pytest.approx(
        41_943_040 / 150e3
    )
    assert report.vs_sustained == pytest.approx(report.total_cycles / 419_430.4)
    assert report.vs_bound == pytest.approx(report.total_cycles / 307_200)
    assert report.vs_bound > report.vs_sustained >= 1
    totals = report.to_dict()["totals"]
    assert totals["sustained_bound_cycles"] == report.sustained_bound_cycles
    assert totals["vs_sustained"] == report.vs_sustained and totals["vs_bound"] == report.vs_bound


def test_a_compute_bound_matmul_on_spyre_and_on_the_datasheet() -> None:
    """2048 x 2048 x 2048: 17.2 GFLOP on 25.2 MB, compute-bound at either rate."""
    flops = 2 * 2048**3
    report = _matmul_report(2048, 2048, 2048)
    assert report.matmul_flops == flops and report.compulsory_bytes == 3 * 2048 * 2048 * 2
    assert report.bound_cycles == pytest.approx(flops / 98.304e12 * 1.5e9)  # 262,144: 174.8 us
    assert report.sustained_bound_cycles == pytest.approx(flops / 72.96e12 * 1.5e9)  # 353,204: 235.5 us
    assert report.total_cycles >= report.sustained_bound_cycles
    datasheet = _matmul_report(2048, 2048, 2048, target="spyre-datasheet")
    assert datasheet.sustained_bound_cycles == datasheet.bound_cycles == report.bound_cycles
    assert datasheet.total_cycles >= datasheet.bound_cycles


def test_a_kernel_bound_leaves_out_what_it_prefetched() -> None:
    from ktir.sim.report import KernelReport

    kernel = KernelReport(
        0, "%y", "ktir.neg", "sfu", 32, 1, 0.0, 20_000.0, 2 * MB, 0.0, 2 * MB, early_bytes=MB, target=SPYRE
    )
    assert kernel.bound_bytes == MB
    assert kernel.bound_cycles == pytest.approx(7324.21875)
    assert kernel.sustained_bound_cycles == pytest.approx(10_000.0) and kernel.vs_sustained == pytest.approx(
        2.0
    )


# -- Random small programs: nothing beats either bound ------------------------------------------

UNARY = ("exp", "neg", "silu", "tanh", "abs", "sigmoid")
BINARY = ("add", "mul", "sub", "maximum")
STEPS = (
    "unary",
    "with x",
    "with row",
    "with itself",
    "softmax",
    "minus row sum",
    "row max",
    "matmul",
    "permute",
)


@dataclass
class _Program:
    """A chain of ktir ops on %x (rows x cols), a broadcast row %r (cols) and a weight %w (cols x n)."""

    rows: int
    cols: int
    n: int
    lines: list[str] = field(default_factory=list)
    last: str = "%x"
    shape: tuple[int, int] = (0, 0)

    def __post_init__(self) -> None:
        self.shape = (self.rows, self.cols)

    @staticmethod
    def t(shape: tuple[int, ...]) -> str:
        return f"tensor<{'x'.join(map(str, shape))}xf16>"

    def emit(self, op: str, operands: list[str], types: list[tuple[int, ...]], out: tuple[int, ...]) -> str:
        name = f"%v{len(self.lines)}"
        typed = ", ".join(self.t(s) for s in types)
        self.lines.append(f"  {name} = ktir.{op} {', '.join(operands)} : {typed} -> {self.t(out)}")
        return name

    def step(self, kind: str, op: str) -> None:
        """One step; a step the current shape cannot take is a unary op instead."""
        rows, cols = self.shape
        if kind == "with x" and self.shape == (self.rows, self.cols):
            self.last = self.emit(op, [self.last, "%x"], [self.shape, self.shape], self.shape)
        elif kind == "with row" and cols == self.cols:
            self.last = self.emit(op, [self.last, "%r"], [self.shape, (cols,)], self.shape)
        elif kind == "with itself":
            self.last = self.emit(op, [self.last, self.last], [self.shape, self.shape], self.shape)
        elif kind == "softmax":
            self.last = self.emit("softmax", [f"{self.last} dim 1"], [self.shape], self.shape)
        elif kind in ("minus row sum", "row max"):
            reduce = "sum" if kind == "minus row sum" else "max"
            total = self.emit(reduce, [f"{self.last} dims [1] keepdim"], [self.shape], (rows, 1))
            self.last = self.emit("sub", [self.last, total], [self.shape, (rows, 1)], self.shape)
        elif kind == "matmul" and cols == self.cols:
            self.last = self.emit("matmul", [self.last, "%w"], [self.shape, (cols, self.n)], (rows, self.n))
            self.shape = (rows, self.n)
        elif kind == "permute":
            self.last = self.emit("permute", [f"{self.last} perm [1, 0]"], [self.shape], (cols, rows))
            self.shape = (cols, rows)
        else:
            unary = op if op in UNARY else "neg"
            self.last = self.emit(unary, [self.last], [self.shape], self.shape)

    def text(self) -> str:
        x, r, w = self.t((self.rows, self.cols)), self.t((self.cols,)), self.t((self.cols, self.n))
        body = "\n".join(self.lines)
        return (
            f'func.func @f(%x: {x}, %r: {r}, %w: {w} {{ktir.parameter = "w"}}) -> {self.t(self.shape)} {{\n'
            f"{body}\n  return {self.last} : {self.t(self.shape)}\n}}"
        )


@st.composite
def programs(draw: st.DrawFn) -> str:
    """A random small program of elementwise ops, softmax, row reductions, matmuls and transposes."""
    program = _Program(
        draw(st.sampled_from([1, 8, 64, 200, 512])),
        draw(st.sampled_from([64, 256, 1024])),
        draw(st.sampled_from([64, 512, 2048])),
    )
    for kind in draw(st.lists(st.sampled_from(STEPS), min_size=1, max_size=6)):
        program.step(kind, draw(st.sampled_from(UNARY if kind == "unary" else BINARY)))
    return program.text()


@settings(max_examples=30, deadline=None)
@given(programs(), st.sampled_from([1, 4, 32]))
def test_no_program_simulates_below_its_sustained_bound(text: str, cores: int) -> None:
    check_never_faster_than_physics(estimate(compiled(text, cores)))


def test_an_argument_nothing_reads_is_not_compulsory() -> None:
    """Found by the test above: the unused weight's 262,144 bytes were counted, the exp ran at 0.53x."""
    x, w = "tensor<1x64xf16>", "tensor<64x2048xf16>"
    text = (
        f'func.func @f(%x: {x}, %w: {w} {{ktir.parameter = "w"}}) -> {x} {{\n'
        f"  %y = ktir.exp %x : {x} -> {x}\n  return %y : {x}\n}}"
    )
    report = estimate(compiled(text, 1))
    assert report.compulsory_bytes == 2 * 128  # x and y, one 128-byte stick of 64 fp16 each
    check_never_faster_than_physics(report)


def test_an_input_only_returned_as_a_view_moves_nothing() -> None:
    """Found by the test above: `x.t()` returned as a view ran 0 cycles against 1,922 of roofline."""
    x, y = "tensor<1x64xf16>", "tensor<64x1xf16>"
    text = (
        f"func.func @f(%x: {x}) -> {y} {{\n"
        f"  %y = ktir.permute %x perm [1, 0] : {x} -> {y}\n  return %y : {y}\n}}"
    )
    report = estimate(compiled(text, 1))
    assert report.compulsory_bytes == 0 and report.total_cycles == 0
    check_never_faster_than_physics(report)
