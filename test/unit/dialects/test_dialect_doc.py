"""
docs/dialect.md against the dialect: every `ktir` op is documented there and has a docstring,
and every op a table row of the document names exists (a renamed or removed op leaves no stale row).
"""

from __future__ import annotations

import re
from pathlib import Path

from ktir.dialects.ktir import Ktir

DOC = Path(__file__).resolve().parents[3] / "docs" / "dialect.md"


def undocumented(op_names: list[str], doc: str) -> list[str]:
    """The ops `doc` never names in backquotes (`ktir.abs`, or `ktir.abs %x ...` in a table)."""
    return [name for name in op_names if not re.search(rf"`{re.escape(name)}\b", doc)]


def stale_rows(op_names: list[str], doc: str) -> list[str]:
    """Ops a table row of `doc` begins with that are not in `op_names`."""
    rows = set(re.findall(r"^\| `(ktir\.[a-z_0-9]+)", doc, re.MULTILINE))
    return sorted(rows - set(op_names))


def test_every_op_is_in_dialect_md_and_every_row_is_an_op() -> None:
    names, doc = [op.name for op in Ktir.operations], DOC.read_text()
    assert not undocumented(names, doc), f"ops docs/dialect.md does not describe: {undocumented(names, doc)}"
    assert not stale_rows(names, doc), f"rows of docs/dialect.md naming no op: {stale_rows(names, doc)}"


def test_every_op_has_a_docstring() -> None:
    assert not [op.__name__ for op in Ktir.operations if not (op.__doc__ or "").strip()]


def test_a_missing_op_and_a_stale_row_are_found() -> None:
    doc = "| `ktir.abs` | `|x|` |\n| `ktir.gone %x` | removed |\n"
    assert undocumented(["ktir.abs", "ktir.absent"], doc) == ["ktir.absent"]
    assert stale_rows(["ktir.abs"], doc) == ["ktir.gone"]
