"""
The target is an argument: a 16-core chip with 1 MiB of LX per core, given as a TOML file to
`ktir.compile`, `ktir.run_pipeline`, `ktir-opt --target` and `ktir-run --target`, makes the
planner, the static check and the simulator agree on its LX and its cores.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
import transformers

import ktir
import ktir.ktdp_engine as ktdp
from ktir.cores.check import CoreCheckError, check_function
from ktir.hardware.target import SPYRE, Target, TargetTypeError, load_target
from ktir.ir.context import make_context
from ktir.ir.diagnostics import parse_module
from ktir.ir.values import functions_of
from ktir.ktdp_engine import KtdpError
from ktir.pipeline import PipelineError, run_pipeline
from ktir.sim import SimulationError, simulate
from ktir.tools import ktir_opt, ktir_run


@pytest.fixture
def small_chip(tmp_path: Path) -> Path:
    path = tmp_path / "small.toml"
    path.write_text('name = "small"\ncores = 16\nlx_bytes = 1048576\n')
    return path


def exp(x: torch.Tensor) -> torch.Tensor:
    return torch.exp(x)


X = (torch.randn(2048, 2048, generator=torch.Generator().manual_seed(0)) / 4).half()
EXP_SOURCE = (
    "func.func @f(%x: tensor<2048x2048xf16>) -> tensor<2048x2048xf16> {\n"
    "  %y = ktir.exp %x : tensor<2048x2048xf16> -> tensor<2048x2048xf16>\n"
    "  return %y : tensor<2048x2048xf16>\n}\n"
)
ADD = Path(__file__).resolve().parent.parent / "lit" / "Inputs" / "ktdp" / "add.mlir"


def kernels(prog: ktir.program.Program) -> list:
    return [op for op in prog.module.walk() if op.name == "ktir.kernel"]


def test_load_target_reads_the_file_and_refuses_bad_ones(small_chip: Path, tmp_path: Path) -> None:
    chip = load_target(str(small_chip))
    assert (chip.cores, chip.lx_bytes, chip.lx_usable_bytes) == (16, 1048576, 838860)
    assert chip.stick_bytes == SPYRE.stick_bytes and load_target("") is SPYRE
    bad = tmp_path / "bad.toml"
    bad.write_text("cores = 0\nwarp_size = 32\n")
    with pytest.raises(ValueError, match="unknown target fields: warp_size"):
        load_target(str(bad))
    bad.write_text("cores = 0\n")
    with pytest.raises(ValueError, match="cores must be positive, not 0"):
        load_target(str(bad))
    with pytest.raises(ValueError, match="cannot read target file"):
        load_target(str(tmp_path / "missing.toml"))


def test_planner_static_check_and_simulator_agree_on_a_small_chip(tmp_path: Path) -> None:
    # 16 cores, each with a 256x1024 tile in and out (512 KiB each); exp is DMA-bound. On Spyre
    # it streams in 8 chunks of 64 KiB (at least `PIPELINE_MIN_CHUNKS`), two slots each: 256 KiB
    # of staging, more than the 205 KiB of usable LX of a chip with 256 KiB per core, which
    # needs smaller chunks.
    small_chip = tmp_path / "tiny.toml"
    small_chip.write_text('name = "tiny"\ncores = 16\nlx_bytes = 262144\n')
    on_spyre = ktir.compile(exp, (X,), cores=16)
    on_small = ktir.compile(exp, (X,), target=small_chip)
    (spyre_kernel,), (small_kernel,) = kernels(on_spyre), kernels(on_small)
    assert (spyre_kernel.cores.value.data, spyre_kernel.chunks.value.data) == (16, 8)
    assert small_kernel.cores.value.data == 16 and small_kernel.chunks.value.data > 8
    chip = load_target(str(small_chip))
    (function,) = functions_of(on_small.module)
    check_function(function, chip)  # the plan fits the chip it was made for
    (function,) = functions_of(on_spyre.module)
    with pytest.raises(CoreCheckError, match="LX"):
        check_function(function, chip)  # ...and Spyre's plan does not fit the small chip
    inputs = on_spyre.imported.arguments(X)
    with pytest.raises(SimulationError, match="LX"):
        simulate(on_spyre.module, inputs, target=chip)
    assert torch.equal(on_small(X), on_spyre(X))
    assert on_small.report.target is chip


def test_run_pipeline_and_the_tools_take_the_target(small_chip: Path, tmp_path: Path, capsys) -> None:
    source = tmp_path / "exp.mlir"
    source.write_text(EXP_SOURCE)
    assert ktir_opt.main([str(source), "-p", "ktir-compile", "--target", str(small_chip)]) == 0
    assert 'ktir.kernel "ktir.exp" cores 16 chunks 8' in capsys.readouterr().out
    report = tmp_path / "report.json"
    assert ktir_run.main([str(source), "--target", str(small_chip), "--top", "1", "--json", str(report)]) == 0
    (kernel,) = json.loads(report.read_text())["kernels"]
    assert (kernel["cores"], kernel["chunks"]) == (16, 8)
    assert json.loads(report.read_text())["target"]["cores"] == 16
    capsys.readouterr()
    assert ktir_run.main([str(source), "--target", str(small_chip), "--cores", "32"]) == 2
    assert "argument --cores: must be in 1..16, not 32" in capsys.readouterr().err
    assert ktir_opt.main([str(source), "-p", "ktir-compile", "--target", str(tmp_path / "no.toml")]) == 2
    assert "argument --target: cannot read target file" in capsys.readouterr().err
    with pytest.raises(PipelineError, match="cannot read target file"):
        run_pipeline(
            ktir.ir.diagnostics.parse_module(ktir.ir.context.make_context(), source.read_text()),
            "cse",
            target=tmp_path / "no.toml",
        )


SMALL = Target(name="small", cores=16, lx_bytes=1 << 20)
"""The same small chip as a `Target` object: every entry point takes it as it takes a file."""


@pytest.mark.slow
def test_compile_and_estimate_take_a_target_object() -> None:
    program = ktir.compile(exp, (X,), target=SMALL)
    (kernel,) = kernels(program)
    assert kernel.cores.value.data == 16 and program.target is SMALL
    program(X)
    assert program.report.target is SMALL
    report = ktir.estimate(exp, (X,), target=SMALL)
    assert report.target is SMALL and [k.cores for k in report.kernels] == [16]
    assert report.total_cycles == program.report.total_cycles


def test_run_pipeline_takes_a_target_object() -> None:
    for run in (ktir.run_pipeline, run_pipeline):
        module = parse_module(make_context(), EXP_SOURCE)
        run(module, "ktir-compile", target=SMALL)
        assert 'ktir.kernel "ktir.exp" cores 16 chunks 8' in str(module)


def test_a_target_of_another_type_is_refused_by_every_entry_point() -> None:
    module = parse_module(make_context(), EXP_SOURCE)
    with pytest.raises(TargetTypeError, match="not int"):
        run_pipeline(module, "ktir-compile", target=16)
    with pytest.raises(TargetTypeError, match="not dict"):
        ktir.compile(exp, (X,), target={"cores": 16})
    with pytest.raises(PipelineError, match="target 'spyre': cores must be positive, not 0"):
        ktir.compile(exp, (X,), target=Target(cores=0))


@pytest.mark.slow
def test_estimate_llm_and_generate_take_a_target_object() -> None:
    config = transformers.LlamaConfig(
        hidden_size=64,
        intermediate_size=128,
        num_attention_heads=4,
        num_key_value_heads=2,
        num_hidden_layers=1,
        vocab_size=256,
    )
    estimate = ktir.estimate_llm(config, prompt=8, context=16, target=SMALL)
    assert estimate.target is SMALL and estimate.prefill.target is SMALL
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(config).half().eval().requires_grad_(False)
    result = ktir.generate(model, torch.tensor([[3, 17, 101]]), max_new_tokens=2, target=SMALL)
    for report in (result.prefill, *result.decode):
        assert report.target is SMALL and {k.cores for k in report.kernels if k.cores} <= set(range(1, 17))


def test_ktdp_run_takes_a_target_object_or_a_file(small_chip: Path) -> None:
    a = np.ones((96, 64), np.float16)
    arrays = {"a": a, "b": a, "c": np.zeros_like(a)}
    for target in (SMALL, small_chip):
        with pytest.raises(KtdpError, match="a grid of 32 tiles does not fit the 16 cores of 'small'"):
            ktdp.run(ADD, "add", arrays, target=target)
        _, report = ktdp.run(ADD, "add", arrays, grid=[16], target=target)
        assert report.target.cores == 16 and report.kernels[0].cores == 16
    with pytest.raises(TargetTypeError, match="not int"):
        ktdp.run(ADD, "add", arrays, target=16)
