"""
Every shell command and Python block of README.md and docs/*.md runs as written.

Each document's blocks run in order in a scratch directory of its own that sees the
repository's `test/`, `examples/`, `bench/` and the running interpreter's environment as
`.venv` (with its `bin/` on PATH), so nothing is written into the checkout, nor into the user's
cache (`KTIR_CACHE_DIR` is the scratch directory's: what a document builds, it builds anew).
`make` lines (they run this suite) and benchmarks (minutes each) are the exceptions: a
benchmark line is checked with `--help`, which parses its command line and imports it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"^```(?P<kind>python|sh)\n(?P<body>.*?)^```", re.MULTILINE | re.DOTALL)


DOCUMENTS = ["README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))]


def blocks(document: str, kind: str) -> list[str]:
    """A document's fenced blocks of one kind, in order."""
    text = (ROOT / document).read_text()
    return [m["body"] for m in BLOCK.finditer(text) if m["kind"] == kind]


def readme_blocks(kind: str) -> list[str]:
    """The README's fenced blocks of one kind, in order."""
    return blocks("README.md", kind)


def steps(document: str) -> list[str]:
    """
    What to run for one document, in order: each shell command, then its Python blocks as one
    script (`python:` prefix). Benchmarks get `--help`; `make` lines are left out.
    """
    commands = []
    for block in blocks(document, "sh"):
        joined = block.replace("\\\n", " ")  # a command continued over lines with a backslash
        for line in (raw.strip() for raw in joined.splitlines()):
            if not line or line.startswith(("#", "make ")):
                continue
            command = line.split("#")[0].strip()
            is_bench = any(word.startswith("bench/") and word.endswith(".py") for word in command.split())
            commands.append(command + " --help" if is_bench else line)
    if blocks(document, "python"):
        commands.append("python:")
    return commands


def scratch_for(where: Path) -> Path:
    """A directory laid out like the checkout, for commands that use relative paths."""
    for name in ("test", "examples", "bench"):
        (where / name).symlink_to(ROOT / name)
    (where / ".venv").symlink_to(Path(sys.executable).parent.parent)
    return where


def run(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg", "PATH": path}
    env["KTIR_CACHE_DIR"] = str(cwd / ".cache")  # a step-cost table is built here, not in ~/.cache
    return subprocess.run(
        ["bash", "-o", "pipefail", "-c", command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_readme_has_the_two_commands_first() -> None:
    first = readme_blocks("sh")[0].splitlines()
    assert [line.split()[:2] for line in first] == [["make", "demo"], ["make", "test"]]


@pytest.mark.slow(minutes=True)  # up to two minutes a document: scheduled first (conftest.py)
@pytest.mark.parametrize("document", DOCUMENTS)
def test_document_runs_as_written(document: str, tmp_path: Path) -> None:
    scratch = scratch_for(tmp_path)
    for step in steps(document):
        if step == "python:":
            script = scratch / "blocks.py"
            script.write_text("\n".join(blocks(document, "python")))
            step = f"{sys.executable} {script}"
        result = run(step, scratch)
        assert result.returncode == 0, f"{document}: {step}\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"


@pytest.mark.slow
def test_readme_python_prints_the_reference_layout(tmp_path: Path) -> None:
    script = tmp_path / "readme.py"
    script.write_text("\n".join(readme_blocks("python")))
    result = run(f"{sys.executable} {script}", scratch_for(tmp_path))
    assert "SpyreTensorLayout(device_size=[100, 3, 5, 64], stride_map =[150, 64, 15000, 1]" in result.stdout
