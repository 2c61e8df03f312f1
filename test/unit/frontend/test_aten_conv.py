"""
Convolutions, pooling and inference batch norm (`ktir.frontend.aten_conv`): each form imports
as matmuls / elementwise ops over strided windows, compiles, simulates with no host op, and
matches eager within the model bound (`helpers.check_against_eager`: within 8 fp16 ulps of eager
and no further from the fp64 truth than 1.5x eager's error + 2 ulps). A matmul accumulates in
fp32 and rounds once; PyTorch's CPU convolution sums in another order, so outputs may differ
from eager by an ulp.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
from helpers import check_against_eager, check_never_faster_than_physics, fp16_ulp_at_largest
from model_zoo import pair
from test_fx import op_names

import ktir
from ktir.frontend.fx import import_fx


def _conv(dims: int, *args: int, **kwargs: int) -> Callable[[], torch.nn.Module]:
    kind = torch.nn.Conv1d if dims == 1 else torch.nn.Conv2d
    return lambda: kind(*args, **kwargs)


def _batch_norm() -> torch.nn.Module:
    torch.manual_seed(7)
    norm = torch.nn.BatchNorm2d(8).eval()
    norm.running_mean.normal_()
    norm.running_var.uniform_(0.5, 2.0)
    norm.weight.data.normal_()
    norm.bias.data.normal_()
    return norm


MODULES: dict[str, tuple[Callable[[], torch.nn.Module], tuple[int, ...]]] = {
    "patch_embedding": (_conv(2, 3, 32, 4, stride=4), (1, 3, 16, 16)),
    "3x3_padded": (_conv(2, 8, 16, 3, padding=1), (1, 8, 8, 8)),
    "3x3_stride_2": (_conv(2, 8, 16, 3, stride=2, padding=1, bias=False), (1, 8, 9, 9)),
    "1x1": (_conv(2, 8, 16, 1), (2, 8, 5, 5)),
    "dilated": (_conv(2, 8, 16, 3, padding=2, dilation=2), (1, 8, 8, 8)),
    "grouped": (_conv(2, 8, 16, 3, padding=1, groups=2), (1, 8, 6, 6)),
    "depthwise_7x7": (_conv(2, 8, 8, 7, padding=3, groups=8), (1, 8, 10, 10)),
    "conv1d_whisper": (_conv(1, 16, 32, 3, padding=1), (1, 16, 20)),
    "conv1d_stride_2": (_conv(1, 16, 32, 3, stride=2, padding=1), (1, 16, 20)),
    "depthwise_conv1d": (_conv(1, 16, 16, 4, padding=3, groups=16), (1, 16, 20)),
    "max_pool": (lambda: torch.nn.MaxPool2d(3, 2, 1), (1, 8, 9, 9)),
    "avg_pool": (lambda: torch.nn.AvgPool2d(2), (1, 8, 8, 8)),
    "adaptive_avg_pool": (lambda: torch.nn.AdaptiveAvgPool2d(1), (1, 8, 8, 8)),
    "batch_norm": (_batch_norm, (1, 8, 6, 6)),
}


@pytest.mark.parametrize("name", list(MODULES))
def test_runs_on_the_chip_and_matches_eager(name: str) -> None:
    factory, shape = MODULES[name]
    model16, model64 = pair(factory, seed=3)
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(4)).half()
    names = op_names(import_fx(model16, (x,)))
    assert "ktir.cpu_fallback" not in names
    if "conv" in name or name in (
        "patch_embedding",
        "3x3_padded",
        "3x3_stride_2",
        "1x1",
        "dilated",
        "grouped",
    ):
        assert ("ktir.matmul" in names) != name.startswith("depthwise")
    program = ktir.compile(model16, (x,))
    ours = program(x)
    assert not [k for k in program.report.kernels if "(host)" in k.op]
    check_against_eager(ours.numpy(), model16, model64, (x,), {})
    check_never_faster_than_physics(program.report)


def test_average_pooling_without_the_padding_in_the_count() -> None:
    """count_include_pad=False (EfficientNet): edge windows divide by the elements they cover."""
    pool = torch.nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False)
    x = torch.randn(1, 8, 9, 9, generator=torch.Generator().manual_seed(8)).half()
    program = ktir.compile(pool, (x,))
    ours, want = program(x).numpy(), pool(x).numpy()
    assert abs(ours.astype(float) - want.astype(float)).max() <= fp16_ulp_at_largest(want)
    assert not [k for k in program.report.kernels if "(host)" in k.op]


@pytest.mark.parametrize("include_pad", [True, False])
def test_pooling_with_ceil_mode(include_pad: bool) -> None:
    """ceil_mode adds windows past the end; they count neither padding nor what is beyond it."""
    x = torch.randn(1, 8, 10, 10, generator=torch.Generator().manual_seed(9)).half()
    for pool in (
        torch.nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=include_pad),
        torch.nn.MaxPool2d(3, stride=2, ceil_mode=True),
    ):
        program = ktir.compile(pool, (x,))
        ours, want = program(x).numpy(), pool(x).numpy()
        assert ours.shape == want.shape
        assert abs(ours.astype(float) - want.astype(float)).max() <= fp16_ulp_at_largest(want)


@pytest.mark.parametrize("include_pad", [True, False])
def test_a_pool_larger_than_its_input_keeps_only_the_taps_that_read_it(include_pad: bool) -> None:
    """EfficientNet's 320 x 320 ceil-mode pool of a 2 x 2 map: a few taps, not 102,400."""
    pool = torch.nn.AvgPool2d(320, ceil_mode=True, count_include_pad=include_pad)
    x = torch.randn(1, 8, 2, 2, generator=torch.Generator().manual_seed(10)).half()
    assert op_names(import_fx(pool, (x,))).count("ktir.slice") <= 12  # input and divisor windows
    ours, want = ktir.compile(pool, (x,))(x).numpy(), pool(x).numpy()
    assert abs(ours.astype(float) - want.astype(float)).max() <= fp16_ulp_at_largest(want)
