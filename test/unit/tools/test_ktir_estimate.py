"""Tests of the `ktir-estimate` command line (run in-process through `main`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ktir.tools.ktir_estimate import main

TINY = {
    "model_type": "llama",
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "num_hidden_layers": 3,
    "vocab_size": 256,
}


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(TINY))
    return path


def test_one_column_per_target_and_the_files(
    config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wide = tmp_path / "wide.toml"
    wide.write_text('name = "wide"\ncores = 64\nlx_bytes = 4194304\ndevice_memory_bandwidth = 409.6e9\n')
    out_json, out_png = tmp_path / "e.json", tmp_path / "e.png"
    argv = [str(config), "--prompt", "16", "--context", "32", "--target", str(wide)]
    assert main([*argv, "--json", str(out_json), "--png", str(out_png)]) == 0
    text = capsys.readouterr().out
    assert "llama, 3 layers: prompt 16, context 32" in text
    header = next(line for line in text.splitlines() if "spyre" in line)
    assert header.index("spyre") < header.index("wide")
    assert "time to first token (ms)" in text and "tokens / s" in text
    assert "fused[" in text  # op kinds keep their members (not read as markup)
    spyre, what_if = json.loads(out_json.read_text())
    assert (spyre["target"], what_if["target"]) == ("spyre", "wide")
    assert spyre["layers"] == 3 and spyre["prompt"] == 16 and spyre["context"] == 32
    assert what_if["decode"]["bound_us"] < spyre["decode"]["bound_us"]  # twice the bandwidth
    assert spyre["prefill"]["vs_bound"] >= 1 and spyre["decode"]["vs_bound"] >= 1
    assert out_png.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read config"),
        ("{not json", "is not JSON"),
        ('{"hidden_size": 64}', 'has no "model_type"'),
        ('{"model_type": "no-such-model"}', "no-such-model"),
        ('{"model_type": "resnet"}', "num_hidden_layers"),
    ],
)
def test_bad_configs_exit_1_and_write_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, message: str
) -> None:
    path = tmp_path / "config.json"
    if content is not None:
        path.write_text(content)
    out = tmp_path / "e.json"
    assert main([str(path), "--prompt", "8", "--context", "16", "--json", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("ktir-estimate: error: ") and message in err and "Traceback" not in err
    assert not out.exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--prompt", "64", "--context", "32"], "argument --context: must hold --prompt (64), not 32"),
        (["--batch", "0"], "argument --batch: must be positive, not 0"),
        (["--target", "missing.toml"], "argument --target: cannot read target file 'missing.toml'"),
        (["--json", "same", "--png", "same"], "'same' is named by two output options"),
    ],
)
def test_bad_options_exit_2(
    config: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert main([str(config), *argv]) == 2
    assert message in capsys.readouterr().err
