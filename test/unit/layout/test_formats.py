"""
Tests for `ktir.layout.formats`: XLA tiled layouts and Qualcomm HTP chunked layouts.

Every worked example of the two seed documents (XLA "Tiled layout", Qualcomm HTP "Tensors and
Memory Layout") is checked by value. Independently of the converter, `_xla_oracle` and
`_htp_oracle` compute device linear indices straight from the documents' definitions (the XLA
pad-reshape-transpose formula, the HTP chunk reading), and every layout built here is checked
for the stride_map identity and a pack/unpack round trip.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ktir.layout.formats import (
    HTP_LAYOUTS,
    XLA_ELEMENT_TYPES,
    ForeignLayout,
    parse_htp_layout,
    parse_xla_layout,
)
from ktir.layout.tiled import LayoutError, TiledLayout

CROUTON = "ChunkedMemoryLayout<4, 0,0, 1,0, 2,0, 3,0, 1,8, 2,8, 3,32>"
CONV_WEIGHTS = "ChunkedMemoryLayout<4, 3,0, 2,0, 0,0, 1,0, 2,8, 3,32, 2,4>"

# ---------------------------------------------------------------------------------------------
# Checks applied to every layout
# ---------------------------------------------------------------------------------------------


def _check_stride_identity(f: ForeignLayout) -> None:
    """For every device element holding data: host offset == dot(device coords, stride_map)."""
    offsets = f.bound().host_offsets()
    coords = np.indices(f.layout.device_size, dtype=np.int64)
    expected = np.zeros(f.layout.device_size, dtype=np.int64)
    for j, step in enumerate(f.layout.stride_map):
        if step >= 0:
            expected += coords[j] * step
    valid = offsets >= 0
    np.testing.assert_array_equal(offsets[valid], expected[valid])
    # Every host element is stored exactly once.
    counts = np.bincount(offsets[valid], minlength=math.prod(f.host_size))
    np.testing.assert_array_equal(counts, np.ones(math.prod(f.host_size), dtype=np.int64))


def _check_round_trip(f: ForeignLayout) -> None:
    """unpack(pack(x)) == x, and padding is zero."""
    x = np.arange(1, math.prod(f.host_size) + 1, dtype=np.int64).reshape(f.host_size)
    device = f.bound().pack(x)
    assert device.shape == f.layout.device_size
    np.testing.assert_array_equal(f.bound().unpack(device), x)
    np.testing.assert_array_equal(device.reshape(-1) == 0, f.bound().host_offsets().reshape(-1) < 0)


def _all_linear(f: ForeignLayout) -> np.ndarray:
    """Device linear index of every host element, shaped like the host tensor (vectorized)."""
    offsets = f.bound().host_offsets().reshape(-1)
    where = np.flatnonzero(offsets >= 0)
    linear = np.full(math.prod(f.host_size), -1, dtype=np.int64)
    linear[offsets[where]] = where
    return linear.reshape(f.host_size)


def _host_coords(shape: Sequence[int]) -> np.ndarray:
    """Coordinates of every element of `shape` in row-major order, shape (rank, numel)."""
    return np.indices(shape).reshape(len(shape), math.prod(shape))


def _checked(f: ForeignLayout) -> ForeignLayout:
    _check_stride_identity(f)
    _check_round_trip(f)
    order = f.memory_order()
    assert order.shape == (f.layout.device_numel, len(f.host_size))
    # memory_order is the inverse of linear_index.
    linear = _all_linear(f)
    np.testing.assert_array_equal(order[linear.reshape(-1)], _host_coords(f.host_size).T)
    if f.host_size:  # padding rows are all -1, real rows have no -1
        padding = f.layout.device_numel - math.prod(f.host_size)
        assert (order < 0).all(axis=1).sum() == (order < 0).any(axis=1).sum() == padding
    return f


def xla(text: str) -> ForeignLayout:
    """Parse an XLA layout and run the checks every layout must pass."""
    return _checked(parse_xla_layout(text))


def htp(text: str, host_size: Sequence[int]) -> ForeignLayout:
    """Parse an HTP layout and run the checks every layout must pass."""
    return _checked(parse_htp_layout(text, host_size))


# ---------------------------------------------------------------------------------------------
# Independent oracles, straight from the documents' definitions
# ---------------------------------------------------------------------------------------------


def _xla_oracle(
    shape: Sequence[int], minor_to_major: Sequence[int], tiles: Sequence[Sequence[int]]
) -> tuple[np.ndarray, tuple[int, ...]]:
    """
    XLA linear index of every element (host-shaped) and the final tiled shape.

    Coordinates start in physical (major-to-minor) order; each tile first folds `*` (-1)
    dims into the next minor one (e * d' + e'), then maps the suffix it covers to
    (e // t ..., e % t ...) over (ceil(d / t) ..., t ...), as in the seed's formula.
    """
    physical = list(minor_to_major)[::-1]
    host = _host_coords(shape)
    cols, dims = [host[i] for i in physical], [shape[i] for i in physical]
    for tile in tiles:
        lead = len(dims) - len(tile)
        assert lead >= 0
        targets, pending = [], None
        for col, dim, t in zip(cols[lead:], dims[lead:], tile, strict=True):
            if pending is not None:
                col, dim = pending[0] * dim + col, pending[1] * dim
            pending = (col, dim) if t == -1 else None
            if t != -1:
                targets.append((col, dim, t))
        cols = cols[:lead] + [c // t for c, _, t in targets] + [c % t for c, _, t in targets]
        dims = dims[:lead] + [-(-d // t) for _, d, t in targets] + [t for _, _, t in targets]
    linear = np.ravel_multi_index(cols, dims) if cols else np.zeros(1, dtype=np.int64)
    return linear.reshape(shape), tuple(dims)


def _xla_text(shape, minor_to_major, tiles, dtype="F32") -> str:
    def entry(t: int) -> str:
        return "*" if t == -1 else str(t)

    tiling = "".join("(" + ",".join(entry(t) for t in tile) + ")" for tile in tiles)
    order = ",".join(map(str, minor_to_major))
    dims = ",".join(map(str, shape))
    return f"{dtype}[{dims}]{{{order}{':T' + tiling if tiles else ''}}}"


def _htp_oracle(pairs: Sequence[tuple[int, int]], host_size: Sequence[int]) -> np.ndarray:
    """HTP linear index of every host element: chunk levels read right to left, then 'rest'."""
    host = _host_coords(host_size)
    unit, coord, size = [1] * len(host_size), [None] * len(pairs), [0] * len(pairs)
    for k in range(len(pairs) - 1, -1, -1):
        dim, chunk = pairs[k]
        if chunk:
            coord[k], size[k] = host[dim] // unit[dim] % chunk, chunk
            unit[dim] *= chunk
    for k, (dim, chunk) in enumerate(pairs):
        if not chunk:
            coord[k], size[k] = host[dim] // unit[dim], -(-host_size[dim] // unit[dim])
    return np.ravel_multi_index(coord, size).reshape(host_size)


def _pairs(text: str) -> list[tuple[int, int]]:
    params = [int(p) for p in text[text.index("<") + 1 : -1].split(",")]
    return list(zip(params[1::2], params[2::2], strict=True))


# ---------------------------------------------------------------------------------------------
# XLA: the seed's worked examples
# ---------------------------------------------------------------------------------------------


def test_xla_figure1_element_2_3_is_17():
    f = xla("F32[3,5]{1,0:T(2,2)}")
    assert f.dtype == "F32"
    assert f.host_size == (3, 5)
    assert f.layout == TiledLayout((2, 3, 2, 2), (10, 2, 5, 1))
    assert f.bound().device_coords((2, 3)) == (1, 1, 0, 1)
    assert f.linear_index((2, 3)) == 17
    # Whole figure: ((i // 2) * 3 + j // 2) * 4 + (i % 2) * 2 + j % 2, padding at 9, 11, 14..
    expected = [[0, 1, 4, 5, 8], [2, 3, 6, 7, 10], [12, 13, 16, 17, 20]]
    np.testing.assert_array_equal(_all_linear(f), expected)
    assert f.layout.device_numel == 24


def test_xla_figure2_repeated_tiling_4x8():
    f = xla("F32[4,8]{1,0:T(2,4)(2,1)}")
    # (2,4) gives tile index (r//2, c//4) over (2, 2) and within-tile (r%2, c%4) over (2, 4).
    # (2,1) then tiles the within-tile (2, 4) into (1, 4) tiles of (2, 1): the 2x1 column pair
    # (r%2) becomes the most minor dim. Linear index: (r//2)*16 + (c//4)*8 + (c%4)*2 + r%2.
    expected = [
        [0, 2, 4, 6, 8, 10, 12, 14],
        [1, 3, 5, 7, 9, 11, 13, 15],
        [16, 18, 20, 22, 24, 26, 28, 30],
        [17, 19, 21, 23, 25, 27, 29, 31],
    ]
    np.testing.assert_array_equal(_all_linear(f), expected)
    assert f.layout.device_size == (2, 2, 1, 4, 2, 1)


def test_xla_tile_of_cross_tile_dims_element_6_5_is_51():
    f = xla("F32[8,8]{1,0:T(2,4)(2,1,1,1)}")
    assert f.layout.device_size == (2, 2, 2, 4, 2, 1, 1, 1)
    assert f.bound().device_coords((6, 5)) == (1, 1, 0, 1, 1, 0, 0, 0)
    assert f.linear_index((6, 5)) == 51


def test_xla_combined_dims_match_the_flattened_shape():
    combined = xla("F32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}")
    flat = xla("F32[112,110]{1,0:T(2,3)}")
    assert combined.layout.device_size == flat.layout.device_size == (56, 37, 2, 3)
    np.testing.assert_array_equal(_all_linear(combined).reshape(-1), _all_linear(flat).reshape(-1))
    # Element (1, 3, 5, 7, 9) is row 1*56 + 3*8 + 5 = 85, column 7*10 + 9 = 79 of [112, 110].
    assert combined.linear_index((1, 3, 5, 7, 9)) == flat.linear_index((85, 79))
    assert flat.linear_index((85, 79)) == (42 * 37 + 26) * 6 + 1 * 3 + 1


def test_xla_bf16_pairs_of_tiles():
    f = xla("BF16[32,256]{1,0:T(8,128)(2,1,1,1)}")
    assert f.dtype == "BF16"
    assert tuple(n for n in f.layout.device_size if n > 1) == (2, 2, 8, 128, 2)
    # Element (r, c): tiles (r//8, c//128) over (4, 2), (r//8) split by 2 into the minor dim.
    r, c = np.indices((32, 256))
    expected = ((r // 16) * 2 + c // 128) * 2048 + (r % 8) * 256 + (c % 128) * 2 + (r // 8) % 2
    np.testing.assert_array_equal(_all_linear(f), expected)


def test_xla_bf16_tpu_packing():
    f = xla("BF16[32,256]{1,0:T(8,128)(2,1)}")
    assert f.layout.device_size == (4, 2, 4, 128, 2, 1)
    r, c = np.indices((32, 256))
    expected = ((r // 8) * 2 + c // 128) * 1024 + (r % 8 // 2) * 256 + (c % 128) * 2 + r % 2
    np.testing.assert_array_equal(_all_linear(f), expected)


def test_xla_untiled_orders():
    row_major = xla("F32[3,5]{1,0}")
    assert row_major.layout == TiledLayout((3, 5), (5, 1))
    np.testing.assert_array_equal(_all_linear(row_major), np.arange(15).reshape(3, 5))
    column_major = xla("F32[3,5]{0,1}")
    assert column_major.layout == TiledLayout((5, 3), (1, 5))
    np.testing.assert_array_equal(_all_linear(column_major), np.arange(15).reshape(5, 3).T)
    assert column_major.linear_index((2, 1)) == 5
    assert xla("F32[3,5]").layout == row_major.layout


def test_xla_tiled_column_major():
    f = xla("F32[3,5]{0,1:T(2,2)}")
    i, j = np.indices((3, 5))
    expected = ((j // 2) * 2 + i // 2) * 4 + (j % 2) * 2 + i % 2
    np.testing.assert_array_equal(_all_linear(f), expected)


@pytest.mark.parametrize("dtype", sorted(XLA_ELEMENT_TYPES))
def test_xla_element_types_are_recorded(dtype):
    f = xla(f"{dtype}[4,6]{{1,0:T(2,4)}}")
    assert f.dtype == dtype
    assert f.layout == TiledLayout((2, 2, 2, 4), (12, 4, 6, 1))
    assert parse_xla_layout(f"{dtype.lower()}[4,6]{{1,0:T(2,4)}}") == f


def test_xla_scalar():
    f = xla("F32[]{}")
    assert f.layout == TiledLayout((1,), (-1,))
    assert f.linear_index(()) == 0


ORACLE_CASES = [
    ((3, 5), (1, 0), [(2, 2)]),
    ((4, 8), (1, 0), [(2, 4), (2, 1)]),
    ((8, 8), (1, 0), [(2, 4), (2, 1, 1, 1)]),
    ((8, 8), (1, 0), [(2, 4), (3, 1, 1, 1)]),  # pads the (top) tile-index dim: fine
    ((32, 256), (1, 0), [(8, 128), (2, 1, 1, 1)]),
    ((3, 5), (1, 0), [(8, 128), (2, 1)]),  # small array, big tile: mostly padding
    ((3, 5), (1, 0), [(8, 128), (2, 1, 1, 1)]),  # (2,1,1,1) splits a size-1 dim: all padding
    ((2, 7, 8, 11, 10), (4, 3, 2, 1, 0), [(-1, -1, 2, -1, 3)]),
    ((2, 3, 4), (0, 2, 1), [(2, 3)]),
    ((4, 6), (1, 0), [(-1, 4)]),
    ((6, 10), (1, 0), [(4, 4), (3, 2, 2, 1)]),
    ((1, 5, 3), (2, 1, 0), [(-1, 2, 2)]),  # '*' joins a size-1 dim
    ((3, 1, 4), (2, 1, 0), [(-1, -1, 8)]),
    ((8, 8), (1, 0), [(1, 1), (1, 1, 2, 1)]),  # a size-1 within-tile dim padded to 2
    ((4, 6, 8), (2, 1, 0), [(2, 4), (-1, 3, 1, 1, 1)]),  # '*' joins two whole host dims
    ((12,), (0,), [(4,), (-1, 2)]),  # '*' re-joins a tiled dim
    ((10,), (0,), [(4,), (-1, 3)]),  # ... and re-tiles it with padding at the top
]


@pytest.mark.parametrize(("shape", "minor_to_major", "tiles"), ORACLE_CASES)
def test_xla_matches_the_linear_index_formula(shape, minor_to_major, tiles):
    f = xla(_xla_text(shape, minor_to_major, tiles))
    expected, dims = _xla_oracle(shape, minor_to_major, tiles)
    assert f.layout.device_size == dims
    np.testing.assert_array_equal(_all_linear(f), expected)


@st.composite
def _xla_layouts(draw):
    rank = draw(st.integers(1, 3))
    shape = draw(st.lists(st.integers(1, 9), min_size=rank, max_size=rank))
    minor_to_major = draw(st.permutations(range(rank)))
    tiles, width = [], rank
    for _ in range(draw(st.integers(0, 3))):
        k = draw(st.integers(1, width))
        tile = draw(st.lists(st.sampled_from([-1, 1, 2, 3, 4, 8]), min_size=k, max_size=k))
        if tile[-1] == -1:
            tile[-1] = 2
        tiles.append(tile)
        width += sum(1 for t in tile if t != -1) - sum(1 for t in tile if t == -1)
    return tuple(shape), tuple(minor_to_major), tiles


@settings(max_examples=300, deadline=None)
@given(_xla_layouts())
def test_xla_random_layouts_are_exact_or_rejected(case):
    shape, minor_to_major, tiles = case
    text = _xla_text(shape, minor_to_major, tiles)
    message = None
    try:
        f = xla(text)
    except LayoutError as error:
        message = str(error)
    if message is not None:
        # Rejected for one of the converter's own reasons, never an internal inconsistency
        # caught later by TiledLayout or bind (except the known bind limitation, see
        # test_xla_tile_across_combined_rows).
        assert message.startswith(repr(text))
        assert re.search(r"not contiguous|inside an earlier tile|not a multiple of", message)
        return
    expected, dims = _xla_oracle(shape, minor_to_major, tiles)
    assert f.layout.device_size == dims
    np.testing.assert_array_equal(_all_linear(f), expected)


def test_xla_every_single_2d_tile_is_expressible():
    cases = [
        ((a, b), m2m, [(s, t)])
        for a, b, s, t in itertools.product(range(1, 7), range(1, 7), (1, 2, 3), (1, 2, 4))
        for m2m in ((1, 0), (0, 1))
    ]
    for shape, m2m, tiles in cases:
        f = xla(_xla_text(shape, m2m, tiles))
        np.testing.assert_array_equal(_all_linear(f), _xla_oracle(shape, m2m, tiles)[0])


@pytest.mark.xfail(
    strict=True,
    raises=LayoutError,
    reason="ktir.layout bind: a device dim stepping 8 over contiguous host dims (4, 6) must "
    "walk the merged group, but bind assigns it to host dim 0 (stride 6) and rejects 8 % 6",
)
def test_xla_tile_across_combined_rows():
    f = xla("F32[4,6]{1,0:T(*,4)(2,2)}")
    expected, dims = _xla_oracle((4, 6), (1, 0), [(-1, 4), (2, 2)])
    assert f.layout.device_size == dims
    np.testing.assert_array_equal(_all_linear(f), expected)


# ---------------------------------------------------------------------------------------------
# XLA: what cannot be expressed, and malformed text
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("F32[2,3,4]{2,0,1:T(*,2,2)}", r"'\*' in tile \(\*,2,2\).*not contiguous in host memory"),
        ("F32[8,8]{1,0:T(2,4)(1,3)}", r"tile \(1,3\) pads a dim of size 4 to 6 inside an earlier"),
        ("F32[6,10]{1,0:T(4,4)(*,3)}", r"'\*' in tile \(\*,3\).*not contiguous"),
        # Same host dim, but the two dims step 4 and 1 elements: no single stride.
        ("F32[8]{0:T(2)(2,1)(*,2,1,1)}", r"'\*' in tile \(\*,2,1,1\).*not contiguous"),
        # Contiguous host dims, but the columns are padded from 5 to 6 by the first tile.
        ("F32[2,5]{1,0:T(1,2)(*,2,1,1)}", r"'\*' in tile \(\*,2,1,1\).*padding between them"),
        ("F32[3,5]{1,0:T(2,2,2)}", r"tile \(2,2,2\) has 3 dims but the shape it tiles has only 2"),
        ("F32[3,5]{1,0:T(2,2)(1,1,1,1,1)}", r"has 5 dims but the shape it tiles has only 4"),
        ("F32[3,5]{1,0:T(2,*)}", r"tile \(2,\*\) ends in '\*'"),
        ("F32[3,5]{1,0:T(0,2)}", r"tile \(0,2\) needs positive sizes"),
        ("F32[3,5]{1,0:T(-2,2)}", r"tile \(-2,2\) needs positive sizes"),
        ("F32[3,5]{1,0:T()}", r"tile \(\) needs positive sizes"),
        ("F32[3,5]{1,0:T(2,x)}", r"tile \(2,x\) entry 'x' is not an integer"),
        ("F32[3,5]{1,0:T(2,2}", r"'T\(2,2' is not a tiling"),
        ("F32[5,6,7]{2,1,0:T(4,3)(*,2)}", r"'\*' in tile \(\*,2\) combines a dim of size 4"),
        ("F32[3,5", r"is not an XLA shape"),
        ("F32[3,5]{1,0:S(1)}", r"'S\(1\)' is not a tiling"),
        ("X32[3,5]{1,0}", r"unknown element type 'X32'"),
        ("F32[3,a]{1,0}", r"dimension entry 'a' is not an integer"),
        ("F32[0,5]{1,0}", r"dimension sizes must be positive"),
        ("F32[3,5]{1,1}", r"minor_to_major \{1,1\} must be a permutation of 0..1"),
        ("F32[3,5]{2,1,0}", r"must be a permutation"),
    ],
)
def test_xla_errors(text, reason):
    with pytest.raises(LayoutError, match=reason):
        parse_xla_layout(text)


def test_layout_error_is_a_value_error():
    with pytest.raises(ValueError, match="not contiguous"):
        parse_xla_layout("F32[2,3,4]{2,0,1:T(*,2,2)}")


def test_bind_errors_name_the_notation():
    with pytest.raises(LayoutError, match=r"'my layout' does not bind to host size \[4, 6\]: .*"):
        ForeignLayout((4, 6), None, TiledLayout((4, 4), (6, 1)), "my layout")
    with pytest.raises(TypeError, match="layout must be a TiledLayout"):
        ForeignLayout((4, 6), None, ((4, 6), (6, 1)), "my layout")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# HTP
# ---------------------------------------------------------------------------------------------


def test_htp_flat_is_row_major():
    f = htp("FlatMemoryLayout<4>", (2, 3, 5, 30))
    assert f.layout == TiledLayout((2, 3, 5, 30), (450, 150, 30, 1))
    assert f.dtype is None
    rows = f.memory_order()
    np.testing.assert_array_equal(rows, _host_coords((2, 3, 5, 30)).T)
    # The seed's listing: (0,0,0,29) then (0,0,1,0); (0,0,4,29) then (0,1,0,0); ... (1,2,4,29).
    assert rows[29:31].tolist() == [[0, 0, 0, 29], [0, 0, 1, 0]]
    assert rows[149:151].tolist() == [[0, 0, 4, 29], [0, 1, 0, 0]]
    assert rows[-1].tolist() == [1, 2, 4, 29]
    assert htp("R4FlatMemoryLayout", (2, 3, 5, 30)).layout == f.layout
    assert htp("ChunkedMemoryLayout<4, 0,0, 1,0, 2,0, 3,0>", (2, 3, 5, 30)).layout == f.layout


def test_htp_nchw():
    # The seed's text: NHWC indices laid out as NCHW is <4, 0,0, 3,0, 1,0, 2,0>.
    f = htp("ChunkedMemoryLayout<4, 0,0, 3,0, 1,0, 2,0>", (2, 3, 5, 30))
    assert f.layout == TiledLayout((2, 30, 3, 5), (450, 1, 150, 30))
    expected = _host_coords((2, 30, 3, 5))[[0, 2, 3, 1]].T  # (n, c, h, w) -> (n, h, w, c)
    np.testing.assert_array_equal(f.memory_order(), expected)
    assert f.linear_index((1, 2, 4, 29)) == 1 * 450 + 29 * 15 + 2 * 5 + 4
    # The seed's table (and HTP's memory_layout.h) spell R4NCHWMemoryLayout
    # <4, 0,0, 3,0, 2,0, 1,0>: read by the same rules that is batch, depth, width, height.
    g = htp("R4NCHWMemoryLayout", (2, 3, 5, 30))
    assert g.layout == TiledLayout((2, 30, 5, 3), (450, 1, 30, 150))
    assert g.linear_index((1, 2, 4, 29)) == 1 * 450 + 29 * 15 + 4 * 3 + 2


def test_htp_crouton_1x3x5x30():
    f = htp(CROUTON, (1, 3, 5, 30))
    assert f.layout.device_numel == 1 * 8 * 8 * 32  # padded to 1x8x8x32
    assert f.layout.stride_map[-3:] == (150, 30, 1)
    rows = f.memory_order()
    pad = [-1, -1, -1, -1]
    # (0,0,0,0) ... (0,0,0,29), then two pad elements, then (0,0,1,0).
    assert rows[:30].tolist() == [[0, 0, 0, k] for k in range(30)]
    assert rows[30:32].tolist() == [pad, pad]
    assert rows[32].tolist() == [0, 0, 1, 0]
    # (0,0,4,0) ... (0,0,4,29), then pad (0,0,4,30) ... (0,0,7,31), then (0,1,0,0).
    assert rows[4 * 32 : 4 * 32 + 30].tolist() == [[0, 0, 4, k] for k in range(30)]
    assert (rows[4 * 32 + 30 : 256] == -1).all()
    assert rows[256].tolist() == [0, 1, 0, 0]
    # ... (0,2,4,29) is the last valid element, then pad to the end of the 1x8x8x32 chunk.
    assert f.linear_index((0, 2, 4, 29)) == 2 * 256 + 4 * 32 + 29 == 669
    assert (rows[670:] == -1).all()


def test_htp_crouton_2x9x20x50_chunk_order():
    f = htp(CROUTON, (2, 9, 20, 50))
    padded = htp(CROUTON, (2, 16, 24, 64))
    # Padded to 2x16x24x64: the same device tensor, with out-of-range coordinates as padding.
    assert f.layout.device_size == padded.layout.device_size
    assert f.layout.device_numel == 2 * 16 * 24 * 64
    expected = padded.memory_order()
    expected[(expected >= np.array([2, 9, 20, 50])).any(axis=1)] = -1
    np.testing.assert_array_equal(f.memory_order(), expected)

    def follows(first, second):
        assert padded.linear_index(second) == padded.linear_index(first) + 1
        if max(second[1] - 8, second[2] - 19, second[3] - 49) <= 0:
            assert f.linear_index(second) == padded.linear_index(second)

    assert padded.linear_index((0, 0, 0, 0)) == 0
    follows((0, 0, 0, 31), (0, 0, 1, 0))
    follows((0, 0, 7, 31), (0, 1, 0, 0))
    follows((0, 7, 7, 31), (0, 0, 0, 32))  # end of chunk, start of the next along dim 3
    follows((0, 7, 7, 63), (0, 0, 8, 0))  # all 64 of dim 3 done
    follows((0, 7, 15, 31), (0, 0, 8, 32))
    follows((0, 7, 15, 63), (0, 0, 16, 0))
    follows((0, 7, 23, 63), (0, 8, 0, 0))  # all 24 of dim 2 done
    follows((0, 15, 23, 63), (1, 0, 0, 0))  # all 16 of dim 1 done
    assert padded.linear_index((1, 15, 23, 63)) == padded.layout.device_numel - 1
    assert f.linear_index((0, 7, 7, 31)) == 8 * 8 * 32 - 1
    assert f.linear_index((0, 8, 0, 0)) == 6 * 8 * 8 * 32


def test_htp_conv_weights_3x3x32x32():
    f = htp(CONV_WEIGHTS, (3, 3, 32, 32))
    assert f.layout.device_numel == 3 * 3 * 32 * 32  # no padding
    rows = f.memory_order()
    listed = [(0, 0, 0, 0), (0, 0, 1, 0), (0, 0, 2, 0), (0, 0, 3, 0)]
    listed += [(0, 0, 0, 1), (0, 0, 1, 1), (0, 0, 2, 1), (0, 0, 3, 1), (0, 0, 0, 2)]
    assert [tuple(r) for r in rows[:9].tolist()] == listed
    assert rows[127].tolist() == [0, 0, 3, 31]
    second = [(0, 0, 4, 0), (0, 0, 5, 0), (0, 0, 6, 0), (0, 0, 7, 0), (0, 0, 4, 1)]
    second += [(0, 0, 5, 1), (0, 0, 6, 1), (0, 0, 7, 1), (0, 0, 4, 2)]
    assert [tuple(r) for r in rows[128:137].tolist()] == second
    assert rows[255].tolist() == [0, 0, 7, 31]
    assert rows[1023:1025].tolist() == [[0, 0, 31, 31], [0, 1, 0, 0]]
    assert rows[2047:2049].tolist() == [[0, 1, 31, 31], [0, 2, 0, 0]]
    assert rows[3071:3073].tolist() == [[0, 2, 31, 31], [1, 0, 0, 0]]
    assert rows[-1].tolist() == [2, 2, 31, 31]


def _blocks(f: ForeignLayout, n: int) -> np.ndarray:
    return f.memory_order().reshape(n, -1, 4)


def test_htp_conv_weights_3x3x32x50_pads_to_64():
    f = htp(CONV_WEIGHTS, (3, 3, 32, 50))
    padded = htp(CONV_WEIGHTS, (3, 3, 32, 64))
    assert f.layout.device_size == padded.layout.device_size
    blocks = _blocks(padded, 2)
    # (0,0,0,0) ... (2,2,31,31), then (0,0,0,32) ... (2,2,31,63).
    assert blocks[0, 0].tolist() == [0, 0, 0, 0]
    assert blocks[0, -1].tolist() == [2, 2, 31, 31]
    assert blocks[1, 0].tolist() == [0, 0, 0, 32]
    assert blocks[1, -1].tolist() == [2, 2, 31, 63]
    expected = padded.memory_order()
    expected[expected[:, 3] >= 50] = -1
    np.testing.assert_array_equal(f.memory_order(), expected)
    first = _blocks(f, 2)[0]
    assert (first >= 0).all()
    assert (first[:, 3] < 32).all()


def test_htp_conv_weights_3x3x64x96_block_order():
    f = htp(CONV_WEIGHTS, (3, 3, 64, 96))
    blocks = _blocks(f, 6)
    listed = [
        ((0, 0, 0, 0), (2, 2, 31, 31)),
        ((0, 0, 32, 0), (2, 2, 63, 31)),
        ((0, 0, 0, 32), (2, 2, 31, 63)),
        ((0, 0, 32, 32), (2, 2, 63, 63)),
        ((0, 0, 0, 64), (2, 2, 31, 95)),
        ((0, 0, 32, 64), (2, 2, 63, 95)),
    ]
    for block, (first, last) in zip(blocks, listed, strict=True):
        assert tuple(block[0]) == first
        assert tuple(block[-1]) == last
        # Each block holds exactly the 3x3x32x32 box between its first and last element.
        assert (block.min(axis=0) == first).all()
        assert (block.max(axis=0) == last).all()
        assert len({tuple(r) for r in block.tolist()}) == 3 * 3 * 32 * 32
        # Inside a block the 3x3x32x32 conv order of the seed holds.
        assert (block[1:4] - block[0]).tolist() == [[0, 0, 1, 0], [0, 0, 2, 0], [0, 0, 3, 0]]


@pytest.mark.parametrize("name", sorted(HTP_LAYOUTS))
@pytest.mark.parametrize("host_size", [(2, 9, 20, 50), (1, 3, 5, 30), (1, 16, 16, 64)])
def test_htp_named_layouts_match_the_chunk_definition(name, host_size):
    f = htp(name, host_size)
    text = HTP_LAYOUTS[name]
    pairs = _pairs(text) if text.startswith("Chunked") else [(d, 0) for d in range(4)]
    np.testing.assert_array_equal(_all_linear(f), _htp_oracle(pairs, host_size))


def test_htp_crouton_variants():
    f = htp("R4Crouton2x2Layout", (1, 8, 8, 32))
    # 1,4, 2,4, 3,32, 1,2, 2,2: rows and columns in 2x2 pairs (most minor), then 32 channels,
    # then 4x4 of those pairs. Element (0, h, w, c): ((h//2)*4 + w//2)*128 + c*4 + (h%2)*2 + w%2.
    _, h, w, c = np.indices((1, 8, 8, 32))
    np.testing.assert_array_equal(_all_linear(f), ((h // 2) * 4 + w // 2) * 128 + c * 4 + (h % 2) * 2 + w % 2)
    g = htp("R4Depth32MemoryLayout", (1, 2, 8, 64))
    # 0,0, 1,0, 3,0, 2,0, 2,4, 3,32: per row, per 32-deep slab, per 4 columns: 4 x 32 (d32).
    _, h, w, c = np.indices((1, 2, 8, 64))
    expected = ((h * 2 + c // 32) * 2 + w // 4) * 128 + (w % 4) * 32 + c % 32
    np.testing.assert_array_equal(_all_linear(g), expected)


@st.composite
def _htp_layouts(draw):
    rank = draw(st.integers(1, 3))
    host = draw(st.lists(st.integers(1, 9), min_size=rank, max_size=rank))
    chunks = draw(st.lists(st.tuples(st.integers(0, rank - 1), st.integers(1, 5)), max_size=4))
    pairs = draw(st.permutations([(d, 0) for d in range(rank)])) + chunks
    return tuple(host), pairs


@settings(max_examples=200, deadline=None)
@given(_htp_layouts())
def test_htp_random_layouts_match_the_chunk_definition(case):
    host_size, pairs = case
    text = f"ChunkedMemoryLayout<{len(host_size)}, {', '.join(f'{d},{s}' for d, s in pairs)}>"
    f = htp(text, host_size)
    assert f.layout.device_numel == math.prod(
        s if s else -(-host_size[d] // math.prod(c for e, c in pairs if e == d and c)) for d, s in pairs
    )
    np.testing.assert_array_equal(_all_linear(f), _htp_oracle(pairs, host_size))


@pytest.mark.parametrize(
    ("text", "host_size", "reason"),
    [
        (
            "ChunkedMemoryLayout<4, 0,0, 1,0, 2,0, 3,0, 4,8>",
            (1, 2, 3, 4),
            r"pair '4,8' names dim 4",
        ),
        ("ChunkedMemoryLayout<4, 0,0, 1,0, 2,0, 3,32>", (1, 2, 3, 4), r"dim 3 needs exactly one"),
        ("ChunkedMemoryLayout<2, 0,0, 1,0, 1,0>", (2, 3), r"dim 1 needs exactly one .* found 2"),
        ("ChunkedMemoryLayout<2, 0,0, 1,0, 1>", (2, 3), r"must be \(dim, size\) pairs"),
        (
            "ChunkedMemoryLayout<2, 0,0, 1,4, 1,0>",
            (2, 8),
            r"'1,0' comes after the chunk pair '1,4'",
        ),
        ("ChunkedMemoryLayout<2, 0,0, 1,-4, 1,0>", (2, 3), r"pair '1,-4' has a negative size"),
        ("ChunkedMemoryLayout<2, 0,0, 1,x>", (2, 3), r"parameter entry 'x' is not an integer"),
        ("ChunkedMemoryLayout<>", (2, 3), r"the first parameter must be the rank"),
        ("ChunkedMemoryLayout<4, 0,0, 1,0, 2,0, 3,0>", (2, 3), r"has rank 4 but the host size"),
        ("FlatMemoryLayout<2, 1>", (2, 3), r"FlatMemoryLayout takes only the rank"),
        ("FooMemoryLayout<2>", (2, 3), r"is not 'ChunkedMemoryLayout"),
        ("ChunkedMemoryLayout<2, 0,0, 1,0", (2, 3), r"is not 'ChunkedMemoryLayout"),
        ("R4NoSuchLayout", (2, 3, 4, 5), r"or a name in HTP_LAYOUTS"),
        ("FlatMemoryLayout<2>", (0, 3), r"host sizes must be positive"),
    ],
)
def test_htp_errors(text, host_size, reason):
    with pytest.raises(LayoutError, match=reason):
        parse_htp_layout(text, host_size)


# ---------------------------------------------------------------------------------------------
# Every seed layout: stride identity and round trip (also run by `xla` / `htp` above)
# ---------------------------------------------------------------------------------------------

SEED_LAYOUTS = [
    ("F32[3,5]{1,0:T(2,2)}", None),
    ("F32[4,8]{1,0:T(2,4)(2,1)}", None),
    ("F32[8,8]{1,0:T(2,4)(2,1,1,1)}", None),
    ("F32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}", None),
    ("BF16[32,256]{1,0:T(8,128)(2,1)}", None),
    ("BF16[32,256]{1,0:T(8,128)(2,1,1,1)}", None),
    ("S8[16,256]{1,0:T(8,128)(4,1)}", None),
    ("PRED[40,130]{1,0:T(32,128)(32,1)}", None),
    ("FlatMemoryLayout<4>", (2, 3, 5, 30)),
    ("R4NCHWMemoryLayout", (2, 3, 5, 30)),
    (CROUTON, (1, 3, 5, 30)),
    (CROUTON, (2, 9, 20, 50)),
    (CONV_WEIGHTS, (3, 3, 32, 32)),
    (CONV_WEIGHTS, (3, 3, 32, 50)),
    (CONV_WEIGHTS, (3, 3, 64, 96)),
]


def _seed_layout(text: str, host_size: tuple[int, ...] | None) -> ForeignLayout:
    return parse_xla_layout(text) if host_size is None else parse_htp_layout(text, host_size)


@pytest.mark.parametrize(("text", "host_size"), SEED_LAYOUTS)
def test_seed_layouts_stride_identity(text, host_size):
    _check_stride_identity(_seed_layout(text, host_size))


@pytest.mark.parametrize(("text", "host_size"), SEED_LAYOUTS)
def test_seed_layouts_round_trip(text, host_size):
    f = _seed_layout(text, host_size)
    x = np.random.default_rng(0).standard_normal(f.host_size)
    np.testing.assert_array_equal(f.bound().unpack(f.bound().pack(x)), x)


def test_stride_identity_check_can_fail():
    f = parse_xla_layout("F32[3,5]{1,0:T(2,2)}")
    wrong = ForeignLayout.__new__(ForeignLayout)
    object.__setattr__(wrong, "host_size", f.host_size)
    object.__setattr__(wrong, "layout", TiledLayout((2, 3, 2, 2), (10, 2, 5, 3)))
    object.__setattr__(wrong, "_bound", f.bound())
    with pytest.raises(AssertionError):
        _check_stride_identity(wrong)
