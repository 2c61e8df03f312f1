"""The engine's vectorized paths give the reference executor's bits (ktir/sim/engine.py)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import check_never_faster_than_physics, compiled, fp16_ulp_at_largest, matmul

from ktir.ir.context import make_context
from ktir.ir.diagnostics import parse_module
from ktir.reference import executor as reference
from ktir.sim import compute, engine, estimate, simulate

T, W = "tensor<256x512xf16>", "tensor<512xf16>"
ROW_WISE = f"""
func.func @f(%x: {T}, %w: {W}, %y: {T}) -> {T} {{
  %a = ktir.softmax %x dim 1 : {T} -> {T}
  %b = ktir.rms_norm %a weight %w : {W} normalized_shape [512] {{eps = 1.000000e-06 : f64}} : {T} -> {T}
  %c = ktir.mul %b, %w : {T}, {W} -> {T}
  %d = ktir.gelu %c : {T} -> {T}
  %e = ktir.add %d, %y : {T}, {T} -> {T}
  return %e : {T}
}}
"""


@pytest.mark.parametrize("cores", [4, 32])
def test_row_wise_ops_run_for_all_cores_at_once_bit_exactly(
    cores: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """softmax, rms_norm (its weight shared by all cores) and a broadcasting mul take the one-call path."""
    batched: list[str] = []
    original = compute.rows_at_once

    def counting(payload, maps, hosts):  # type: ignore[no-untyped-def]
        result = original(payload, maps, hosts)
        if result is not None:
            batched.append(payload.name)
        return result

    monkeypatch.setattr(engine, "rows_at_once", counting)
    fused = _count_batched(monkeypatch, "fused_rows_at_once")
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(s).astype(np.float16) for s in ((256, 512), (512,), (256, 512))]
    (ours,) = simulate(compiled(ROW_WISE, cores, fuse=False), inputs).outputs
    (expected,) = reference.run(parse_module(make_context(), ROW_WISE), inputs)
    assert np.array_equal(ours, expected)
    # every chunk of each (an SFU-bound kernel streams several chunks) takes the one-call path
    assert list(dict.fromkeys(batched)) == ["ktir.softmax", "ktir.rms_norm", "ktir.mul"]
    result = simulate(compiled(ROW_WISE, cores), inputs)
    assert np.array_equal(result.outputs[0], expected)
    # the fused kernel too, on all cores' rows at once: every chunk, and charged as one core's tile
    assert fused == [True] * result.report.kernels[0].chunks
    assert result.report.kernels[0].op == "ktir.fused[softmax+rms_norm+mul+gelu+add]"


def _count_batched(monkeypatch: pytest.MonkeyPatch, name: str) -> list[bool]:
    """Whether each call of the engine's `name` (a `ktir.sim.compute` function) ran all cores at once."""
    calls: list[bool] = []
    original = getattr(compute, name)

    def counting(*args):  # type: ignore[no-untyped-def]
        result = original(*args)
        calls.append(result is not None)
        return result

    monkeypatch.setattr(engine, name, counting)
    return calls


X, CS, P, H = (
    "tensor<1x256x8x128xf16>",
    "tensor<1x1x256x128xf16>",
    "tensor<1x8x256x128xf16>",
    "tensor<1x8x256x64xf16>",
)
ROPE = f"""
func.func @rope(%x: {X}, %cos: {CS}, %sin: {CS}) -> {P} {{
  %p = ktir.permute %x perm [0, 2, 1, 3] : {X} -> {P}
  %a = ktir.mul %p, %cos : {P}, {CS} -> {P}
  %lo = ktir.slice %p dim 3 start 0 end 64 step 1 : {P} -> {H}
  %hi = ktir.slice %p dim 3 start 64 end 128 step 1 : {P} -> {H}
  %n = ktir.neg %hi : {H} -> {H}
  %r = ktir.cat %n, %lo dim 3 : {H}, {H} -> {P}
  %b = ktir.mul %r, %sin : {P}, {CS} -> {P}
  %y = ktir.add %a, %b : {P}, {P} -> {P}
  return %y : {P}
}}
"""


