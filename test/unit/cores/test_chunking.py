"""Streaming cuts of non-matmul kernels (`ktir.cores.chunking`)."""

from __future__ import annotations

from helpers import attention, compiled

import ktir
import ktir.sim
from ktir.cores.chunking import PIPELINE_CHUNK_BYTES, PIPELINE_MIN_CHUNKS, SFU_BOUND_CHUNK_BYTES, load_bytes
from ktir.cores.kernels import Kernel, kernel_of
from ktir.dialects.ktir import core
from ktir.dialects.ktir import structured as st
from ktir.hardware.target import SPYRE
from ktir.ir.context import make_context
from ktir.ir.diagnostics import parse_module

T = "tensor<1024x1024xf16>"
EXP = f"func.func @f(%x: {T}) -> {T} {{\n  %y = ktir.exp %x : {T} -> {T}\n  return %y : {T}\n}}"
ADD = (
    f"func.func @f(%x: {T}, %y: {T}) -> {T} {{\n"
    f"  %z = ktir.add %x, %y : {T}, {T} -> {T}\n  return %z : {T}\n}}"
)


def chunks_of(text: str, cores: int) -> int:
    (kernel,) = [op for op in compiled(text, cores).walk() if isinstance(op, core.KernelOp)]
    return kernel.chunks.value.data


def test_sfu_bound_kernels_stream_smaller_chunks_than_dma_bound_ones() -> None:
    """
    1024 x 1024 fp16. exp on 2 cores: 2 SFU passes over 512 Ki elements per core (119 µs)
    outlast the 4 MiB of traffic (20 µs), so its 1 MiB per core streams in 16 KiB chunks: 64.
    add on 32 cores: one pass over 32 Ki elements per core (3.7 µs) against 6 MiB (31 µs):
    DMA-bound, its 2 x 64 KiB per core would fit one 128 KiB chunk, but a kernel streams at
    least 8 chunks of at least 16 KiB: 8. On 2 cores (1 MiB per core and input) the add is
    SFU-bound: 128 chunks of 16 KiB.
    """
    assert (SFU_BOUND_CHUNK_BYTES, PIPELINE_CHUNK_BYTES, PIPELINE_MIN_CHUNKS) == (16 * 1024, 128 * 1024, 8)
    assert chunks_of(EXP, 2) == 64
    assert chunks_of(ADD, 32) == 8
    assert chunks_of(ADD, 2) == 128


def attention_kernel(text: str, splits: dict[str, int]) -> Kernel:
    """The kernel of the one `ktir.attention` in `text`, with layouts, divided `splits`."""
    module = parse_module(make_context(), text)
    ktir.run_pipeline(module, "ktir-propagate-layouts,ktir-insert-restickify,ktir-pad-matmul")
    (op,) = [o for o in module.walk() if isinstance(o, st.AttentionOp)]
    kernel = kernel_of(op, splits)
    assert kernel is not None
    return kernel


def test_load_bytes_count_each_box_once_per_cohort_of_readers_and_per_chunk_that_loads_it() -> None:
    """
    Attention of 8 sequences, 8 key heads of 512 keys read by groups of 4 query heads (128
    queries): q, k and v are 4 MiB each. Divided {b0: 8, h: 4}, a core holds 8 query heads, two
    groups. Chunks of one group (h cut 2) read every key head once; chunks of half a group (h cut
    4) read it twice; chunks of queries alone (s cut 2) load the key heads once before the chunk
    loop, so the first chunk loads them whole. On one sequence divided {h: 2, s: 16}, the 16 cores
    of a group read one key box: two broadcast reads of 8.
    """
    kernel = attention_kernel(attention(8, 8, 4, 128, 512, 0), {"b0": 8, "h": 4})
    q, k, v = (a.layout.device_bytes for a in kernel.space.inputs if a is not None)
    assert q == k == v == 4 * 2**20

    def loads(**cuts: int) -> tuple[float, float]:
        return load_bytes(kernel, {d: cuts.get(d, 1) for d in kernel.space.sizes}, SPYRE)

    assert loads(h=2) == (q + k + v, (q + k + v) / 2)
    assert loads(h=4) == (q + 2 * (k + v), (q + 2 * (k + v)) / 4)
    assert loads(h=4, s=2) == (q + 4 * (k + v), (q + 4 * (k + v)) / 8)
    assert loads(s=2) == (q + k + v, q / 2 + k + v)
    shared = attention_kernel(attention(1, 2, 4, 256, 512, 0), {"h": 2, "s": 16})
    q, k, v = (a.layout.device_bytes for a in shared.space.inputs if a is not None)
    assert load_bytes(shared, {d: 1 for d in shared.space.sizes}, SPYRE) == (q + 2 * (k + v),) * 2


def test_streaming_never_cuts_queries_where_every_chunk_would_reload_the_key_heads() -> None:
    """
    4 sequences, 8 key heads of 1024 keys in groups of 4, 128 queries, on 8 cores divided
    {b0: 4, h: 2}: a core holds 4 key heads (1 MiB of keys and values), which do not fit LX
    twice, so its chunks walk its heads, one group each (4 chunks). The kernel is SFU-bound and
    streams small chunks, but cutting the queries too would load each chunk's key head again per
    query chunk (the chunks stopped at 2,048, moving 342 times the compulsory bytes); the cut
    adds more bytes than it takes off the first chunk's load, so every byte crosses LPDDR5 once.
    """
    module = compiled(attention(4, 8, 4, 128, 1024, 0, "b0 = 4 : i64, h = 2 : i64"), 8)
    (kernel,) = [k for k in ktir.sim.estimate(module).kernels if k.op == "ktir.attention"]
    assert kernel.division == {"b0": 4, "h": 2, "s": 1, "e": 1, "l": 1, "d": 1}
    assert kernel.chunks == 4
    assert kernel.bytes == kernel.compulsory_bytes
