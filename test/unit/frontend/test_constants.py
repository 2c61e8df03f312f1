"""Compile-time constants (`ktir.frontend.constants.fold_constants`)."""

from __future__ import annotations

import numpy as np
import torch

import ktir
from ktir.dialects.ktir.functions import CONSTANT_ARG
from ktir.frontend.constants import causal_offset, fold_constants
from ktir.frontend.fx import import_program
from ktir.ir.values import functions_of
from ktir.reference import executor as reference


class MaskedScale(torch.nn.Module):
    """A causal mask from `arange`, a weight cast and scaled: all of it independent of `x`."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.linspace(-1, 1, 64, dtype=torch.float16))
        self.projection = torch.nn.Parameter(torch.eye(64, dtype=torch.float16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(x.shape[0])
        mask = positions[:, None] >= positions[None, :]
        scale = torch.exp(self.weight) * 2
        scores = (x * scale) @ self.projection.t()
        return torch.where(mask[:, :1].expand(-1, 64), scores, torch.zeros_like(scores))


def op_names(module: object) -> list[str]:
    return [op.name for op in functions_of(module)[0].body.block.ops]  # type: ignore[arg-type]


def test_ops_without_user_inputs_become_constants() -> None:
    model = MaskedScale()
    x = torch.randn(8, 64, generator=torch.Generator().manual_seed(0)).half()
    imported = import_program(model, (x,), {})
    before = op_names(imported.module)
    (unfolded,) = reference.run(imported.module, imported.arguments(x))
    folded = fold_constants(imported)
    after = op_names(imported.module)
    # The mask column is all true and the zeros all zero: splats become `ktir.full`, not state.
    assert after.count("ktir.full") == 2
    assert folded > 0 and len(after) == len(before) - folded + 2
    assert "ktir.exp" not in after  # the scale is a constant now
    assert "ktir.matmul" in after and "ktir.permute" in after  # x's work, and the weight's free view
    function = functions_of(imported.module)[0]
    names = [a.data.get(CONSTANT_ARG) for a in function.arg_attrs.data]  # type: ignore[union-attr]
    constants = [n for n in names if n is not None]
    assert constants and all(n.data in imported.state for n in constants)  # type: ignore[union-attr]
    assert any("projection" in n for n in imported.input_names)
    assert not any("weight" in n for n in imported.input_names)  # read only by folded ops: dropped
    (result,) = reference.run(imported.module, imported.arguments(x))
    assert np.array_equal(result, unfolded)  # the reference computed the same values either way


def test_compile_folds_by_default_and_matches_the_unfolded_program() -> None:
    model = MaskedScale()
    x = torch.randn(8, 64, generator=torch.Generator().manual_seed(1)).half()
    folded, plain = ktir.compile(model, (x,)), ktir.compile(model, (x,), fold=False)
    assert torch.equal(folded(x), plain(x))
    assert len(folded.report.kernels) < len(plain.report.kernels)
    assert folded.report.total_cycles < plain.report.total_cycles


def test_causal_offset_recognizes_causal_masks_and_nothing_else() -> None:
    rows = np.arange(4)[:, None]
    keys = np.arange(6)[None, :]
    assert causal_offset(keys <= rows) == 0
    assert causal_offset(keys <= rows + 2) == 2  # 4 queries after a cache of 2 keys
    assert causal_offset(np.where(keys <= rows, 0.0, -np.inf).astype(np.float16)) == 0
    assert causal_offset(np.broadcast_to(keys <= rows, (2, 1, 4, 6))) == 0
    assert causal_offset(np.ones((4, 6), dtype=bool)) == 5  # hides nothing
    assert causal_offset(keys <= rows - 1) == -1  # the first query sees no key
    assert causal_offset(keys >= rows) is None  # anti-causal
    assert causal_offset(np.where(keys <= rows, 0.0, -1e4)) is None  # a large negative, not -inf
    mixed = np.stack([keys <= rows, keys <= rows + 1])
    assert causal_offset(mixed) is None  # one limit per leading index is not one limit


class CausalAttention(torch.nn.Module):
    """Attention whose boolean mask is built from positions: a compile-time causal mask."""

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(q.shape[2])
        keep = positions[None, :] <= positions[:, None]
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=keep)


def test_a_constant_causal_mask_becomes_the_causal_property() -> None:
    generator = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 2, 8, 64, generator=generator).half() for _ in range(3))
    imported = import_program(CausalAttention(), (q, k, v), {})
    (unfolded,) = reference.run(imported.module, imported.arguments(q, k, v))
    fold_constants(imported)
    (attention,) = [
        op for op in functions_of(imported.module)[0].body.block.ops if op.name == "ktir.attention"
    ]
    assert attention.mask is None and attention.causal.value.data == 0  # type: ignore[attr-defined]
    assert not imported.state  # the mask is gone from the state too
    (folded,) = reference.run(imported.module, imported.arguments(q, k, v))
    assert np.array_equal(folded, unfolded)