@pytest.mark.parametrize(("cores", "at_once"), [(8, True), (32, False)])
def test_a_fused_rotary_embedding_runs_on_all_cores_rows_at_once_bit_exactly(
    cores: int, at_once: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """
    A rotary embedding fused into one kernel: a permute (positions move from dim 1 to dim 2),
    halves sliced along the head dim, negated, concatenated and multiplied by cos and sin
    broadcast over the heads. On 8 cores, each one head, it runs once on all cores' tiles
    concatenated along the heads; on 32 cores (heads and positions split) per core.
    The reference's bits either way, and the same cycles.
    """
    calls = _count_batched(monkeypatch, "fused_rows_at_once")
    rng = np.random.default_rng(0)
    inputs = [
        rng.standard_normal(s).astype(np.float16)
        for s in ((1, 256, 8, 128), (1, 1, 256, 128), (1, 1, 256, 128))
    ]
    (expected,) = reference.run(parse_module(make_context(), ROPE), inputs)
    module = compiled(ROPE, cores)
    result = simulate(module, inputs)
    assert np.array_equal(result.outputs[0], expected)
    assert calls and all(c == at_once for c in calls)
    assert result.report.total_cycles == estimate(module).total_cycles  # charged as one core's tile


def attention_ir(causal: str) -> str:
    q4, q5 = "tensor<1x8x256x64xf16>", "tensor<1x2x4x256x64xf16>"
    kv = "tensor<1x2x256x64xf16>"
    return f"""
func.func @attention(%q: {q4}, %k: {kv}, %v: {kv}) -> {q4} {{
  %grouped = ktir.reshape %q : {q4} -> {q5}
  %o = ktir.attention %grouped, %k, %v scale 0.125 {causal}: {q5}, {kv}, {kv} -> {q5}
  %r = ktir.reshape %o : {q5} -> {q4}
  return %r : {q4}
}}
"""


@pytest.mark.parametrize("cores", [2, 32])
def test_attention_tiles_give_the_reference_bits_and_causal_skips_work(cores: int) -> None:
    """
    Each core's tile of queries is placed by its start, so the causal limit holds on every core
    (the kernel's bits are the reference's); and a causal kernel computes fewer scores.
    """
    rng = np.random.default_rng(0)
    inputs = [
        rng.standard_normal(s).astype(np.float16) for s in ((1, 8, 256, 64), (1, 2, 256, 64), (1, 2, 256, 64))
    ]
    reports = {}
    for causal in ("causal 0 ", ""):
        text = attention_ir(causal)
        (expected,) = reference.run(parse_module(make_context(), text), inputs)
        result = simulate(compiled(text, cores), inputs)
        assert np.array_equal(result.outputs[0], expected)
        reports[causal] = result.report
    causal_flops, full_flops = (reports[c].flops for c in ("causal 0 ", ""))
    # 256 queries in 4 blocks of 64 see 1, 2, 3 and 4 of the 4 key blocks: 10 of 16 blocks.
    assert causal_flops == pytest.approx(full_flops * 10 / 16)
    causal_cycles, full_cycles = (reports[c].total_cycles for c in ("causal 0 ", ""))
    if cores == 2:  # a core per key head: its queries see 10 of 16 blocks
        assert causal_cycles < full_cycles
    else:  # 4 ranges of queries: the core with the last range sees every key block
        assert causal_cycles == full_cycles


def heads_attention_ir(heads: int, length: int, causal: str) -> str:
    """Attention with one query head per key head (q as [1, heads, 1, length, 64])."""
    q, kv = f"tensor<1x{heads}x1x{length}x64xf16>", f"tensor<1x{heads}x{length}x64xf16>"
    return f"""
func.func @attention(%q: {q}, %k: {kv}, %v: {kv}) -> {q} {{
  %o = ktir.attention %q, %k, %v scale 0.125 {causal}: {q}, {kv}, {kv} -> {q}
  return %o : {q}
}}
"""


@pytest.mark.parametrize(
    ("heads", "length", "causal", "cores", "at_once"),
    [
        (32, 128, "", 8, True),  # 4 heads per core, queries in chunks
        (32, 128, "causal 0 ", 32, True),  # a head per core: every core's queries start at 0
        (2, 256, "causal 0 ", 8, False),  # query ranges split: cores' queries start apart
        (8, 256, "causal 0 ", 32, False),  # heads and query ranges split
    ],
)
def test_attention_runs_all_cores_tiles_in_one_call_when_their_limits_agree(
    heads: int, length: int, causal: str, cores: int, at_once: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """
    The cores' attention tiles stacked along the batch go through one call of the reference's
    attention (the same GEMMs per head, the same softmax per row), unless a causal limit is
    measured from different query or key starts on different cores: the reference's bits
    either way.
    """
    calls = _count_batched(monkeypatch, "attention_at_once")
    rng = np.random.default_rng(0)
    shapes = ((1, heads, 1, length, 64), (1, heads, length, 64), (1, heads, length, 64))
    inputs = [rng.standard_normal(s).astype(np.float16) for s in shapes]
    text = heads_attention_ir(heads, length, causal)
    (expected,) = reference.run(parse_module(make_context(), text), inputs)
    assert np.array_equal(simulate(compiled(text, cores), inputs).outputs[0], expected)
    assert calls and all(c == at_once for c in calls)


@pytest.mark.slow  # the fast tier (make check) leaves out whole-model runs
def test_a_matmul_keeping_x_whole_reads_each_chunk_window() -> None:
    """
    128 x 4096 x 4096 on 8 cores: the dataflow model keeps x's whole slice in LX (one
    `ktir.dma_load ... whole` per kernel, none per chunk) while N and K are chunked; every
    chunk's compute reads its window of the slice. The simulator and the tile executor are both
    within one fp16 ulp of the reference (BLAS sums per tile, in each its own order), and x
    crosses LPDDR5 once: the traffic is the compulsory bytes.
    """
    from ktir.dialects.ktir import core
    from ktir.sim import executor

    text = matmul(128, 4096, 4096)
    module = compiled(text, 8)
    loads = [o for o in module.walk() if isinstance(o, core.DmaLoadOp)]
    whole = [o for o in loads if o.whole is not None]
    assert len(whole) == 1 and whole[0].tile.value.data == 0  # x, loaded once
    assert all(o.tile.value.data == 1 for o in loads if o.whole is None)  # the chunks load y only
    (kernel,) = [o for o in module.walk() if isinstance(o, core.KernelOp)]
    assert kernel.chunks.value.data > 1
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(s).astype(np.float16) for s in ((128, 4096), (4096, 4096))]
    (expected,) = reference.run(parse_module(make_context(), text), inputs)
    result = simulate(module, inputs)
    for output in (result.outputs[0], executor.run(module, inputs)[0]):
        assert np.abs(output.astype(np.float32) - expected).max() <= fp16_ulp_at_largest(expected)
    assert result.report.bytes == result.report.compulsory_bytes


PREFETCHED = """
func.func @f(%x: tensor<64x1024xf16>, %w: tensor<1024x8192xf16> {ktir.parameter = "w"})
    -> tensor<64x8192xf16> {
  %a = ktir.exp %x : tensor<64x1024xf16> -> tensor<64x1024xf16>
  %y = ktir.matmul %a, %w : tensor<64x1024xf16>, tensor<1024x8192xf16> -> tensor<64x8192xf16>
  return %y : tensor<64x8192xf16>
}
"""


def test_a_prefetch_loads_the_weights_first_tile_in_the_previous_kernels_time() -> None:
    """
    The matmul's first weight tile does not depend on the exp before it, and the lowering places
    its buffer clear of the exp's LX: it is a `prefetch` load, which runs on the load queue after
    the exp's loads, before the matmul starts. The outputs are the same as without it; the
    program is faster; the matmul's bound counts only the bytes left for its own time.
    """
    from ktir.dialects.ktir import core
    from ktir.ir.diagnostics import module_text

    module = compiled(PREFETCHED, 4)
    prefetches = [o for o in module.walk() if isinstance(o, core.DmaLoadOp) and o.prefetch is not None]
    assert [o.tile.value.data for o in prefetches] == [1]  # the weight, not the exp's output
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(s).astype(np.float16) for s in ((64, 1024), (1024, 8192))]
    result = simulate(module, inputs)
    plain = parse_module(make_context(), module_text(module).replace(" prefetch :", " :"))
    baseline = simulate(plain, inputs)
    assert np.array_equal(result.outputs[0], baseline.outputs[0])
    assert result.report.total_cycles < baseline.report.total_cycles
    _, matmul = (k for k in result.report.kernels if k.cores)
    first = min(float(e.start.min()) for e in matmul.events)
    assert first < matmul.start  # under the exp
    assert 0 < matmul.early_bytes < matmul.compulsory_bytes
    check_never_faster_than_physics(result.report)


