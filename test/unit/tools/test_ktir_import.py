"""Tests of the `ktir-import` command line (run in-process through `main`)."""

from __future__ import annotations

from pathlib import Path

import pytest

import ktir
from ktir.frontend import MissingDependencyError
from ktir.tools.ktir_import import main

MODELS = Path(__file__).parents[2] / "lit" / "Inputs" / "models"


def test_prints_the_module(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(MODELS / "mlp.py")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("builtin.module {\n  func.func @forward(%x: tensor<8x64xf16>")
    assert out.count("ktir.matmul") == 2


def test_writes_the_output_file_only_on_success(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "out.mlir"
    assert main([str(MODELS / "unsupported.py"), "-o", str(target)]) == 1
    assert not target.exists()
    err = capsys.readouterr().err
    assert err.count("error: unsupported ATen op") == 3
    assert "Traceback" not in err
    assert main([str(MODELS / "mlp.py"), "-o", str(target), "--func-name", "mlp"]) == 0
    assert "func.func @mlp(" in target.read_text()


@pytest.mark.parametrize(
    ("model_file", "message"),
    [
        ("missing.py", "ktir-import: error: cannot read"),
        ("raises.py", "failed: RuntimeError: model file failed on purpose"),
        ("dynamic.py", "input 'input' has a dynamic dimension 0"),
    ],
)
def test_errors_are_one_clean_message(
    model_file: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(MODELS / model_file)]) == 1
    captured = capsys.readouterr()
    assert message in captured.err
    assert "Traceback" not in captured.err
    assert captured.out == ""


def test_file_without_example_args(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "model.py"
    source.write_text("import torch\nmodel = torch.nn.ReLU()\n")
    assert main([str(source)]) == 1
    assert f"'{source}' must define example_args" in capsys.readouterr().err


def test_dash_output_is_stdout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`-o -` prints the module (as mlir-opt does) and creates no file named `-`."""
    monkeypatch.chdir(tmp_path)
    assert main([str(MODELS / "mlp.py"), "-o", "-", "--mlir-print-debuginfo"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("builtin.module {")
    assert "loc(" in out
    assert not (tmp_path / "-").exists()


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"ktir-import {ktir.__version__}"


def test_without_torch_the_answer_is_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """No PyTorch: one line naming the extra to install, exit 1; the Python API raises its own error."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a)
    )
    assert main([str(MODELS / "mlp.py")]) == 1
    err = capsys.readouterr().err
    expected = "ktir-import needs PyTorch, which is not installed: pip install 'ktir[torch]'"
    assert err == f"ktir-import: error: {expected}\n"
    with pytest.raises(
        MissingDependencyError, match=r"ktir.compile needs PyTorch.*pip install 'ktir\[torch\]'"
    ):
        ktir.compile(None, ())
    with pytest.raises(ImportError):  # it is an ImportError, as callers catching that expect
        ktir.import_fx(None, ())


def test_weights_run_the_imported_model_from_the_command_line(tmp_path: Path) -> None:
    """`ktir-import --weights` then `ktir-run --inputs --weights`: the model's own output."""
    import runpy

    import numpy as np

    from ktir.tools import ktir_run

    module, weights, x, y = (tmp_path / n for n in ("m.mlir", "w.npz", "x.npz", "y.npz"))
    assert main([str(MODELS / "mlp.py"), "-o", str(module), "--weights", str(weights)]) == 0
    stored = np.load(weights)
    assert sorted(stored) == ["p_fc1_bias", "p_fc1_weight", "p_fc2_weight"]
    namespace = runpy.run_path(str(MODELS / "mlp.py"))
    model, (example,) = namespace["model"], namespace["example_args"]
    assert np.array_equal(stored["p_fc1_weight"], model.fc1.weight.detach().numpy())
    np.savez(x, x=example.numpy())
    assert ktir_run.main([str(module), "--inputs", str(x), "--weights", str(weights), "-o", str(y)]) == 0
    eager = model(example).detach().numpy().astype(np.float32)
    ours = np.load(y)["out0"].astype(np.float32)
    assert np.abs(ours - eager).max() <= 1e-3  # fp16 rounding per op, against eager fp16
    without = tmp_path / "r.npz"  # the weights random instead: another output
    assert ktir_run.main([str(module), "--inputs", str(x), "-o", str(without)]) == 1  # x only: no weights
    assert ktir_run.main([str(module), "-o", str(without)]) == 0
    assert not np.array_equal(np.load(without)["out0"], np.load(y)["out0"])


def test_weights_that_name_no_argument_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import numpy as np

    from ktir.tools import ktir_run

    module, weights = tmp_path / "m.mlir", tmp_path / "w.npz"
    assert main([str(MODELS / "mlp.py"), "-o", str(module)]) == 0
    np.savez(weights, nothing=np.zeros(3))
    assert ktir_run.main([str(module), "--weights", str(weights)]) == 1
    assert "weights '" in capsys.readouterr().err


def test_no_file_is_written_when_one_output_cannot_be(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module = tmp_path / "m.mlir"
    assert main([str(MODELS / "mlp.py"), "-o", str(module), "--weights", str(tmp_path / "no" / "w.npz")]) == 1
    assert not module.exists()
    assert "no such directory" in capsys.readouterr().err
