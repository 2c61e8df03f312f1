"""Explicit layouts with the reference stack's DMA descriptor (DCI) semantics (`ktir.layout.dci`)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_tiled import REFERENCE_LAYOUTS

from ktir.layout.binding import DmaBlock
from ktir.layout.dci import (
    INVALID_SIZES,
    INVALID_TILING,
    HostView,
    check_blocks,
    dci_blocks,
    device_to_host,
    device_to_host_dims,
    host_tile_map,
    host_to_device,
    loop_plan,
    reference_blocks,
)
from ktir.layout.spyre import SpyreTensorLayout
from ktir.layout.tiled import LayoutError, contiguous_strides
from ktir.layout.transfer import to_device, to_host

FAST = settings(max_examples=80, deadline=None)


def fp16(device_size: list[int], stride_map: list[int]) -> SpyreTensorLayout:
    return SpyreTensorLayout.from_device(device_size, stride_map, "float16")


def numbered(shape: tuple[int, ...], dtype: type = np.float16) -> np.ndarray:
    """1, 2, 3, ... (never 0, so padding is told apart), exact in fp16 up to 2048."""
    return (np.arange(math.prod(shape)) % 2000 + 1).astype(dtype).reshape(shape)


def view_offsets(view: HostView) -> np.ndarray:
    """Storage offset of every element of the view, in host index order."""
    offsets = np.full(view.sizes, view.storage_offset, dtype=np.int64)
    for axis, (n, s) in enumerate(zip(view.sizes, view.strides, strict=True)):
        shape = [1] * len(view.sizes)
        shape[axis] = n
        offsets = offsets + (np.arange(n) * s).reshape(shape)
    return offsets


def slow_device(blocks: list[DmaBlock], storage: np.ndarray, view: HostView, numel: int) -> np.ndarray:
    """
    Run the blocks one element at a time: obviously correct, for small shapes only.

    Also checks the descriptor's meaning: no device element gets two different host elements,
    and the host elements read are exactly those of the view.
    """
    device = np.zeros(numel, dtype=storage.dtype)
    source: dict[int, int] = {}
    for block in blocks:
        for d, h in zip(block.device_indices().tolist(), block.host_indices().tolist(), strict=True):
            assert source.setdefault(d, h) == h, f"device element {d} written from {source[d]} and {h}"
            device[d] = storage[h - view.storage_offset]
    assert set(source.values()) == set(view_offsets(view).reshape(-1).tolist())
    return device


def storage_for(values: np.ndarray, view: HostView) -> np.ndarray:
    """Host storage from the storage offset on, with `values` placed where the view says."""
    storage = np.zeros(view.span, dtype=values.dtype)
    np.put(storage, view_offsets(view) - view.storage_offset, values)
    return storage


def check_round_trip(values: np.ndarray, stl: SpyreTensorLayout, view: HostView) -> np.ndarray:
    """
    The properties every fitting layout has, checked against the slow reference.

    The descriptor is the reference's (not a fallback), executing it is `to_device`, and
    `to_host` gives the values back exactly, laid out with the view's strides.
    """
    blocks = stl.dma(view.sizes, view.strides, view.storage_offset)
    assert blocks == dci_blocks(view, stl.device_size, stl.stride_map)
    assert min(b.host_offset for b in blocks) == view.storage_offset
    device = to_device(values, stl, view.strides, storage_offset=view.storage_offset)
    assert device.shape == tuple(stl.device_size)
    storage = storage_for(values, view)
    reference = slow_device(blocks, storage, view, stl.device_numel)
    assert np.array_equal(device.reshape(-1), reference)
    # The same tensor handed over as a view of its storage packs the same bytes.
    padded = np.concatenate([np.full(view.storage_offset, 7, dtype=values.dtype), storage])
    from_storage = to_device(
        padded, stl, view.strides, storage_offset=view.storage_offset, host_size=view.sizes
    )
    assert np.array_equal(from_storage, device)
    back = to_host(device, stl, view.sizes, view.strides, storage_offset=view.storage_offset)
    assert np.array_equal(back, values)
    assert back.strides == tuple(s * back.itemsize for s in view.strides)
    return device


# ---------------------------------------------------------------------------------------------
# The worked checks
# ---------------------------------------------------------------------------------------------


def test_default_1024x256_is_one_block() -> None:
    view = HostView.of((1024, 256))
    assert device_to_host_dims(view, [4, 1024, 64], [64, 256, 1]) == (1, 0, 1)
    (block,) = dci_blocks(view, [4, 1024, 64], [64, 256, 1])
    assert block == DmaBlock((4, 1024, 64), (65536, 64, 1), (64, 256, 1), 0, 0)


def test_5x100x150_has_a_remainder_block() -> None:
    view = HostView.of((5, 100, 150))
    dims = device_to_host_dims(view, [100, 3, 5, 64], [150, 64, 15000, 1])
    assert dims == (1, 2, 0, 2)
    assert host_tile_map(dims, [150, 64, 15000, 1], 3) == ((2,), (0,), (3, 1))
    plan = loop_plan(view, [100, 3, 5, 64], [150, 64, 15000, 1])
    assert plan.sizes == (100, 2, 5, 64)
    (rest,) = plan.remainders
    assert (dict(rest.sizes), rest.host_offset, rest.device_offset) == ({1: 1, 3: 22}, 128, 640)
    main, tail = dci_blocks(view, [100, 3, 5, 64], [150, 64, 15000, 1])
    assert (main.sizes, main.host_offset, main.device_offset) == ((100, 2, 5, 64), 0, 0)
    assert (tail.sizes, tail.host_offset, tail.device_offset) == ((100, 1, 5, 22), 128, 640)


def test_90_elements_as_three_sticks_of_30() -> None:
    stl = fp16([1, 3, 64], [64, 30, 1])
    (block,) = stl.dma((90,))
    assert block.sizes == (1, 3, 30)
    x = numbered((90,))
    dev = to_device(x, stl)
    assert np.array_equal(dev[0, :, :30], x.reshape(3, 30))
    assert not dev[0, :, 30:].any()
    assert np.array_equal(to_host(dev, stl, (90,)), x)


def test_folding_30x40_into_rows_of_64() -> None:
    stl = fp16([19, 64], [64, 1])
    main, rest = stl.dma((30, 40))
    assert (main.sizes, main.host_offset, main.device_offset) == ((18, 64), 0, 0)
    assert (rest.sizes, rest.host_offset, rest.device_offset) == ((1, 48), 1152, 1152)
    x = numbered((30, 40))
    dev = to_device(x, stl)
    assert np.array_equal(dev.reshape(-1)[:1200], x.reshape(-1))
    assert not dev.reshape(-1)[1200:].any()
    assert np.array_equal(to_host(dev, stl, (30, 40)), x)


def test_one_element_per_stick() -> None:
    stl = fp16([1, 50, 64], [64, 1, 1])
    (block,) = stl.dma((50,))
    assert block.sizes == (1, 50, 1)
    x = numbered((50,))
    dev = to_device(x, stl)
    assert np.array_equal(dev[0, :, 0], x) and not dev[0, :, 1:].any()
    assert np.array_equal(to_host(dev, stl, (50,)), x)
    # Two device dims step host stride 1: the compiler's chain form cannot plan it.
    with pytest.raises(LayoutError, match=r"not a layout the compiler can plan .*both step host stride 1"):
        stl.bind((50,))


# ---------------------------------------------------------------------------------------------
# The reference's worked examples (torch-spyre `docs/source/user_guide/tensors_and_layouts.md`,
# `torch_spyre/csrc/spyre_mem.cpp`; docs/layout.md)
# ---------------------------------------------------------------------------------------------

SEED_LAYOUTS = [case for case in REFERENCE_LAYOUTS if len(case[0]) >= 2]


@pytest.mark.parametrize(("host", "order", "device_size", "stride_map"), SEED_LAYOUTS)
def test_seed_layouts_pack_as_before(host, order, device_size, stride_map) -> None:
    stl = SpyreTensorLayout(host, "float16", dim_order=order)
    assert (stl.device_size, stl.stride_map) == (device_size, stride_map)
    assert stl == fp16(device_size, stride_map)
    x = np.random.default_rng(1).standard_normal(host).astype(np.float16)
    dev = to_device(x, stl)
    bound = stl.bind(host)
    assert np.array_equal(dev, bound.pack(x, np.dtype(np.float16)))
    assert np.array_equal(to_host(dev, stl, host), bound.unpack(dev))
    assert np.array_equal(to_host(dev, stl, host), x)


def test_existing_explicit_examples_keep_their_bytes() -> None:
    """The explicit layouts of test_tiled.py: DCI where it fits, the same bytes as `bind` always."""
    fold = fp16([2, 64], [64, 1])
    bcast = fp16([3, 1, 64], [0, 64, 1])
    tiles = fp16([3, 2, 64], [128, 64, 1])
    cases = [(fold, (4, 32), None), (bcast, (64,), None), (tiles, (5, 64), None)]
    cases.append((SpyreTensorLayout((256, 128), "float16", host_strides=(1, 256)), (256, 128), (1, 256)))
    for stl, host, strides in cases:
        x = numbered(host)
        bound = stl.bind(host, strides)
        dev = to_device(x, stl, strides)
        assert np.array_equal(dev, bound.pack(x, np.dtype(np.float16)))
        assert np.array_equal(to_host(dev, stl, host, strides), bound.unpack(dev))
    # The tiling's outer tile is not the stick-tile dim, so the reference's construction points
    # it at the stick's host dim and gives up; `dma` keeps the chain form's blocks for it.
    with pytest.raises(LayoutError, match=f"{INVALID_SIZES}: device dim 0 steps 128"):
        dci_blocks(HostView.of((5, 64)), [3, 2, 64], [128, 64, 1])
    assert tiles.dma((5, 64)) == tiles.bind((5, 64)).dma()


# ---------------------------------------------------------------------------------------------
# Equal to the chain form's packing wherever that binds (default, permuted, sparse layouts)
# ---------------------------------------------------------------------------------------------


@st.composite
def default_layouts(
    draw: st.DrawFn, permuted: bool = False
) -> tuple[np.ndarray, SpyreTensorLayout, HostView]:
    """
    Reference-constructor layouts: any dim_order (sometimes sparse), any host memory order.

    With `permuted`, the host has 2-3 dims and the dim_order or the memory order is not the
    identity (the stick on another dim, or a transposed host view).
    """
    rank = draw(st.integers(2, 3) if permuted else st.integers(0, 3))
    host = tuple(draw(st.lists(st.integers(1, 6), min_size=rank, max_size=rank)))
    if rank and draw(st.booleans()):
        host = (*host[:-1], draw(st.integers(1, 150)))
    memory = list(draw(st.permutations(range(rank))))
    order = list(draw(st.permutations(range(rank))))
    if permuted and memory == order == sorted(order):
        order = [*order[1:], order[0]]
    strides = [0] * rank
    step = 1
    for dim in reversed(memory):
        strides[dim], step = step, step * host[dim]
    if rank and draw(st.integers(0, 3)) == 0:
        order.append(-1)
    dtype = draw(st.sampled_from(["float16", "float32"]))
    stl = SpyreTensorLayout(host, dtype, dim_order=order, host_strides=strides)
    return numbered(host, np.dtype(dtype).type), stl, HostView.of(host, strides)


@FAST
@given(default_layouts(), st.integers(0, 2**31))
def test_dci_equals_the_chain_packing(case, seed: int) -> None:
    x, stl, view = case
    blocks = dci_blocks(view, stl.device_size, stl.stride_map)  # the reference's, no fallback
    bound = stl.bind(view.sizes, view.strides)
    packed = bound.pack(x, stl.device_dtype.numpy_dtype)
    storage = storage_for(x, view)
    device = np.zeros(stl.device_numel, dtype=packed.dtype)
    host_to_device(blocks, storage, device)
    assert np.array_equal(device.reshape(packed.shape), packed)
    assert np.array_equal(to_device(x, stl, view.strides), packed)
    # Unpacking reads no padding: any device bytes unpack as the chain form unpacks them.
    noise = np.random.default_rng(seed).integers(-50, 50, stl.device_numel).astype(packed.dtype)
    out = np.zeros(view.span, dtype=noise.dtype)
    device_to_host(blocks, noise, out)
    got = np.lib.stride_tricks.as_strided(out, view.sizes, [s * out.itemsize for s in view.strides])
    assert np.array_equal(got, bound.unpack(noise))
    assert np.array_equal(to_host(noise, stl, view.sizes, view.strides), bound.unpack(noise))


# ---------------------------------------------------------------------------------------------
# One property per layout class
# ---------------------------------------------------------------------------------------------


@st.composite
def tilings(draw: st.DrawFn) -> tuple[np.ndarray, SpyreTensorLayout, HostView]:
    """
    A host dim cut into pieces of `piece` <= 64 elements, each piece starting a new stick.

    The pieces are counted by 1-3 nested device dims in any device order; other host dims
    keep a device dim each (the last of them as the row dim). A single 64-element tiling may
    end in a partial stick.
    """
    piece = draw(st.integers(1, 64))
    factors = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    n = piece * math.prod(factors)
    if len(factors) == 1 and piece == 64:
        n = draw(st.integers(64 * (factors[0] - 1) + 1, 64 * factors[0]))
    outer = tuple(draw(st.lists(st.integers(1, 4), max_size=2)))
    host = (*outer, n)
    strides = contiguous_strides(host)
    steps = [piece * math.prod(factors[:k]) for k in range(len(factors))]
    tiles = list(draw(st.permutations(list(zip(factors, steps, strict=True)))))
    rows = [(m, strides[i] if m > 1 else -1) for i, m in enumerate(outer)]
    dims = rows[:-1] + tiles + rows[-1:] + [(64, 1)]
    stl = fp16([d[0] for d in dims], [d[1] for d in dims])
    return numbered(host), stl, HostView.of(host)


@FAST
@given(tilings())
def test_viewing_and_tiling_round_trip(case) -> None:
    x, stl, view = case
    device = check_round_trip(x, stl, view)
    # Every host element is stored once (the values are never 0); the rest is padding.
    assert np.count_nonzero(device) == x.size


@st.composite
def foldings(draw: st.DrawFn) -> tuple[np.ndarray, SpyreTensorLayout, HostView]:
    """A contiguous host tensor read as rows of `length` elements, one row per stick."""
    host = tuple(draw(st.lists(st.integers(1, 12), min_size=1, max_size=3)))
    total = math.prod(host)
    length = draw(st.sampled_from([d for d in range(1, 65) if total % d == 0] + [64]))
    rows = -(-total // length)
    if draw(st.booleans()):
        stl = fp16([rows, 1, 64], [length, draw(st.sampled_from([-1, 0, length])), 1])
    else:
        stl = fp16([rows, 64], [length, 1])
    return numbered(host), stl, HostView.of(host)


@FAST
@given(foldings())
def test_folding_round_trip(case) -> None:
    x, stl, view = case
    device = check_round_trip(x, stl, view)
    length = stl.stride_map[0]
    rows = device.reshape(stl.device_size[0], -1)[:, : min(length, 64)].reshape(-1)
    assert np.array_equal(rows[: x.size], x.reshape(-1))


@st.composite
def size_one_dims(draw: st.DrawFn) -> tuple[np.ndarray, SpyreTensorLayout, HostView]:
    """
    Size-1 device dims added to a layout, with any stride, including another dim's stride.

    Either a default layout with size-1 dims in front or between the stick-tile and row dims,
    or a layout whose last host dim walks host stride 1 in a device dim of its own next to the
    stick, so each stick holds one element (`[1, 50, 64]` / `[64, 1, 1]` for (50,)).
    """
    rank = draw(st.integers(1, 3))
    host = tuple(draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank)))
    if draw(st.booleans()):
        host = (*host[:-1], draw(st.integers(1, 140)))
        base = SpyreTensorLayout(host, "float16", dim_order=draw(st.permutations(range(rank))))
        size, stride = base.device_size, base.stride_map
    else:
        strides = contiguous_strides(host)
        size = [*host, 64]
        stride = [s if n > 1 else -1 for n, s in zip(host, strides, strict=True)] + [1]
    ones = draw(st.lists(st.sampled_from([-1, 0, 1, 64, *stride]), max_size=3))
    tail = 2 if len(size) >= 3 else 1
    for s in ones:
        at = draw(st.integers(0, len(size) - tail))
        size.insert(at, 1)
        stride.insert(at, s)
    return numbered(host), fp16(size, stride), HostView.of(host)


@FAST
@given(size_one_dims())
def test_size_one_dims_round_trip(case) -> None:
    x, stl, view = case
    check_round_trip(x, stl, view)


@st.composite
def expanded_and_padded(draw: st.DrawFn) -> tuple[np.ndarray, SpyreTensorLayout, HostView]:
    """Host dims expanded with stride 0, device broadcast dims (stride 0), padded sticks."""
    rank = draw(st.integers(1, 3))
    host = tuple(draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank)))
    host = (*host[:-1], draw(st.integers(1, 150)))
    expanded = [draw(st.booleans()) and n > 1 for n in host]
    strides = [0] * rank
    step = 1
    for dim in reversed(range(rank)):
        if not expanded[dim]:
            strides[dim], step = step, step * host[dim]
    order = draw(st.permutations(range(rank)))
    base = SpyreTensorLayout(host, "float16", dim_order=order, host_strides=strides)
    size, stride = base.device_size, base.stride_map
    for _ in range(draw(st.integers(0, 2))):
        size.insert(0, draw(st.integers(2, 3)))
        stride.insert(0, 0)
    small = tuple(1 if e else n for n, e in zip(host, expanded, strict=True))
    values = np.broadcast_to(numbered(small), host)
    return values, fp16(size, stride), HostView.of(host, strides)


@FAST
@given(expanded_and_padded())
def test_expanding_and_padding_round_trip(case) -> None:
    x, stl, view = case
    device = check_round_trip(x, stl, view)
    # A device broadcast dim repeats the data; the padding lanes stay zero.
    for j, (n, s) in enumerate(zip(stl.device_size, stl.stride_map, strict=True)):
        if s == 0 and n > 1:
            assert (np.take(device, [0], axis=j) == device).all()


@FAST
@given(default_layouts(permuted=True))
def test_permuted_layouts_round_trip(case) -> None:
    x, stl, view = case
    check_round_trip(x, stl, view)


@st.composite
def sliced_views(draw: st.DrawFn) -> tuple[np.ndarray, SpyreTensorLayout, HostView]:
    """A strided slice of a larger contiguous host tensor: strides with gaps, a storage offset."""
    rank = draw(st.integers(1, 3))
    base = tuple(draw(st.lists(st.integers(1, 8), min_size=rank, max_size=rank)))
    base = (*base[:-1], draw(st.integers(1, 140)))
    base_strides = contiguous_strides(base)
    sizes, strides, offset = [], [], 0
    for n, s in zip(base, base_strides, strict=True):
        start = draw(st.integers(0, n - 1))
        step = draw(st.integers(1, 3))
        count = draw(st.integers(1, len(range(start, n, step))))
        sizes.append(count)
        strides.append(s * step)
        offset += start * s
    order = draw(st.permutations(range(rank)))
    stl = SpyreTensorLayout(sizes, "float16", dim_order=order, host_strides=strides)
    view = HostView.of(sizes, strides, offset)
    return numbered(tuple(sizes)), stl, view


@FAST
@given(sliced_views())
def test_storage_offset_views_round_trip(case) -> None:
    x, stl, view = case
    check_round_trip(x, stl, view)


# ---------------------------------------------------------------------------------------------
# Rejections and API misuse
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("device_size", "stride_map", "host", "strides", "message"),
    [
        # A partial tile with no finer device dim of that host dim to take the rest.
        ([1, 2, 64], [-1, 64, -1], (100,), None, f"{INVALID_TILING} 0: device dim 1 steps 64 elements"),
        # Pieces of 30 but 100 is no multiple of 30: the blocks read past the tensor.
        ([1, 3, 64], [64, 30, 1], (100,), None, "reads host storage offset 123, past the last element"),
        # 96 is not a host row: rows 1 and 3 are never read.
        ([4, 64], [96, 1], (4, 64), None, "miss 128 of the 256 host elements, first host element \\[1, 0\\]"),
        # 200 elements in 2 sticks: the main block runs past device dim 0.
        ([2, 64], [64, 1], (200,), None, "writes positions 0..2 of device dim 0, which has size 2"),
        # A view with gaps folded as if contiguous: the blocks read the gap.
        ([4, 64], [64, 1], (2, 100), (128, 1), "host storage offset 100, which is not an element"),
        # The stick-tile dim walks the stick's host dim: 192 steps do not fit a 64-element row.
        ([3, 2, 64], [192, 64, 1], (3, 64), None, f"{INVALID_SIZES}: device dim 0 steps 192"),
    ],
)
def test_layouts_that_do_not_fit(device_size, stride_map, host, strides, message) -> None:
    stl = fp16(device_size, stride_map)
    with pytest.raises(LayoutError, match=message):
        dci_blocks(HostView.of(host, strides), device_size, stride_map)
    with pytest.raises(LayoutError, match=message):
        to_device(np.ones(host, np.float16), stl, strides)
    with pytest.raises(LayoutError, match=message):
        to_host(np.zeros(stl.device_size, np.float16), stl, host, strides)


def test_a_misfit_says_both_reasons() -> None:
    stl = fp16([4, 64], [96, 1])
    with pytest.raises(LayoutError, match=r"nor does the compiler's chain form bind it: .*not a multiple"):
        stl.dma((4, 64))


@pytest.mark.parametrize(
    ("device_size", "stride_map", "message"),
    [
        ((2.5, 64), (64, 1), "device_size must be integers.*2.5 \\(float\\)"),
        ((True, 64), (64, 1), "device_size must be integers.*True \\(bool\\)"),
        ((2, 64), (64.0, 1), "stride_map must be integers.*64.0 \\(float\\)"),
        ((2, 64), (np.bool_(True), 1), "stride_map must be integers"),
        (4, (64, 1), "device_size must be a sequence of integers, not 4"),
    ],
)
def test_from_device_rejects_non_integers(device_size, stride_map, message) -> None:
    with pytest.raises(LayoutError, match=message):
        SpyreTensorLayout.from_device(device_size, stride_map, "float16")


def test_numpy_integers_are_integers() -> None:
    stl = SpyreTensorLayout.from_device(np.array([2, 64]), [np.int32(64), 1], "float16")
    assert stl == fp16([2, 64], [64, 1])
    assert type(stl.device_size[0]) is int


def test_constructor_and_transfers_reject_non_integers() -> None:
    with pytest.raises(LayoutError, match=r"host size must be integers.*4\.0 \(float\)"):
        SpyreTensorLayout((4.0, 8), "float16")
    with pytest.raises(LayoutError, match="host strides must be integers"):
        SpyreTensorLayout((4, 8), "float16", host_strides=(8, 1.5))
    with pytest.raises(LayoutError, match="dim_order must be integers"):
        SpyreTensorLayout((4, 8), "float16", dim_order=(0.0, 1))
    stl = SpyreTensorLayout((4, 64), "float16")
    with pytest.raises(LayoutError, match="host strides must be integers"):
        to_device(np.ones((4, 64), np.float16), stl, (64.0, 1))
    with pytest.raises(LayoutError, match=r"storage offset must be an integer, not 1\.5 \(float\)"):
        stl.dma((4, 64), storage_offset=1.5)


def test_to_host_checks_the_device_buffer() -> None:
    stl = SpyreTensorLayout((4, 100), "float16")  # device [2, 4, 64]: 512 elements
    dev = to_device(numbered((4, 100)), stl)
    assert np.array_equal(to_host(dev.reshape(-1), stl, (4, 100)), numbered((4, 100)))
    for wrong in (np.zeros((4, 2, 64)), np.zeros(511), np.zeros((8, 64))):
        with pytest.raises(LayoutError, match=r"device buffer has shape .* needs shape \[2, 4, 64\] or 512"):
            to_host(wrong, stl, (4, 100))


def test_to_device_checks_the_host_array() -> None:
    stl = SpyreTensorLayout((4, 64), "float16")
    with pytest.raises(LayoutError, match="host size \\[4, 64\\] and host strides \\[1\\] differ in rank"):
        to_device(np.ones((4, 64), np.float16), stl, (1,))
    with pytest.raises(LayoutError, match=r"host storage has 200 elements, but the view .* needs 256"):
        to_device(np.ones(200, np.float16), stl, host_size=(4, 64))
    # The layout of a (4, 64) tensor has room for 256 elements, not 400.
    with pytest.raises(
        LayoutError, match=r"does not fit host size \[4, 100\].*device dim 1, which has size 4"
    ):
        to_device(np.ones((4, 100), np.float16), stl)
    # Host strides that put two elements in one place need equal values there.
    with pytest.raises(LayoutError, match="holds different values there"):
        to_device(numbered((3, 64)), SpyreTensorLayout((3, 64), "float16", host_strides=(0, 1)), (0, 1))


def test_storage_offset_is_part_of_the_descriptor() -> None:
    stl = SpyreTensorLayout((3, 100), "float16", host_strides=(128, 1))
    main, rest = stl.dma((3, 100), (128, 1), storage_offset=256)
    assert (main.host_offset, rest.host_offset) == (256, 256 + 64)
    base = numbered((10, 128))
    dev = to_device(base, stl, (128, 1), storage_offset=256, host_size=(3, 100))
    assert np.array_equal(to_host(dev, stl, (3, 100), (128, 1)), base[2:5, :100])
    out = to_host(dev, stl, (3, 100), (128, 1), storage_offset=256)
    assert np.array_equal(out, base[2:5, :100]) and out.strides == (256, 2)


def test_a_remainder_that_wraps_past_its_device_dim_falls_back_to_bind() -> None:
    """
    The reference's remainder for host (2, 4) in this layout starts at coordinate 2 of a size-2
    dim, so its device offset lands on the next outer dim: the descriptor is refused and the
    chain descriptor (which `bind` accepts) packs it; the round trip is exact.
    """
    device_size, stride_map = [3, 1, 2, 2, 2, 64], [1, 4, 3, 4, 0, -1]
    view = HostView((2, 4), (4, 1), 0)
    with pytest.raises(LayoutError, match="runs past its device dim"):
        check_blocks(view, device_size, reference_blocks(view, device_size, stride_map))
    stl = SpyreTensorLayout.from_device(device_size, stride_map, "float16")
    x = np.arange(8, dtype=np.float16).reshape(2, 4)
    np.testing.assert_array_equal(to_host(to_device(x, stl), stl, (2, 4)), x)
