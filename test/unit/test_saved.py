"""Saving and loading compiled programs without pickle (`ktir.saved`, `Program.save`, `ktir.load`)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

import ktir
from ktir.saved import FILES, SavedProgramError


class TwoOutputs(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(64, 32)

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        y = self.linear(x)
        return {"y": y, "gelu": torch.nn.functional.gelu(y)}


@pytest.fixture(scope="module")
def compiled_pair() -> tuple[ktir.program.Program, torch.Tensor]:
    torch.manual_seed(0)
    x = torch.randn(8, 64).half()
    return ktir.compile(TwoOutputs().half(), (x,), quiet=True), x


def test_a_saved_program_gives_the_same_outputs_and_cycles(compiled_pair, tmp_path: Path) -> None:
    program, x = compiled_pair
    expected = program(x)
    program.save(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(FILES)
    loaded = ktir.load(tmp_path)
    first = loaded(x)
    assert isinstance(first, dict) and sorted(first) == ["gelu", "y"]  # the model's own structure
    assert all(torch.equal(first[k], expected[k]) for k in expected)
    assert loaded.report.load_bytes > 0  # the first call moves the packed state to the device
    again = loaded(x)
    assert loaded.report.load_bytes == 0 and torch.equal(again["y"], expected["y"])
    assert loaded.report.total_cycles == program.report.total_cycles


def test_saving_twice_writes_the_same_bytes(compiled_pair, tmp_path: Path) -> None:
    program, _ = compiled_pair
    program.save(tmp_path / "a")
    program.save(tmp_path / "b")
    for name in FILES:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    description = json.loads((tmp_path / "a" / "program.json").read_text())
    assert description["format"] == "ktir-program" and description["user_inputs"] == 1
    assert [o["dtype"] for o in description["outputs"]] == ["float16", "float16"]
    packed = np.load(tmp_path / "a" / "parameters.npz")
    assert sorted(packed) == sorted(description["input_names"][1:])


@pytest.mark.slow
def test_a_model_output_comes_back_as_a_tuple(tmp_path: Path) -> None:
    """Structures pytree cannot write as JSON (here a dataclass) load as a tuple of tensors."""
    from dataclasses import dataclass

    @dataclass
    class Out:
        y: torch.Tensor

    class Model(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.linear = torch.nn.Linear(64, 64)

        def forward(self, x: torch.Tensor) -> Out:
            return Out(self.linear(x))

    x = torch.randn(4, 64).half()
    program = ktir.compile(Model().half(), (x,), quiet=True)
    expected = program(x).y
    program.save(tmp_path)
    (y,) = ktir.load(tmp_path)(x)
    assert torch.equal(y, expected)


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda d: (d / "program.mlir").unlink(), "is not a saved ktir program: no program.mlir"),
        (lambda d: (d / "program.json").write_text("{"), "not JSON"),
        (lambda d: (d / "program.json").write_text('{"format": "other"}'), "not a ktir-program version 1"),
        (lambda d: (d / "program.json").write_text("[1]"), "not a ktir-program version 1"),
        (lambda d: (d / "parameters.npz").write_bytes(b"garbage"), "cannot read the parameters"),
        (lambda d: np.savez(d / "parameters.npz", nothing=np.zeros(1)), "has no array for"),
    ],
)
def test_damaged_directories_are_refused(compiled_pair, tmp_path: Path, damage, message: str) -> None:
    program, _ = compiled_pair
    program.save(tmp_path)
    damage(tmp_path)
    with pytest.raises(SavedProgramError, match=message):
        ktir.load(tmp_path)


def _edit_json(directory: Path, change) -> None:  # type: ignore[no-untyped-def]
    path = directory / "program.json"
    description = json.loads(path.read_text())
    change(description)
    path.write_text(json.dumps(description))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(target={"cores": "x"}), "cores must be int"),
        (lambda d: d["target"].update(cores=1), "a kernel uses 2 cores, the target 'spyre' has 1"),
        (lambda d: d.update(user_inputs=99), "do not describe the arguments"),
        (lambda d: d.update(outputs=5), "'outputs' must be a list"),
    ],
)
def test_a_bad_description_is_refused(tmp_path: Path, change, message: str) -> None:
    x = torch.randn(8, 64).half()
    program = ktir.compile(torch.nn.Linear(64, 32).half(), (x,), cores=2, quiet=True)
    program.save(tmp_path)
    _edit_json(tmp_path, change)
    with pytest.raises(SavedProgramError, match=message):
        ktir.load(tmp_path)


def test_parameters_of_the_wrong_shape_are_refused(compiled_pair, tmp_path: Path) -> None:
    program, _ = compiled_pair
    program.save(tmp_path)
    stored = dict(np.load(tmp_path / "parameters.npz"))
    name = sorted(stored)[0]
    stored[name] = np.zeros(3, stored[name].dtype)
    np.savez(tmp_path / "parameters.npz", **stored)
    with pytest.raises(SavedProgramError, match=f"'{name}' is float16"):
        ktir.load(tmp_path)
