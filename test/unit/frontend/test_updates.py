"""In-place state updates (`ktir.frontend.updates`): a KV cache filled whole is a copy."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ktir
from ktir.frontend.updates import is_contiguous_run, names_every_row


class FilledCache(torch.nn.Module):
    """
    Writes keys computed from `x` (exactly: an fp16 product) at the known positions
    `first..first+n-1` of a cache of `size` positions.
    """

    def __init__(self, size: int, first: int, n: int) -> None:
        super().__init__()
        self.register_buffer("key_cache", torch.zeros(1, 2, size, 32, dtype=torch.float16), persistent=False)
        self.register_buffer("positions", torch.arange(first, first + n), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        keys = (x * 3).view(1, -1, 2, 32).transpose(1, 2)
        self.key_cache.index_copy_(2, self.positions, keys)
        return self.key_cache * 2


def compiled_ops(model: torch.nn.Module, x: torch.Tensor) -> tuple[list[str], ktir.Program]:
    program = ktir.compile(model, (x,), cores=4, quiet=True)
    names = [op.name for op in program.module.body.block.ops.first.body.block.ops]  # type: ignore[union-attr]
    return names, program


@pytest.mark.parametrize(
    ("indices", "rows", "expected"),
    [
        ([0, 1, 2], 3, True),
        ([-3, 1, -1], 3, True),
        ([0, 2, 1], 3, False),
        ([0, 1], 3, False),
        ([1, 2, 3], 3, False),
        ([0, 1, 5], 3, False),
    ],
)
def test_names_every_row_in_order(indices: list[int], rows: int, expected: bool) -> None:
    assert names_every_row(np.array(indices), rows) is expected


def test_names_every_row_needs_integers() -> None:
    assert not names_every_row(np.array([0.0, 1.0]), 2)


def test_a_cache_filled_whole_at_known_positions_is_a_copy_with_exact_values() -> None:
    torch.manual_seed(0)
    model, x = FilledCache(size=8, first=0, n=8), torch.randn(1, 8, 64).half()
    names, program = compiled_ops(model, x)
    assert "ktir.scatter_rows" not in names
    expected = (x * 3).view(1, 8, 2, 32).transpose(1, 2)
    assert torch.equal(program(x), expected * 2)
    assert torch.equal(program(x), expected * 2)  # the cache written back keeps its layout


@pytest.mark.parametrize(
    ("indices", "expected"),
    [
        ([2, 3, 4], True),
        ([-2, -1], True),
        ([7], True),
        ([2, 4], False),
        ([3, 2], False),
        ([], False),
        ([6, 7, 8], False),
    ],
)
def test_a_contiguous_run_of_rows(indices: list[int], expected: bool) -> None:
    assert is_contiguous_run(np.array(indices, dtype=np.int64), 8) is expected


def test_a_cache_filled_in_part_keeps_its_in_place_scatter() -> None:
    torch.manual_seed(0)
    model, x = FilledCache(size=16, first=4, n=8), torch.randn(1, 8, 64).half()
    names, program = compiled_ops(model, x)
    assert "ktir.scatter_rows" in names
    scatter = next(op for op in program.module.walk() if op.name == "ktir.scatter_rows")
    assert scatter.in_place is not None and scatter.contiguous is not None  # positions 4..11: one box
    expected = torch.zeros(1, 2, 16, 32, dtype=torch.float16)
    expected[:, :, 4:12] = (x * 3).view(1, 8, 2, 32).transpose(1, 2)
    assert torch.equal(program(x), expected * 2)