PREFETCHED_RESIDUAL = """
func.func @f(%x: tensor<64x1024xf16>, %w: tensor<1024x4096xf16> {ktir.parameter = "w"},
    %r: tensor<64x4096xf16>) -> tensor<64x4096xf16> {
  %a = ktir.exp %x : tensor<64x1024xf16> -> tensor<64x1024xf16>
  %m = ktir.matmul %a, %w : tensor<64x1024xf16>, tensor<1024x4096xf16> -> tensor<64x4096xf16>
  %y = ktir.add %m, %r : tensor<64x4096xf16>, tensor<64x4096xf16> -> tensor<64x4096xf16>
  return %y : tensor<64x4096xf16>
}
"""


def test_a_prefetch_loads_the_first_output_tiles_epilogue_input_in_the_previous_kernels_time() -> None:
    """
    `matmul + r` after an exp, K chunked: r is an epilogue input, loaded once per output tile
    after its K chunks. r does not depend on the exp either, so after the weight's first tile
    the tiles of r of output tiles 0 and 1 are prefetched (each its last K chunk's tile, into
    slots 0 and 1 of r's buffer, which no earlier tile fills), and those tiles' epilogues do not
    load them again. The loads ran before the matmul started, and the result is the
    reference's within one fp16 ulp (the prefill's `o_proj + residual` under attention).
    """
    from ktir.dialects.ktir import core

    module = compiled(PREFETCHED_RESIDUAL, 2)
    prefetches = [o for o in module.walk() if isinstance(o, core.DmaLoadOp) and o.prefetch is not None]
    assert [o.tile.value.data for o in prefetches] == [1, 2, 2]  # the weight, then r twice
    loads_of_r = [o for o in module.walk() if isinstance(o, core.DmaLoadOp) and o.tile.value.data == 2]
    (kernel,) = [o for o in module.walk() if isinstance(o, core.KernelOp) and o.op_name.data == "ktir.fused"]
    assert kernel.chunks.value.data == 64  # 8 output tiles of 8 K chunks a core
    assert len(loads_of_r) == 4  # the prefetches (tiles 0, 1), the loop's (2-6), the last tile's
    rng = np.random.default_rng(0)
    shapes = ((64, 1024), (1024, 4096), (64, 4096))
    inputs = [rng.standard_normal(s).astype(np.float16) for s in shapes]
    (expected,) = reference.run(parse_module(make_context(), PREFETCHED_RESIDUAL), inputs)
    result = simulate(module, inputs)
    assert np.abs(result.outputs[0].astype(np.float32) - expected).max() <= fp16_ulp_at_largest(expected)
    _, fused = (k for k in result.report.kernels if k.cores)
    r_loads = [e for e in fused.events if e.label == "load tile 2 (prefetch)"]
    assert len(r_loads) == 2
    assert all(float(e.end.max()) <= fused.start for e in r_loads)  # under the exp
    check_never_faster_than_physics(result.report)


