"""`ktir-estimate --serve`: errors, and a run on an analytic step-cost table (no model compiled)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ktir.llm import serving
from ktir.llm.serving_result import ServingResult
from ktir.llm.step_costs import Grid, StepCosts
from ktir.tools.ktir_estimate import main

TINY = {
    "model_type": "llama",
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "num_hidden_layers": 1,
    "vocab_size": 256,
}


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(TINY))
    return path


def affine_table(grid: Grid) -> StepCosts:
    """
    An affine step-cost table on `grid` (no model compiled): a mixed step of `r` packed rows
    beside `b` decodes costs the prefill of `r` rows plus the decodes' attention.
    """
    n, c = np.meshgrid(grid.prefill_tokens, grid.prefill_cached, indexing="ij")
    b, k = np.meshgrid(grid.decode_batches, grid.decode_contexts, indexing="ij")
    rows, batch = np.meshgrid(grid.prefill_tokens, grid.decode_batches, indexing="ij")
    mixed = 1000 + 5.0 * rows + 0.01 * rows * grid.prefill_cached[0] + 0.005 * batch * grid.decode_contexts[0]
    return StepCosts(grid, 1000 + 5.0 * n + 0.01 * n * c, 800 + 2.0 * b + 0.005 * b * k, mixed, {})


@pytest.fixture
def affine(monkeypatch):
    """`build_step_costs` returns an affine table on the grid it is asked for."""

    def build(config, *, grid, **options):
        return affine_table(grid)

    monkeypatch.setattr(serving, "build_step_costs", build)


def test_a_serving_run_writes_json_and_png(config, tmp_path, affine, capsys):
    out, png = tmp_path / "serve.json", tmp_path / "serve.png"
    argv = [str(config), "--serve", "--rate", "50", "--requests", "60", "--prompt-tokens", "uniform:32:96"]
    code = main(
        [*argv, "--output-tokens", "16", "--max-batch", "4", "--json", str(out), "--png", str(png), "-q"]
    )
    assert code == 0, capsys.readouterr().err
    data = json.loads(out.read_text())
    assert data["format"] == "ktir-serving"
    run = data["run"]["summary"]
    assert run["requests"] == 60 and run["rate_per_s"] == 50.0
    assert [run["summary"]["rate_per_s"] for run in data["sweep"]] == [12.5, 25.0, 50.0, 75.0, 100.0]
    p50s = [run["summary"]["ttft_ms"]["p50"] for run in data["sweep"]]
    # each run reads back as the result it was written from
    again = ServingResult.from_json(json.dumps(data["run"]))
    assert json.loads(again.to_json()) == data["run"]
    assert p50s[-1] > p50s[0]  # more load, longer waits
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "TTFT (ms)" in capsys.readouterr().out


def test_a_spyre_run_uses_the_spyre_grid_and_keeps_its_policy(config, tmp_path, monkeypatch, capsys):
    grids = []

    def build(config, *, grid, **options):
        grids.append(grid)
        return affine_table(grid)

    monkeypatch.setattr(serving, "build_step_costs", build)
    out = tmp_path / "serve.json"
    argv = [str(config), "--serve", "--rate", "50", "--requests", "40", "--prompt-tokens", "uniform:32:160"]
    options = ["--output-tokens", "8", "--max-batch", "4", "--prefill-chunk", "64", "--scheduler", "spyre"]
    assert main([*argv, *options, "--json", str(out), "-q"]) == 0, capsys.readouterr().err
    (grid,) = grids
    assert grid.prefill_tokens == (64,) and grid.prefill_cached == (0, 64, 128) and not grid.mixed
    data = json.loads(out.read_text())
    assert data["policy"]["scheduler"] == "spyre"
    assert ServingResult.from_json(json.dumps(data["run"])).policy.scheduler == "spyre"


@pytest.mark.parametrize(
    ("options", "message", "code"),
    [
        (["--rate", "-1"], "argument --rate: must be positive, not -1.0", 2),
        ([], "argument --rate: required with --serve unless --trace is given", 2),
        (["--rate", "1", "--cards", "3"], "3 cards cannot split 4 attention heads evenly", 1),
        (["--rate", "1", "--prompt-tokens", "uniform:5"], "argument --prompt-tokens: token count", 2),
        (["--rate", "1", "--max-batch", "0"], "argument --max-batch: must be positive, not 0", 2),
        (["--trace", "missing.jsonl"], "cannot read trace 'missing.jsonl'", 1),
        (
            ["--rate", "1", "--scheduler", "sarathi"],
            "argument --scheduler: one of vllm, spyre, not 'sarathi'",
            2,
        ),
        (
            ["--rate", "1", "--scheduler", "spyre", "--prefill-chunk", "100"],
            "argument --prefill-chunk: the spyre chunk (100) must be whole blocks of 64",
            2,
        ),
    ],
)
def test_bad_serve_options_are_one_line_and_write_nothing(
    config, tmp_path, affine, capsys, options, message, code
):
    out = tmp_path / "serve.json"
    assert main([str(config), "--serve", *options, "--json", str(out)]) == code
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err
    assert not out.exists()


def test_several_cards_serve_on_one_cards_step_costs(config, tmp_path, monkeypatch, capsys):
    """`--cards 2`: the table is one card's shard (its collectives in each step), tokens/s per card halved."""
    asked = {}

    def build(config, *, grid, **options):
        asked.update(options)
        return affine_table(grid)

    monkeypatch.setattr(serving, "build_step_costs", build)
    out = {cards: tmp_path / f"serve{cards}.json" for cards in (1, 2)}
    for cards, path in out.items():
        argv = [str(config), "--serve", "--rate", "20", "--requests", "30", "--cards", str(cards)]
        assert main([*argv, "--json", str(path), "-q"]) == 0, capsys.readouterr().err
        assert asked["cards"] == cards
    one, two = (json.loads(out[c].read_text())["run"]["summary"] for c in (1, 2))
    assert two["cards"] == 2
    assert two["tokens_per_second_per_card"] == pytest.approx(one["tokens_per_second_per_card"] / 2)


