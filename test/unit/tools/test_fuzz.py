"""tools/fuzz.py, tools/fuzz_cases.py: deterministic cases, outcome classification, watchdog, short mode."""

import json
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ktir.tools import fuzz, fuzz_cases

FUZZ = Path(fuzz.__file__)
GOOD = "func.func @f(%x: tensor<4x64xf16>) -> tensor<4x64xf16> {\n  return %x : tensor<4x64xf16>\n}\n"


def test_the_corpus_is_every_lit_input_with_run_lines_blanked():
    corpus = fuzz_cases.load_corpus()
    names = {seed.name for seed in corpus}
    assert "ktir-run/run.mlir" in names and "Inputs/ktir-run/oob.mlir" in names
    assert any(name.startswith("dialects/ktir/structured_invalid.mlir#") for name in names)
    run = next(seed for seed in corpus if seed.name == "ktir-run/run.mlir")
    assert "RUN:" not in run.text and "CHECK" not in run.text
    # Blanked, not removed: line numbers stay those of the file.
    original = (fuzz_cases.CORPUS / "ktir-run/run.mlir").read_text()
    assert run.text.count("\n") == original.count("\n")
    assert "ktir-compile{cores=2}" in run.pipelines
    verify = next(seed for seed in corpus if seed.name == "ktir-opt/verify_diagnostics.mlir")
    assert verify.annotated and verify.split and "expected-error" in verify.text


def test_cases_are_a_function_of_seed_and_index():
    first = list(fuzz_cases.iter_cases(7, 60))
    assert first == list(fuzz_cases.iter_cases(7, 60))
    assert [c.data for c in first] != [c.data for c in fuzz_cases.iter_cases(8, 60)]
    assert {c.tool for c in first} == {"ktir-opt", "ktir-run"}
    assert all(c.argv[0] == "{input}" for c in first)


@pytest.mark.parametrize("name", sorted(fuzz_cases.MUTATIONS))
def test_each_mutation_is_deterministic(name):
    data = (fuzz_cases.CORPUS / "ktir-run/run.mlir").read_bytes()
    mutate = fuzz_cases.MUTATIONS[name]
    assert mutate(data, random.Random(3)) == mutate(data, random.Random(3))
    assert isinstance(mutate(b"", random.Random(3)), bytes)


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def test_mutations_reach_the_extremes_the_campaign_found():
    rng = random.Random(0)
    bad = [fuzz_cases.non_utf8(b"abc", random.Random(i)) for i in range(20)]
    assert all(len(b) > 3 for b in bad)
    assert sum(not _is_utf8(b) for b in bad) >= 10
    nested = b"".join(fuzz_cases.deep_nesting(b"x", random.Random(i)) for i in range(20))
    assert b"[" * 501 in nested or b'"test.op"() ({\n' * 501 in nested
    shapes = {fuzz_cases.scale_dim(b"tensor<4x64xf16>", random.Random(i)) for i in range(40)}
    assert b"tensor<99999999999x64xf16>" in shapes or b"tensor<4x99999999999xf16>" in shapes
    assert fuzz_cases.extreme_int(b"dim 1", rng) != b"dim 1"


@pytest.mark.parametrize(
    ("code", "stderr", "escaped", "leftovers", "outcome"),
    [
        (0, "", "", [], "ok"),
        (1, "f.mlir:3:5: error: bad\n  x\n  ^\n", "", [], "error"),
        (1, "ktir-run: error: cannot read inputs 'x.npz'\n", "", [], "tool error"),
        (2, "ktir-opt: error: unknown pass 'x'\n", "", [], "usage"),
        (1, "<unknown>:0: error: failed\n", "", [], "unlocated"),
        (1, "ktir-opt: internal error: KeyError: 3 (set KTIR_DEBUG=1)\n", "", [], "internal error"),
        (1, "", "Traceback (most recent call last):\n...", [], "traceback"),
        (1, "f.mlir:1:1: error: bad\n", "", ["out.mlir"], "wrote on failure"),
        (None, "", "timeout", [], "hang"),
        (None, "worker died (exit -9)", "", [], "crash"),
        (3, "", "", [], "crash"),
        (1, "something unexpected\n", "", [], "crash"),
    ],
)
def test_classify(code, stderr, escaped, leftovers, outcome):
    assert fuzz.classify(code, stderr, escaped, leftovers) == outcome


