"""Cuts of iteration dims into device boxes (`ktir.cores.tiling`)."""

from __future__ import annotations

from ktir.cores.tiling import Access, chains, device_box, granules
from ktir.layout.spyre import SpyreTensorLayout

# Rows flattened from (batch 2, tokens 1024) onto one device dim, sticks outermost: the layout
# an fp16 matmul gives its (2048, 4096) output, read as (2, 1024, 4096).
FLATTENED = Access(
    layout=SpyreTensorLayout.from_device([64, 2048, 64], [64, 4096, 1], "float16"),
    shape=(2, 1024, 4096),
    dims=("d0", "d1", "d2"),
)


def test_the_outer_dim_of_a_flattened_group_cuts_in_whole_runs_of_its_inner_dims() -> None:
    cuttable, uncuttable = chains(FLATTENED)
    assert cuttable["d0"].size == 2 and cuttable["d0"].step == 1024
    assert uncuttable == {"d1"}  # a cut of the tokens alone is two runs, not a box
    assert granules({"d0": 2, "d1": 1024, "d2": 4096}, [FLATTENED]) == {"d0": 2, "d1": 1, "d2": 64}


def test_a_cut_of_the_outer_dim_is_the_device_box_of_its_runs() -> None:
    assert device_box(FLATTENED, {"d0": 2}, {"d0": 1}) == ((0, 1024, 0), (64, 1024, 64))
    assert device_box(FLATTENED, {"d0": 2, "d2": 4}, {"d0": 0, "d2": 3}) == ((48, 0, 0), (16, 1024, 64))


def test_a_group_whose_digit_holds_whole_inner_runs_cuts_every_divisor() -> None:
    # (4, 100) fp16 default: d0 on device dim 1 (4 rows), d1 in 2 sticks.
    access = Access(
        SpyreTensorLayout.from_device([2, 4, 64], [64, 100, 1], "float16"), (4, 100), ("d0", "d1")
    )
    cuttable, _ = chains(access)
    assert (cuttable["d0"].size, cuttable["d0"].step) == (4, 1)
    assert device_box(access, {"d0": 4}, {"d0": 3}) == ((0, 3, 0), (2, 1, 64))
