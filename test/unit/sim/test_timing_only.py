"""
Timing-only runs (`ktir.sim.estimate`, `Program.estimate`, `ktir.estimate`): the same program on
the same engine gives the same cycles as a run on values, without computing any value; where
time depends on values it assumes what `ktir.sim.function_level.ASSUMPTIONS` states.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import torch
import transformers
from helpers import compiled
from model_zoo import tiny_llama_config

import ktir
import ktir.sim
from ktir.sim.function_level import ASSUMPTIONS
from ktir.sim.report import Report

GATHER = """
func.func @f(%table: tensor<4096x64xf16>, %ids: tensor<6xi64>) -> tensor<6x64xf16> {
  %rows = ktir.gather_rows %table[%ids] : tensor<4096x64xf16>, tensor<6xi64> -> tensor<6x64xf16>
  return %rows : tensor<6x64xf16>
}
"""

X, EXPERTS, OFFSETS, Y = "tensor<32x64xf16>", "tensor<8x64x256xf16>", "tensor<8xi64>", "tensor<32x256xf16>"
GROUPED = f"""
func.func @f(%x: {X}, %experts: {EXPERTS}, %offsets: {OFFSETS}) -> {Y} {{
  %y = ktir.grouped_matmul %x, %experts, %offsets : {X}, {EXPERTS}, {OFFSETS} -> {Y}
  return %y : {Y}
}}
"""

DEMO = Path(__file__).resolve().parents[3] / "examples" / "demo.py"


def same_timing(run: Report, estimated: Report) -> None:
    """Every kernel line and the total: the same cycles, bytes and FLOPs."""
    assert [k.op for k in estimated.kernels] == [k.op for k in run.kernels]
    assert [k.cycles for k in estimated.kernels] == [k.cycles for k in run.kernels]
    assert [k.bytes for k in estimated.kernels] == [k.bytes for k in run.kernels]
    assert [k.flops for k in estimated.kernels] == [k.flops for k in run.kernels]
    assert estimated.total_cycles == run.total_cycles


def test_a_gather_takes_the_same_cycles_and_states_its_assumption() -> None:
    module = compiled(GATHER, cores=4)
    table = np.zeros((4096, 64), np.float16)
    run = ktir.sim.simulate(module, [table, np.array([5, 5, 5, 5, 0, 17])]).report
    estimated = ktir.sim.estimate(module)
    same_timing(run, estimated)
    # The run read 3 distinct rows; the estimate assumes 6 (one per index).
    assert estimated.compulsory_bytes - run.compulsory_bytes == 3 * 128
    assert estimated.assumptions == [ASSUMPTIONS[ktir.dialects.ktir.data.GatherRowsOp]]
    assert run.assumptions == []


@pytest.mark.parametrize("counts", [[4] * 8, [32, 0, 0, 0, 0, 0, 0, 0]])
def test_a_grouped_matmul_assumes_uniform_routing(counts: list[int]) -> None:
    module = compiled(GROUPED, cores=8)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 64)).astype(np.float16)
    experts = rng.standard_normal((8, 64, 256)).astype(np.float16)
    run = ktir.sim.simulate(module, [x, experts, np.cumsum(counts)]).report
    estimated = ktir.sim.estimate(module)
    routing = ASSUMPTIONS[ktir.dialects.ktir.routing.GroupedMatmulOp]
    assert routing in estimated.assumptions
    if counts == [4] * 8:  # the routing it assumes: the same cycles
        same_timing(run, estimated)
    else:  # all rows on one expert: one expert's weights read, not eight
        assert estimated.kernels[0].cycles != run.kernels[0].cycles


@pytest.mark.slow
def test_the_demo_takes_the_same_cycles_without_values() -> None:
    spec = importlib.util.spec_from_file_location("ktir_demo", DEMO)
    assert spec is not None and spec.loader is not None
    demo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(demo)
    model, ids = demo.build()
    program = demo.compiled(model, ids)
    first = program.estimate()  # before the first call: the state's load is part of the call
    program(ids)
    same_timing(program.report, first)
    assert first.load_bytes == program.report.load_bytes > 0
    assert program.estimate().load_bytes == 0  # resident now
    assert first.to_json() == ktir.sim.Report.from_json(first.to_json()).to_json()


@pytest.mark.slow
def test_a_model_on_the_meta_device_estimates_as_with_its_weights() -> None:
    """No weight allocated; the same cycles as the same model with (non-constant) weights."""
    config = tiny_llama_config()
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(config).half().eval()
    with torch.no_grad():  # norms initialised to ones would fold to constants; trained ones do not
        for name, parameter in model.named_parameters():
            if "norm" in name:
                parameter.uniform_(0.5, 1.5)
    ids = torch.randint(0, config.vocab_size, (1, 16))
    program = ktir.compile(model, (ids,), {"use_cache": False}, quiet=True)
    program(ids)
    with torch.device("meta"):
        meta_model = transformers.LlamaForCausalLM(config).half().eval()
    meta_ids = torch.zeros((1, 16), dtype=torch.long, device="meta")
    estimated = ktir.estimate(meta_model, (meta_ids,), {"use_cache": False})
    same_timing(program.report, estimated)
    assert estimated.load_bytes == program.report.load_bytes


def test_a_meta_program_cannot_run() -> None:
    with torch.device("meta"):
        model = torch.nn.Linear(64, 32).half()
    program = ktir.compile(model, (torch.zeros(4, 64, dtype=torch.float16, device="meta"),), quiet=True)
    assert program.estimate().total_cycles > 0
    with pytest.raises(ValueError, match="meta tensor has no values"):
        program(torch.zeros(4, 64, dtype=torch.float16))
