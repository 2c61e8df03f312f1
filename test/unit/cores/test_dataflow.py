"""The matmul dataflow model (`ktir.cores.dataflow`) and the roofline yardstick it is judged by."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import check_never_faster_than_physics, compiled
from hypothesis import given, settings
from hypothesis import strategies as st

import ktir
from ktir.cores import dataflow
from ktir.cores.dataflow import Handoff, best_schedule, is_matmul, memory_bound, ranked_cuts, ranked_splits
from ktir.cores.iteration import iteration_space
from ktir.hardware.target import SPYRE
from ktir.ir.context import make_context
from ktir.ir.diagnostics import parse_module
from ktir.ir.values import functions_of


def matmul_text(m: int, k: int, n: int) -> str:
    """`x @ w` in graph-level ktir, fp16."""
    x, w, y = f"tensor<{m}x{k}xf16>", f"tensor<{k}x{n}xf16>", f"tensor<{m}x{n}xf16>"
    body = f"  %y = ktir.matmul %x, %w : {x}, {w} -> {y}\n  return %y : {y}\n"
    return f"func.func @mm(%x: {x}, %w: {w}) -> {y} {{\n{body}}}"


def matmul_space(m: int, k: int, n: int):
    """The iteration space of `x @ w` after the layout passes."""
    module = parse_module(make_context(), matmul_text(m, k, n))
    ktir.run_pipeline(module, "ktir-propagate-layouts,ktir-insert-restickify,ktir-pad-matmul")
    op = next(o for o in functions_of(module)[0].body.block.ops if o.name == "ktir.matmul")
    space = iteration_space(op)
    assert space is not None and is_matmul(space)
    return space


def test_prefill_up_projection_reads_every_byte_once() -> None:
    """
    The worked example: 512 x 4096 x 14336 on 32 cores, {m: 8, n: 4}, x's whole slice kept in
    LX while N is cut in 4 and K in 16, so a core accumulates 64 x 896 = 57,344 outputs per tile,
    within the PE arrays' 65,536 (one output chunk per core, {m: 4, n: 8} with K cut in 64, would
    accumulate 229,376 and stream 0.81 of its operands again; the stores of the earlier output
    chunks pay the read/write turnaround while later chunks load): traffic 1.0.
    """
    schedule = best_schedule(matmul_space(512, 4096, 14336), 32, SPYRE.lx_usable_bytes, SPYRE)
    assert schedule is not None
    assert schedule.splits == {"m": 8, "n": 4, "k": 1}
    assert schedule.cuts == {"m": 1, "n": 4, "k": 16}
    assert schedule.whole_x
    compulsory = (512 * 4096 + 4096 * 14336 + 512 * 14336) * 2
    assert schedule.traffic == compulsory


def test_the_choice_is_deterministic_and_fits_lx() -> None:
    space = matmul_space(2048, 4096, 4096)
    first = best_schedule(space, 32, SPYRE.lx_usable_bytes, SPYRE)
    assert first == best_schedule(space, 32, SPYRE.lx_usable_bytes, SPYRE)
    assert first is not None and math.prod(first.splits.values()) <= 32
    ranked = ranked_cuts(space, first.splits, SPYRE.lx_usable_bytes, SPYRE)
    assert ranked[0].cuts == first.cuts  # the same model ranks chunkings for the chosen split
    assert [r.cycles for r in ranked] == sorted(r.cycles for r in ranked)


def test_less_lx_means_more_chunks() -> None:
    space = matmul_space(512, 4096, 4096)
    roomy = best_schedule(space, 32, SPYRE.lx_usable_bytes, SPYRE)
    tight = best_schedule(space, 32, SPYRE.lx_usable_bytes // 8, SPYRE)
    assert roomy is not None and tight is not None
    assert math.prod(tight.cuts.values()) > math.prod(roomy.cuts.values())
    assert best_schedule(space, 32, 1024, SPYRE) is None  # nothing fits 1 KiB


@settings(max_examples=12, deadline=None)
@given(
    m=st.integers(1, 300),
    k=st.integers(1, 300),
    n=st.integers(1, 300),
    cores=st.sampled_from([1, 2, 3, 4, 8, 16, 32]),
)
def test_no_matmul_is_faster_than_its_bound(m: int, k: int, n: int, cores: int) -> None:
    module = compiled(matmul_text(m, k, n), cores)
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((m, k)).astype(np.float16), rng.standard_normal((k, n)).astype(np.float16)]
    result = ktir.sim.simulate(module, inputs)
    check_never_faster_than_physics(result.report)
    expected = inputs[0].astype(np.float64) @ inputs[1].astype(np.float64)
    scale = np.abs(inputs[0]).astype(np.float64) @ np.abs(inputs[1]).astype(np.float64)
    # fp32 accumulation then one fp16 rounding: within one fp16 ulp plus k fp32 ulps of the scale.
    bound = np.spacing(np.abs(expected).astype(np.float16)).astype(np.float64) + scale * k * 2.0**-23
    assert np.all(np.abs(result.outputs[0].astype(np.float64) - expected) <= bound)


def test_two_products_load_x_once_per_chunk() -> None:
    """
    SwiGLU's gate and up as one kernel (two products of one x): the model moves each weight
    once and x once (its whole slice kept in LX while N is cut), and its time is at least the
    bytes' transfer. Without x whole, x is read once per output chunk along N.
    """
    text = """