AFTER_A_MATMUL = """
func.func @f(%x: tensor<64x1024xf16>, %v: tensor<1024x1024xf16> {ktir.parameter = "v"},
    %w: tensor<1024x4096xf16> {ktir.parameter = "w"}, %r: tensor<64x4096xf16>) -> tensor<64x4096xf16> {
  %a = ktir.matmul %x, %v : tensor<64x1024xf16>, tensor<1024x1024xf16> -> tensor<64x1024xf16>
  %m = ktir.matmul %a, %w : tensor<64x1024xf16>, tensor<1024x4096xf16> -> tensor<64x4096xf16>
  %y = ktir.add %m, %r : tensor<64x4096xf16>, tensor<64x4096xf16> -> tensor<64x4096xf16>
  return %y : tensor<64x4096xf16>
}
"""


def test_after_a_matmul_an_epilogue_input_is_not_prefetched() -> None:
    """
    A matmul kernel streams its weight on the load queue to its last chunk, so a prefetch of
    the next kernel's epilogue input would run in that kernel's own time ahead of the loads its
    first chunk needs (`zoo/mlp`'s `matmul + bias` after `matmul + bias + gelu` took 1,792 ->
    1,924 cycles so): after a matmul only the first weight tile is prefetched.
    """
    from ktir.dialects.ktir import core

    module = compiled(AFTER_A_MATMUL, 2)
    kernels = [o for o in module.walk() if isinstance(o, core.KernelOp)]
    assert [k.op_name.data for k in kernels] == ["ktir.matmul", "ktir.fused"]
    prefetches = [o for o in kernels[1].walk() if isinstance(o, core.DmaLoadOp) and o.prefetch is not None]
    assert [o.tile.value.data for o in prefetches] == [1]  # the weight's first tile, not r


