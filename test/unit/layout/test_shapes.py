"""The shape rules of ktir.layout.shapes: worked examples with exact messages, and NumPy as the oracle."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ktir.layout.shapes import (
    ShapeError,
    broadcast_shapes,
    cat_shape,
    check_dims,
    check_expand,
    check_reshape,
    clamp_slice_bounds,
    matmul_shape,
    normalize_dim,
    pad_shape,
    permute_shape,
    reduce_shape,
    slice_length,
)

# Small shapes keep the NumPy oracles cheap; sizes 0..3 hit the empty, size-1 and mismatch cases.
sizes = st.integers(min_value=0, max_value=3)
shapes = st.lists(sizes, min_size=0, max_size=4).map(tuple)
nonempty_shapes = st.lists(sizes, min_size=1, max_size=4).map(tuple)
PROPERTY = settings(max_examples=100, deadline=None)


def _numpy_shape(function):
    """The shape `function()` returns, or None when NumPy rejects the shapes."""
    try:
        return tuple(function())
    except ValueError:  # np.exceptions.AxisError is a ValueError too
        return None


def _ours(function, *args):
    """`function(*args)`, or None when it raises ShapeError."""
    try:
        return function(*args)
    except ShapeError:
        return None


def _accepts(function, *args):
    """True when `function(*args)` returns, False when it raises ShapeError."""
    try:
        function(*args)
    except ShapeError:
        return False
    return True


#### broadcast_shapes ####


def test_broadcast_examples():
    assert broadcast_shapes((4, 1, 64), (8, 1)) == (4, 8, 64)
    assert broadcast_shapes((8, 1), (4, 1, 64)) == (4, 8, 64)
    assert broadcast_shapes((), (3, 2)) == (3, 2)
    assert broadcast_shapes((1,), ()) == (1,)
    assert broadcast_shapes((0,), (1,)) == (0,)
    assert broadcast_shapes((3, 1), (1, 5), (2, 1, 1)) == (2, 3, 5)
    assert broadcast_shapes() == ()


def test_broadcast_error_names_the_dim():
    with pytest.raises(ShapeError, match=r"^shapes \[4, 64\], \[3, 64\] do not broadcast: dim 0 is 4 vs 3$"):
        broadcast_shapes((4, 64), (3, 64))
    # The dim is counted in the result's rank, after right alignment.
    with pytest.raises(ShapeError, match=r"^shapes \[2, 3\], \[2\] do not broadcast: dim 1 is 3 vs 2$"):
        broadcast_shapes((2, 3), (2,))
    with pytest.raises(ShapeError, match=r"^shapes \[3\], \[4\], \[4\] do not broadcast: dim 0 is 3 vs 4$"):
        broadcast_shapes((3,), (4,), (4,))


@PROPERTY
@given(st.lists(shapes, min_size=1, max_size=3))
def test_broadcast_matches_numpy(operand_shapes):
    expected = _numpy_shape(lambda: np.broadcast_shapes(*operand_shapes))
    assert _ours(broadcast_shapes, *operand_shapes) == expected


#### normalize_dim and check_dims ####


def test_normalize_dim_examples():
    assert normalize_dim(-1, 3) == 2
    assert normalize_dim(0, 3) == 0
    assert normalize_dim(-3, 3) == 0
    # A rank-0 tensor takes dims 0 and -1, as in PyTorch.
    assert normalize_dim(0, 0) == 0
    assert normalize_dim(-1, 0) == 0
    with pytest.raises(ShapeError, match=r"^dim 3 is out of range for rank 3$"):
        normalize_dim(3, 3)
    with pytest.raises(ShapeError, match=r"^dim -4 is out of range for rank 3$"):
        normalize_dim(-4, 3)
    with pytest.raises(ShapeError, match=r"^dim 1 is out of range for rank 0$"):
        normalize_dim(1, 0)


@PROPERTY
@given(st.integers(min_value=1, max_value=5), st.integers(min_value=-7, max_value=7))
def test_normalize_dim_is_python_indexing(rank, dim):
    dims = list(range(rank))
    expected = dims[dim] if -rank <= dim < rank else None
    assert _ours(normalize_dim, dim, rank) == expected


def test_check_dims_examples():
    assert check_dims([2, 0], 3) == (0, 2)
    assert check_dims([], 3) == ()
    assert check_dims([0], 0) == (0,)
    with pytest.raises(ShapeError, match=r"^dims \[1, 1\] repeat a dim$"):
        check_dims([1, 1], 3)
    with pytest.raises(ShapeError, match=r"^dim 3 is out of range for rank 3$"):
        check_dims([0, 3], 3)
    with pytest.raises(ShapeError, match=r"^dim -1 is out of range for rank 3$"):
        check_dims([-1], 3)


#### reduce_shape ####


def test_reduce_examples():
    assert reduce_shape((4, 8, 64), [2], keepdim=True) == (4, 8, 1)
    assert reduce_shape((4, 8, 64), [2], keepdim=False) == (4, 8)
    assert reduce_shape((2, 4, 64), [0, 2], keepdim=False) == (4,)
    assert reduce_shape((16,), [0], keepdim=False) == ()
    assert reduce_shape((), [0], keepdim=True) == ()


@PROPERTY
@given(nonempty_shapes, st.data(), st.booleans())
def test_reduce_matches_numpy(shape, data, keepdim):
    dims = data.draw(st.lists(st.integers(0, len(shape) - 1), unique=True))
    expected = np.sum(np.zeros(shape), axis=tuple(dims), keepdims=keepdim).shape
    assert reduce_shape(shape, check_dims(dims, len(shape)), keepdim) == expected


#### permute_shape ####


def test_permute_examples():
    assert permute_shape((2, 3, 4), [2, 0, 1]) == (4, 2, 3)
    assert permute_shape((4, 64), [1, 0]) == (64, 4)
    assert permute_shape((), []) == ()
    with pytest.raises(ShapeError, match=r"^perm \[0, 0\] is not a permutation of the 2 dims$"):
        permute_shape((4, 64), [0, 0])
    with pytest.raises(ShapeError, match=r"^perm \[1, 0\] is not a permutation of the 3 dims$"):
        permute_shape((2, 3, 4), [1, 0])


@PROPERTY
@given(shapes, st.data())
def test_permute_matches_numpy(shape, data):
    perm = data.draw(st.permutations(range(len(shape))))
    assert permute_shape(shape, perm) == np.transpose(np.zeros(shape), perm).shape


@PROPERTY
@given(shapes, st.data())
def test_permute_rejects_what_numpy_rejects(shape, data):
    rank = len(shape)
    perm = data.draw(st.lists(st.integers(0, rank), min_size=rank, max_size=rank))
    numpy_ok = _numpy_shape(lambda: np.transpose(np.zeros(shape), perm).shape) is not None
    assert _accepts(permute_shape, shape, perm) == numpy_ok


#### check_reshape and check_expand ####


def test_reshape_examples():
    check_reshape((4, 8), (32,))
    check_reshape((), (1, 1))
    check_reshape((0, 4), (2, 0))
    with pytest.raises(
        ShapeError, match=r"^cannot reshape \[4, 8\] \(32 elements\) to \[30\] \(30 elements\)$"
    ):
        check_reshape((4, 8), (30,))


@PROPERTY
@given(shapes, shapes)
def test_reshape_is_valid_when_numpy_can_reshape(source, target):
    numpy_ok = _numpy_shape(lambda: np.zeros(source).reshape(target).shape) is not None
    assert _accepts(check_reshape, source, target) == numpy_ok


def test_expand_examples():
    check_expand((1, 64), (4, 8, 64))
    check_expand((4, 64), (4, 64))
    check_expand((), (3, 2))
    with pytest.raises(ShapeError, match=r"^cannot expand dim 0 of size 2 to 4$"):
        check_expand((2, 64), (4, 64))
    with pytest.raises(ShapeError, match=r"^cannot expand rank 2 to the lower rank 1$"):
        check_expand((1, 64), (64,))


@PROPERTY
@given(shapes, shapes)
def test_expand_is_numpy_broadcast_to(source, target):
    numpy_ok = _numpy_shape(lambda: np.broadcast_to(np.zeros(source), target).shape) is not None
    assert _accepts(check_expand, source, target) == numpy_ok


#### clamp_slice_bounds and slice_length ####


def test_slice_examples():
    assert slice_length(10, 1, 10, 3) == 3
    assert slice_length(10, 4, 4, 1) == 0
    assert slice_length(64, 1, 64, 3) == 21
    assert clamp_slice_bounds(10, None, -2) == (0, 8)
    assert clamp_slice_bounds(10, -100, 2**63 - 1) == (0, 10)
    assert clamp_slice_bounds(10, 7, 3) == (7, 7)
    assert clamp_slice_bounds(0, None, None) == (0, 0)
    with pytest.raises(ShapeError, match=r"^slice step must be positive, not 0$"):
        slice_length(10, 0, 10, 0)
    with pytest.raises(ShapeError, match=r"^slice \[0:11\] is outside \[0, 10\] or reversed$"):
        slice_length(10, 0, 11, 1)
    with pytest.raises(ShapeError, match=r"^slice \[5:4\] is outside \[0, 10\] or reversed$"):
        slice_length(10, 5, 4, 1)


bounds = st.none() | st.integers(min_value=-25, max_value=25) | st.sampled_from([2**63 - 1, -(2**63)])


@PROPERTY
@given(st.integers(min_value=0, max_value=12), bounds, bounds, st.integers(min_value=1, max_value=5))
def test_slice_matches_python_slicing(size, start, end, step):
    lo, hi = clamp_slice_bounds(size, start, end)
    assert 0 <= lo <= hi <= size
    assert slice_length(size, lo, hi, step) == len(range(size)[start:end:step])
    assert list(range(lo, hi, step)) == list(range(size)[start:end:step])


#### cat_shape ####


def test_cat_examples():
    assert cat_shape([(2, 3), (2, 5)], 1) == (2, 8)
    assert cat_shape([(4, 64), (1, 64), (4, 64)], 0) == (9, 64)
    assert cat_shape([(4, 64)], 0) == (4, 64)
    with pytest.raises(
        ShapeError, match=r"^input 1 of shape \[4, 32\] does not match \[4, 64\] outside dim 0$"
    ):
        cat_shape([(4, 64), (4, 32)], 0)
    with pytest.raises(ShapeError, match=r"^input 1 of shape \[64\] does not match \[4, 64\] outside dim 0$"):
        cat_shape([(4, 64), (64,)], 0)
    with pytest.raises(ShapeError, match=r"^cat needs at least one input$"):
        cat_shape([], 0)
    with pytest.raises(ShapeError, match=r"^cat needs inputs of rank >= 1$"):
        cat_shape([(), ()], 0)
    with pytest.raises(ShapeError, match=r"^dim 2 is out of range for rank 2$"):
        cat_shape([(4, 64), (4, 64)], 2)
    with pytest.raises(ShapeError, match=r"^dim -1 is out of range for rank 2$"):
        cat_shape([(4, 64), (4, 64)], -1)


@PROPERTY
@given(st.lists(shapes, min_size=1, max_size=3), st.integers(min_value=0, max_value=3))
def test_cat_matches_numpy_on_random_shapes(inputs, dim):
    """Mostly rejections: independent random shapes rarely agree outside `dim`."""
    expected = _numpy_shape(lambda: np.concatenate([np.zeros(s) for s in inputs], axis=dim).shape)
    assert _ours(cat_shape, inputs, dim) == expected


@PROPERTY
@given(nonempty_shapes, st.data())
def test_cat_matches_numpy_on_compatible_shapes(shape, data):
    dim = data.draw(st.integers(0, len(shape) - 1))
    lengths = data.draw(st.lists(sizes, min_size=1, max_size=4))
    inputs = [tuple(n if d == dim else s for d, s in enumerate(shape)) for n in lengths]
    expected = np.concatenate([np.zeros(s) for s in inputs], axis=dim).shape
    assert cat_shape(inputs, dim) == expected


#### pad_shape ####


def test_pad_examples():
    assert pad_shape((4, 60), [0, 0], [0, 4]) == (4, 64)
    assert pad_shape((4, 60), [1, 0], [0, 4]) == (5, 64)
    assert pad_shape((), [], []) == ()
    with pytest.raises(ShapeError, match=r"^padding amounts must be non-negative$"):
        pad_shape((4, 60), [0, -1], [0, 4])
    with pytest.raises(ShapeError, match=r"^low and high padding need one entry per dim \(2\)$"):
        pad_shape((4, 60), [0], [4])


@PROPERTY
@given(nonempty_shapes, st.data())
def test_pad_matches_numpy(shape, data):
    """NumPy cannot pad a rank-0 array; that case is an example above."""
    amounts = st.lists(st.integers(0, 3), min_size=len(shape), max_size=len(shape))
    low, high = data.draw(amounts), data.draw(amounts)
    expected = np.pad(np.zeros(shape), list(zip(low, high, strict=True))).shape
    assert pad_shape(shape, low, high) == expected


#### matmul_shape ####


def test_matmul_examples():
    assert matmul_shape((16, 64), (64, 128)) == (16, 128)
    assert matmul_shape((2, 16, 64), (64, 128)) == (2, 16, 128)
    assert matmul_shape((2, 16, 64), (2, 64, 32)) == (2, 16, 32)
    assert matmul_shape((2, 4, 16, 64), (2, 4, 64, 16)) == (2, 4, 16, 16)
    with pytest.raises(ShapeError, match=r"^contraction dims differ: x has K = 64, y has K = 32$"):
        matmul_shape((16, 64), (32, 8))
    with pytest.raises(ShapeError, match=r"^batch dims differ: \[2\] vs \[3\]$"):
        matmul_shape((2, 4, 64), (3, 64, 8))
    # NumPy would broadcast a batch dim of 1; Spyre's bmm needs equal batch dims.
    with pytest.raises(ShapeError, match=r"^batch dims differ: \[1\] vs \[3\]$"):
        matmul_shape((1, 4, 64), (3, 64, 8))
    with pytest.raises(
        ShapeError, match=r"^unsupported matmul ranks 1D x 2D \(supported: 2x2, 3x2, 3x3, 4x4\)$"
    ):
        matmul_shape((64,), (64, 8))
    with pytest.raises(ShapeError, match=r"^unsupported matmul ranks 2D x 3D"):
        matmul_shape((4, 64), (2, 64, 8))


RANK_FORMS = [(2, 2), (3, 2), (3, 3), (4, 4)]


@PROPERTY
@given(st.sampled_from(RANK_FORMS), st.data())
def test_matmul_matches_numpy(ranks, data):
    x_rank, y_rank = ranks
    batch = data.draw(st.lists(sizes, min_size=x_rank - 2, max_size=x_rank - 2))
    m, k, n = data.draw(st.tuples(sizes, sizes, sizes))
    k_y = data.draw(st.sampled_from([k, k + 1]))
    x = (*batch, m, k)
    y = (*batch, k_y, n) if y_rank > 2 else (k_y, n)
    expected = _numpy_shape(lambda: np.matmul(np.zeros(x), np.zeros(y)).shape)
    assert _ours(matmul_shape, x, y) == expected
    assert (expected is None) == (k != k_y)
