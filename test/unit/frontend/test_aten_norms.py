"""
Normalizations composed of ktir ops (`ktir.frontend.aten_norms`), and the slice_scatter,
hardtanh, erf and expm1 converters: each imports without a CPU fallback, compiles, simulates and
stays within one fp16 ulp of eager's largest output (PyTorch computes these in fp32 and rounds
once; ktir does too, and a reduction may sum in another order).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import torch
from helpers import check_never_faster_than_physics, fp16_ulp_at_largest
from test_fx import op_names

import ktir
from ktir.frontend.fx import import_fx

_G = torch.Generator().manual_seed(41)


def _random(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=_G).half()


def _group_norm() -> torch.nn.Module:
    torch.manual_seed(2)
    norm = torch.nn.GroupNorm(4, 32)
    norm.weight.data.normal_()
    norm.bias.data.normal_()
    return norm.eval().half()


CASES: dict[str, tuple[Callable[..., torch.Tensor], tuple[torch.Tensor, ...], str]] = {
    "group_norm": (_group_norm(), (_random(1, 32, 10),), "ktir.layer_norm"),
    "vector_norm_keepdim": (
        lambda x: torch.linalg.vector_norm(x, dim=(1, 2), keepdim=True),
        (_random(4, 8, 16),),
        "ktir.sqrt",
    ),
    "vector_norm_last": (lambda x: torch.linalg.vector_norm(x, dim=-1), (_random(4, 8, 16),), "ktir.sqrt"),
    "batch_norm_batch_statistics": (
        lambda x: torch.nn.functional.batch_norm(x, None, None, training=True),
        (_random(8, 4, 3, 3),),
        "ktir.rsqrt",
    ),
    "slice_scatter": (
        lambda x, y: torch.slice_scatter(x, y, dim=1, start=2, end=5),
        (_random(4, 8, 16), _random(4, 3, 16)),
        "ktir.cat",
    ),
    "relu6": (lambda x: torch.nn.functional.relu6(x * 4), (_random(4, 64),), "ktir.clamp"),
    "erf": (torch.erf, (_random(4, 64),), "ktir.erf"),
    "expm1": (torch.expm1, (_random(4, 64),), "ktir.expm1"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_runs_on_the_chip_within_an_ulp_of_eager(name: str) -> None:
    fn, args, op = CASES[name]
    names = op_names(import_fx(fn, args))
    assert op in names and "ktir.cpu_fallback" not in names
    program = ktir.compile(fn, args)
    ours, want = program(*args).numpy(), fn(*args).detach().numpy()
    assert ours.shape == want.shape and ours.dtype == want.dtype
    difference = np.abs(ours.astype(np.float64) - want.astype(np.float64))
    assert difference.max() <= fp16_ulp_at_largest(want)
    if name == "slice_scatter":
        # The slice it replaces is never read, so the program moves less than "every input
        # once"; it still takes at least its bound.
        assert program.report.total_cycles >= program.report.bound_cycles
        return
    check_never_faster_than_physics(program.report)


def test_a_vector_norm_of_another_order_is_reported() -> None:
    with pytest.raises(ktir.frontend.fx.FxImportError, match=r"vector norm of order 1 \(only 2\)"):
        import_fx(lambda x: torch.linalg.vector_norm(x, ord=1), (_random(4, 8),))
