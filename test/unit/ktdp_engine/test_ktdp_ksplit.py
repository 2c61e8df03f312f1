"""
The ktdp forms of a K-split kernel on the ktdp engine (ktir/ktdp_engine/): a store by some tiles only
(an `scf.if` whose condition differs between tiles), a ring reduction into each group's first
tile, an accumulator's `linalg.fill`, and an f16 matmul accumulating into f32 — each charged
as ktir's simulator charges `dma_store ... writers`, `ring_reduce` and `lx_fill`.
"""

from __future__ import annotations

import numpy as np
import pytest

import ktir.ktdp_engine as ktdp
from ktir.hardware import cost_model
from ktir.hardware.target import SPYRE
from ktir.ktdp_engine import engine

_SET = "affine_set<(d0, d1) : (d0 >= 0, -d0 + 3 >= 0, d1 >= 0, -d1 + 63 >= 0)>"
_ROW = "affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 63 >= 0)>"
_ORDER = "affine_map<(d0, d1) -> (d0, d1)>"


def _views(element: str = "f16") -> str:
    return "\n".join(
        f"  %v{name} = ktdp.construct_memory_view %{name}, sizes: [4, 64], strides: [64, 1] "
        f"{{coordinate_set = {_SET}, memory_space = #ktdp.memory_space<global>}} : memref<4x64x{element}>\n"
        f"  %t{name} = ktdp.construct_access_tile %v{name}[%id, 0] {{access_tile_set = {_ROW}, "
        f"access_tile_order = {_ORDER}}} : memref<4x64x{element}> -> !ktdp.access_tile<1x64xindex>"
        for name in ("x", "y")
    )


def _programs(monkeypatch: pytest.MonkeyPatch) -> list[engine.TileProgram]:
    """The programs `ktdp.run` makes, to look at their timelines."""
    programs: list[engine.TileProgram] = []
    original = engine.TileProgram.__init__

    def keep(self: engine.TileProgram, *args: object, **kwargs: object) -> None:
        original(self, *args, **kwargs)  # type: ignore[arg-type]
        programs.append(self)

    monkeypatch.setattr(engine.TileProgram, "__init__", keep)
    return programs


def test_a_store_under_a_condition_that_differs_between_tiles_stores_on_its_tiles_only() -> None:
    # Each of 4 tiles loads its row; the even tiles store it, the odd ones store its negation.
    text = f"""func.func @k(%x: index, %y: index) attributes {{grid = [4]}} {{
  %id = ktdp.get_compute_tile_id : index
{_views()}
  %a = ktdp.load %tx : <1x64xindex> -> tensor<1x64xf16>
  %two = arith.constant 2 : index
  %zero = arith.constant 0 : index
  %r = arith.remui %id, %two : index
  %even = arith.cmpi eq, %r, %zero : index
  %b = scf.if %even -> (tensor<1x64xf16>) {{
    scf.yield %a : tensor<1x64xf16>
  }} else {{
    %n = arith.negf %a : tensor<1x64xf16>
    scf.yield %n : tensor<1x64xf16>
  }}
  scf.if %even {{
    ktdp.store %b, %ty : tensor<1x64xf16>, <1x64xindex>
  }}
  return
}}
"""
    x = np.arange(256, dtype=np.float16).reshape(4, 64)
    outputs, report = ktdp.run(text, "k", {"x": x, "y": np.zeros_like(x)})
    assert np.array_equal(outputs["y"][[0, 2]], x[[0, 2]])
    assert not outputs["y"][[1, 3]].any()
    # 4 rows loaded, 2 stored, 128 bytes each; the negation runs on the odd tiles' SFU only
    assert report.kernels[0].bytes == 6 * 128
    busy = report.kernels[0].busy
    assert (busy[[1, 3], 2] > 0).all() and not busy[[0, 2], 2].any()


def _ring(consumers: str) -> str:
    """Every tile's row of x, its pair's rows added on the ring for the pair's `consumers`, stored as y."""
    return f"""func.func @k(%x: index, %y: index) attributes {{grid = [4]}} {{
  %id = ktdp.get_compute_tile_id : index
{_views("f32")}
  %a = ktdp.load %tx : <1x64xindex> -> tensor<1x64xf32>
  %f = ktdp.inter_tile_produce producer_tiles_per_group = affine_set<(d0)[s0] : (d0 - s0 * 2 >= 0, -d0 + s0 * 2 + 1 >= 0)> -> <(tensor<1x64xf32>), groups = affine_set<(d0) : (d0 >= 0, -d0 + 1 >= 0)>> {{
  ^bb0(%g: index):
    ktdp.yield_partial %a : tensor<1x64xf32>
  }}
  %identity = arith.constant dense<-0.0> : tensor<1x64xf32>
  %s = ktdp.inter_tile_reduce(%f) consumer_tiles_per_group = {consumers}, identity(%identity : tensor<1x64xf32>) : <(tensor<1x64xf32>), groups = affine_set<(d0) : (d0 >= 0, -d0 + 1 >= 0)>> -> tensor<1x64xf32> {{
  ^bb0(%l: tensor<1x64xf32>, %r: tensor<1x64xf32>):
    %sum = arith.addf %l, %r : tensor<1x64xf32>
    ktdp.yield_reduced %sum : tensor<1x64xf32>
  }}
  ktdp.store %s, %ty : tensor<1x64xf32>, <1x64xindex>
  return
}}
"""  # noqa: E501


