"""The stick-dim algebra (`ktir.layout.sticks`)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ktir.layout.sticks import (
    SPARSE,
    through_expand,
    through_permute,
    through_reshape,
    through_slice,
)


def test_permute_moves_the_stick_with_its_dim() -> None:
    assert through_permute(1, [1, 0]) == 0
    assert through_permute(2, [2, 0, 1]) == 0
    assert through_permute(SPARSE, [1, 0]) == SPARSE


@pytest.mark.parametrize(
    ("stick", "source", "target", "expected"),
    [
        (1, (1, 64), (4, 8, 64), 2),
        (0, (64,), (4, 64), 1),
        (1, (4, 1), (4, 64), None),  # a broadcast dim: every stick would repeat one element
        (0, (1, 64), (8, 64), None),
    ],
)
def test_expand(stick: int, source: tuple, target: tuple, expected: int | None) -> None:
    assert through_expand(stick, source, target) == expected


@pytest.mark.parametrize(
    ("stick", "dim", "start", "step", "expected"),
    [(1, 0, 5, 1, 1), (1, 1, 64, 1, 1), (1, 1, 3, 1, None), (1, 1, 0, 2, None)],
)
def test_slice(stick: int, dim: int, start: int, step: int, expected: int | None) -> None:
    assert through_slice(stick, dim, start, step, 64) == expected


@pytest.mark.parametrize(
    ("stick", "source", "target", "expected"),
    [
        (1, (4, 128), (4, 2, 64), 2),
        (1, (4, 64), (256,), 0),
        (1, (4, 96), (4, 3, 32), None),
        (2, (2, 16, 64), (32, 64), 1),
        (2, (2, 8, 128), (2, 8, 2, 64), 3),
        (0, (8, 2), (16,), None),  # the stick dim is not the innermost of its merged group
        (1, (4, 64), (4, 64), 1),
        (1, (4, 96), (384,), None),  # each row's second stick is padded: merging moves elements
        (1, (4, 96), (6, 64), None),
        (3, (1, 64, 4, 32), (1, 64, 128), None),  # merging 32-wide heads
    ],
)
def test_reshape(stick: int, source: tuple, target: tuple, expected: int | None) -> None:
    assert through_reshape(stick, source, target, 64) == expected


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([1, 2, 3, 4, 64, 128]), min_size=1, max_size=4), st.data())
def test_reshape_keeps_the_sticks_elements(source: list[int], data: st.DataObject) -> None:
    """Where a stick survives a reshape, the target dim walks the same host elements in order."""
    stick = data.draw(st.integers(0, len(source) - 1))
    numel = int(np.prod(source))
    target = data.draw(st.sampled_from([(numel,), (numel // 64, 64) if numel % 64 == 0 else (numel,)]))
    found = through_reshape(stick, source, target, 64)
    if found is None:
        return
    flat = np.arange(numel).reshape(source)
    run = min(source[stick], 64)
    along_source = np.moveaxis(flat, stick, -1).reshape(-1, source[stick])[0, :run]
    along_target = np.moveaxis(flat.reshape(target), found, -1).reshape(-1, target[found])[0, :run]
    assert (along_source == along_target).all()
