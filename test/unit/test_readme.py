"""
Every shell command and Python block of README.md runs as written.

The blocks run in a scratch directory that sees the repository's `test/`, `examples/`, `bench/`
and the running interpreter's environment as `.venv`, so nothing is written into the checkout.
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


def readme_blocks(kind: str) -> list[str]:
    """The README's fenced blocks of one kind, in order."""
    text = (ROOT / "README.md").read_text()
    return [m["body"] for m in BLOCK.finditer(text) if m["kind"] == kind]


def shell_commands() -> list[str]:
    """One command per line of the `sh` blocks (trailing comments kept: the shell ignores them)."""
    lines = [line.strip() for block in readme_blocks("sh") for line in block.splitlines()]
    return [line for line in lines if line and not line.startswith("make ")]


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory laid out like the checkout, for commands that use relative paths."""
    where = tmp_path_factory.mktemp("readme")
    for name in ("test", "examples", "bench"):
        (where / name).symlink_to(ROOT / name)
    (where / ".venv").symlink_to(Path(sys.executable).parent.parent)
    return where


def run(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    return subprocess.run(
        ["bash", "-o", "pipefail", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


def test_readme_has_the_two_commands_first() -> None:
    first = readme_blocks("sh")[0].splitlines()
    assert [line.split()[:2] for line in first] == [["make", "demo"], ["make", "test"]]


@pytest.mark.parametrize("command", shell_commands())
def test_readme_shell_command_runs(command: str, scratch: Path) -> None:
    if "bench/" in command:
        command = command.split("#")[0].strip() + " --help"
    result = run(command, scratch)
    assert result.returncode == 0, f"{command}\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"


def test_readme_python_blocks_run(scratch: Path) -> None:
    script = scratch / "readme_blocks.py"
    script.write_text("\n".join(readme_blocks("python")))
    result = run(f"{sys.executable} {script}", scratch)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "SpyreTensorLayout(device_size=[100, 3, 5, 64]" in result.stdout