def test_a_prefetch_of_what_the_previous_kernel_writes_is_refused() -> None:
    """A hand-written prefetch of the exp's output would read it before it exists: a located error."""
    from ktir.ir.diagnostics import module_text
    from ktir.sim import SimulationError

    text = module_text(compiled(PREFETCHED, 4))
    whole = " tile 0 whole :"
    assert text.count(whole) == 1
    module = parse_module(make_context(), text.replace(whole, " tile 0 whole prefetch :"))
    inputs = [np.ones((64, 1024), np.float16), np.ones((1024, 8192), np.float16)]
    with pytest.raises(SimulationError, match="a prefetch reads a tensor the previous kernel writes"):
        simulate(module, inputs)


def long_attention_ir(keys: int, queries: int, causal: str) -> str:
    """Llama-3-8B's attention shape (8 key heads, groups of 4, 128 wide) over `keys` keys."""
    q4, q5 = f"tensor<1x32x{queries}x128xf16>", f"tensor<1x8x4x{queries}x128xf16>"
    kv = f"tensor<1x8x{keys}x128xf16>"
    return f"""
func.func @attention(%q: {q4}, %k: {kv}, %v: {kv}) -> {q4} {{
  %grouped = ktir.reshape %q : {q4} -> {q5}
  %o = ktir.attention %grouped, %k, %v scale 0.08838834764831845 {causal}: {q5}, {kv}, {kv} -> {q5}
  %r = ktir.reshape %o : {q5} -> {q4}
  return %r : {q4}
}}
"""


@pytest.mark.slow
@pytest.mark.parametrize(("keys", "queries", "causal"), [(8192, 1, ""), (4096, 128, "causal 3968 ")])
def test_attention_over_more_keys_than_lx_holds_walks_them_with_an_online_softmax(
    keys: int, queries: int, causal: str
) -> None:
    """
    A key head's keys and values (2 x keys x 128 fp16: 4 MiB and 2 MiB) do not fit LX: each
    core keeps its query head and an fp32 accumulator and streams its keys in chunks, each
    combined into the running max, sum and output. Every key and value crosses LPDDR5 once
    (traffic = compulsory bytes); the simulator and the tile executor give the reference's
    bits here (float64 state; the fp32 accumulator may round once more: one fp16 ulp at most).
    """
    from ktir.sim import executor

    text = long_attention_ir(keys, queries, causal)
    rng = np.random.default_rng(0)
    shapes = ((1, 32, queries, 128), (1, 8, keys, 128), (1, 8, keys, 128))
    inputs = [rng.standard_normal(s).astype(np.float16) for s in shapes]
    (expected,) = reference.run(parse_module(make_context(), text), inputs)
    module = compiled(text, 32)
    result = simulate(module, inputs)
    (kernel,) = [k for k in result.report.kernels if k.cores]
    assert kernel.chunks > 1 and kernel.division["h"] == 32
    assert kernel.bytes == kernel.compulsory_bytes
    for output in (result.outputs[0], executor.run(module, inputs)[0]):
        assert np.abs(output.astype(np.float32) - expected).max() <= fp16_ulp_at_largest(expected)
    assert np.array_equal(result.outputs[0], expected)  # measured on this input
    check_never_faster_than_physics(result.report)


