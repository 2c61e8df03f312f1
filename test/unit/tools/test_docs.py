"""
What README.md and docs/ktir-opt.md say about the tools holds: the dialect's op count, the
IR-dump examples show ops, the README's wording is current and gives `make test`'s time.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from ktir.dialects.ktir import Ktir
from ktir.dialects.ktir_core import CORE_OPS
from ktir.tools import ktir_opt

ROOT = Path(__file__).resolve().parents[3]
README = (ROOT / "README.md").read_text()
OP_LINE = re.compile(r"^\s+(%[\w, %]+ = )?ktir\.\w+", re.MULTILINE)


def test_the_readme_counts_the_graph_level_ops_of_the_dialect() -> None:
    (count,) = re.findall(r"and (\d+)\s+graph-level ops", README)
    assert int(count) == len(list(Ktir.operations)) - len(CORE_OPS)


def test_the_readme_wording_is_current() -> None:
    for stale in ("heading for a full path", "will be checked against", "What exists:"):
        assert stale not in README
    commands, after = README.split("```", 2)[1:]
    assert "make test" in commands
    assert after.lstrip().startswith("On a 2-core machine `make test` takes about ")


def dump_examples() -> list[str]:
    """The `ktir-opt` lines of docs/ktir-opt.md that print the IR between passes."""
    text = (ROOT / "docs" / "ktir-opt.md").read_text()
    lines = [line.strip() for line in text.splitlines() if line.strip().startswith(".venv/bin/ktir-opt")]
    return [line for line in lines if "--mlir-print-ir" in line or "--print-between-passes" in line]


@pytest.mark.parametrize("command", dump_examples())
def test_the_ir_dump_examples_print_ops(
    command: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)  # the examples run from the repository root
    assert ktir_opt.main(shlex.split(command)[1:]) == 0
    dumps = capsys.readouterr().err.split("// -----// IR Dump")[1:]
    assert dumps
    for dump in dumps:
        assert OP_LINE.search(dump), dump  # more than an empty function