def test_a_ring_reduction_into_each_pairs_first_tile_takes_ktirs_ring_reduce(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    programs = _programs(monkeypatch)
    x = np.random.default_rng(0).standard_normal((4, 64)).astype(np.float32)
    first = "affine_set<(d0)[s0] : (d0 - s0 * 2 == 0)>"
    outputs, report = ktdp.run(_ring(first), "k", {"x": x, "y": np.zeros_like(x)})
    assert np.array_equal(outputs["y"][[0, 2]], x[[0, 2]] + x[[1, 3]])
    assert not outputs["y"][[1, 3]].any()  # a tile that consumes nothing gets the identity
    ring = next(e for e in programs[0].schedule.timeline.events if e.queue == "ring")
    # ktir's ring_reduce over groups of 2: one step, the sum stays on the first tile (no hop
    # back), each pair starting together; the combiner's adds are the step's (no SFU, no FLOPs)
    want = cost_model.ring_cycles(64, 4, 2, SPYRE)
    assert np.allclose(ring.end - ring.start, want)
    assert report.kernels[0].flops == 0 and not report.kernels[0].busy[:, 2].any()


def test_an_all_reduce_brings_the_sum_back_to_every_consumer(monkeypatch: pytest.MonkeyPatch) -> None:
    programs = _programs(monkeypatch)
    x = np.random.default_rng(1).standard_normal((4, 64)).astype(np.float32)
    pair = "affine_set<(d0)[s0] : (d0 - s0 * 2 >= 0, -d0 + s0 * 2 + 1 >= 0)>"
    outputs, _ = ktdp.run(_ring(pair), "k", {"x": x, "y": np.zeros_like(x)})
    assert np.array_equal(outputs["y"], np.repeat(x[[0, 2]] + x[[1, 3]], 2, axis=0))
    ring = next(e for e in programs[0].schedule.timeline.events if e.queue == "ring")
    hop = SPYRE.ring_hop_cycles + 64 * 4 / SPYRE.ring_bytes_per_cycle
    assert np.allclose(ring.end - ring.start, cost_model.ring_cycles(64, 4, 2, SPYRE) + hop)


def test_an_f16_matmul_accumulates_into_a_filled_f32_tensor_at_ktirs_costs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    programs = _programs(monkeypatch)
    text = f"""func.func @k(%x: index, %y: index) attributes {{grid = [4]}} {{
  %id = ktdp.get_compute_tile_id : index
{_views()}
  %a = ktdp.load %tx : <1x64xindex> -> tensor<1x64xf16>
  %w = arith.constant dense<1.0> : tensor<64x64xf16>
  %one = arith.constant 0.5 : f32
  %e = tensor.empty() : tensor<1x64xf32>
  %acc = linalg.fill ins(%one : f32) outs(%e : tensor<1x64xf32>) -> tensor<1x64xf32>
  %p = linalg.matmul ins(%a, %w : tensor<1x64xf16>, tensor<64x64xf16>) outs(%acc : tensor<1x64xf32>) -> tensor<1x64xf32>
  %e16 = tensor.empty() : tensor<1x64xf16>
  %r = linalg.generic {{indexing_maps = [{_ORDER}, {_ORDER}], iterator_types = ["parallel", "parallel"]}} ins(%p : tensor<1x64xf32>) outs(%e16 : tensor<1x64xf16>) {{
  ^bb0(%v: f32, %o: f16):
    %t = arith.truncf %v : f32 to f16
    linalg.yield %t : f16
  }} -> tensor<1x64xf16>
  ktdp.store %r, %ty : tensor<1x64xf16>, <1x64xindex>
  return
}}
"""  # noqa: E501
    x = np.random.default_rng(2).standard_normal((4, 64)).astype(np.float16)
    outputs, _ = ktdp.run(text, "k", {"x": x, "y": np.zeros_like(x)})
    want = (x.astype(np.float32).sum(axis=1, keepdims=True) + np.float32(0.5)).astype(np.float16)
    assert np.array_equal(outputs["y"], np.broadcast_to(want, (4, 64)))
    fill = next(e for e in programs[0].schedule.timeline.events if e.label == "linalg.fill")
    # an LX write of the 1 x 64 f32 tile (two 128-byte sticks) at copy speed, as ktir's lx_fill
    assert np.allclose(fill.end - fill.start, cost_model.fill_cycles(256, SPYRE))
