"""Process replay (`tools/replay.py`): record, check, and the baseline of a git revision."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
ITEM = "dialects__ktir__routing.mlir"  # a lit file of a few fast ktir-opt runs


def _replay():  # tools/ is not a package: load the script as a module
    spec = importlib.util.spec_from_file_location("replay", ROOT / "tools" / "replay.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _in_git_checkout() -> bool:
    result = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True)
    return result.returncode == 0


@pytest.mark.slow
def test_check_finds_a_changed_recording(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    replay = _replay()
    assert replay.record(tmp_path, ITEM) == 0
    names = sorted(p.name for p in (tmp_path / "lit").iterdir())
    assert names and all(name.startswith(ITEM) for name in names)
    assert replay.check(tmp_path, ITEM) == 0
    first = tmp_path / "lit" / names[0]
    first.write_text(first.read_text() + "changed\n")
    assert replay.check(tmp_path, ITEM) == 1
    assert f"differs: lit/{names[0]}" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.skipif(not _in_git_checkout(), reason="needs a git checkout")
def test_check_against_a_revision_records_its_baseline(tmp_path: Path) -> None:
    base = tmp_path / "base"
    command = [sys.executable, "tools/replay.py", "check", "--against", "HEAD", str(base), "--only", ITEM]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "items identical to" in result.stdout
    recorded = sorted((base / "lit").iterdir())
    assert recorded and all(p.name.startswith(ITEM) for p in recorded)
    # the worktree is gone: no path of it is left in git's list
    worktrees = subprocess.run(["git", "worktree", "list"], cwd=ROOT, capture_output=True, text=True)
    assert "ktir-replay-" not in worktrees.stdout


@pytest.mark.slow
@pytest.mark.skipif(not _in_git_checkout(), reason="needs a git checkout")
def test_the_revisions_packages_are_imported_not_this_checkouts(tmp_path: Path) -> None:
    """
    The editable install maps `ktir.passes`, `ktir.dialects` and `ktir.tools` to this checkout's
    folders, so the revision's tree first on PYTHONPATH would mix the two; the boot directory's
    `sitecustomize.py` makes every process import all of them from the revision's tree.
    """
    tree = tmp_path / "tree"
    subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(tree), "HEAD"], cwd=ROOT, check=True)
    try:
        boot = _replay()._revision_boot(tree, tmp_path / "boot")
        script = "import ktir, ktir.passes, ktir.dialects.ktir, ktir.tools.ktir_opt as t; print(t.__file__)"
        env = {**os.environ, "PYTHONPATH": str(boot)}
        ktir_opt = str(Path(sys.executable).parent / "ktir-opt")
        for command in ([sys.executable, "-c", script], [ktir_opt, "--version"]):
            result = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True)
            assert result.returncode == 0, result.stderr
        result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
        assert result.stdout.strip() == str(tree / "tools" / "ktir_opt.py")
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=True)


def test_usage_and_input_errors() -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "tools/replay.py", *args]
        return subprocess.run(command, cwd=ROOT, capture_output=True, text=True)

    unknown = run("check", "--against", "no-such-revision-here")
    assert unknown.returncode == 1
    assert unknown.stderr.strip().splitlines() == [
        "replay.py: error: git worktree add: fatal: invalid reference: no-such-revision-here"
    ]
    assert run("record").returncode == 2
    assert run("record", "x", "--against", "HEAD").returncode == 2


def test_timing_reports_compare_by_structure_not_wall_time() -> None:
    replay = _replay()
    one = "  Total Execution Time: 0.0100 seconds\n    0.0031 ( 31.4%)  Parser\n    0.0000 (  0.4%)    cse\n"
    two = "  Total Execution Time: 0.0213 seconds\n    0.0102 ( 47.9%)  Parser\n    0.0001 (  0.5%)    cse\n"
    assert replay.normalized(one) == replay.normalized(two)
    assert "Parser" in replay.normalized(one) and "0.0031" not in replay.normalized(one)
    # a pass that appears or moves is still a difference, and numbers elsewhere are kept
    assert replay.normalized(one) != replay.normalized(one.replace("    cse", "  cse"))
    assert replay.normalized("cycles 1234.5 (x)") == "cycles 1234.5 (x)"


def test_the_venv_is_named_the_same_inside_or_outside_the_tree() -> None:
    # `make test` puts the venv inside the checkout; a baseline from another revision's tree
    # runs it from outside that tree. Both must record `%venv`, not `%root/.venv` for one.
    replay = _replay()
    with tempfile.TemporaryDirectory() as scratch:
        recorded = replay.run_command(f"echo {sys.prefix}/bin/python {replay.ROOT}/bin", scratch)
    assert "$ echo %venv/bin/python %root/bin\n" in recorded
    assert "--- stdout\n%venv/bin/python %root/bin\n" in recorded


def test_the_run_lines_of_a_file_share_its_temporary_path(tmp_path) -> None:
    # lit's %t is one path per file: a RUN line reads what an earlier one wrote
    replay = _replay()
    test = tmp_path / "shared.mlir"
    test.write_text("// RUN: echo written > %t.txt\n// RUN: cat %t.txt\n")
    replay.LIT = tmp_path
    first, second = (producer() for _, producer in replay.lit_items())
    assert "exit 0" in first
    assert "exit 0\n--- stdout\nwritten\n" in second
