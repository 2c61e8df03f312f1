"""Loads and stores of the ktdp engine (ktir/ktdp_engine/transfers.py) on tiles that a loop masks."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import ktir.ktdp_engine as ktdp

KERNELS = Path(__file__).resolve().parents[2] / "lit" / "Inputs" / "ktdp"


def test_a_masked_tile_is_not_checked_against_its_own_smaller_view() -> None:
    """
    Each tile's view starts at its own first row and holds its n = 2 - t rows, the address a
    local row. In the second iteration tile 1 is masked and takes tile 0's local row 1, which
    its own one-row view does not hold: the access is not performed and must not fail.
    """
    text = (KERNELS / "carried.mlir").read_text(encoding="utf-8")
    text = text.replace(
        "%vx = ktdp.construct_memory_view %x, sizes: [3, 64], strides: [64, 1] {coordinate_set = "
        "affine_set<(d0, d1) : (d0 >= 0, -d0 + 2 >= 0, d1 >= 0, -d1 + 63 >= 0)>",
        "%first = arith.muli %start, %c64 : index\n  %xt = arith.addi %x, %first : index\n"
        "  %vx = ktdp.construct_memory_view %xt, sizes: [%n, 64], strides: [64, 1] {coordinate_set = "
        "affine_set<(d0, d1)[s0] : (d0 >= 0, -d0 + s0 - 1 >= 0, d1 >= 0, -d1 + 63 >= 0)>",
    )
    text = text.replace(
        "%c2 = arith.constant 2 : index", "%c2 = arith.constant 2 : index\n  %c64 = arith.constant 64 : index"
    )
    text = text.replace("iter_args(%acc = %zero, %r = %start)", "iter_args(%acc = %zero, %r = %c0)")
    text = text.replace("memref<3x64xf32>", "memref<?x64xf32>")
    assert "sizes: [%n, 64]" in text
    x = np.arange(3 * 64, dtype=np.float32).reshape(3, 64)
    outputs, report = ktdp.run(text, "carried", {"x": x, "out": np.zeros((2, 64), np.float32)})
    np.testing.assert_array_equal(outputs["out"], np.stack([x[0] + x[1], x[2]]))
    assert report.kernels[0].bytes == (3 + 2) * 256  # 3 rows read, 2 written: 2 sticks each


def test_a_view_without_a_coordinate_set_covers_its_sizes() -> None:
    # ktir-cpu's form: no coordinate_set; each of 2 tiles doubles its row.
    text = (KERNELS / "view_without_set.mlir").read_text(encoding="utf-8")
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    outputs, _ = ktdp.run(text, "double", {"x": x, "y": np.zeros_like(x)})
    assert np.array_equal(outputs["y"], 2 * x)


def test_ct_local_memory_without_a_core_id_is_each_tiles_own_lx() -> None:
    # Four tiles write four different rows at the same LX address and read their own back.
    x = np.arange(256, dtype=np.float32).reshape(4, 64)
    outputs, _ = ktdp.run(KERNELS / "own_lx.mlir", "own_lx", {"x": x, "y": np.zeros_like(x)})
    assert np.array_equal(outputs["y"], 2 * x)


def test_an_access_tile_past_the_views_sizes_is_masked_by_its_coordinate_set() -> None:
    # Tile 1's block reaches elements 32..47 of 32-element views: they read as 0 and are not
    # written, so the array placed right after z (at its next stick) keeps its values.
    x = np.arange(32, dtype=np.float32)
    y = np.full(32, 100, np.float32)
    after = np.full(32, -7, np.float32)
    arrays = {"x": x, "y": y, "z": np.zeros(32, np.float32), "after": after}
    outputs, _ = ktdp.run(KERNELS / "masked_add.mlir", "masked_add", arrays)
    assert np.array_equal(outputs["z"], x + y)
    assert np.array_equal(outputs["after"], after)
