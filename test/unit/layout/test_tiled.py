"""Tests of ktir.layout against the reference stack's worked examples and its invariants."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ktir.layout.binding import DmaBlock
from ktir.layout.dtypes import DeviceDType
from ktir.layout.spyre import SpyreTensorLayout
from ktir.layout.tiled import LayoutError, TiledLayout, contiguous_strides, device_dtype_of
from ktir.layout.transfer import to_device, to_host

# (host size, dim_order) -> (device_size, stride_map): the default layouts of torch-spyre's
# `docs/source/user_guide/tensors_and_layouts.md` and `torch_spyre/csrc/spyre_tensor_impl.cpp`
# (docs/layout.md).
REFERENCE_LAYOUTS = [
    ((1000, 200), None, [4, 1000, 64], [64, 200, 1]),
    ((1024, 256), None, [4, 1024, 64], [64, 256, 1]),
    ((5, 100, 150), None, [100, 3, 5, 64], [150, 64, 15000, 1]),
    ((5, 100, 150), [1, 0, 2], [5, 3, 100, 64], [15000, 64, 150, 1]),
    ((128, 256, 512), None, [256, 8, 128, 64], [512, 64, 131072, 1]),
    ((50, 10, 200), None, [10, 4, 50, 64], [200, 64, 2000, 1]),
    ((512, 256), [0, 1, -1], [256, 1, 512, 64], [1, -1, 256, -1]),
    ((128,), None, [2, 64], [64, 1]),
    ((), None, [1, 64], [-1, -1]),
    ((5, 1), None, [1, 5, 64], [-1, 1, -1]),
    ((1, 64), None, [1, 1, 64], [64, -1, 1]),
]


@pytest.mark.parametrize(("host", "order", "device_size", "stride_map"), REFERENCE_LAYOUTS)
def test_reference_layouts(host, order, device_size, stride_map):
    stl = SpyreTensorLayout(host, "float16", dim_order=order)
    assert stl.device_size == device_size
    assert stl.stride_map == stride_map
    assert stl == SpyreTensorLayout.from_device(device_size, stride_map, "float16")


def test_repr_is_the_reference_text():
    stl = SpyreTensorLayout((5, 100, 150), "float16")
    assert repr(stl) == (
        "SpyreTensorLayout(device_size=[100, 3, 5, 64], stride_map =[150, 64, 15000, 1], "
        "device_dtype=DataFormats.SEN169_FP16)"
    )
    stl = SpyreTensorLayout((5, 100, 150), "float16", [1, 0, 2])
    assert repr(stl) == (
        "SpyreTensorLayout(device_size=[5, 3, 100, 64], stride_map =[15000, 64, 150, 1], "
        "device_dtype=DataFormats.SEN169_FP16)"
    )


def test_equality_and_hashing():
    a = SpyreTensorLayout((512, 256), "float16")
    b = SpyreTensorLayout((512, 256), "float16", [0, 1])
    c = SpyreTensorLayout((512, 256), "float16", [1, 0])
    assert a == b and hash(a) == hash(b)
    assert a != c
    assert len({a, b, c}) == 2
    # Same sizes and strides, another data format: not equal.
    fp16 = SpyreTensorLayout.from_device([4, 32], [32, 1], "float16".replace("16", "32"))
    assert fp16 != SpyreTensorLayout.from_device([4, 32], [32, 1], "int32")


@pytest.mark.parametrize(
    ("dtype", "device_dtype", "eps"),
    [
        ("float16", DeviceDType.SEN169_FP16, 64),
        ("bfloat16", DeviceDType.SEN169_FP16, 64),
        ("bool", DeviceDType.SEN169_FP16, 64),
        ("float32", DeviceDType.IEEE_FP32, 32),
        ("int32", DeviceDType.IEEE_INT32, 32),
        ("int64", DeviceDType.IEEE_INT32, 32),
        ("int8", DeviceDType.SENINT8, 128),
        ("float8_e4m3fn", DeviceDType.SEN143_FP8, 128),
        ("float8_e5m2", DeviceDType.SEN152_FP8, 128),
    ],
)
def test_dtype_table(dtype, device_dtype, eps):
    stl = SpyreTensorLayout((3, 300), dtype)
    assert stl.device_dtype is device_dtype
    assert stl.elems_per_stick == eps
    assert stl.device_size == [math.ceil(300 / eps), 3, eps]
    assert stl.device_bytes == 128 * math.ceil(300 / eps) * 3


def test_torch_and_numpy_dtypes():
    torch = pytest.importorskip("torch")
    assert SpyreTensorLayout((4, 8), torch.float16) == SpyreTensorLayout((4, 8), "float16")
    assert device_dtype_of(torch.int64) is DeviceDType.IEEE_INT32
    assert device_dtype_of(np.float32) is DeviceDType.IEEE_FP32
    with pytest.raises(LayoutError, match="does not support dtype complex64"):
        device_dtype_of(torch.complex64)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (((4, 8), "float16", [0]), "Incompatible host_size and dim_order"),
        (((4, 8), "float16", [0, 1, 2]), "Incompatible host_size and dim_order"),
        (((4, 8), "float16", [1, 1]), "must be a permutation"),
        (((2,) * 7, "float16"), "Unsupported tensor rank: 7"),
        (((4, 8), "float64"), "does not support dtype float64"),
        (((4, 0), "float16"), "zero-size dims"),
    ],
)
def test_constructor_errors(args, message):
    with pytest.raises(LayoutError, match=message):
        SpyreTensorLayout(*args)


def test_rank_six_and_sparse_rank_seven():
    stl = SpyreTensorLayout((2, 3, 4, 5, 6, 70), "float16")
    assert stl.device_size == [3, 4, 5, 6, 2, 2, 64]
    sparse = SpyreTensorLayout((2, 3, 4, 5, 6, 70), "float16", [0, 1, 2, 3, 4, 5, -1])
    assert sparse.device_size == [3, 4, 5, 6, 70, 1, 2, 64]
    assert sparse.stride_map[-1] == -1


@pytest.mark.parametrize(
    ("device_size", "stride_map", "message"),
    [
        ([4, 64], [64], "device_size has 2 dims but stride_map has 1"),
        ([4, 32], [64, 1], "must hold 64 elements for SEN169_FP16"),
        ([0, 64], [64, 1], "sizes must be positive"),
        ([4, 64], [-3, 1], "stride_map\\[0\\] = -3"),
        ([1] * 8 + [64], [-1] * 8 + [1], "Unsupported device rank: 9"),
    ],
)
def test_from_device_rejects(device_size, stride_map, message):
    with pytest.raises(LayoutError, match=message):
        SpyreTensorLayout.from_device(device_size, stride_map, "float16")


def test_repeated_host_stride_is_a_dma_layout_but_not_a_chain():
    # Two device dims stepping host stride 64 used to be refused by `from_device`. The reference
    # descriptor accepts it for a (2, 64) tensor (one block, sizes (1, 2, 64)), so `from_device`
    # keeps it; only the compiler's chain form (`tiled`, `bind`) refuses it.
    stl = SpyreTensorLayout.from_device([2, 2, 64], [64, 64, 1], "float16")
    assert [block.sizes for block in stl.dma((2, 64))] == [(1, 2, 64)]
    x = np.arange(128, dtype=np.float16).reshape(2, 64)
    assert np.array_equal(to_host(to_device(x, stl), stl, (2, 64)), x)
    with pytest.raises(LayoutError, match="both step host stride 64"):
        stl.bind((2, 64))


@pytest.mark.parametrize(
    ("device_size", "stride_map", "host", "message"),
    [
        ([4, 64], [96, 1], (4, 64), "not a multiple of host dim 0's stride 64"),
        ([2, 4, 64], [32, 64, 1], (4, 64), "would be stored twice"),
        ([4, 64], [128, 1], (8, 64), "would be skipped"),
        ([1, 64], [-1, 1], (4, 64), "host dim 0 \\(size 4\\) is not walked"),
        ([2, 64], [64, 1], (3, 150), "span 128 < its size 150"),
        ([2, 64], [1, 2], (4, 64), "host dim 0 \\(size 4\\) is not walked"),
    ],
)
def test_bind_rejects_impossible_layouts(device_size, stride_map, host, message):
    stl = SpyreTensorLayout.from_device(device_size, stride_map, "float16")
    with pytest.raises(LayoutError, match=message):
        stl.bind(host)


def test_explicit_layouts_padding_folding_broadcast_tiling():
    x = np.arange(4 * 32, dtype=np.float16).reshape(4, 32)
    # Two 32-element rows folded into each stick.
    fold = SpyreTensorLayout.from_device([2, 64], [64, 1], "float16")
    assert np.array_equal(to_device(x, fold), x.reshape(2, 64))
    # A broadcast dim repeats the tensor.
    row = np.arange(64, dtype=np.float16)
    bcast = SpyreTensorLayout.from_device([3, 1, 64], [0, 64, 1], "float16")
    assert np.array_equal(to_device(row, bcast), np.broadcast_to(row, (3, 1, 64)))
    assert np.array_equal(to_host(to_device(row, bcast), bcast, (64,)), row)
    # A host dim tiled into two device dims (rows in blocks of 2), padded rows zero.
    y = np.arange(5 * 64, dtype=np.float16).reshape(5, 64)
    tiles = SpyreTensorLayout.from_device([3, 2, 64], [128, 64, 1], "float16")
    dev = to_device(y, tiles)
    assert np.array_equal(dev.reshape(6, 64)[:5], y) and not dev.reshape(6, 64)[5].any()
    # Padding beyond the stick: 150 -> 3 sticks, lanes 22..63 of the last stick are zero.
    z = np.ones((2, 150), dtype=np.float16)
    dev = to_device(z, SpyreTensorLayout((2, 150), "float16"))
    assert dev.sum() == 300 and not dev[2, :, 22:].any()


def test_host_strides_transposed_view():
    # A layout built from a transposed host view's strides is sticked along its memory order.
    stl = SpyreTensorLayout((256, 128), "float16", host_strides=(1, 256))
    assert stl.device_size == [2, 256, 64]
    assert stl.stride_map == [64 * 256, 1, 256]
    x = np.arange(256 * 128, dtype=np.float16).reshape(256, 128)
    assert np.array_equal(to_host(to_device(x, stl, (1, 256)), stl, (256, 128), (1, 256)), x)
    out = to_host(to_device(x, stl, (1, 256)), stl, (256, 128), (1, 256))
    assert out.strides == (2, 512)


def test_seed_dma_examples():
    (block,) = SpyreTensorLayout((1024, 256), "float16").dma((1024, 256))
    assert block == DmaBlock((4, 1024, 64), (65536, 64, 1), (64, 256, 1), 0, 0)
    main, rest = SpyreTensorLayout((5, 100, 150), "float16").dma((5, 100, 150))
    assert main.sizes == (100, 2, 5, 64) and (main.host_offset, main.device_offset) == (0, 0)
    assert rest.sizes == (100, 1, 5, 22) and (rest.host_offset, rest.device_offset) == (128, 640)
    # RFC 0047: (1000, 200) -> device (4, 1000, 64); the last stick of each row holds 8.
    full, partial = SpyreTensorLayout((1000, 200), "float16").dma((1000, 200))
    assert full.sizes == (3, 1000, 64) and partial.sizes == (1, 1000, 8)


def test_seed_dma_loop_nest_formula():
    # device[i*65536 + j*64 + k] = host[j*256 + i*64 + k], the loop nest torch-spyre's
    # `docs/source/user_guide/tensors_and_layouts.md` writes.
    host = np.random.default_rng(0).standard_normal((1024, 256)).astype(np.float16)
    dev = to_device(host, SpyreTensorLayout((1024, 256), "float16")).reshape(-1)
    i, j, k = np.meshgrid(np.arange(4), np.arange(1024), np.arange(64), indexing="ij")
    assert np.array_equal(dev[i * 65536 + j * 64 + k], host.reshape(-1)[j * 256 + i * 64 + k])


def test_device_coords_and_linear_index():
    bound = SpyreTensorLayout((5, 100, 150), "float16").bind((5, 100, 150))
    assert bound.device_coords((1, 2, 70)) == (2, 1, 1, 6)
    assert bound.linear_index((1, 2, 70)) == 2 * 960 + 1 * 320 + 1 * 64 + 6
    with pytest.raises(LayoutError, match="out of range"):
        bound.device_coords((5, 0, 0))


def test_integer_and_fp8_conversions():
    ints = np.array([[1, -2, 3]], dtype=np.int64)
    stl = SpyreTensorLayout((1, 3), "int64")
    dev = to_device(ints, stl)
    assert dev.dtype == np.int32
    assert np.array_equal(to_host(dev, stl, (1, 3), dtype="int64"), ints)
    with pytest.raises(LayoutError, match="out of range"):
        to_device(np.array([[2**40]]), SpyreTensorLayout((1, 1), "int64"))
    with pytest.raises(LayoutError, match="raw bit patterns"):
        to_device(np.zeros(4, np.float32), SpyreTensorLayout((4,), "float8_e4m3fn"))
    bits = np.arange(200, dtype=np.uint8)
    fp8 = SpyreTensorLayout((200,), "float8_e5m2")
    assert np.array_equal(to_host(to_device(bits, fp8), fp8, (200,)), bits)
    mask = np.array([True, False, True])
    bool_stl = SpyreTensorLayout((3,), "bool")
    assert np.array_equal(to_host(to_device(mask, bool_stl), bool_stl, (3,), dtype="bool"), mask)


# ---------------------------------------------------------------------------------------------
# Properties over random layouts
# ---------------------------------------------------------------------------------------------

DTYPES = {"float16": np.float16, "float32": np.float32, "int32": np.int32, "int8": np.int8}


@st.composite
def default_layouts(draw):
    rank = draw(st.integers(0, 4))
    host = tuple(draw(st.lists(st.integers(1, 9), min_size=rank, max_size=rank)))
    if rank and draw(st.booleans()):
        host = (*host[:-1], draw(st.integers(1, 300)))  # a long stick dim, often padded
    dtype = draw(st.sampled_from(sorted(DTYPES)))
    order = draw(st.permutations(range(rank))) if rank else []
    if rank and draw(st.integers(0, 4)) == 0:
        order = [*order, -1]
    return host, dtype, SpyreTensorLayout(host, dtype, dim_order=order)


@st.composite
def explicit_layouts(draw):
    """Random tilings of random host dims, some with a padded top digit, plus stick split."""
    rank = draw(st.integers(1, 3))
    host = tuple(draw(st.lists(st.integers(1, 12), min_size=rank, max_size=rank)))
    strides = contiguous_strides(host)
    dims = []  # (size, stride)
    for i, n in enumerate(host):
        if n == 1:
            dims.append((1, -1))
            continue
        inner = draw(st.integers(1, n))
        outer = -(-n // inner)
        dims += [(outer, inner * strides[i]), (inner, strides[i])] if inner < n else [(n, strides[i])]
    dims = draw(st.permutations(dims))
    if draw(st.booleans()):
        dims = [*dims, (draw(st.integers(2, 3)), 0)]  # a broadcast dim somewhere
        dims = draw(st.permutations(dims))
    eps = 64
    size = [d[0] for d in dims] + [eps]
    stride = [d[1] for d in dims] + [-1]  # a synthetic stick: sparse storage
    return host, "float16", SpyreTensorLayout.from_device(size, stride, "float16")


def check_layout_properties(host, dtype, stl):
    rng = np.random.default_rng(len(host))
    x = (rng.integers(-100, 100, size=host)).astype(DTYPES[dtype])
    bound = stl.bind(host)
    dev = to_device(x, stl)
    assert dev.shape == tuple(stl.device_size)
    # Round trip is exact.
    assert np.array_equal(to_host(dev, stl, host), x)
    # The layout's meaning element by element: padding is zero, data is where it says.
    offsets = bound.host_offsets()
    valid = offsets >= 0
    assert np.array_equal(dev[valid], x.reshape(-1)[offsets[valid]])
    assert not dev[~valid].any()
    # The stride_map identity for every valid device coordinate.
    coords = np.stack(np.nonzero(valid), axis=-1)
    steps = np.array([max(s, 0) for s in stl.stride_map], dtype=np.int64)
    assert np.array_equal(coords @ steps, offsets[valid])
    # Each host element is stored (at least once; exactly once without broadcast dims).
    counts = np.bincount(offsets[valid], minlength=x.size)
    has_broadcast = any(s == 0 and n > 1 for n, s in zip(stl.device_size, stl.stride_map, strict=False))
    assert (counts >= 1).all() if has_broadcast else (counts == 1).all()
    # DMA blocks reproduce to_device, writing each valid device element once.
    flat = np.zeros(math.prod(stl.device_size), dtype=dev.dtype)
    written = np.zeros(flat.size, dtype=np.int64)
    for block in bound.dma():
        block.copy_host_to_device(x.reshape(-1), flat)
        np.add.at(written, block.device_indices(), 1)
        assert np.array_equal(x.reshape(-1)[block.host_indices()], flat[block.device_indices()])
    assert np.array_equal(flat.reshape(dev.shape), dev)
    assert np.array_equal(written.reshape(dev.shape), valid.astype(np.int64))
    # Element-wise coordinates agree with the vectorized map.
    for element in [tuple(0 for _ in host), tuple(n - 1 for n in host)]:
        device = bound.device_coords(element)
        assert offsets[device] == sum(c * s for c, s in zip(element, contiguous_strides(host), strict=False))


@settings(max_examples=150, deadline=None)
@given(default_layouts())
def test_default_layout_properties(case):
    check_layout_properties(*case)


@settings(max_examples=150, deadline=None)
@given(explicit_layouts())
def test_explicit_layout_properties(case):
    check_layout_properties(*case)


def test_tiled_layout_is_hashable_and_checks_itself():
    assert TiledLayout((4, 64), (64, 1)) == TiledLayout([4, 64], [64, 1])
    assert hash(TiledLayout((4, 64), (64, 1))) == hash(TiledLayout((4, 64), (64, 1)))
    with pytest.raises(LayoutError, match="at least one device dim"):
        TiledLayout((), ())


def test_bind_rejects_a_stride_finer_than_the_host():
    stl = SpyreTensorLayout.from_device([2, 64], [64, 1], "float16")
    with pytest.raises(LayoutError, match="has no dim that fine"):
        stl.bind((4, 32), (256, 2))
    with pytest.raises(LayoutError, match="overlap in memory"):
        stl.bind((4, 32), (16, 1))
