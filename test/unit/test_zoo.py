"""
The fast subset of the model zoo (`test/zoo`).

The zoo is a registry of tiny, random-initialised Hugging Face architectures
(`test/zoo/architectures.py`: decoder LLMs, encoders, encoder-decoders, MoE, vision
transformers, CNNs, speech encoders, state-space models), each built from its transformers
config class in the same shape (hidden 64, 2 layers, 4 heads, vocab 256; 3x32x32 images) with
the same weights in fp16 and fp64 and seeded inputs. `python test/zoo/run.py` (`make zoo`)
compiles every one of them with `ktir.compile`, runs it on the simulator, compares it with eager
PyTorch and prints a table; this module runs a few that pass and take seconds, one per family
that matters most, with the bounds of `test_compile_models.py` (`helpers.check_against_eager`).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers import check_against_eager, check_never_faster_than_physics, model_output

import ktir

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from zoo.architectures import ARCHITECTURES, FAMILIES

FAST = ["llama", "bert", "vit", "resnet"]
"""One decoder, one encoder, one vision transformer and one CNN: each well under 20 s."""


@pytest.mark.slow
@pytest.mark.parametrize("name", FAST)
def test_zoo_architecture_matches_eager(name: str) -> None:
    """Compiled, simulated and within the eager bounds, with a physically possible report."""
    model16, model64, args, kwargs = ARCHITECTURES[name].build()
    program = ktir.compile(model16, args, kwargs, quiet=True)
    ours = model_output(program(*args))
    check_against_eager(ours.numpy(), model16, model64, args, kwargs)
    report = program.report
    assert report.total_cycles > 0 and report.device_kernels > 0
    check_never_faster_than_physics(report)
    estimated = program.estimate()  # without values: the same cycles, kernel by kernel
    assert [k.cycles for k in estimated.kernels] == [k.cycles for k in report.kernels]


def test_registry_covers_every_family() -> None:
    """At least 60 architectures with unique names, every family represented."""
    assert len(ARCHITECTURES) >= 60
    assert {a.family for a in ARCHITECTURES.values()} == set(FAMILIES)
    assert all(name == a.name for name, a in ARCHITECTURES.items())


def test_build_is_deterministic() -> None:
    """Two builds give the same weights (fp16 and fp64 alike) and the same inputs."""
    first, second = ARCHITECTURES["llama"].build(), ARCHITECTURES["llama"].build()
    for one, other in zip(first[:2], second[:2], strict=True):
        state, again = one.state_dict(), other.state_dict()
        assert state.keys() == again.keys()
        assert all(torch.equal(state[k], again[k]) for k in state)
    assert all(torch.equal(a, b) for a, b in zip(first[2], second[2], strict=True))
    assert first[3] == second[3]
    fp16, fp64 = first[0].state_dict(), first[1].state_dict()
    weight = next(k for k in fp16 if k.endswith("weight"))
    assert fp16[weight].dtype == torch.float16 and fp64[weight].dtype == torch.float64
    assert np.array_equal(fp16[weight].double().numpy(), fp64[weight].half().double().numpy())
