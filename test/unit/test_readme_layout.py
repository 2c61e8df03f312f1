"""
README's layout table names every module of the tree: each `.py` file of an installed package
appears in the row of its directory or of the nearest directory above it that has a row (a
row's first cell names directories, as `ktir/sim/` or `dialects/` (`ktir.dialects`), or the
files it covers, as `ktir/compiler.py`).
"""

from __future__ import annotations

import re
from pathlib import Path

from test_layers import ROOT, package_directories


def layout_rows(readme: str) -> dict[str, str]:
    """README's layout table: the text of each row by every path its first cell names."""
    rows: dict[str, str] = {}
    for line in readme.splitlines():
        cells = line.split("|")
        if not line.startswith("| `") or len(cells) < 3:
            continue
        for path in re.findall(r"`([^`]+)`", cells[1]):
            rows[path.rstrip("/")] = cells[2]
    return rows


def _row_of(directory: str, rows: dict[str, str]) -> str:
    while directory not in rows and "/" in directory:
        directory = directory.rsplit("/", 1)[0]
    return rows.get(directory, "")


def unlisted_modules(readme: str, root: Path, directories: list[Path]) -> list[str]:
    """Every module file of `directories` (under `root`) that `readme`'s layout table does not name."""
    rows = layout_rows(readme)
    missing = []
    for directory in sorted(set(directories)):
        row = _row_of(directory.relative_to(root).as_posix(), rows)
        for path in sorted(directory.glob("*.py")):
            relative = path.relative_to(root).as_posix()
            if path.name != "__init__.py" and relative not in rows and f"`{path.name}`" not in row:
                missing.append(relative)
    return missing


def test_readme_names_every_module() -> None:
    readme = (ROOT / "README.md").read_text()
    missing = unlisted_modules(readme, ROOT, list(package_directories().values()))
    assert not missing, f"modules README's layout table does not name (add them to their row): {missing}"


def test_a_module_missing_from_its_row_is_found(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    for name in ("pkg/__init__.py", "pkg/named.py", "pkg/forgotten.py", "pkg/sub/inner.py", "pkg/alone.py"):
        (tmp_path / name).write_text("")
    readme = "| path | what |\n|---|---|\n| `pkg/` | `named.py`, `inner.py` |\n| `pkg/alone.py` | itself |\n"
    directories = [tmp_path / "pkg", tmp_path / "pkg" / "sub"]
    assert unlisted_modules(readme, tmp_path, directories) == ["pkg/forgotten.py"]