def test_a_malformed_trace_names_its_line(config, tmp_path, affine, capsys):
    trace = tmp_path / "trace.jsonl"
    trace.write_text(
        '{"arrival_time": 0, "prompt_tokens": 8, "output_tokens": 2}\n{"arrival_time": "soon"}\n'
    )
    out = tmp_path / "serve.json"
    assert main([str(config), "--serve", "--trace", str(trace), "--json", str(out)]) == 1
    assert f"{trace}:2: arrival_time is not a number" in capsys.readouterr().err
    assert not out.exists()


@pytest.fixture
def recorded(monkeypatch):
    """`build_step_costs` as in `affine`, recording the options it was called with."""
    calls: list[dict] = []

    def build(config, *, grid, **options):
        calls.append(options)
        return affine_table(grid)

    monkeypatch.setattr(serving, "build_step_costs", build)
    return calls


def test_serve_compiles_for_the_given_target_and_cores(config, tmp_path, recorded, capsys):
    chip = tmp_path / "half.toml"
    chip.write_text('name = "half"\ncores = 16\n')
    argv = [str(config), "--serve", "--rate", "5", "--requests", "5", "--target", str(chip), "--cores", "8"]
    assert main([*argv, "-q"]) == 0, capsys.readouterr().err
    assert [(call["target"], call["cores"]) for call in recorded] == [(str(chip), 8)]


def test_serve_on_two_targets_is_a_usage_error(config, tmp_path, recorded, capsys):
    chip = tmp_path / "half.toml"
    chip.write_text("cores = 16\n")
    argv = [str(config), "--serve", "--rate", "5", "--target", str(chip), "--target", str(chip)]
    assert main(argv) == 2
    assert "argument --target: --serve simulates one chip" in capsys.readouterr().err
    assert recorded == []


def test_a_trace_of_one_instant_is_served(config, tmp_path, recorded, capsys):
    """An offline batch: every request arrives at 0 (the arrival rate is undefined, not a crash)."""
    trace = tmp_path / "batch.jsonl"
    trace.write_text(
        "".join('{"arrival_time": 0, "prompt_tokens": 16, "output_tokens": 4}\n' for _ in range(3))
    )
    out = tmp_path / "serve.json"
    assert main([str(config), "--serve", "--trace", str(trace), "--json", str(out), "-q"]) == 0
    data = json.loads(out.read_text())
    assert data["run"]["summary"]["requests"] == 3 and data["run"]["summary"]["arrival_rate_per_s"] is None


def test_a_request_that_never_fits_is_refused_before_compiling(config, tmp_path, recorded, capsys):
    argv = [str(config), "--serve", "--rate", "5", "--requests", "3", "--prompt-tokens", "64"]
    assert main([*argv, "--kv-tokens", "32"]) == 1
    assert "never fits the KV cache of 32 tokens" in capsys.readouterr().err
    assert recorded == []
