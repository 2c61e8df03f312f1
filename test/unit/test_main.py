"""`python -m ktir` (`ktir/__main__.py`) and the tools' `--version`."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import ktir
from ktir.__main__ import TOOLS, describe
from ktir.tools import ktir_run


def test_python_m_ktir_lists_the_version_and_every_tool() -> None:
    result = subprocess.run([sys.executable, "-m", "ktir"], capture_output=True, text=True, check=True)
    assert result.stdout == describe() + "\n"
    first, *tools, _ = result.stdout.splitlines()
    assert first.startswith(f"ktir {ktir.__version__} (xdsl ")
    assert [line.split()[0] for line in tools] == [name for name, _ in TOOLS]
    assert "ktir-estimate" in [line.split()[0] for line in tools]


def test_every_installed_tool_is_listed() -> None:
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    scripts = tomllib.loads(pyproject.read_text())["project"]["scripts"]
    assert [name for name, _ in TOOLS] == list(scripts)


def test_ktir_run_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert ktir_run.main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"ktir-run {ktir.__version__}"
