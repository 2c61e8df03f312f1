"""
`ktir-lower-to-cores` and `ktir-compile`: the seed's tiles, chunking with double buffering, the
static LX check (a rejected kernel, a corrupted one), and unchanged numerics on real models
when the core-level IR is executed functionally.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from helpers import assert_pipeline_keeps_values, compiled, fp16_ulp, fp16_ulp_at_largest, unary
from model_zoo import MLP, DecoderBlock, pair, tiny_llama_config

import ktir
from ktir.dialects.ktir import core
from ktir.dialects.ktir.attributes import TileAttr
from ktir.frontend.fx import import_program
from ktir.hardware.target import SPYRE
from ktir.ir.context import make_context
from ktir.ir.diagnostics import DiagnosticError, parse_module
from ktir.passes.propagate_layouts import functions_of
from ktir.reference.executor import run
from ktir.sim import executor as core_executor


def lowered(text: str, cores: int = 32) -> list[core.KernelOp]:
    module = compiled(text, cores)
    return [op for op in functions_of(module)[0].body.block.ops if isinstance(op, core.KernelOp)]


def test_the_seed_abs_tiles() -> None:
    (kernel,) = lowered(unary("ktir.abs", "4x64"), cores=2)
    assert kernel.cores.value.data == 2 and kernel.chunks.value.data == 1
    for tile in kernel.tiles.data:  # rows 0-1 on core 0, rows 2-3 on core 1: 256 bytes each
        assert tile.extent == (1, 2, 64) and tile.starts == [(0, 0, 0), (0, 2, 0)]
    allocs = [op for op in kernel.body.walk() if isinstance(op, core.LxAllocOp)]
    assert [a.bytes for a in allocs] == [256, 256]


def test_a_big_kernel_is_chunked_and_double_buffered() -> None:
    # 1024 x 1024 fp16 on one core: 2 MiB in + 2 MiB out does not fit in 1,677,721 bytes.
    (kernel,) = lowered(unary("ktir.exp", "1024x1024"), cores=1)
    chunks = kernel.chunks.value.data
    allocs = [op for op in kernel.body.walk() if isinstance(op, core.LxAllocOp)]
    assert chunks > 1 and all(a.result.type.get_shape()[0] == 2 for a in allocs)  # type: ignore[attr-defined]
    assert sum(a.bytes for a in allocs) <= SPYRE.lx_usable_bytes
    tile = kernel.tiles.data[0]
    assert len(tile.chunk_starts) == chunks and len(set(tile.chunk_starts)) == chunks


def test_the_chunked_kernel_computes_the_same_numbers() -> None:
    program = import_program(lambda x: torch.exp(x), (torch.randn(1024, 1024).half(),), {})
    inputs = program.arguments(torch.randn(1024, 1024, generator=torch.Generator().manual_seed(1)).half())
    expected = run(program.module, inputs)
    ktir.run_pipeline(program.module, "ktir-compile{cores=1}")
    (kernel,) = [op for op in program.module.walk() if isinstance(op, core.KernelOp)]
    assert kernel.chunks.value.data > 1
    assert np.array_equal(core_executor.run(program.module, inputs)[0], expected[0])


def test_a_kernel_that_cannot_fit_is_a_located_error() -> None:
    # softmax needs whole rows: one 2^20-long fp16 row is 2 MiB in and 2 MiB out.
    with pytest.raises(DiagnosticError, match=r"needs [\d,]+ bytes of LX per core \(core 0\)"):
        lowered(unary("ktir.softmax", "1x1048576", extra="dim 1"))


def test_the_static_check_rejects_an_overflowing_buffer() -> None:
    module = compiled(unary("ktir.abs", "4x64"), cores=2)
    alloc = next(op for op in module.walk() if isinstance(op, core.LxAllocOp))
    alloc.properties["address"] = type(alloc.address)(SPYRE.lx_usable_bytes - 128, alloc.address.type)
    with pytest.raises(DiagnosticError, match=r"overruns the 1,677,721 usable bytes"):
        ktir.run_pipeline(module, "ktir-check-cores")


def test_the_static_check_rejects_a_dma_out_of_its_tensor() -> None:
    module = compiled(unary("ktir.abs", "4x64"), cores=2)
    kernel = next(op for op in module.walk() if isinstance(op, core.KernelOp))
    tiles = list(kernel.tiles.data)
    tiles[0] = TileAttr.make((1, 2, 64), [(0, 0, 0), (0, 3, 0)], [(0, 0, 0)])
    kernel.properties["tiles"] = type(kernel.tiles)(tiles)
    with pytest.raises(DiagnosticError, match=r"on core 1, chunk 0 ends at device position \[1, 5, 64\]"):
        ktir.run_pipeline(module, "ktir-check-cores")


def test_k_split_matmul_adds_partial_sums_over_the_ring() -> None:
    x = torch.randn(4, 128, generator=torch.Generator().manual_seed(2)).half()
    y = torch.randn(128, 64, generator=torch.Generator().manual_seed(3)).half()
    program = import_program(lambda a, b: a @ b, (x, y), {})
    inputs = program.arguments(x, y)
    expected = run(program.module, inputs)[0]
    matmul = next(op for op in functions_of(program.module)[0].body.block.ops if op.name == "ktir.matmul")
    matmul.attributes["ktir.work_division_hint"] = parse_module(
        make_context(), "module attributes {h = {m = 2 : i64, k = 2 : i64}} {}"
    ).attributes["h"]
    ktir.run_pipeline(program.module, "ktir-compile{cores=4}")
    assert any(isinstance(op, core.RingReduceOp) for op in program.module.walk())
    got = core_executor.run(program.module, inputs)[0]
    # fp32 partial sums: at most one fp16 ulp from the exactly rounded product
    assert np.all(np.abs(got.astype(np.float32) - expected.astype(np.float32)) <= fp16_ulp(expected))


def check_models_unchanged(model: torch.nn.Module, args: tuple, kwargs: dict | None = None) -> None:
    """`ktir-compile` run functionally by the core executor gives the reference's bits."""
    assert_pipeline_keeps_values(model, args, kwargs, "ktir-compile", core_executor.run)