def _case(index: int, data: str, tool: str = "ktir-opt") -> fuzz_cases.Case:
    return fuzz_cases.Case(
        index, "test", (), tool, "plain", ("{input}", "-o", "{out}"), data.encode(), ("{out}",)
    )


def test_the_watchdog_kills_a_hung_worker_and_the_next_case_runs(tmp_path):
    worker = fuzz.Worker(tmp_path, memory_limit=0)
    try:
        # The worker cannot even start its tools in a millisecond: the case counts as a hang.
        hung = worker.run(_case(0, GOOD), timeout=0.001)
        assert hung.outcome == "hang" and hung.code is None
        assert worker.process is None  # killed
        fine = worker.run(_case(1, GOOD), timeout=60)
        assert fine.outcome == "ok" and fine.code == 0
        failed = worker.run(_case(2, GOOD.replace("->", "=>")), timeout=60)
        assert failed.outcome == "error" and failed.code == 1 and not failed.leftovers
    finally:
        worker.stop()


def test_failing_cases_are_written_for_reproduction(tmp_path):
    case = _case(42, "func.func @f(")
    results = [
        fuzz.Result(case, 1, "ktir-opt: internal error: KeyError: 1\n", "internal error", 0.1),
        fuzz.Result(_case(43, GOOD), 0, "", "ok", 0.1),
    ]
    assert fuzz.save_failures(results, tmp_path / "failures") == 1
    written = sorted(p.name for p in (tmp_path / "failures").iterdir())
    assert written == ["case00042-internal-error.json", "case00042-internal-error.mlir"]
    note = json.loads((tmp_path / "failures" / "case00042-internal-error.json").read_text())
    assert note["command"].startswith("ktir-opt '") and note["exit"] == 1
    assert (tmp_path / "failures" / "case00042-internal-error.mlir").read_text() == "func.func @f("


@pytest.mark.slow
def test_short_mode_finds_no_internal_error_traceback_or_hang(tmp_path):
    """The `make fuzz-short` run: about 500 invocations, well under two minutes on 2 cores."""
    start = time.monotonic()
    result = subprocess.run(
        [sys.executable, str(FUZZ), "--short", "--quiet", "--failures", str(tmp_path / "failures")],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    elapsed = time.monotonic() - start
    assert result.returncode == 0, result.stdout + result.stderr
    assert "seed 0, 500 invocations" in result.stdout
    for outcome in fuzz.FAILING:
        assert outcome not in result.stdout
    assert not (tmp_path / "failures").exists()
    assert elapsed < 120


def test_failures_group_by_message_with_numbers_blanked():
    first = fuzz.Result(
        _case(1, GOOD), 1, "ktir-opt: internal error: KeyError: 3 (set KTIR_DEBUG=1)\n", "internal error"
    )
    second = fuzz.Result(
        _case(2, GOOD), 1, "ktir-opt: internal error: KeyError: 17 (set KTIR_DEBUG=1)\n", "internal error"
    )
    assert fuzz.failure_key(first) == fuzz.failure_key(second)
    assert (
        fuzz.failure_key(first) == "internal error: ktir-opt: internal error: KeyError: N (set KTIR_DEBUG=N)"
    )
    hang = fuzz.Result(_case(3, GOOD), None, "", "hang")
    assert fuzz.failure_key(hang) == "hang: ktir-opt plain"
    wrote = fuzz.Result(
        _case(4, GOOD), 1, "x.mlir:1:1: error: bad\n", "wrote on failure", leftovers=["/w/out"]
    )
    assert fuzz.failure_key(wrote) == "wrote on failure: ktir-opt plain left out"
