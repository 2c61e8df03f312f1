"""Placed inter-tile deliveries and a reduce's dependency set on the ktdp engine: values, errors, cost."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ktir.ktdp_engine as ktdp
from ktir.hardware.target import SPYRE
from ktir.ktdp_engine.memory import KtdpError

KERNEL = Path(__file__).resolve().parents[2] / "lit" / "Inputs" / "ktdp" / "placed.mlir"

GATHER_ONLY = """
#all = affine_set<(i)[g] : (i >= 0, -i + 3 >= 0)>
#one = affine_set<(g) : (g == 0)>
#rows = affine_set<(d0, d1) : (d0 >= 0, -d0 + 3 >= 0, d1 >= 0, -d1 + 63 >= 0)>
#row = affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 63 >= 0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @gather(%x: index) attributes {grid = [4]} {
  %id = ktdp.get_compute_tile_id : index
  %vx = ktdp.construct_memory_view %x, sizes: [4, 64], strides: [64, 1] {coordinate_set = #rows, memory_space = #ktdp.memory_space<global>} : memref<4x64xf32>
  %tx = ktdp.construct_access_tile %vx[%id, 0] {access_tile_set = #row, access_tile_order = #id2} : memref<4x64xf32> -> !ktdp.access_tile<1x64xindex>
  %mine = ktdp.load %tx : <1x64xindex> -> tensor<1x64xf32>
  %f = ktdp.inter_tile_produce producer_tiles_per_group = #all -> <(tensor<1x64xf32>), groups = #one> {
  ^bb0(%gid: index):
    ktdp.yield_partial %mine : tensor<1x64xf32>
  }
  %r = ktdp.inter_tile_gather(%f) consumer_tiles_per_group = #all, gather_dimensions = [0]DEPENDENCY : <(tensor<1x64xf32>), groups = #one> -> tensor<ROWSx64xf32>
  return
}
"""  # noqa: E501


def test_each_placement_delivers_what_its_contract_says():
    x = np.arange(256, dtype=np.float32).reshape(4, 64)
    outputs, _ = ktdp.run(
        KERNEL,
        "placed",
        {"x": x, "g": np.zeros((16, 64), np.float32), "rs": np.zeros((1, 64), np.float32),
         "a": np.zeros((4, 64), np.float32), "s": np.zeros((1, 64), np.float32),
         "pre": np.zeros((4, 64), np.float32)},
    )  # fmt: skip
    assert np.array_equal(outputs["g"], np.tile(x, (4, 1)))  # every tile holds the four rows in tile order
    assert np.array_equal(outputs["rs"][0], x.sum(axis=0))  # tile i kept columns 16i.. of the sum
    assert np.array_equal(outputs["a"], x)  # tile i holds columns 16i.. of every row, rows in tile order
    assert np.array_equal(outputs["s"][0], x[0])  # tile i holds part i of tile 0's row
    assert np.array_equal(outputs["pre"], np.cumsum(x, axis=0))  # a reduce over producers p <= c


@pytest.mark.parametrize(
    ("function", "message"),
    [
        ("short_result", "consumer tile 0 receives a \\[4, 64\\] tensor, the result type is \\[2, 64\\]"),
        ("uneven_scatter", "consumer tile 0: the extent 64 over axes \\[1\\] does not split into 3 parts"),
    ],
)
def test_a_placement_the_result_type_cannot_hold_is_a_located_error(function, message):
    with pytest.raises(KtdpError, match=message) as info:
        ktdp.run(KERNEL, function, {"x": np.zeros((4, 64), np.float32)})
    assert info.value.location is not None


def test_a_gather_costs_a_ring_hop_per_remote_partial(tmp_path):
    # Every tile gathering all four rows receives three remote 256-byte partials; gathering only
    # its own (a dependency set naming itself) receives none. Nothing else differs.
    everyone = tmp_path / "everyone.mlir"
    everyone.write_text(GATHER_ONLY.replace("DEPENDENCY", "").replace("ROWS", "4"))
    itself = tmp_path / "itself.mlir"
    itself.write_text(
        GATHER_ONLY.replace(
            "DEPENDENCY", ", producer_dependency_per_consumer = affine_set<(p)[c] : (p - c == 0)>"
        ).replace("ROWS", "1")
    )
    x = {"x": np.zeros((4, 64), np.float32)}
    hop = SPYRE.ring_hop_cycles + 256 / SPYRE.ring_bytes_per_cycle
    extra = ktdp.run(everyone, "gather", x)[1].total_cycles - ktdp.run(itself, "gather", x)[1].total_cycles
    assert extra == pytest.approx(3 * hop)


def test_two_groups_reduce_their_own_pairs() -> None:
    x = np.arange(256, dtype=np.float32).reshape(4, 64)
    outputs, _ = ktdp.run(KERNEL.parent / "groups.mlir", "pair_sums", {"x": x, "y": np.zeros_like(x)})
    assert np.array_equal(outputs["y"], np.repeat(x.reshape(2, 2, 64).sum(axis=1), 2, axis=0))
