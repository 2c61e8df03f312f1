"""The fuzzer's inputs for ktdp kernels (tools/fuzz_ktdp.py)."""

from __future__ import annotations

import io

import numpy as np
import pytest

from ktir.tools import fuzz_cases
from ktir.tools.fuzz_ktdp import kernel_inputs


def _seed(name: str) -> fuzz_cases.Seed:
    return next(s for s in fuzz_cases.load_corpus() if s.name == name)


def test_a_small_kernel_gets_one_array_per_argument_in_its_views_shape() -> None:
    seed = _seed("Inputs/ktdp/gather.mlir")
    function, data = kernel_inputs(seed.name, seed.text)
    arrays = np.load(io.BytesIO(data))
    assert function == "gather"
    assert {k: (arrays[k].shape, arrays[k].dtype) for k in arrays.files} == {
        "table": ((512, 64), np.float16),
        "ids": ((4, 8), np.int32),
        "dest": ((4, 8), np.int32),
        "out": ((32, 64), np.float16),
    }
    assert (arrays["ids"] >= 0).all() and (arrays["ids"] < 4).all()  # valid gather indices


@pytest.mark.slow
def test_full_size_kernels_and_other_inputs_are_left_out() -> None:
    assert kernel_inputs("Inputs/ktdp/rope.mlir", _seed("Inputs/ktdp/rope.mlir").text) is None
    assert kernel_inputs("ktir-run/run.mlir", _seed("ktir-run/run.mlir").text) is None


def test_ktdp_cases_run_the_engine_with_their_inputs() -> None:
    cases = [c for c in fuzz_cases.iter_cases(0, 200, only="Inputs/ktdp/gather") if c.mode == "ktdp"]
    assert cases, "half of a ktdp kernel's cases run on the engine"
    case = cases[0]
    assert case.tool == "ktir-run" and case.argv[1:3] == ("--function", "gather")
    assert case.files[0][0] == "inputs.npz" and "{tmp}/inputs.npz" in case.argv
