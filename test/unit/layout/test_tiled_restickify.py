"""The restickify target formula (`ktir.layout.restickify_target`)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ktir.layout.spyre import SpyreTensorLayout, restickify_target
from ktir.layout.tiled import LayoutError
from ktir.layout.transfer import to_device, to_host


def test_reference_example() -> None:
    stl = SpyreTensorLayout((256, 128), "float16")
    assert (stl.device_size, stl.stride_map) == ([2, 256, 64], [64, 128, 1])
    moved = restickify_target(stl, (256, 128), old_dim=1, new_dim=0)
    assert (moved.device_size, moved.stride_map) == ([4, 128, 64], [8192, 1, 128])
    assert moved == SpyreTensorLayout((256, 128), "float16", dim_order=[1, 0])


def test_three_dims_with_padding() -> None:
    stl = SpyreTensorLayout((5, 100, 150), "float16")
    moved = restickify_target(stl, (5, 100, 150), old_dim=2, new_dim=1)
    assert (moved.device_size, moved.stride_map) == ([150, 2, 5, 64], [1, 9600, 15000, 150])
    assert moved == SpyreTensorLayout((5, 100, 150), "float16", dim_order=[0, 2, 1])


@pytest.mark.parametrize(
    ("size", "old_dim", "new_dim", "message"),
    [
        ((1, 128, 64), 2, 0, "cannot restickify across dim 0 of size 1"),
        ((2, 128, 64), 0, 1, "does not walk host dim 0"),
        ((2, 128, 64), 2, 3, "dim 3 is out of range"),
    ],
)
def test_rejected_moves(size: tuple[int, ...], old_dim: int, new_dim: int, message: str) -> None:
    with pytest.raises(LayoutError, match=message):
        restickify_target(SpyreTensorLayout(size, "float16"), size, old_dim, new_dim)


@st.composite
def layouts_and_moves(draw: st.DrawFn) -> tuple[tuple[int, ...], list[int], int, str]:
    rank = draw(st.integers(2, 4))
    size = tuple(draw(st.lists(st.integers(2, 130), min_size=rank, max_size=rank)))
    order = draw(st.permutations(range(rank)))
    new_dim = draw(st.sampled_from([d for d in range(rank) if d != order[-1]]))
    dtype = draw(st.sampled_from(["float16", "float32"]))
    return size, list(order), new_dim, dtype


@settings(max_examples=150, deadline=None)
@given(layouts_and_moves())
def test_formula_equals_swapping_the_dim_order(case: tuple[tuple[int, ...], list[int], int, str]) -> None:
    """Moving the stick is the reference layout whose dim_order swaps the old and new stick dims."""
    size, order, new_dim, dtype = case
    old_dim = order[-1]
    moved = restickify_target(SpyreTensorLayout(size, dtype, dim_order=order), size, old_dim, new_dim)
    swapped = [new_dim if d == old_dim else old_dim if d == new_dim else d for d in order]
    assert moved == SpyreTensorLayout(size, dtype, dim_order=swapped)
    if np.prod(size) > 1 << 18:  # the layout above is checked at any size; the packing on small ones
        return
    host = np.arange(np.prod(size), dtype=dtype).reshape(size)
    assert (to_host(to_device(host, moved), moved, size) == host).all()
