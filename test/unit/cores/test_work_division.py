"""Work division (`ktir.cores.work_division`): the reference's worked examples and invariants."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ktir.cores.work_division import Access, adjusted_sizes, core_slices, core_split, divide, per_core_span
from ktir.hardware.target import SPYRE
from ktir.layout.spyre import SpyreTensorLayout


def pointwise(shape: tuple[int, ...], dtype: str = "float16") -> tuple[dict[str, int], Access]:
    dims = tuple(f"d{i}" for i in range(len(shape)))
    return dict(zip(dims, shape, strict=True)), Access(SpyreTensorLayout(shape, dtype), shape, dims)


def matmul(m: int, k: int, n: int) -> tuple[dict[str, int], list[Access], Access]:
    def access(shape: tuple[int, int], dims: tuple[str, str]) -> Access:
        return Access(SpyreTensorLayout(shape, "float16"), shape, dims)

    x, y, out = access((m, k), ("m", "k")), access((k, n), ("k", "n")), access((m, n), ("m", "n"))
    return {"m": m, "n": n, "k": k}, [x, y], out


def test_span_reduction_splits_k_of_a_huge_matmul() -> None:
    sizes, inputs, out = matmul(8192, 32768, 4096)
    assert per_core_span(inputs[0], {}) == 512 * 2**20  # 512 tiles x 8192 rows x 128 B
    assert per_core_span(inputs[0], {"k": 2}) == 256 * 2**20
    assert divide(sizes, ["k"], inputs, out, SPYRE) == {"m": 16, "n": 1, "k": 2}


@pytest.mark.parametrize(("cores", "d0"), [(32, 32), (16, 16)])
def test_abs_on_a_3d_fp32_tensor(cores: int, d0: int) -> None:
    sizes, access = pointwise((256, 128, 512), "float32")
    assert adjusted_sizes(sizes, [access])["d2"] == 16  # 512 fp32 = 16 sticks of 32
    assert divide(sizes, [], [access], access, SPYRE, cores=cores) == {"d0": d0, "d1": 1, "d2": 1}


def test_the_seed_abs_on_two_cores() -> None:
    sizes, access = pointwise((4, 64))
    splits = divide(sizes, [], [access], access, SPYRE, cores=2)
    assert splits == {"d0": 2, "d1": 1}
    assert core_slices(splits) == [{"d0": 0, "d1": 0}, {"d0": 1, "d1": 0}]  # rows 0-1, rows 2-3


def test_the_flatten_example_takes_25_slices() -> None:
    sizes, access = pointwise((500, 200))
    assert divide(sizes, [], [access], access, SPYRE)["d0"] == 25  # the largest divisor of 500 <= 32


def test_k_partners_are_ring_neighbours() -> None:
    slices = core_slices({"m": 4, "n": 2, "k": 2}, fastest=("k",))
    assert [s["k"] for s in slices[:4]] == [0, 1, 0, 1]
    assert slices[0] | {"k": 1} == slices[1]  # cores 0 and 1 share (m, n) and split K


def test_a_recorded_core_order_puts_its_dims_first() -> None:
    """A hand-off's producer takes N first, as its consumer's K partners do (ktir.cores.handoff)."""
    slices = core_slices({"m": 2, "n": 2, "k": 1}, fastest=("n", "m", "k"))
    assert slices == [
        {"m": 0, "n": 0, "k": 0},
        {"m": 0, "n": 1, "k": 0},
        {"m": 1, "n": 0, "k": 0},
        {"m": 1, "n": 1, "k": 0},
    ]
    assert core_slices({"m": 2, "n": 2, "k": 1})[1] == {"m": 1, "n": 0, "k": 0}  # by default m first


def test_bad_core_counts_are_rejected() -> None:
    sizes, access = pointwise((4, 64))
    with pytest.raises(ValueError, match="invalid core count 33"):
        divide(sizes, [], [access], access, SPYRE, cores=33)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from([1, 2, 3, 7, 12, 64, 96, 128, 500]), min_size=1, max_size=3),
    st.integers(1, 32),
    st.sampled_from(["float16", "float32"]),
)
def test_splits_use_at_most_the_cores_and_give_whole_sticks(shape: list[int], cores: int, dtype: str) -> None:
    sizes, access = pointwise(tuple(shape), dtype)
    splits = divide(sizes, [], [access], access, SPYRE, cores=cores)
    adjusted = adjusted_sizes(sizes, [access])
    assert math.prod(splits.values()) <= cores
    assert all(adjusted[d] % s == 0 for d, s in splits.items())
    slices = core_slices(splits)
    assert len({tuple(s.values()) for s in slices}) == len(slices) == math.prod(splits.values())
    assert core_split(adjusted["d0"], cores) >= 1
