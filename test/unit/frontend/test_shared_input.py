"""Matmuls sharing an input through state weights become one (`ktir.frontend.shared_input`)."""

from __future__ import annotations

import numpy as np
import torch

from ktir.frontend.constants import fold_constants
from ktir.frontend.fx import import_program
from ktir.frontend.shared_input import merge_shared_input_matmuls
from ktir.ir.values import functions_of
from ktir.reference import executor as reference


class Projections(torch.nn.Module):
    """q/k/v-style projections of one input, each reshaped into heads (views only)."""

    def __init__(self, out: tuple[int, int, int] = (128, 64, 64)) -> None:
        super().__init__()
        self.q, self.k, self.v = (torch.nn.Linear(64, n, bias=False) for n in out)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return tuple(p(x).view(x.shape[0], -1, 32).transpose(0, 1) for p in (self.q, self.k, self.v))


class GateUp(torch.nn.Module):
    """SwiGLU's two projections: each feeds an elementwise op, a fusable epilogue."""

    def __init__(self) -> None:
        super().__init__()
        self.gate, self.up = torch.nn.Linear(64, 128, bias=False), torch.nn.Linear(64, 128, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.silu(self.gate(x)) * self.up(x)


def names(imported: object) -> list[str]:
    return [op.name for op in functions_of(imported.module)[0].body.block.ops]  # type: ignore[attr-defined]


def test_projections_of_one_input_become_one_matmul_with_the_same_bits() -> None:
    torch.manual_seed(0)
    model = Projections().half()
    x = torch.randn(16, 64, generator=torch.Generator().manual_seed(1)).half()
    imported = import_program(model, (x,), {})
    unmerged = reference.run(imported.module, imported.arguments(x))
    assert names(imported).count("ktir.matmul") == 3
    fold_constants(imported)  # merges first, then folds the concatenated weight
    after = names(imported)
    assert after.count("ktir.matmul") == 1 and after.count("ktir.slice") == 3
    assert "ktir.cat" not in after  # computed at compile time
    # the three weights are one constant now, [K, Nq + Nk + Nv]
    assert [n for n in imported.input_names if "weight" in n] == ["c4_merged_weight"]
    assert imported.state["c4_merged_weight"].shape == (64, 256)
    merged = reference.run(imported.module, imported.arguments(x))
    for before, now in zip(unmerged, merged, strict=True):
        assert np.array_equal(before, now)  # the same dot products, rounded once


def test_matmuls_with_elementwise_consumers_or_partial_sticks_stay_apart() -> None:
    x = torch.randn(16, 64).half()
    imported = import_program(GateUp().half(), (x,), {})
    assert merge_shared_input_matmuls(imported) == 0  # each can carry its epilogue
    ragged = import_program(Projections((96, 64, 64)).half(), (x,), {})
    # 96 columns end mid-stick: the other two still merge, the ragged one stays alone
    assert merge_shared_input_matmuls(ragged) == 2
    assert names(ragged).count("ktir.matmul") == 2
