"""
Mixture-of-experts routing on the chip (`ktir.frontend.aten_routing`, `dialects/ktir/routing.py`):
topk, sort, histc, index_put and transformers' grouped_mm import as ktir ops, compile, simulate
with no host op and give eager's values (the selections and counts exactly; a grouped matmul
accumulates in fp32 and rounds once, as torch.mm does). A tiny Mixtral runs end to end, and its
bound counts only the experts a token was routed to.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import torch
import transformers
import transformers.integrations.moe  # registers torch.ops.transformers.grouped_mm_fallback
from helpers import check_against_eager, check_never_faster_than_physics, fp16_ulp_at_largest
from model_zoo import pair
from test_fx import op_names

import ktir
from ktir.frontend.fx import import_fx

_G = torch.Generator().manual_seed(31)
PROBS = torch.softmax(torch.randn(16, 8, generator=_G), -1).half()
EXPERTS = torch.randint(0, 8, (32,), generator=_G)
X = torch.randn(32, 64, generator=_G).half()
WEIGHTS = (torch.randn(4, 64, 128, generator=_G) / 8).half()
OFFSETS = torch.tensor([5, 5, 20, 32])

Case = tuple[Callable[..., torch.Tensor], tuple[torch.Tensor, ...], str]
CASES: dict[str, Case] = {
    "topk": (lambda p: torch.topk(p, 2), (PROBS,), "ktir.topk"),
    # PhiMoE's router: max over experts with the indices (a top-1), and a bool mask negated.
    "max_with_indices": (lambda p: torch.max(p, 0), (PROBS,), "ktir.topk"),
    "bitwise_not_of_a_mask": (lambda p: ~(p > 0.1), (PROBS,), "ktir.logical_not"),
    "sort": (lambda e: torch.sort(e), (EXPERTS,), "ktir.sort"),
    "histc": (lambda e: torch.histc(e.float(), bins=8, min=0, max=7), (EXPERTS,), "ktir.histc"),
    "index_put": (
        lambda e: torch.zeros(32, dtype=torch.int64).index_put((torch.argsort(e, stable=True),), e * 3),
        (EXPERTS,),
        "ktir.scatter_rows",
    ),
    "grouped_mm": (
        lambda x, w, o: torch.ops.transformers.grouped_mm_fallback(x, w, o),
        (X, WEIGHTS, OFFSETS),
        "ktir.grouped_matmul",
    ),
}


def _within_an_ulp(got: np.ndarray, expected: np.ndarray) -> None:
    """
    Integers exactly; floats within one fp16 ulp of the largest output: BLAS may sum a row in
    another order, which moves a value that cancels to near zero by more than its own ulp.
    """
    if expected.dtype.kind != "f":
        np.testing.assert_array_equal(got, expected)
        return
    difference = np.abs(got.astype(np.float64) - expected.astype(np.float64))
    assert difference.max() <= fp16_ulp_at_largest(expected), difference.max()


def _outputs(value: object) -> list[np.ndarray]:
    return [t.numpy() for t in (value if isinstance(value, tuple | list) else (value,))]  # type: ignore[union-attr]


@pytest.mark.parametrize("name", list(CASES))
def test_runs_on_the_chip_with_eagers_values(name: str) -> None:
    fn, args, op = CASES[name]
    names = op_names(import_fx(fn, args))
    assert op in names and "ktir.cpu_fallback" not in names
    program = ktir.compile(fn, args)
    ours, want = _outputs(program(*args)), _outputs(fn(*args))
    if name == "sort":
        # PyTorch's default sort is not stable: equal keys may come in any order (ktir keeps
        # theirs). The values must agree, and the indices must be a permutation that picks them.
        (values, indices), (expected, _) = ours, want
        np.testing.assert_array_equal(values, expected)
        np.testing.assert_array_equal(np.sort(indices), np.arange(len(indices)))
        np.testing.assert_array_equal(args[0].numpy()[indices], values)
        ours, want = ours[:1], want[:1]
    for got, expected in zip(ours, want, strict=True):
        assert got.dtype == expected.dtype
        _within_an_ulp(got, expected)
    assert not [k for k in program.report.kernels if "(host)" in k.op]
    check_never_faster_than_physics(program.report)


def test_a_grouped_matmul_reads_only_the_experts_it_uses() -> None:
    """Rows only for experts 0 and 2: the others' weights are neither moved nor compulsory."""
    fn, (x, w, _), _ = CASES["grouped_mm"]
    offsets = torch.tensor([10, 10, 32, 32])
    program = ktir.compile(fn, (x, w, offsets))
    _within_an_ulp(program(x, w, offsets).numpy(), fn(x, w, offsets).numpy())
    (line,) = [k for k in program.report.kernels if k.op == "ktir.grouped_matmul"]
    expert_bytes = 64 * 128 * 2
    assert line.compulsory_bytes == pytest.approx(2 * expert_bytes + 32 * 64 * 2 + 128 + 32 * 128 * 2)
    assert line.matmul_flops == 2 * 32 * 64 * 128
    check_never_faster_than_physics(program.report)


def _tiny_mixtral() -> transformers.MixtralForCausalLM:
    config = transformers.MixtralConfig(
        vocab_size=256,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        num_local_experts=4,
        num_experts_per_tok=2,
        max_position_embeddings=64,
    )
    return transformers.MixtralForCausalLM(config)


@pytest.mark.slow
@pytest.mark.parametrize("tokens", [16, 1])
def test_a_tiny_mixtral_matches_eager_with_no_host_op(tokens: int) -> None:
    """The truth runs in fp32: transformers' grouped matmul refuses float64."""
    model16, model64 = pair(_tiny_mixtral, seed=5)
    model64 = model64.float()
    ids = torch.randint(0, 256, (1, tokens), generator=torch.Generator().manual_seed(6))
    kwargs = {"use_cache": False}
    program = ktir.compile(model16, (ids,), kwargs)
    ours = program(ids).logits
    check_against_eager(ours.numpy(), model16, model64, (ids,), kwargs)
    report = program.report
    assert not [k for k in report.kernels if "(host)" in k.op]
    assert {"ktir.topk", "ktir.grouped_matmul", "ktir.scatter_rows"} <= {k.op for k in report.kernels}
    check_never_faster_than_physics(report)
