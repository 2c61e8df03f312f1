"""Tests of the `ktir-estimate` command line (run in-process through `main`)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest

from ktir.hardware.target import SPYRE
from ktir.llm.estimate import LlmEstimate, PhaseEstimate
from ktir.progress import StageProgress
from ktir.tools import ktir_estimate
from ktir.tools.ktir_estimate import figure, main, progress_for, read_config

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


class Terminal(io.StringIO):
    """A text stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


class Ticking:
    """A clock that moves one second each time it is read."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


@pytest.mark.slow
def test_one_column_per_target_and_the_files(
    config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    wide = tmp_path / "wide.toml"
    wide.write_text('name = "wide"\ncores = 64\nlx_bytes = 4194304\ndevice_memory_bandwidth = 409.6e9\n')
    out_json, out_png = tmp_path / "e.json", tmp_path / "e.png"
    bars: list[StageProgress] = []

    def on_a_slow_terminal(quiet: bool, targets: int) -> StageProgress:
        bars.append(StageProgress(4 * targets, quiet=quiet, stream=Terminal(), clock=Ticking()))
        return bars[-1]

    monkeypatch.setattr(ktir_estimate, "progress_for", on_a_slow_terminal)
    argv = [str(config.parent), "--prompt", "16", "--context", "32", "--target", str(wide)]  # the folder
    assert main([*argv, "--json", str(out_json), "--png", str(out_png)]) == 0
    # Each target's four programs are announced; the bar shows from the third (past 2 s: 3 ticks).
    phases = ["prefill, 1 layer", "decode step, 1 layer", "prefill, 2 layers", "decode step, 2 layers"]
    expected = [f"{chip}: {phase}" for chip in ("spyre", "wide") for phase in phases]
    assert [bar.shown for bar in bars] == [expected[2:]]
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
    for phase in (spyre["prefill"], spyre["decode"]):  # the sustained bound is the tighter one
        assert phase["vs_bound"] >= phase["vs_sustained"] >= 1
        assert phase["sustained_bound_us"] * phase["vs_sustained"] == pytest.approx(phase["time_us"])
    assert "x sustained bound" in text and "x datasheet roofline" in text
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


def test_a_model_folder_is_read_for_its_config_json(config: Path, tmp_path: Path) -> None:
    assert read_config(str(config.parent)).hidden_size == TINY["hidden_size"]
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match=r"model folder '.*empty' has no config\.json"):
        read_config(str(tmp_path / "empty"))


@pytest.mark.parametrize(
    ("model_type", "problem"),
    [("bert", "is an encoder"), ("bart", "is an encoder-decoder"), ("vit", "has no causal language model")],
)
def test_an_unsupported_architecture_is_one_line(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], model_type: str, problem: str
) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**TINY, "model_type": model_type, "num_hidden_layers": 2}))
    assert main([str(path), "--prompt", "8", "--context", "16"]) == 1
    err = capfd.readouterr().err
    assert err.count("\n") == 1 and err.startswith(
        f"ktir-estimate: error: architecture '{model_type}' {problem}"
    )
    assert "decoder-only causal language models, such as llama, mistral, qwen2, granite, gemma" in err


@pytest.mark.parametrize(
    ("stream", "quiet", "shown"),
    [(Terminal(), False, True), (Terminal(), True, False), (io.StringIO(), False, False)],
)
def test_the_progress_bar_is_for_a_terminal_unless_quiet(
    stream: io.StringIO, quiet: bool, shown: bool
) -> None:
    progress = progress_for(quiet, 2, stream)
    assert progress.enabled is shown and progress.total == 8 and progress.delay == 2.0


@pytest.mark.parametrize(("flag", "quiet"), [([], False), (["-q"], True), (["--quiet"], True)])
def test_q_turns_the_progress_bar_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flag: list[str], quiet: bool
) -> None:
    asked: list[bool] = []

    def recorded(quiet: bool, targets: int) -> StageProgress:
        asked.append(quiet)
        return StageProgress(4 * targets, quiet=quiet, stream=io.StringIO())

    monkeypatch.setattr(ktir_estimate, "progress_for", recorded)
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**TINY, "model_type": "bert"}))  # refused once the bar exists
    assert main([str(path), *flag]) == 1
    assert asked == [quiet]


def _phase(cycles: float, flops: float, moved: float) -> PhaseEstimate:
    return PhaseEstimate(
        cycles=cycles, matmul_flops=flops, compulsory_bytes=moved, bytes=2 * moved, target=SPYRE,
        layer_cycles=cycles / 4, other_cycles=0.0,
        ops={"ktir.matmul": 0.75 * cycles, "ktir.add": 0.25 * cycles},
    )  # fmt: skip


def test_the_png_marks_each_phases_sustained_bound_and_roofline() -> None:
    estimate = LlmEstimate(
        model_type="llama", layers=4, prompt=16, context=32, batch=1, assumptions=[], wall_seconds=1.0,
        prefill=_phase(2e6, 1e10, 1e7), decode=_phase(1e6, 1e8, 5e7),
    )  # fmt: skip
    # Spyre, in ms: the prefill is compute-bound (1e10 FLOPs at 98.304 and 72.96 TFLOP/s), the
    # decode memory-bound (5e7 bytes at 204.8 and 150 GB/s).
    expected = {
        "prefill": (1e10 / 72.96e12 * 1e3, 1e10 / 98.304e12 * 1e3),
        "decode": (5e7 / 150e9 * 1e3, 5e7 / 204.8e9 * 1e3),
    }
    drawn = figure([estimate, estimate])
    for axis, name in zip(drawn.axes[:2], ("prefill", "decode"), strict=True):
        phase = getattr(estimate, name)
        for label, bound_ms in zip(("sustained bound", "datasheet roofline"), expected[name], strict=True):
            (marks,) = [c for c in axis.collections if c.get_label() == label]
            assert 0 < bound_ms < phase.time_us / 1e3
            segments = np.array(marks.get_segments())  # per bar: its start and end point
            assert segments[:, :, 0].tolist() == [[-0.4, 0.4], [0.6, 1.4]]
            assert segments[:, :, 1] == pytest.approx(np.full((2, 2), bound_ms), rel=1e-12)
        label = f"{phase.vs_sustained:.2f}x sustained\n{phase.vs_bound:.2f}x roofline"
        assert [t.get_text() for t in axis.texts] == [label] * 2


# -- Does it fit? (`--max-fit`, `--cards`; device memory per card, `ktir.llm.capacity`) ---------------

LLAMA_70B = {
    "model_type": "llama", "hidden_size": 8192, "intermediate_size": 28672, "num_attention_heads": 64,
    "num_key_value_heads": 8, "num_hidden_layers": 80, "vocab_size": 128256, "max_position_embeddings": 8192,
}  # fmt: skip


@pytest.fixture
def llama_70b(tmp_path: Path) -> Path:
    path = tmp_path / "llama-70b.json"
    path.write_text(json.dumps(LLAMA_70B))
    return path


def test_a_model_that_does_not_fit_is_one_line_and_writes_nothing(
    llama_70b: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "e.json"
    assert main([str(llama_70b), "--json", str(out)]) == 1
    captured = capsys.readouterr()
    assert captured.err == (
        "ktir-estimate: error: llama with 80 layers at context 2048 x batch 1 does not fit on spyre: "
        "needs 142.3 GiB per card, has 128 GiB (weights 131.4 + KV cache 0.62 + activations 0.04 + "
        "runtime reserve 10.2 GiB)\n"
    )
    assert captured.out == "" and not out.exists()


def test_max_fit_tables_one_to_eight_cards(
    llama_70b: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ktir.llm.capacity import MemoryModel, max_fit

    out = tmp_path / "fit.json"
    assert main([str(llama_70b), "--max-fit", "--batch", "4", "--json", str(out), "-q"]) == 0
    text = capsys.readouterr().out
    assert "does not fit" in text and "trained for 8,192 positions" in text
    (data,) = json.loads(out.read_text())
    assert (data["format"], data["target"], data["context"], data["batch"]) == (
        "ktir-max-fit",
        "spyre",
        2048,
        4,
    )
    expected = max_fit(MemoryModel(read_config(str(llama_70b))), context=2048, batch=4, prompt=512)
    assert [(c["cards"], c["max_batch"], c["max_context"]) for c in data["cards"]] == [
        (row.cards, row.batch, row.context) for row in expected
    ]
    assert data["cards"][0]["max_batch"] == 0 and data["cards"][1]["max_batch"] == 152
    for row in expected[1:]:
        assert f"{row.batch:,}" in text and f"{row.context:,}" in text


@pytest.mark.slow
def test_cards_times_each_card_and_lists_the_collectives(
    config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "tp.json"
    assert (
        main([str(config), "--prompt", "16", "--context", "64", "--cards", "2", "--json", str(out), "-q"])
        == 0
    )
    text = " ".join(capsys.readouterr().out.split())  # the console wraps long lines
    assert "tensor parallel over 2 cards (times per card)" in text
    assert "collectives between cards (ms)" in text and "all_reduce (link)" in text
    assert "needs 10.2 GiB on each of 2 cards" in text
    assert "tensor parallelism over 2 cards: one card's shard is timed" in text
    (data,) = json.loads(out.read_text())
    assert data["cards"] == 2
    decode = data["decode"]
    # 3 layers, 2 all-reduces each of one token's hidden state (64 fp16: 128 B, of which a ring
    # of 2 cards sends 2 (N - 1) / N = 1 times), and the logits' gather (256 fp16, half sent)
    assert decode["link_bytes"] == 3 * 2 * 128 * (2 * 1 / 2) + 512 / 2
    assert 0 < decode["collective_us"] < decode["time_us"]
    assert data["tokens_per_second_per_card"] == pytest.approx(data["tokens_per_second"] / 2)


@pytest.mark.slow
def test_llama_70b_on_4_cards_is_timed_with_its_collectives(
    llama_70b: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(llama_70b)]) == 1  # it does not fit one card
    assert "does not fit on spyre: needs 142.3 GiB per card" in capsys.readouterr().err
    out = tmp_path / "70b.json"
    assert main([str(llama_70b), "--cards", "4", "--json", str(out), "-q"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "tensor parallel over 4 cards" in text and "collectives between cards (ms)" in text
    (data,) = json.loads(out.read_text())
    hidden_state = 8192 * 2  # one decode token
    reduces = 80 * 2 * 2 * 3 / 4 * hidden_state
    assert data["decode"]["link_bytes"] == reduces + 3 / 4 * 128256 * 2
    assert 0 < data["decode"]["collective_us"] < data["decode"]["time_us"]


def test_cards_that_cannot_split_the_heads_exit_1(
    llama_70b: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(llama_70b), "--cards", "3"]) == 1
    assert capsys.readouterr().err == (
        "ktir-estimate: error: 3 cards cannot split 64 attention heads evenly "
        "(tensor parallelism gives each card whole heads)\n"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--cards", "9"], "argument --cards: must be 1 to 8 (cards in a group), not 9"),
        (["--cards", "0"], "argument --cards: must be 1 to 8 (cards in a group), not 0"),
        (["--max-fit", "--cards", "2"], "argument --cards: --max-fit reports 1, 2, 4 and 8 cards"),
        (
            ["--max-fit", "--png", "x.png"],
            "argument --png: there is no timing to plot with --max-fit",
        ),
    ],
)
def test_bad_fit_options_exit_2(
    config: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert main([str(config), *argv]) == 2
    assert message in capsys.readouterr().err


def test_dtype_fp8_counts_one_byte_weights(llama_70b: Path, tmp_path: Path) -> None:
    out = tmp_path / "fit.json"
    assert (
        main([str(llama_70b), "--max-fit", "--dtype", "fp8", "--kv-dtype", "fp8", "--json", str(out), "-q"])
        == 0
    )
    (data,) = json.loads(out.read_text())
    one_card = data["cards"][0]
    assert one_card["max_batch"] > 0 and one_card["weights"] < 70 * 1024**3  # fp16 needed 131.4 GiB


@pytest.mark.slow
def test_fp8_weights_are_timed_as_w8a8(
    config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    estimates = {}
    for dtype in ("fp16", "fp8"):
        out = tmp_path / f"{dtype}.json"
        arguments = ["--prompt", "8", "--context", "16", "--dtype", dtype, "--json", str(out), "-q"]
        assert main([str(config), *arguments]) == 0
        (estimates[dtype],) = json.loads(out.read_text())
    assumption = (
        "fp8 weights (--dtype fp8, channel scales) are timed as W8A8 (`Fp8Linear`); the fp16 KV cache "
        "is counted in device memory, timed in fp16"
    )
    assert estimates["fp8"]["assumptions"][0] == assumption
    assert assumption not in estimates["fp16"]["assumptions"]
    # the decode step reads the layers' weights as one byte per element, not two
    assert estimates["fp8"]["decode"]["compulsory_bytes"] < estimates["fp16"]["decode"]["compulsory_bytes"]
    assert "fp8 weights (--dtype fp8" in capsys.readouterr().out


@pytest.mark.slow
def test_prefill_chunk_lists_the_chunks_and_per_card_and_per_user_rates(
    config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    bars: list[StageProgress] = []

    def counted(quiet: bool, targets: int) -> StageProgress:
        bars.append(StageProgress(4 * targets, quiet=quiet, stream=io.StringIO()))
        return bars[-1]

    monkeypatch.setattr(ktir_estimate, "progress_for", counted)
    out = tmp_path / "e.json"
    argv = [str(config), "--prompt", "40", "--context", "64", "--batch", "2", "--prefill-chunk", "16"]
    assert main([*argv, "--json", str(out)]) == 0
    # The prefill and the decode step, and the three chunks: each with one and with two layers.
    assert bars[0].total == 10 and bars[0].begun == 10
    text = capsys.readouterr().out
    assert "prefill chunks of 16" in text
    for row in ("chunk 1: 16 after 0", "chunk 2: 16 after 16", "chunk 3: 8 after 32", "unchunked prefill"):
        assert row in text
    assert "tokens / s per card" in text and "tokens / s per user" in text
    (data,) = json.loads(out.read_text())
    assert [(c["tokens"], c["cached"]) for c in data["chunks"]] == [(16, 0), (16, 16), (8, 32)]
    assert data["time_to_first_token_us"] == pytest.approx(sum(c["time_us"] for c in data["chunks"]))
    assert data["tokens_per_second_per_user"] == pytest.approx(1e6 / data["decode_us"])
    assert data["tokens_per_second_per_card"] == pytest.approx(2e6 / data["decode_us"])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--prefill-chunk", "0"], "argument --prefill-chunk: must be positive, not 0"),
        (["--prefill-chunk", "16", "--max-fit"], "argument --prefill-chunk: nothing is timed with --max-fit"),
    ],
)
def test_bad_prefill_chunks_exit_2(
    config: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert main([str(config), *argv]) == 2
    assert message in capsys.readouterr().err
