"""Streaming cuts of non-matmul kernels (`ktir.cores.chunking`)."""

from __future__ import annotations

from helpers import compiled

from ktir.cores.chunking import PIPELINE_CHUNK_BYTES, PIPELINE_MIN_CHUNKS, SFU_BOUND_CHUNK_BYTES
from ktir.dialects import ktir_core as core

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
