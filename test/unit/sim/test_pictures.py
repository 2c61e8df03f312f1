"""The timeline and roofline pictures (`ktir.sim.pictures`): what they draw, and the files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from helpers import compiled

import ktir
from ktir.sim import Report, simulate, write_png, write_roofline_png
from ktir.sim.pictures import LABEL_CHARS, kernel_spans, roofline_points

PROGRAM = """
func.func @f(%x: tensor<256x512xf16>, %w: tensor<512x256xf16>, %y: tensor<256x256xf16>)
    -> tensor<256x256xf16> {
  %m = ktir.matmul %x, %w : tensor<256x512xf16>, tensor<512x256xf16> -> tensor<256x256xf16>
  %e = ktir.exp %y : tensor<256x256xf16> -> tensor<256x256xf16>
  %a = ktir.add %m, %e : tensor<256x256xf16>, tensor<256x256xf16> -> tensor<256x256xf16>
  %s = ktir.softmax %a dim 1 : tensor<256x256xf16> -> tensor<256x256xf16>
  return %s : tensor<256x256xf16>
}
"""


@pytest.fixture(scope="module")
def report() -> Report:
    rng = np.random.default_rng(0)
    shapes = ((256, 512), (512, 256), (256, 256))
    inputs = [(rng.standard_normal(s) * 0.1).astype(np.float16) for s in shapes]
    return simulate(compiled(PROGRAM, 8, fuse=False), inputs).report


def test_the_band_names_the_longest_kernels(report: Report) -> None:
    spans = kernel_spans(report, named=2)
    on_chip = [k for k in report.kernels if k.cycles > 0]
    assert len(spans) == len(on_chip)
    assert [s.start for s in spans] == sorted(s.start for s in spans)
    longest = sorted(on_chip, key=lambda k: -k.cycles)[:2]
    named = [s.label for s in spans if s.label]
    assert len(named) == 2 and all(f"#{k.index} " in " ".join(named) for k in longest)
    assert all(len(s.label) <= LABEL_CHARS for s in spans)


def test_no_kernel_sits_above_the_roofline(report: Report) -> None:
    points = roofline_points(report)
    assert points  # the matmul and the SFU kernels compute and move data
    for p in points:
        assert 0 < p.flops_per_second <= p.roof
        peak = report.target.fp16_peak_flops
        assert p.roof == min(peak, p.intensity * report.target.device_memory_bandwidth)


def test_pngs_are_written(report: Report, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    for write, name in ((write_png, "timeline.png"), (write_roofline_png, "roofline.png")):
        path = tmp_path / name
        write(report, path)
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_kernels_on_one_spot_share_a_label() -> None:
    from ktir.sim.pictures import RooflinePoint, labelled_points

    same = [RooflinePoint(f"#{i}", 2.0, 1e10 * (1 + i * 0.01), 4e11) for i in range(3)]
    other = RooflinePoint("#9", 300.0, 5e13, 6e13)
    labelled = labelled_points([other, *same], named=8)
    assert [(p.label, n) for p, n in labelled] == [("#0", 2), ("#9", 0)]  # furthest below first
    assert labelled_points([other, *same], named=1) == [(same[0], 2)]


class _Mlp(torch.nn.Module):
    """silu(x W1 + b1) W2 + b2 + r + x: the second kernel prefetches its weight under the first."""

    def __init__(self) -> None:
        super().__init__()
        self.up, self.down = torch.nn.Linear(512, 1024), torch.nn.Linear(1024, 512)

    def forward(self, x: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
        return self.down(torch.nn.functional.silu(self.up(x))) + r + x


def test_a_prefetch_counts_in_the_time_it_moved_in(tmp_path: Path) -> None:
    """
    The fused matmul+add+add+add loads part of its weight in the silu kernel's time. Counted in
    its own intensity it plotted at 1.05x the roof; now its prefetched bytes count in the silu
    kernel's point (marked), every byte moved counts once, and no point is above the roof.
    """
    torch.manual_seed(0)
    x, r = torch.randn(128, 512).half(), torch.randn(128, 512).half()
    program = ktir.compile(_Mlp().half(), (x, r), cores=32, quiet=True)
    program(x, r)
    report = program.report
    prefetching = [k for k in report.kernels if k.early_bytes > 0]
    assert [k.op for k in prefetching] == ["ktir.fused[matmul+add+add+add]"]
    points = roofline_points(report)
    assert len(points) == 2
    for p in points:
        assert p.flops_per_second <= p.roof * (1 + 1e-12)
    silu, last = points
    assert "silu" in silu.label and silu.prefetch_bytes > 0 and last.prefetch_bytes == 0
    flops = [k.flops for k in report.kernels if k.flops > 0]
    moved = sum(f / p.intensity for f, p in zip(flops, points, strict=True))
    assert moved == pytest.approx(report.bytes, rel=1e-12)
    pytest.importorskip("matplotlib")
    write_roofline_png(report, tmp_path / "roofline.png")
    assert (tmp_path / "roofline.png").read_bytes()[:4] == b"\x89PNG"
