"""
ktir-emit-ktdp (ktir/export/to_ktdp/, passes/emit_ktdp.py): core-level kernels converted to RFC
0682 ktdp, printed, read back by ktir's ktdp reader, and run to the outputs ktir's simulator gives.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

import numpy as np
import pytest
import torch
import transformers
from hypothesis import given
from hypothesis import strategies as st
from test_compile_models import MODELS
from xdsl.dialects import scf
from xdsl.dialects.builtin import IntegerType, ModuleOp
from xdsl.ir.affine import AffineExpr, AffineMap

import ktir
import ktir.ktdp_engine as ktdp
from ktir.dialects.ktir import core
from ktir.dialects.ktir import elementwise as ew
from ktir.export.to_ktdp import emit_kernel, emit_module, kernel_names
from ktir.export.to_ktdp.subscripts import start_subscript
from ktir.ir.context import make_context
from ktir.ir.diagnostics import DiagnosticError, module_text, parse_module
from ktir.llm.estimate import decode_program, prefill_program
from ktir.passes.emit_ktdp import EmitKtdpPass
from ktir.tools.ktdp_roundtrip import roundtrip_kernel, roundtrip_module

# Zoo models whose every kernel the emitter writes, as ktir plans them for the card: an MLP
# (GELU; its second matmul splits K over core pairs: lx_fill, an accumulating matmul, a ring
# reduction and a store by each pair's first core), a decoder block (a chunk loop, softmax
# attention as fused matmuls, a K-split down projection), BERT (LayerNorm, attention with an
# additive mask) and a Llama (RMSNorm, RoPE, grouped causal attention whose q tiles cut a
# group of host dims).
MODEL_NAMES = ["mlp", "decoder_block", "hf_bert", "hf_llama"]


@cache
def _compiled(name: str) -> ModuleOp:
    model, _, args, kwargs = MODELS[name]()
    return ktir.compile(model, args, kwargs).module


@pytest.mark.slow
@pytest.mark.parametrize("name", MODEL_NAMES)
def test_every_kernel_is_written_and_gives_ktirs_outputs_bit_for_bit(name: str) -> None:
    results = roundtrip_module(_compiled(name))
    assert [r for r in results if r.skipped] == []
    written = [r for r in results if not r.skipped]
    assert written and all(r.equal for r in written), [r for r in written if not r.equal]
    # The same time, to rounding: the same costs on the same schedule (the decoder block's
    # chunked attention overlaps its second chunk's loads with the first's compute in both);
    # and the same bytes moved, compulsory bytes, FLOPs and matmul FLOPs: both engines charge
    # by `ktir.hardware.accounting` (a linalg.yield, a cast or a copy is no FLOP in either).
    assert all(r.same_cycles for r in written), [r for r in written if not r.same_cycles]
    assert [(r.name, r.differing) for r in written if r.differing] == []
    assert all(r.ktir["bytes"] > 0 and r.ktir["compulsory_bytes"] > 0 for r in written)


@pytest.mark.slow
def test_the_pass_replaces_the_module_by_the_ktdp_program() -> None:
    module = _compiled("mlp").clone()
    EmitKtdpPass().apply(make_context(), module)
    text = module_text(module)
    names = [op.sym_name.data for op in module.body.block.ops]  # type: ignore[attr-defined]
    # each fused payload is a routine, GELU a routine within the first
    assert names == ["k0_fused", "k0_fused_fused0", "k0_fused_gelu1", "k1_fused", "k1_fused_fused0"]
    assert 'attributes {ktir.routine = "ktir.gelu"}' in text
    marks = ('ktir.routine = "ktir.gelu"', 'ktir.routine = "ktir.fused"')
    unmarked = re.sub(r"ktir\.buffer = array<i64: \d+, \d+>", "", text)  # an LX buffer's name
    assert "ktir." not in unmarked.replace(marks[0], "").replace(marks[1], "")  # no ktir op or type is left
    assert "ktdp.construct_access_tile %vin0[0, %id mod 8 * 2, 0]" in text
    assert "math.erf" in text and "linalg.matmul" in text
    # The printed program is what ktir-run --function runs: the second kernel's output.
    core = _compiled("mlp")
    kernel = kernel_names(core)[1][1]
    rng = np.random.default_rng(1)
    arrays: dict[str, Any] = {}
    for j, value_type in enumerate(kernel.inputs.types):
        size = tuple(value_type.encoding.tiled.device_size)  # type: ignore[attr-defined]
        arrays[f"in{j}"] = rng.standard_normal(size).astype(np.float16)
    out = tuple(kernel.outputs.types[0].encoding.tiled.device_size)  # type: ignore[attr-defined]
    arrays["out0"] = np.zeros(out, np.float16)
    outputs, report = ktdp.run(text, "k1_fused", arrays)
    assert report.total_cycles > 0 and np.isfinite(outputs["out0"]).all()


def test_a_payload_without_an_emission_is_located_and_every_one_is_listed() -> None:
    text = module_text(_compiled("mlp")).replace("ktir.gelu", "ktir.erf")
    module = parse_module(make_context(), text, "mlp.mlir")
    with pytest.raises(DiagnosticError) as caught:
        emit_module(module)
    (diagnostic,) = caught.value.diagnostics
    assert diagnostic.message == "'ktir.erf' op ktir-emit-ktdp does not write 'ktir.erf' payloads yet"
    assert diagnostic.location is not None and diagnostic.location.line > 1


def test_graph_level_ir_has_no_kernel_to_write() -> None:
    module = parse_module(make_context(), "func.func @f() {\n  func.return\n}\n", "empty.mlir")
    with pytest.raises(DiagnosticError, match="run ktir-lower-to-cores"):
        emit_module(module)


@given(
    st.sampled_from([1, 2, 4, 8]), st.sampled_from([2, 4]), st.integers(-3, 5).filter(bool), st.integers(0, 9)
)
def test_a_starts_column_of_mixed_radix_form_is_an_affine_subscript(
    q: int, r: int, scale: int, offset: int
) -> None:
    cores = 32
    ids = np.arange(cores)
    column = offset + scale * ((ids // q) % r)
    expr = start_subscript(column, AffineExpr.dimension(0))
    assert expr is not None
    assert [AffineMap(1, 0, (expr,)).eval([i], [])[0] for i in ids] == list(column)


def test_starts_that_are_not_affine_in_the_core_have_no_subscript() -> None:
    tile_id = AffineExpr.dimension(0)
    assert start_subscript(np.array([0, 5, 1, 7]), tile_id) is None
    assert start_subscript(np.array([3, 3, 3]), tile_id) == AffineExpr.constant(3)
    assert start_subscript(np.array([0, 64, 128, 192]), tile_id) == tile_id * 64


@pytest.mark.slow
def test_the_generic_form_is_valid_upstream_mlir() -> None:
    mlir = pytest.importorskip("mlir.ir", reason="needs the upstream MLIR Python bindings (the 'mlir' extra)")
    module = _compiled("hf_llama").clone()
    EmitKtdpPass().apply(make_context(), module)
    with mlir.Context() as context:
        context.allow_unregistered_dialects = True
        upstream = mlir.Module.parse(module_text(module, generic=True))
        assert upstream.operation.verify()
    functions = [op for op in upstream.body.operations]
    public = [f for f in functions if "sym_visibility" not in f.attributes]
    assert len(public) == len(kernel_names(_compiled("hf_llama")))
    # the routines (RMSNorm, SiLU, attention) are private functions marked for ktir
    assert len(functions) > len(public)
    assert all("ktir.routine" in f.attributes for f in functions if f not in public)


class _ScaledSum(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.sum() * 2  # a 0-d result: rank-0 tiles


class _PadNegInf(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.pad(x, (0, 64), value=float("-inf")) * 2  # a fill MLIR writes in hex


@pytest.mark.parametrize("model", [_ScaledSum(), _PadNegInf()], ids=["rank-0", "pad--inf"])
def test_rank_0_tiles_and_infinite_fills_round_trip(model: torch.nn.Module) -> None:
    x = torch.randn(8, 64, dtype=torch.float16)
    results = roundtrip_module(ktir.compile(model, (x,), {}).module)
    assert results and all(r.skipped is None and r.equal for r in results), results
    assert all(r.same_cycles and not r.differing for r in results), results


def test_a_k_loop_carries_its_accumulator_and_gives_ktirs_outputs_and_time() -> None:
    # 32 x 16384 @ 16384 x 128: K split over core pairs, each core's half in a loop of chunks,
    # the accumulator carried through the loop (iter_args), then reduced on the ring.
    linear = torch.nn.Linear(16384, 128, bias=False).half()
    module = ktir.compile(linear, (torch.zeros(32, 16384, dtype=torch.float16),)).module
    (name, kernel), *_ = kernel_names(module)
    text = module_text(emit_kernel(kernel, name))
    assert " iter_args(%a0 = %t" in text and "scf.yield %t" in text and "ktdp.inter_tile_reduce" in text
    (result,) = roundtrip_module(module)
    # bit for bit: both engines run their GEMMs on one BLAS thread (threads change a GEMM's bits)
    assert result.skipped is None and result.equal and result.same_cycles and result.differing == []


def test_a_whole_slice_is_loaded_once_and_each_k_chunk_reads_its_window() -> None:
    # 128 x 4096 @ 4096 x 1024: each core loads its rows of x whole, then for each of its output
    # tiles (an outer loop, the accumulator zeroed in it) runs a K loop whose matmuls read their
    # chunk's window of x (an extract_slice at an offset of the K loop's variable).
    linear = torch.nn.Linear(4096, 1024, bias=False).half()
    module = ktir.compile(linear, (torch.zeros(128, 4096, dtype=torch.float16),)).module
    (name, kernel), *_ = kernel_names(module)
    text = module_text(emit_kernel(kernel, name))
    loads = [line for line in text.splitlines() if "ktdp.load" in line]
    assert len(loads) == 2 and text.index(loads[0]) < text.index("scf.for")  # x once, before the loops
    assert "tensor.extract_slice %t2[0, %s" in text and "iter_args(" in text
    (result,) = roundtrip_module(module)
    assert result.skipped is None and result.equal and result.same_cycles and result.differing == []


def test_a_loops_loads_take_the_slots_ktir_gave_their_buffer() -> None:
    # 512 x 4096 @ 4096 x 6144 (Llama-3-8B's q/k/v): each core's 1 MiB of x is loaded whole,
    # then two output tiles each run a K loop of weight chunks. The loop's tensors do not fit
    # twice in LX beside x, so the engine's rule for the function gives them one buffer each,
    # where ktir's planner double-buffers the weight chunks alone: their loads name ktir's
    # buffer of two slots, and chunk k + 1 loads while chunk k multiplies (1,118,797 cycles
    # against ktir's 665,108 with one buffer: each load waited for the previous chunk's matmul).
    linear = torch.nn.Linear(4096, 6144, bias=False).half()
    module = ktir.compile(linear, (torch.zeros(512, 4096, dtype=torch.float16),)).module
    (name, kernel), *_ = kernel_names(module)
    text = module_text(emit_kernel(kernel, name))
    loads = [line for line in text.splitlines() if "ktdp.load" in line]
    assert len(loads) == 2 and "ktir.buffer" not in loads[0]  # x: one slot, loaded whole
    assert "{ktir.buffer = array<i64: 1048576, 2>}" in loads[1]
    (result,) = roundtrip_module(module)
    assert result.skipped is None and result.equal and result.same_cycles and result.differing == []


@pytest.mark.slow
def test_alternating_accumulators_of_a_llama_layer_round_trip() -> None:
    # A Llama-3-shaped layer at hidden 1,024 (8 heads, 2 KV heads), 128 prefill tokens. Its
    # o_proj + residual kernel alternates two accumulators over two output tiles (tile 1
    # accumulates in slot 1 while tile 0's epilogue reads slot 0), its x a whole slice, its
    # residual tiles prefetched into both slots of their buffer at once. Its gate/up + SiLU
    # kernel alternates them over 4 tiles in a loop (slot n mod 2): the loop carries both,
    # swapping them each iteration.
    config = transformers.LlamaConfig(
        hidden_size=1024, intermediate_size=3584, num_attention_heads=8, num_key_value_heads=2
    )
    module = prefill_program(config, 1, 128).module
    results = {}
    for index, (name, kernel) in enumerate(kernel_names(module)):
        fills = [op for op in kernel.body.walk() if isinstance(op, core.FillOp)]
        if any(op.buffer.type.get_shape()[0] == 2 for op in fills):
            in_loop = any(isinstance(op.parent_op(), scf.ForOp) for op in fills)
            results[in_loop] = roundtrip_kernel(kernel, index, name, np.random.default_rng(0))
    assert set(results) == {False, True}
    assert all(r.skipped is None and r.equal for r in results.values()), results
    assert results[False].same_cycles and results[False].differing == []
    # ktir's time too: each output tile's matmuls accumulate in their accumulator's buffer (a
    # fill made in the loop, alternating), so tile n's epilogue reads its own sums while tile
    # n + 1's K loop runs, as ktir's two accumulator slots let it (the schedule gave each
    # matmul's result the next of two buffers, and tile n + 1's last sums overwrote tile n's)
    assert results[True].differing == []


@pytest.mark.slow
def test_a_silu_epilogue_reads_the_accumulator_rounded_to_fp16() -> None:
    # A Llama-3-shaped decode step at hidden 2,048: its gate/up kernel's epilogue is SiLU(gate)
    # * up on the two fp32 accumulators; ktir rounds each to fp16 first, which the SiLU
    # routine's generic writes as a cast in its body (no pass of its own).
    config = transformers.LlamaConfig(
        hidden_size=2048, intermediate_size=7168, num_attention_heads=16, num_key_value_heads=4
    )
    module = decode_program(config, 1, context=256).module
    found = []
    for index, (name, kernel) in enumerate(kernel_names(module)):
        try:
            text = module_text(emit_kernel(kernel, name))
        except DiagnosticError:
            continue
        silu = [line for line in text.splitlines() if '"ktir.silu"' in line]
        if silu and "xf32>" in silu[0]:
            assert "arith.truncf %a0 : f32 to f16" in text
            found.append(roundtrip_kernel(kernel, index, name, np.random.default_rng(0)))
    assert found
    assert all(r.equal and r.same_cycles and r.differing == [] for r in found), found


def test_a_decode_attention_over_a_long_cache_fits_lx_as_ktirs_routine_does() -> None:
    """
    A decode step's attention over 1,024 cached positions (head size 128): its routine's body
    widens the keys and values to float64 (2.6 MB on each tile), which is the op's reference
    values, not what the core holds (ktir's routine streams key blocks of 64), so the engine's
    LX check counts the call's arguments and result only, and the kernel runs with ktir's
    outputs, cycles, bytes and FLOPs (it stopped at the check, against 2 MiB of LX).
    """
    config = transformers.LlamaConfig(
        hidden_size=256,
        intermediate_size=512,
        num_attention_heads=2,
        num_key_value_heads=1,
        num_hidden_layers=1,
        vocab_size=256,
    )
    module = decode_program(config, 1, context=1024).module
    [result] = [
        roundtrip_kernel(kernel, index, name, np.random.default_rng(0))
        for index, (name, kernel) in enumerate(kernel_names(module))
        if name.endswith("_attention")
    ]
    assert result.skipped is None and result.equal and result.differing == [], result


def _position_arithmetic(kernel: core.KernelOp) -> bool:
    """Whether a kernel computes on integers (a position, a mask over the cache) or takes a cos or sin."""
    ops = [op for op in kernel.body.walk() if isinstance(op, tuple(ew.ELEMENTWISE_OPS))]
    integers = [op for op in ops if any(isinstance(t.element_type, IntegerType) for t in op.operand_types)]
    return bool(integers) or any(isinstance(op, ew.CosOp | ew.SinOp) for op in ops)


def test_a_decode_steps_position_arithmetic_is_written_and_round_trips_bit_for_bit() -> None:
    """
    A Llama decode step's position kernels (the token's position, an integer `ktir.add`; the
    mask over the cache, `ktir.le`; RoPE's angles, their cos and sin; the cache's write index):
    integer generics (`addi`, `cmpi sle`, `sitofp`) and `math.cos` / `math.sin`, each giving
    ktir's values bit for bit. Two take a few cycles more: a fused kernel's i64 add, charged by
    its int32 sticks where ktir's fused kernels count i64 in NumPy's 8 bytes, and a 0-d add,
    charged one element where ktir charges a kernel its device tile, a stick (docs/ktdp.md).
    """
    config = transformers.LlamaConfig(
        hidden_size=256,
        intermediate_size=512,
        num_attention_heads=4,
        num_key_value_heads=1,
        num_hidden_layers=1,
        vocab_size=256,
    )
    module = decode_program(config, 1, context=64).module
    rng = np.random.default_rng(0)
    results = [
        roundtrip_kernel(kernel, index, name, rng)
        for index, (name, kernel) in enumerate(kernel_names(module))
        if _position_arithmetic(kernel)
    ]
    assert len(results) == 7
    assert all(r.skipped is None and r.equal for r in results), results
    differing = {r.name: r.differing for r in results if r.differing}
    assert differing == {"k2_fused": ["cycles", "flops"], "k10_add": ["cycles", "flops"]}, differing
    assert all(abs(r.ktdp_cycles - r.ktir_cycles) <= 0.005 * r.ktir_cycles for r in results), (
        results
    )  # 5 of 1,509


@pytest.mark.slow
def test_a_causal_attention_in_query_chunks_masks_each_chunk_from_its_own_start() -> None:
    """
    Causal attention over 512 positions with 32 heads: each core's queries run in a chunk loop,
    and each chunk's causal limit starts at that chunk's first query (the first chunk's start
    plus 64 per chunk), not the first chunk's for all of them (which gave wrong outputs and
    under half the FLOPs). Values, bytes, FLOPs and cycles are ktir's (437,663 cycles against
    297,634 while its loads and results took one buffer each by the function's rule).
    """
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 32, 512, 128, dtype=torch.float16) for _ in range(3))
    [result] = roundtrip_module(ktir.compile(_causal_attention, (q, k, v)).module)
    assert result.skipped is None and result.equal, result
    assert result.differing == [], result


def _causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)


def test_a_computes_result_takes_the_slots_ktir_gave_its_output_buffer() -> None:
    """
    Causal attention over 512 positions with 8 heads: each core's queries run in a loop of
    chunks whose results ktir writes into an output buffer of two slots, so chunk k + 1's
    attention runs while chunk k's result is stored. The routine's call names that buffer
    (`ktir.buffer`), as the loads name theirs, and takes ktir's cycles (136,617 against
    112,323 while the function's rule, its routine's float64 body not fitting twice in LX, gave
    each result one buffer: each chunk's attention waited for the last chunk's store).
    """
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 8, 512, 128, dtype=torch.float16) for _ in range(3))
    module = ktir.compile(_causal_attention, (q, k, v)).module
    (name, kernel), *_ = kernel_names(module)
    calls = [line for line in module_text(emit_kernel(kernel, name)).splitlines() if "func.call" in line]
    assert calls and all("{ktir.buffer = array<i64: " in line for line in calls)
    (result,) = roundtrip_module(module)
    assert result.skipped is None and result.equal and result.differing == [], result
