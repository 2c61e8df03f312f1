"""`aten.scaled_dot_product_attention` -> `ktir.attention` (`ktir.frontend.attention`) and its numerics."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from helpers import fp16_ulp

from ktir.frontend.attention import trim_hidden_keys
from ktir.frontend.fx import import_program
from ktir.ir.values import functions_of
from ktir.reference import executor as reference


def repeat_kv(x: torch.Tensor, copies: int) -> torch.Tensor:
    """Hugging Face's `repeat_kv`: every key/value head copied for the query heads that read it."""
    batch, heads, length, size = x.shape
    return (
        x[:, :, None, :, :]
        .expand(batch, heads, copies, length, size)
        .reshape(batch, heads * copies, length, size)
    )


class HfStyle(torch.nn.Module):
    """GQA as Hugging Face writes it: the key and value repeated, then a float additive mask."""

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        copies = q.shape[1] // k.shape[1]
        return F.scaled_dot_product_attention(
            q, repeat_kv(k, copies), repeat_kv(v, copies), attn_mask=mask, scale=0.1
        )


def inputs(heads: int = 8, kv_heads: int = 2, rows: int = 16, keys: int = 16, seed: int = 0) -> tuple:
    generator = torch.Generator().manual_seed(seed)
    q = torch.randn(1, heads, rows, 64, generator=generator).half()
    k = torch.randn(1, kv_heads, keys, 64, generator=generator).half()
    v = torch.randn(1, kv_heads, keys, 32, generator=generator).half()
    return q, k, v


def ops_of(imported: object) -> list:
    return list(functions_of(imported.module)[0].body.block.ops)  # type: ignore[attr-defined]


def truth(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, **kwargs: object) -> np.ndarray:
    """SDPA in float64 on the same values (GQA expanded), the value to round once."""
    copies = q.shape[1] // k.shape[1]
    mask = kwargs.pop("attn_mask", None)
    if isinstance(mask, torch.Tensor) and mask.is_floating_point():
        mask = mask.double()
    result = F.scaled_dot_product_attention(
        q.double(), repeat_kv(k.double(), copies), repeat_kv(v.double(), copies), attn_mask=mask, **kwargs
    )
    return result.numpy()


def test_hf_repeat_kv_becomes_one_grouped_attention_without_copies() -> None:
    q, k, v = inputs()
    mask = torch.zeros(16, 16, dtype=torch.float16).masked_fill(torch.ones(16, 16).triu(1).bool(), -torch.inf)
    imported = import_program(HfStyle(), (q, k, v, mask), {})
    names = [op.name for op in ops_of(imported)]
    assert names.count("ktir.attention") == 1
    assert not {"ktir.copy", "ktir.expand"} & set(names)  # the repeated copies are gone
    (attention,) = [op for op in ops_of(imported) if op.name == "ktir.attention"]
    assert attention.q.type.get_shape() == (1, 2, 4, 16, 64)  # [B, H, G, S, D]
    assert attention.k.type.get_shape() == (1, 2, 16, 64)  # read once per group
    (ours,) = reference.run(imported.module, imported.arguments(q, k, v, mask))
    expected = truth(q, k, v, attn_mask=mask, scale=0.1)
    # Computed in float64 and rounded once: within half an fp16 ulp of the exact value.
    assert np.all(np.abs(ours.astype(np.float64) - expected) <= 0.5 * fp16_ulp(expected))


@pytest.mark.parametrize(
    "kwargs",
    [{"enable_gqa": True}, {"enable_gqa": True, "is_causal": True}],
    ids=["gqa", "gqa-causal"],
)
def test_enable_gqa_and_is_causal(kwargs: dict) -> None:
    q, k, v = inputs(rows=16, keys=16, seed=1)
    imported = import_program(
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, **kwargs), (q, k, v), {}
    )
    (attention,) = [op for op in ops_of(imported) if op.name == "ktir.attention"]
    causal = attention.causal  # type: ignore[attr-defined]
    assert (causal is not None and causal.value.data == 0) == bool(kwargs.get("is_causal"))
    (ours,) = reference.run(imported.module, imported.arguments(q, k, v))
    expected = truth(q, k, v, is_causal=bool(kwargs.get("is_causal")))
    assert np.all(np.abs(ours.astype(np.float64) - expected) <= 0.5 * fp16_ulp(expected))


def test_a_fully_masked_row_gives_zeros() -> None:
    q, k, v = inputs(heads=2, kv_heads=2, rows=4, keys=8, seed=2)
    keep = torch.ones(4, 8, dtype=torch.bool)
    keep[1] = False  # query 1 sees no key
    imported = import_program(
        lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m), (q, k, v, keep), {}
    )
    (ours,) = reference.run(imported.module, imported.arguments(q, k, v, keep))
    assert np.all(ours[:, :, 1] == 0)
    assert np.all(np.isfinite(ours))
    rest = truth(q, k, v, attn_mask=keep)[:, :, [0, 2, 3]]
    assert np.all(np.abs(ours[:, :, [0, 2, 3]].astype(np.float64) - rest) <= 0.5 * fp16_ulp(rest))


def test_dropout_runs_on_the_host() -> None:
    q, k, v = inputs(heads=2, kv_heads=2)
    imported = import_program(
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, dropout_p=0.5), (q, k, v), {}
    )
    names = [op.name for op in ops_of(imported)]
    assert "ktir.attention" not in names and "ktir.cpu_fallback" in names


def test_keys_no_query_sees_are_sliced_off() -> None:
    """
    `is_causal` with 16 queries over 160 keys hides keys 16..159 from every query (PyTorch's
    top-left alignment): the key and value are sliced to their first block of 64
    (`trim_hidden_keys`). The result is the untrimmed op's within an fp16 ulp (its float64
    products run over other lengths, which BLAS may sum in another order on another CPU), and
    within an fp16 ulp of SDPA on all 160.
    """
    q, k, v = inputs(rows=16, keys=160, seed=3)

    def sdpa(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)

    whole, imported = (import_program(sdpa, (q, k, v), {}) for _ in range(2))
    assert trim_hidden_keys(functions_of(imported.module)[0].body.block) == 1  # as ktir.compile does
    (attention,) = [op for op in ops_of(imported) if op.name == "ktir.attention"]
    for operand in (attention.k, attention.v):  # type: ignore[attr-defined]
        assert operand.owner.name == "ktir.slice"
        assert operand.type.get_shape()[2] == 64
    (ours,) = reference.run(imported.module, imported.arguments(q, k, v))
    (untrimmed,) = reference.run(whole.module, whole.arguments(q, k, v))
    gap = np.abs(ours.astype(np.float64) - untrimmed.astype(np.float64))
    assert np.all(gap <= fp16_ulp(untrimmed.astype(np.float64)))
    expected = truth(q, k, v, is_causal=True)
    assert np.all(np.abs(ours.astype(np.float64) - expected) <= fp16_ulp(expected))


def test_keys_behind_a_mask_are_kept() -> None:
    """With a mask (not folded into `causal`) every key may be seen: nothing is sliced."""
    q, k, v = inputs(heads=2, kv_heads=2, rows=4, keys=8, seed=4)
    keep = torch.ones(4, 8, dtype=torch.bool).tril()
    imported = import_program(
        lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m), (q, k, v, keep), {}
    )
    assert trim_hidden_keys(functions_of(imported.module)[0].body.block) == 0
    (attention,) = [op for op in ops_of(imported) if op.name == "ktir.attention"]
    assert attention.k.type.get_shape()[2] == 8  # type: ignore[attr-defined]