def test_mlp_numerics_unchanged() -> None:
    model, _ = pair(MLP)
    check_models_unchanged(model, (torch.randn(16, 64).half(),))


def test_decoder_block_numerics_unchanged() -> None:
    model, _ = pair(DecoderBlock)
    x = torch.randn(2, 32, 128).half()
    mask = torch.full((32, 32), -1e4).triu(1).half()
    check_models_unchanged(model, (x, mask))


@pytest.mark.slow  # the fast tier (make check) leaves out whole-model runs
def test_hf_llama_numerics_unchanged() -> None:
    transformers = pytest.importorskip("transformers")
    config = tiny_llama_config()
    model, _ = pair(lambda: transformers.LlamaForCausalLM(config))
    ids = torch.randint(0, config.vocab_size, (1, 24), generator=torch.Generator().manual_seed(3))
    check_models_unchanged(model, (ids,), {"use_cache": False})


def test_ktir_compile_runs_the_model() -> None:
    model, _ = pair(MLP)
    x = torch.randn(16, 64).half()
    program = ktir.compile(model, (x,), cores=32)
    y = program(x)
    assert y.shape == (16, 32) and torch.allclose(y.float(), model(x).float(), atol=2e-2)


SWIGLU = """
func.func @swiglu(%x: tensor<256x2048xf16>, %w: tensor<2048x2048xf16> {ktir.parameter = "w"},
                  %up: tensor<256x2048xf16>) -> tensor<256x2048xf16> {
  %gate = ktir.matmul %x, %w : tensor<256x2048xf16>, tensor<2048x2048xf16> -> tensor<256x2048xf16>
  %act = ktir.silu %gate : tensor<256x2048xf16> -> tensor<256x2048xf16>
  %y = ktir.mul %act, %up : tensor<256x2048xf16>, tensor<256x2048xf16> -> tensor<256x2048xf16>
  func.return %y : tensor<256x2048xf16>
}
"""


def test_a_matmul_epilogue_over_several_output_chunks_alternates_two_accumulators() -> None:
    """Output chunk n accumulates into slot n % 2 while the epilogue of chunk n - 1 reads the other."""
    from ktir.sim import simulate

    module = compiled(SWIGLU, 2)
    computes = [op for op in module.walk() if isinstance(op, core.ComputeOp) and op.accumulate is not None]
    assert computes and all(op.into is not None for op in computes)
    accumulator = computes[0].outs[0].type
    assert accumulator.get_shape()[0] == 2  # type: ignore[attr-defined]
    rng = np.random.default_rng(0)
    inputs = [
        (rng.standard_normal((256, 2048)) / 8).astype(np.float16),
        (rng.standard_normal((2048, 2048)) / 8).astype(np.float16),
        rng.standard_normal((256, 2048)).astype(np.float16),
    ]
    (expected,) = run(parse_module(make_context(), SWIGLU), inputs)
    (ours,) = simulate(module, inputs).outputs
    # fp32 partial sums per K chunk (BLAS order per tile), as any fused epilogue: within one fp16
    # ulp of the largest output (docs/performance.md, "Numerics").
    assert np.abs(ours.astype(np.float64) - expected).max() <= fp16_ulp_at_largest(expected)