func.func @f(%x: tensor<512x4096xf16>, %wg: tensor<4096x14336xf16>, %wu: tensor<4096x14336xf16>)
    -> tensor<512x14336xf16> {
  %g = ktir.matmul %x, %wg : tensor<512x4096xf16>, tensor<4096x14336xf16> -> tensor<512x14336xf16>
  %s = ktir.silu %g : tensor<512x14336xf16> -> tensor<512x14336xf16>
  %u = ktir.matmul %x, %wu : tensor<512x4096xf16>, tensor<4096x14336xf16> -> tensor<512x14336xf16>
  %m = ktir.mul %s, %u : tensor<512x14336xf16>, tensor<512x14336xf16> -> tensor<512x14336xf16>
  return %m : tensor<512x14336xf16>
}"""
    module = parse_module(make_context(), text)
    ktir.run_pipeline(module, "ktir-propagate-layouts,ktir-insert-restickify,ktir-pad-matmul,ktir-fuse")
    (fused,) = [o for o in functions_of(module)[0].body.block.ops if o.name == "ktir.fused"]
    space = iteration_space(fused)
    assert space is not None and space.products == 2
    schedule = best_schedule(space, 32, SPYRE.lx_usable_bytes, SPYRE)
    assert schedule is not None
    x, w, y = 512 * 4096 * 2, 4096 * 14336 * 2, 512 * 14336 * 2
    assert schedule.cuts["m"] == 1  # each weight byte is read once
    assert schedule.whole_x and schedule.cuts["n"] > 1
    assert schedule.traffic == x + 2 * w + y
    assert schedule.cycles >= schedule.traffic / SPYRE.device_bytes_per_cycle
    chunked = next(
        s for s in ranked_cuts(space, schedule.splits, SPYRE.lx_usable_bytes, SPYRE, 400) if not s.whole_x
    )
    assert chunked.traffic == x * chunked.cuts["n"] + 2 * w + y
    assert chunked.cycles > schedule.cycles


def test_a_memory_bound_matmul_weighs_the_turnaround_against_the_accumulator() -> None:
    """
    Llama-3-8B's q/k/v projection, 512 x 4096 x 6144 on the calibrated card, is memory-bound
    (60.5 MB at 150 GB/s: 403 µs; 353 µs of PE time). One output chunk per core, stored after
    the last load, would pay no read/write turnaround, but its 128 x 768 = 98,304 outputs pass
    the PE arrays' 65,536 and would stream 0.26 of its operands again; N cut in 2 (49,152
    outputs) pays the turnaround on the first half's stores instead (`_Model._turnaround`),
    which costs less: 443.41 µs simulated (cycles are deterministic).
    """
    schedule = best_schedule(matmul_space(512, 4096, 6144), 32, SPYRE.lx_usable_bytes, SPYRE)
    assert schedule is not None
    assert schedule.splits == {"m": 4, "n": 8, "k": 1}
    assert schedule.cuts == {"m": 1, "n": 2, "k": 16}
    assert schedule.traffic == (512 * 4096 + 4096 * 6144 + 512 * 6144) * 2
    module = compiled(matmul_text(512, 4096, 6144), 32)
    report = ktir.sim.estimate(module)
    assert report.time_us == pytest.approx(443.405, abs=0.01)


def test_a_resident_x_and_a_kept_output_move_no_lpddr5_bytes() -> None:
    """x and y of a hand-off (ktir.cores.handoff): 512 x 4096 x 14336 split {m: 8, n: 4}, whole K."""
    space = matmul_space(512, 4096, 14336)
    splits = {"m": 8, "n": 4, "k": 1}
    (alone,) = ranked_cuts(space, splits, SPYRE.lx_usable_bytes, SPYRE, 1)
    (kept,) = ranked_cuts(space, splits, SPYRE.lx_usable_bytes, SPYRE, 1, Handoff(kept_output=True))
    (resident,) = ranked_cuts(space, splits, SPYRE.lx_usable_bytes, SPYRE, 1, Handoff(resident_x=True))
    x, out = 512 * 4096 * 2, 512 * 14336 * 2
    assert alone.traffic - kept.traffic == pytest.approx(out)  # each output byte stored once
    assert alone.whole_x and alone.traffic - resident.traffic == pytest.approx(x)  # x read once
    assert kept.cycles < alone.cycles
    # a resident x is copied inside LX chunk by chunk: cheaper in bytes, not here in time
    assert not resident.whole_x and resident.cycles > alone.cycles
    assert memory_bound(alone, space, SPYRE)  # 117 MB of weights outlast 30 GMACs on 32 cores
    assert not memory_bound(
        best_schedule(matmul_space(4096, 4096, 4096), 32, SPYRE.lx_usable_bytes, SPYRE),
        matmul_space(4096, 4096, 4096),
        SPYRE,
    )


def batched_matmul_space(b: int, m: int, k: int, n: int):
    """The iteration space of `x @ w` for a batch of `b` x[m, k] and one w[k, n], fp16."""
    x, w, y = f"tensor<{b}x{m}x{k}xf16>", f"tensor<{k}x{n}xf16>", f"tensor<{b}x{m}x{n}xf16>"
    body = f"  %y = ktir.matmul %x, %w : {x}, {w} -> {y}\n  return %y : {y}\n"
    module = parse_module(make_context(), f"func.func @mm(%x: {x}, %w: {w}) -> {y} {{\n{body}}}")
    ktir.run_pipeline(module, "ktir-propagate-layouts,ktir-insert-restickify,ktir-pad-matmul")
    op = next(o for o in functions_of(module)[0].body.block.ops if o.name == "ktir.matmul")
    space = iteration_space(op)
    assert space is not None and is_matmul(space)
    return space


def test_a_grid_ranked_in_blocks_gives_what_it_gives_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """
    Ranking block by block (`_blocks`, `_ranked`) picks exactly what one pass over the whole grid
    picks, ties included: the best schedule and the 8 fastest distinct splits, with blocks of at
    most 2,000 candidates (217 of them) against one grid of 73,710.
    """
    space = batched_matmul_space(4, 256, 1024, 2048)
    whole = (
        best_schedule(space, 32, SPYRE.lx_usable_bytes, SPYRE),
        ranked_splits(space, 32, SPYRE.lx_usable_bytes, SPYRE),
    )
    blocks: list[int] = []
    original = dataflow._grid

    def counted(*args, **kwargs):
        grid = original(*args, **kwargs)
        blocks.append(len(grid[0]))
        return grid

    monkeypatch.setattr(dataflow, "BLOCK_CANDIDATES", 2_000)
    monkeypatch.setattr(dataflow, "_grid", counted)
    blocked_best = best_schedule(space, 32, SPYRE.lx_usable_bytes, SPYRE)
    assert len(blocks) == 217 and max(blocks) <= 2_000
    assert (blocked_best, ranked_splits(space, 32, SPYRE.lx_usable_bytes, SPYRE)) == whole
    assert whole[0] is not None and len(whole[1]) == 8


def test_a_batched_matmul_over_the_old_candidate_limit_is_divided_for_time() -> None:
    """
    Mistral-Small-24B's batched K/V-sized projection on 2 cards, 32 sequences x 1,024 tokens
    (x[32, 1024, 5120] @ w[5120, 2048]), has 944,622 candidates: more than one block, so it was
    left to the reference's division ({b0: 32}, whose fused MLP needed 2.36 MB of LX per core).
    Now its split is ranked for time and fits LX.
    """
    space = batched_matmul_space(32, 1024, 5120, 2048)
    schedule = best_schedule(space, 32, SPYRE.lx_usable_bytes, SPYRE, span=SPYRE.core_address_span)
    assert schedule is not None
    assert schedule.splits == {"b0": 1, "m": 4, "n": 8, "k": 1}
    compulsory = (32 * 1024 * 5120 + 5120 * 2048 + 32 * 1024 * 2048) * 2
    assert schedule.traffic >= compulsory


def test_no_candidate_has_more_chunks_than_a_kernel_may(monkeypatch: pytest.MonkeyPatch) -> None:
    """
    A schedule is only worth ranking if `ktir-lower-to-cores` can build it: never more than
    `MAX_CHUNKS` chunks per core. With the limit at 48, the up projection's best (64 chunks:
    N cut in 4, K in 16) gives way to the fastest of at most 48 that fits LX: 32 chunks under
    {m: 4, n: 4, k: 2}; with 24, none fits.
    """
    space = matmul_space(512, 4096, 14336)
    monkeypatch.setattr(dataflow, "MAX_CHUNKS", 48)
    schedule = best_schedule(space, 32, SPYRE.lx_usable_bytes, SPYRE)
    assert schedule is not None
    assert (schedule.splits, schedule.cuts) == ({"m": 4, "n": 4, "k": 2}, {"m": 1, "n": 8, "k": 4})
    ranked = ranked_cuts(space, schedule.splits, SPYRE.lx_usable_bytes, SPYRE)
    assert ranked and all(math.prod(s.cuts.values()) <= 48 for s in ranked)
    monkeypatch.setattr(dataflow, "MAX_CHUNKS", 24)
    assert best_schedule(space, 32, SPYRE.lx_usable_bytes, SPYRE) is None
