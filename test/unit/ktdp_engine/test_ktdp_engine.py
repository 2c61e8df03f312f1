"""
ktdp kernels on the simulated chip (`ktir.ktdp_engine`): each checked against NumPy, with the arrays
read back from where they live, and the time charged on ktir's chip model.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import ktir.ktdp_engine as ktdp
from ktir.hardware.target import SPYRE
from ktir.ir.diagnostics import DiagnosticError
from ktir.ktdp_engine import KtdpError

KERNELS = Path(__file__).resolve().parents[2] / "lit" / "Inputs" / "ktdp"
RNG = np.random.default_rng(0)


def test_the_rfc_add_matches_numpy() -> None:
    a, b = (RNG.standard_normal((96, 64)).astype(np.float16) for _ in range(2))
    outputs, report = ktdp.run(KERNELS / "add.mlir", "add", {"a": a, "b": b, "c": np.zeros_like(a)})
    np.testing.assert_array_equal(outputs["c"], (a.astype(np.float32) + b).astype(np.float16))
    np.testing.assert_array_equal(outputs["a"], a)  # inputs read back unchanged
    (line,) = report.kernels
    # 3 iterations x 3 transfers of one 128-byte stick per tile, 32 tiles: 9 DMAs of 4 KiB.
    assert line.bytes == 9 * 32 * 128 and line.cores == 32
    # The loads queue on each tile's DMA load queue (6 setups); each store overlaps the next
    # iteration's loads (the loop's tensors are double-buffered), so only the last one adds.
    assert 7 * SPYRE.dma_setup_cycles <= report.total_cycles < 9 * SPYRE.dma_setup_cycles


def test_a_row_softmax_matches_numpy() -> None:
    x = RNG.standard_normal((4096, 1024)).astype(np.float16)
    outputs, report = ktdp.run(KERNELS / "softmax.mlir", "softmax", {"x": x, "y": np.zeros_like(x)})
    wide = x.astype(np.float32)
    expected = np.exp(wide - wide.max(1, keepdims=True))
    expected /= expected.sum(1, keepdims=True)
    np.testing.assert_allclose(outputs["y"].astype(np.float32), expected, atol=2e-4, rtol=2e-2)
    assert report.kernels[0].bytes == 2 * x.nbytes  # read once, written once, whole sticks
    assert report.vs_bound >= 1


@pytest.mark.slow
def test_a_matmul_with_a_k_loop_matches_numpy() -> None:
    a = RNG.standard_normal((64, 2048)).astype(np.float16)
    b = (RNG.standard_normal((2048, 8192)) / 40).astype(np.float16)
    c = np.zeros((64, 8192), np.float16)
    outputs, report = ktdp.run(KERNELS / "matmul.mlir", "matmul", {"a": a, "b": b, "c": c})
    expected = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    np.testing.assert_allclose(
        outputs["c"].astype(np.float32), expected.astype(np.float32), atol=4e-3, rtol=4e-3
    )
    assert report.matmul_flops == 2 * 64 * 2048 * 8192
    assert report.kernels[0].busy[:, 1].min() > 0  # the PE arrays of every tile


def test_rmsnorm_with_a_broadcasting_generic_matches_numpy() -> None:
    x = RNG.standard_normal((512, 4096)).astype(np.float16)
    w = (1 + RNG.standard_normal((1, 4096)) / 10).astype(np.float16)
    outputs, _ = ktdp.run(KERNELS / "rmsnorm.mlir", "rmsnorm", {"x": x, "w": w, "y": np.zeros_like(x)})
    wide = x.astype(np.float32)
    expected = wide / np.sqrt((wide**2).mean(1, keepdims=True) + 1e-5) * w.astype(np.float32)
    np.testing.assert_allclose(outputs["y"].astype(np.float32), expected, atol=8e-3, rtol=4e-3)


def test_an_indirect_gather_and_scatter_match_numpy() -> None:
    table = RNG.standard_normal((512, 64)).astype(np.float16)
    ids = RNG.integers(0, 512, (4, 8)).astype(np.int32)
    dest = RNG.permutation(32).reshape(4, 8).astype(np.int32)
    arrays = {"table": table, "ids": ids, "dest": dest, "out": np.zeros((32, 64), np.float16)}
    outputs, report = ktdp.run(KERNELS / "gather.mlir", "gather", arrays)
    expected = np.zeros((32, 64), np.float16)
    expected[dest.reshape(-1)] = 2 * table[ids.reshape(-1)]
    np.testing.assert_array_equal(outputs["out"], expected)
    # Per tile: its distinct rows read and 8 written (one stick each), a stick of each index view.
    distinct = sum(len(np.unique(row)) for row in ids)
    assert report.kernels[0].bytes == (distinct + 4 * (8 + 1 + 1)) * 128


def test_a_paged_gather_through_a_block_table_matches_numpy() -> None:
    cache = RNG.standard_normal((64, 16, 128)).astype(np.float16)
    table = RNG.permutation(64)[:16].astype(np.int32)
    arrays = {"cache": cache, "table": table, "out": np.zeros((256, 128), np.float16)}
    outputs, report = ktdp.run(KERNELS / "paged_gather.mlir", "paged", arrays)
    positions = np.arange(256)
    np.testing.assert_array_equal(outputs["out"], cache[table[positions // 16], positions % 16])
    # 256 rows of 2 sticks read and written, and each tile's two table entries (one stick).
    assert report.kernels[0].bytes == (2 * 256 * 2 + 8) * 128


def test_an_index_outside_its_table_is_located() -> None:
    arrays = {
        "table": np.zeros((512, 64), np.float16),
        "ids": np.full((4, 8), 512, np.int32),  # one past the last row
        "dest": np.zeros((4, 8), np.int32),
        "out": np.zeros((32, 64), np.float16),
    }
    with pytest.raises(KtdpError, match="reaches outside its memory view") as caught:
        ktdp.run(KERNELS / "gather.mlir", "gather", arrays)
    assert caught.value.location is not None


def test_an_rmsnorm_with_an_inter_tile_all_reduce_matches_numpy() -> None:
    x = RNG.standard_normal((16, 4096)).astype(np.float16)
    outputs, report = ktdp.run(
        KERNELS / "rmsnorm_distributed.mlir", "rmsnorm", {"x": x, "y": np.zeros_like(x)}
    )
    wide = x.astype(np.float32)
    expected = wide / np.sqrt((wide**2).mean(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(outputs["y"].astype(np.float32), expected, atol=4e-3, rtol=4e-3)
    ring = report.kernels[0].busy[:, 3]
    # 4 tiles: 3 steps to add the partials (16 fp32 each) and 3 hops back to every tile.
    step = SPYRE.ring_hop_cycles + max(64 / SPYRE.ring_bytes_per_cycle, 16 * SPYRE.psum_us_per_element * 1500)
    assert ring == pytest.approx(
        np.full(4, 3 * step + 3 * (SPYRE.ring_hop_cycles + 64 / SPYRE.ring_bytes_per_cycle))
    )


def test_rope_with_slices_matches_numpy() -> None:
    """rotate_half from tensor.extract_slice / insert_slice, each op rounded to fp16."""
    x = RNG.standard_normal((2048, 128)).astype(np.float16)
    angles = RNG.uniform(0, 6.28, (2048, 128))
    cos, sin = np.cos(angles).astype(np.float16), np.sin(angles).astype(np.float16)
    arrays = {"x": x, "cos": cos, "sin": sin, "out": np.zeros_like(x)}
    outputs, _ = ktdp.run(KERNELS / "rope_small.mlir", "rope", arrays)
    rotated = np.concatenate([-x[:, 64:], x[:, :64]], 1)
    expected = (x.astype(np.float32) * cos).astype(np.float16).astype(np.float32) + (
        rotated.astype(np.float32) * sin
    ).astype(np.float16).astype(np.float32)
    np.testing.assert_array_equal(outputs["out"], expected.astype(np.float16))


def test_an_array_placed_in_a_cores_scratchpad() -> None:
    x = RNG.standard_normal((4, 64)).astype(np.float16)
    scale = np.full((1, 64), 0.5, np.float16)
    arrays = {"x": x, "y": np.zeros_like(x), "scale": scale}
    outputs, _ = ktdp.run(KERNELS / "lx_scale.mlir", "scale", arrays, place={"scale": (0, 0)})
    np.testing.assert_array_equal(outputs["y"], (x.astype(np.float32) * 0.5).astype(np.float16))
    np.testing.assert_array_equal(outputs["scale"], scale)


def test_placements_that_overlap_are_refused() -> None:
    arrays = {"x": np.zeros((4, 64), np.float16), "y": np.zeros((4, 64), np.float16)}
    with pytest.raises(KtdpError, match="'y' at 128 overlaps 'x'"):
        ktdp.run(KERNELS / "add.mlir", "add", arrays, place={"x": (0, None), "y": (128, None)})


def test_a_grid_larger_than_the_chip_is_refused() -> None:
    a = np.zeros((96, 64), np.float16)
    with pytest.raises(KtdpError, match="a grid of 64 tiles does not fit the 32 cores") as info:
        ktdp.run(KERNELS / "add.mlir", "add", {"a": a, "b": a, "c": a}, grid=[64])
    assert info.value.location is not None  # at the function, whose grid it is


def test_an_access_outside_memory_is_located() -> None:
    small = np.zeros((32, 64), np.float16)  # the kernel reads 96 rows
    with pytest.raises(KtdpError, match="reaches element") as caught:
        ktdp.run(KERNELS / "add.mlir", "add", {"a": small, "b": small, "c": small})
    assert caught.value.location is not None


def test_a_missing_input_is_named() -> None:
    with pytest.raises(KtdpError, match="no input array 'c' for argument %c"):
        ktdp.run(KERNELS / "add.mlir", "add", {"a": np.zeros((96, 64)), "b": np.zeros((96, 64))})


@pytest.mark.slow
def test_a_layernorm_with_a_ragged_row_loop_matches_numpy() -> None:
    """1151 rows on 32 tiles, rows t, t + 32, ...: tile 31 runs 35 rows, the others 36."""
    x = (RNG.standard_normal((1151, 8192)) * 2 + 0.5).astype(np.float16)
    w = (1 + RNG.standard_normal((1, 8192)) / 10).astype(np.float16)
    b = (RNG.standard_normal((1, 8192)) / 10).astype(np.float16)
    arrays = {"x": x, "w": w, "b": b, "y": np.zeros_like(x)}
    arrays |= {"mean": np.zeros(1151, np.float32), "rstd": np.zeros(1151, np.float32)}
    outputs, report = ktdp.run(KERNELS / "layernorm.mlir", "layernorm", arrays)
    wide = x.astype(np.float64)
    mean, rstd = wide.mean(1), 1 / np.sqrt(wide.var(1) + 1e-5)
    np.testing.assert_allclose(outputs["mean"], mean, atol=1e-6)
    np.testing.assert_allclose(outputs["rstd"], rstd, rtol=1e-6)
    expected = (wide - mean[:, None]) * rstd[:, None] * w + b
    np.testing.assert_allclose(outputs["y"].astype(np.float64), expected, atol=4e-3, rtol=2e-3)
    dma = report.kernels[0].busy[:, 0]
    assert (dma[:31] == dma[0]).all() and dma[31] < dma[0]  # tile 31's 36th row is masked
    # Three reads of x, y once, a stick each for a row's mean and rstd; w and b once per
    # iteration for each cohort of 8 tiles (36 iterations, 4 cohorts of the 32 or 31 tiles).
    assert report.kernels[0].bytes == 3 * x.nbytes + x.nbytes + 1151 * 2 * 128 + 36 * 4 * 2 * w.nbytes


def test_tiles_past_their_last_iteration_store_and_carry_nothing() -> None:
    """Tiles 0-7 sum two rows, 8-23 one, 24-31 none (their sum stays zero)."""
    x = RNG.standard_normal((24, 64)).astype(np.float16)
    arrays = {"x": x, "out": np.full((32, 64), 7, np.float32)}
    outputs, report = ktdp.run(KERNELS / "ragged.mlir", "ragged", arrays)
    expected = np.zeros((32, 64), np.float32)
    for t in range(24):
        expected[t] = x[t:24:16].astype(np.float32).sum(0)
    np.testing.assert_array_equal(outputs["out"], expected)
    # 32 row loads of one stick, 32 stores of 2 sticks (64 fp32).
    assert report.kernels[0].bytes == 32 * 128 + 32 * 256


def test_batch_matmul_div_and_a_short_reduce_match_numpy() -> None:
    q = RNG.standard_normal((2, 8, 16)).astype(np.float32)
    k = RNG.standard_normal((2, 16, 64)).astype(np.float32)
    n = RNG.uniform(1, 2, (2, 8, 64)).astype(np.float32)
    arrays = {"q": q, "k": k, "n": n, "out": np.zeros((2, 8), np.float32)}
    outputs, report = ktdp.run(KERNELS / "batched.mlir", "batched", arrays)
    np.testing.assert_allclose(outputs["out"], ((q @ k) / n).sum(2), rtol=1e-5, atol=1e-5)
    assert report.matmul_flops == 2 * 2 * 8 * 16 * 64


@pytest.mark.parametrize("function", ["captured", "operand", "loaded"])
def test_a_generic_masks_with_a_per_tile_length(function: str) -> None:
    x = RNG.standard_normal((2, 8)).astype(np.float32)
    arrays = {"x": x, "y": np.zeros_like(x)} | (
        {"n": np.array([3, 5], np.int32)} if function == "loaded" else {}
    )
    outputs, _ = ktdp.run(KERNELS / "masks.mlir", function, arrays)
    lengths = [3, 5] if function == "loaded" else [3, 4]
    expected = np.where(np.arange(8) < np.array(lengths)[:, None], x, -np.inf)
    np.testing.assert_array_equal(outputs["y"], expected)


def test_kernel_text_may_start_with_a_comment() -> None:
    text = "// the RFC add\n" + (KERNELS / "add.mlir").read_text(encoding="utf-8")
    a = RNG.standard_normal((96, 64)).astype(np.float16)
    outputs, _ = ktdp.run(text, "add", {"a": a, "b": a, "c": np.zeros_like(a)})
    np.testing.assert_array_equal(outputs["c"], (2 * a.astype(np.float32)).astype(np.float16))


def test_a_kernel_file_that_is_missing_is_named() -> None:
    with pytest.raises(KtdpError, match=r"cannot read 'no/such\.mlir'"):
        ktdp.run("no/such.mlir", "add", {})


def test_a_distributed_view_over_lpddr5_and_two_scratchpads() -> None:
    a, b, c = (RNG.standard_normal((64, 64)).astype(np.float16) for _ in range(3))
    column_major = np.ascontiguousarray(b.T)  # core 0's piece, stored column by column
    arrays = {"a": a, "b": column_major, "c": c, "out": np.zeros((192, 64), np.float16)}
    outputs, report = ktdp.run(KERNELS / "distributed.mlir", "copy", arrays, place={"b": (0, 0), "c": (0, 1)})
    np.testing.assert_array_equal(outputs["out"], np.concatenate([a, b, c]))
    twice = [(2 * x.astype(np.float32)).astype(np.float16) for x in (a, b, c)]
    np.testing.assert_array_equal(outputs["a"], twice[0])
    np.testing.assert_array_equal(outputs["b"], np.ascontiguousarray(twice[1].T))
    np.testing.assert_array_equal(outputs["c"], twice[2])
    # LPDDR5: a read and written once (64 rows of one stick), out written once (192 rows).
    assert report.kernels[0].bytes == (2 * 64 + 192) * 128


def test_a_point_outside_every_member_is_located() -> None:
    text = (KERNELS / "distributed.mlir").read_text(encoding="utf-8")
    text = text.replace("(d0 - 128 >= 0, -d0 + 191 >= 0", "(d0 - 128 >= 0, -d0 + 190 >= 0")
    arrays = {k: np.zeros((64, 64), np.float16) for k in "abc"} | {"out": np.zeros((192, 64), np.float16)}
    with pytest.raises(KtdpError, match="lies in no member of its distributed view") as caught:
        ktdp.run(text, "copy", arrays, place={"b": (0, 0), "c": (0, 1)})
    assert caught.value.location is not None


def test_generics_with_reduction_iterators_match_numpy() -> None:
    x = RNG.standard_normal((64, 32)).astype(np.float16)
    w = RNG.standard_normal((32, 64)).astype(np.float16)
    y0 = RNG.standard_normal((64, 64)).astype(np.float32)
    arrays = {"x": x, "w": w, "y": y0, "m": np.zeros(64, np.float16)}
    outputs, _ = ktdp.run(KERNELS / "generic_reduce.mlir", "reduce", arrays)
    expected = x.astype(np.float64) @ w.astype(np.float64) + y0
    np.testing.assert_allclose(outputs["y"], expected, rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(outputs["m"], np.abs(x).max(1))


def test_a_reducing_generic_without_a_combiner_is_located() -> None:
    text = (KERNELS / "generic_reduce.mlir").read_text(encoding="utf-8")
    text = text.replace("%mx = arith.maximumf %acc, %abs : f16", "%mx = arith.subf %acc, %abs : f16")
    arrays = {"x": np.zeros((64, 32), np.float16), "w": np.zeros((32, 64), np.float16)}
    arrays |= {"y": np.zeros((64, 64), np.float32), "m": np.zeros(64, np.float16)}
    with pytest.raises(
        KtdpError, match=r"output 0 of a linalg\.generic does not combine its accumulator"
    ) as caught:
        ktdp.run(text, "reduce", arrays)
    assert caught.value.location is not None


def test_tensors_that_overflow_the_scratchpad_are_located() -> None:
    """x, exp(x) and their sum: 3 MiB live at the add on a 2 MiB LX."""
    x = np.zeros((512, 1024), np.float16)
    with pytest.raises(KtdpError, match=r"LX overflow: 3,145,728 bytes live on each tile") as caught:
        ktdp.run(KERNELS / "wide.mlir", "wide", {"x": x, "y": x})
    assert caught.value.location is not None and caught.value.location.line == 10  # the add


def test_a_larger_scratchpad_holds_them() -> None:
    x = RNG.standard_normal((512, 1024)).astype(np.float16)
    target = replace(SPYRE, lx_bytes=4 << 20)
    outputs, _ = ktdp.run(KERNELS / "wide.mlir", "wide", {"x": x, "y": np.zeros_like(x)}, target=target)
    exp = np.exp(x.astype(np.float32)).astype(np.float16)  # exp rounds to fp16, then the add does
    expected = (x.astype(np.float32) + exp.astype(np.float32)).astype(np.float16)
    np.testing.assert_allclose(outputs["y"].astype(np.float32), expected.astype(np.float32), rtol=2e-3)


def test_a_loop_past_the_iteration_budget_is_located() -> None:
    text = (KERNELS / "ragged.mlir").read_text(encoding="utf-8")
    text = text.replace("%c16 = arith.constant 16 : index", "%c16 = arith.constant 1 : index")
    text = text.replace("%c24 = arith.constant 24 : index", "%c24 = arith.constant 99999999999 : index")
    arrays = {"x": np.zeros((24, 64), np.float16), "out": np.zeros((32, 64), np.float32)}
    with pytest.raises(KtdpError, match="runs more than 1,000,000 loop iterations") as caught:
        ktdp.run(text, "ragged", arrays)
    assert caught.value.location is not None


def test_a_kernel_file_that_is_not_utf8_is_located(tmp_path: Path) -> None:
    path = tmp_path / "bad.mlir"
    path.write_bytes((KERNELS / "add.mlir").read_bytes().replace(b"%a", b"%\xf4a", 1))
    with pytest.raises(DiagnosticError, match="not valid UTF-8") as caught:
        ktdp.run(path, "add", {})
    assert caught.value.diagnostics[0].location is not None


def test_a_masked_tile_whose_carried_address_left_the_view_does_not_fail() -> None:
    x = RNG.standard_normal((3, 64)).astype(np.float32)
    outputs, _ = ktdp.run(KERNELS / "carried.mlir", "carried", {"x": x, "out": np.zeros((2, 64), np.float32)})
    np.testing.assert_array_equal(outputs["out"], np.stack([x[0] + x[1], x[2]]))


def test_a_tile_with_no_iteration_at_the_end_of_the_view_does_not_fail() -> None:
    """Tile 1 starts at row 3 (past the 3-row view) and runs nothing: its sum stays zero."""
    text = (KERNELS / "carried.mlir").read_text(encoding="utf-8")
    text = text.replace(
        "%start = arith.muli %t, %c2 : index",
        "%c3 = arith.constant 3 : index\n  %start = arith.muli %t, %c3 : index",
    )
    text = text.replace(
        "%n = arith.subi %c2, %t : index",
        "%n = arith.muli %c2, %t : index\n  %n1 = arith.subi %c2, %n : index",
    )
    text = text.replace("to %n step", "to %n1 step")
    x = RNG.standard_normal((3, 64)).astype(np.float32)
    outputs, _ = ktdp.run(text, "carried", {"x": x, "out": np.zeros((2, 64), np.float32)})
    np.testing.assert_array_equal(outputs["out"], np.stack([x[0] + x[1], np.zeros(64, np.float32)]))


def test_a_distributed_member_smaller_than_its_set_is_located() -> None:
    text = (KERNELS / "distributed.mlir").read_text(encoding="utf-8")
    # a's set reaches row 95, but its view holds 64 rows
    text = text.replace(
        "(d0 >= 0, -d0 + 63 >= 0, d1 >= 0, -d1 + 63 >= 0)>",
        "(d0 >= 0, -d0 + 95 >= 0, d1 >= 0, -d1 + 63 >= 0)>",
        1,
    )
    arrays = {k: np.zeros((64, 64), np.float16) for k in "abc"} | {"out": np.zeros((192, 64), np.float16)}
    with pytest.raises(
        KtdpError, match="member 0 of the distributed view covers a point outside its own sizes"
    ):
        ktdp.run(text, "copy", arrays, place={"b": (0, 0), "c": (0, 1)})


def test_a_reduce_whose_body_computes_its_term_matches_numpy() -> None:
    """The region form with a sum of squares (mulf, then addf into the accumulator)."""
    text = (KERNELS / "rmsnorm.mlir").read_text(encoding="utf-8")
    assert "%r = arith.addf %in, %acc : f32" in text
    x = RNG.standard_normal((512, 4096)).astype(np.float16)
    w = np.ones((1, 4096), np.float16)
    squared_in_body = text.replace(
        "%sq = arith.mulf %a32, %a32 : tensor<16x4096xf32>",
        "%sq = arith.addf %a32, %a32 : tensor<16x4096xf32>",
    )
    squared_in_body = squared_in_body.replace(
        "ins(%sq : tensor<16x4096xf32>)", "ins(%a32 : tensor<16x4096xf32>)"
    )
    squared_in_body = squared_in_body.replace(
        "%r = arith.addf %in, %acc : f32",
        "%sq2 = arith.mulf %in, %in : f32\n      %r = arith.addf %sq2, %acc : f32",
    )
    outputs, _ = ktdp.run(squared_in_body, "rmsnorm", {"x": x, "w": w, "y": np.zeros_like(x)})
    wide = x.astype(np.float32)
    expected = wide / np.sqrt((wide**2).mean(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(outputs["y"].astype(np.float32), expected, atol=8e-3, rtol=4e-3)


def test_an_index_op_the_engine_lacks_is_located() -> None:
    text = (KERNELS / "add.mlir").read_text(encoding="utf-8")
    text = text.replace("%row = arith.muli %id, %c3 : index", "%row = arith.xori %id, %c3 : index")
    a = np.zeros((96, 64), np.float16)
    with pytest.raises(KtdpError, match=r"'arith\.xori' is not supported by the ktdp engine") as caught:
        ktdp.run(text, "add", {"a": a, "b": a, "c": a})
    assert caught.value.location is not None


def test_nested_loops_with_per_tile_trip_counts_match_numpy() -> None:
    x = RNG.standard_normal((25, 64)).astype(np.float16)
    outputs, report = ktdp.run(
        KERNELS / "nested_ragged.mlir", "nested", {"x": x, "out": np.zeros((4, 64), np.float32)}
    )
    expected = np.zeros((4, 64), np.float32)
    for t in range(4):
        for r in range(t, 5, 4):
            for c in range(r + 1):
                expected[t] += x[5 * r + c].astype(np.float32)
    np.testing.assert_array_equal(outputs["out"], expected)
    # 1 + 5 + 2 + 3 + 4 = 15 one-stick rows read, 4 rows of 2 sticks written.
    assert report.kernels[0].bytes == 15 * 128 + 4 * 256


def test_a_distributed_tile_in_transposed_order() -> None:
    """The same copy with both access tiles enumerated column by column (order (d1, d0))."""
    text = (KERNELS / "distributed.mlir").read_text(encoding="utf-8")
    text = text.replace(
        "#full = affine_map<(d0, d1) -> (d0, d1)>", "#full = affine_map<(d0, d1) -> (d1, d0)>"
    )
    text = text.replace("access_tile<96x64xindex>", "access_tile<64x96xindex>").replace(
        "<96x64xindex>", "<64x96xindex>"
    )
    text = text.replace("tensor<96x64xf16>", "tensor<64x96xf16>")
    a, b, c = (RNG.standard_normal((64, 64)).astype(np.float16) for _ in range(3))
    arrays = {"a": a, "b": np.ascontiguousarray(b.T), "c": c, "out": np.zeros((192, 64), np.float16)}
    outputs, _ = ktdp.run(text, "copy", arrays, place={"b": (0, 0), "c": (0, 1)})
    np.testing.assert_array_equal(outputs["out"], np.concatenate([a, b, c]))
    np.testing.assert_array_equal(outputs["c"], (2 * c.astype(np.float32)).astype(np.float16))


def test_written_only_gives_the_arrays_a_store_reached() -> None:
    a = np.arange(96 * 64, dtype=np.float16).reshape(96, 64) / 64
    arrays = {"a": a, "b": a, "c": np.zeros_like(a)}
    everything, _ = ktdp.run(KERNELS / "add.mlir", "add", arrays)
    written, _ = ktdp.run(KERNELS / "add.mlir", "add", arrays, written_only=True)
    assert sorted(everything) == ["a", "b", "c"]
    assert list(written) == ["c"]
    np.testing.assert_array_equal(written["c"], everything["c"])


def test_a_kernel_reducing_over_the_ring_writes_only_its_output() -> None:
    distributed = KERNELS / "rmsnorm_distributed.mlir"
    x = RNG.standard_normal((16, 4096)).astype(np.float16)
    written, _ = ktdp.run(distributed, "rmsnorm", {"x": x, "y": np.zeros_like(x)}, written_only=True)
    assert list(written) == ["y"]