def _count_device_writes(monkeypatch: pytest.MonkeyPatch) -> list[np.dtype]:
    """The dtype of every host-to-device tile write (`HostTiles.to_device`) from now on."""
    from ktir.sim.host_tiles import HostTiles

    writes: list[np.dtype] = []
    original = HostTiles.to_device

    def counting(self: HostTiles, hosts: np.ndarray, tiles: np.ndarray) -> None:
        writes.append(hosts.dtype)
        original(self, hosts, tiles)

    monkeypatch.setattr(HostTiles, "to_device", counting)
    return writes


def _small_integers(rng: np.random.Generator, *shape: int) -> np.ndarray:
    """Values in -1..1: products and sums (|sum| <= K <= 2048) are exact in fp32 and fp16."""
    return rng.integers(-1, 2, shape).astype(np.float16)


def test_a_k_chunked_matmul_writes_its_accumulator_to_the_device_layout_once_per_output_tile(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """
    256 x 2048 x 512 on 4 cores adds K chunks into fp32 accumulators. The accumulator stays in
    host tiles while its chunks add to it and goes to the device layout when it is stored: one
    write per store, not one per chunk. The sums are exact here, so the result is the reference's.
    """
    from ktir.dialects.ktir import core

    text = matmul(256, 2048, 512)
    module = compiled(text, 4)
    (kernel,) = [o for o in module.walk() if isinstance(o, core.KernelOp)]
    assert any(o.accumulate is not None for o in kernel.walk() if isinstance(o, core.ComputeOp))
    stores: list[int] = []
    original_dma = engine.SimKernel._dma

    def counting_dma(self: engine.SimKernel, op: core.DmaLoadOp | core.DmaStoreOp) -> None:
        stores.extend([1] if isinstance(op, core.DmaStoreOp) else [])
        original_dma(self, op)

    # The simulator runs a store through its class's table (`ktir.ir.interpreter`): count there.
    monkeypatch.setitem(engine.SimKernel.IMPLS, core.DmaStoreOp, counting_dma)
    writes = _count_device_writes(monkeypatch)
    rng = np.random.default_rng(0)
    inputs = [_small_integers(rng, 256, 2048), _small_integers(rng, 2048, 512)]
    result = simulate(module, inputs)
    (expected,) = reference.run(parse_module(make_context(), text), inputs)
    assert np.array_equal(result.outputs[0], expected)
    assert kernel.chunks.value.data > len(stores) > 0
    assert writes.count(np.dtype(np.float32)) == len(stores)


GATED = """
func.func @f(%x: tensor<128x2048xf16>, %w1: tensor<2048x512xf16>, %w2: tensor<2048x512xf16>)
    -> tensor<128x512xf16> {
  %a = ktir.matmul %x, %w1 : tensor<128x2048xf16>, tensor<2048x512xf16> -> tensor<128x512xf16>
  %b = ktir.matmul %x, %w2 : tensor<128x2048xf16>, tensor<2048x512xf16> -> tensor<128x512xf16>
  %s = ktir.silu %a : tensor<128x512xf16> -> tensor<128x512xf16>
  %r = ktir.mul %s, %b : tensor<128x512xf16>, tensor<128x512xf16> -> tensor<128x512xf16>
  return %r : tensor<128x512xf16>
}
"""


def test_a_fused_epilogue_reads_its_matmuls_accumulators_as_host_tiles(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """
    silu(x @ w1) * (x @ w2) fused into one kernel on 4 cores: its epilogue reads both K-chunked
    fp32 accumulators straight from their host tiles (no fp32 tile is ever written to the device
    layout), and gives the reference's bits (exact matmuls on integer-valued operands).
    """
    module = compiled(GATED, 4)
    writes = _count_device_writes(monkeypatch)
    rng = np.random.default_rng(0)
    inputs = [_small_integers(rng, *shape) for shape in ((128, 2048), (2048, 512), (2048, 512))]
    result = simulate(module, inputs)
    (expected,) = reference.run(parse_module(make_context(), GATED), inputs)
    assert np.array_equal(result.outputs[0], expected)
    assert result.report.kernels[0].op == "ktir.fused[matmul+matmul+silu+mul]"
    assert writes and np.dtype(np.float32) not in writes
