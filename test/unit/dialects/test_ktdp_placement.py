"""The placement algebra of the inter-tile deliveries (`ktir.dialects.ktdp.placement`)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ktir.dialects.ktdp.placement import (
    PlacementError,
    check_axes,
    concat_pieces,
    concat_shape,
    split_part,
    split_shape,
)


def test_the_worked_example():
    assert split_shape([2, 16, 32], [0, 2], 2) == (1, 16, 32)
    assert split_shape([2, 16, 32], [0, 2], 4) == (1, 16, 16)
    assert concat_shape([2, 16, 32], [0, 2], 4) == (8, 16, 32)
    x = np.arange(2 * 16 * 32).reshape(2, 16, 32)
    assert np.array_equal(split_part(x, [0, 2], 2, 1), x[1:2])
    assert np.array_equal(split_part(x, [0, 2], 4, 1), x[0:1, :, 16:32])
    pieces = [x + 1000 * k for k in range(4)]
    assert np.array_equal(concat_pieces(pieces, [0, 2])[2:4], pieces[1])  # piece 1: rows 2 and 3 of axis 0


@pytest.mark.parametrize(
    ("axes", "message"),
    [
        ([], "must list at least one axis"),
        ([1, 0], "must be strictly ascending, not \\[1, 0\\]"),
        ([0, 0], "must be strictly ascending"),
        ([2], "names an axis outside a rank-2 partial"),
    ],
)
def test_an_axis_list_must_be_ascending_and_in_range(axes, message):
    with pytest.raises(PlacementError, match=message):
        check_axes(axes, 2, "split_dimensions")


def test_a_part_must_divide_and_be_a_box():
    with pytest.raises(PlacementError, match="does not split into 5 parts"):
        split_shape([4, 6], [0, 1], 5)
    with pytest.raises(PlacementError, match="is not a box"):
        split_shape([4, 6], [0, 1], 3)  # 8 elements: a row and a third
    assert split_shape([4, 6], [0, 1], 8) == (1, 3)


shapes = st.lists(st.integers(1, 4), min_size=1, max_size=4)


@given(shape=shapes, data=st.data())
def test_the_parts_of_a_split_are_the_flat_ranges_of_the_listed_axes(shape, data):
    axes = sorted(data.draw(st.sets(st.integers(0, len(shape) - 1), min_size=1)))
    total = math.prod(shape[a] for a in axes)
    parts = data.draw(st.sampled_from([d for d in range(1, total + 1) if total % d == 0]))
    x = np.arange(math.prod(shape)).reshape(shape)
    try:
        part_shape = split_shape(shape, axes, parts)
    except PlacementError:
        return  # a part that is not a box has no tensor type
    rest = [a for a in range(len(shape)) if a not in axes]
    flat = np.transpose(x, [*rest, *axes]).reshape(*(shape[a] for a in rest), total)
    chunk = total // parts
    for index in range(parts):
        part = split_part(x, axes, parts, index)
        assert part.shape == part_shape
        moved = np.transpose(part, [*rest, *axes]).reshape(*(shape[a] for a in rest), chunk)
        assert np.array_equal(moved, flat[..., index * chunk : (index + 1) * chunk])


@given(shape=shapes, data=st.data())
def test_concat_undoes_a_split_along_one_axis(shape, data):
    axis = data.draw(st.integers(0, len(shape) - 1))
    parts = data.draw(st.sampled_from([d for d in range(1, shape[axis] + 1) if shape[axis] % d == 0]))
    x = np.arange(math.prod(shape)).reshape(shape)
    pieces = [split_part(x, [axis], parts, index) for index in range(parts)]
    assert np.array_equal(concat_pieces(pieces, [axis]), x)
