"""
The layers of the source tree, declared once and checked on every import.

`LAYERS` lists ktir's components from the top of the pipeline to the bottom (docs/architecture.md
draws them). A module may import from its own component or from a component of a lower tier;
components of one tier are peers and import nothing from each other. The test reads every
module of the installed packages (pyproject's `packages` and `package-dir`) with `ast`, so it
sees function-level imports too, and leaves out only what `if TYPE_CHECKING:` guards. It fails
on every upward or sideways import and on every cycle between modules, naming each.
"""

from __future__ import annotations

import ast
import tomllib
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

ROOT = Path(__file__).resolve().parents[2]

LAYERS: tuple[tuple[str, ...], ...] = (
    ("ktir.tools",),
    ("ktir.__main__",),
    ("ktir",),  # the package's own __init__: the lazy entry points ktir.compile, ktir.generate ...
    ("ktir.llm",),
    ("ktir.torch_backend",),
    ("ktir.compiler",),
    ("ktir.program",),
    ("ktir.pipeline",),
    ("ktir.saved", "ktir.progress"),
    ("ktir.passes",),
    ("ktir.ktdp_engine", "ktir.export"),
    ("ktir.sim", "ktir.frontend"),
    ("ktir.cores",),
    ("ktir.planning",),
    ("ktir.reference",),
    ("ktir.ir",),
    ("ktir.dialects",),
    ("ktir.hardware.cost_model",),  # ops by name; element types as device formats (ktir.layout.dtypes)
    ("ktir.layout",),
    ("ktir.hardware",),
)
"""ktir's components, top tier first. A component is a module and the modules under it, except
`ktir` itself, which is the package's `__init__` alone: every other module must be declared."""


@dataclass(frozen=True)
class Import:
    """One `import` of a ktir module: who imports what, and where."""

    importer: str
    target: str
    line: int

    def __str__(self) -> str:
        return f"{self.importer}:{self.line} imports {self.target}"


def package_directories() -> dict[str, Path]:
    """Every installed package and the directory it is read from, as pyproject.toml declares them."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    roots: dict[str, str] = setuptools["package-dir"]
    directories = {}
    for package in setuptools["packages"]:
        root = max((r for r in roots if package == r or package.startswith(r + ".")), key=len)
        rest = package.removeprefix(root).lstrip(".")
        directories[package] = ROOT / roots[root] / Path(*rest.split(".") if rest else ())
    return directories


def module_files() -> dict[str, Path]:
    """Every module of the installed packages by its dotted name (a package by its `__init__`)."""
    files = {}
    for package, directory in package_directories().items():
        for path in sorted(directory.glob("*.py")):
            files[package if path.stem == "__init__" else f"{package}.{path.stem}"] = path
    return files


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _statements(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements under `node`, at any depth, outside `if TYPE_CHECKING:` bodies."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child
        elif isinstance(child, ast.If) and _is_type_checking(child):
            for other in child.orelse:
                yield from _statements(ast.Module(body=[other], type_ignores=[]))
        else:
            yield from _statements(child)


def _resolve(name: str, modules: dict[str, Path]) -> str:
    """The module `name` names: itself, or the nearest enclosing module (for a missing one)."""
    while name not in modules and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def _targets(statement: ast.Import | ast.ImportFrom, module: str, modules: dict[str, Path]) -> list[str]:
    """The ktir modules one statement of `module` imports."""
    if isinstance(statement, ast.Import):
        return [_resolve(a.name, modules) for a in statement.names if a.name.split(".")[0] == "ktir"]
    base = statement.module or ""
    if statement.level:
        package = module if modules[module].name == "__init__.py" else module.rsplit(".", 1)[0]
        parts = package.split(".")[: len(package.split(".")) - statement.level + 1]
        base = ".".join([*parts, base] if base else parts)
    if base.split(".")[0] != "ktir":
        return []
    # `from ktir.dialects.ktir import core` imports a module, `from ktir.sim import Report` a name
    # of the package `ktir.sim`.
    names = (f"{base}.{a.name}" for a in statement.names)
    return [_resolve(name if name in modules else base, modules) for name in names]


def imports(modules: dict[str, Path]) -> list[Import]:
    """Every import of one ktir module by another, function-level ones included."""
    found = []
    for module, path in modules.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        for statement in _statements(tree):
            for target in sorted(set(_targets(statement, module, modules))):
                if target != module:
                    found.append(Import(module, target, statement.lineno))
    return found


def component_of(module: str) -> str | None:
    """The declared component holding `module`: the longest one that is it or encloses it."""
    declared = [c for tier in LAYERS for c in tier if module == c or module.startswith(c + ".")]
    component = max(declared, key=len, default=None)
    return None if component == "ktir" and module != "ktir" else component


def tier_of(component: str) -> int:
    """0 for the top tier, growing downwards."""
    return next(i for i, tier in enumerate(LAYERS) if component in tier)


def layer_violations(found: list[Import]) -> dict[tuple[str, str], list[Import]]:
    """Imports of a component of the same tier or a higher one, by (importer, imported)."""
    violations: dict[tuple[str, str], list[Import]] = defaultdict(list)
    for edge in found:
        source, target = component_of(edge.importer), component_of(edge.target)
        assert source is not None and target is not None, f"{edge}: a module outside LAYERS"
        if source != target and tier_of(target) <= tier_of(source):
            violations[edge.importer, edge.target].append(edge)
    return violations


def cycles(found: list[Import]) -> dict[frozenset[str], list[Import]]:
    """
    Each set of modules that import each other in a ring (a strongly connected component of two
    or more), with the imports inside it.
    """
    names = sorted({e.importer for e in found} | {e.target for e in found})
    index = {name: i for i, name in enumerate(names)}
    rows = [index[e.importer] for e in found]
    columns = [index[e.target] for e in found]
    graph = csr_matrix((np.ones(len(found)), (rows, columns)), shape=(len(names), len(names)))
    _, labels = connected_components(graph, directed=True, connection="strong")
    members: dict[int, set[str]] = defaultdict(set)
    for name, label in zip(names, labels, strict=True):
        members[int(label)].add(name)
    rings = {frozenset(m) for m in members.values() if len(m) > 1}
    return {ring: [e for e in found if e.importer in ring and e.target in ring] for ring in rings}


@pytest.fixture(scope="module")
def modules() -> dict[str, Path]:
    return module_files()


@pytest.fixture(scope="module")
def found(modules: dict[str, Path]) -> list[Import]:
    return imports(modules)


def test_every_module_has_a_layer(modules: dict[str, Path]) -> None:
    missing = [m for m in modules if component_of(m) is None]
    assert not missing, f"modules in no layer of LAYERS (declare them): {missing}"
    declared = [c for tier in LAYERS for c in tier]
    assert len(declared) == len(set(declared)), "a component is declared twice"
    unused = [c for c in declared if not any(component_of(m) == c for m in modules)]
    assert not unused, f"LAYERS declares components with no module: {unused}"


def _explain(edge: Import) -> str:
    source, target = component_of(edge.importer) or "", component_of(edge.target) or ""
    where = "beside it in its tier" if tier_of(source) == tier_of(target) else "above it"
    return f"{edge}: {source} may not import {target}, which LAYERS puts {where}"


def test_imports_point_down(found: list[Import]) -> None:
    violations = layer_violations(found)
    wrong = [_explain(edge) for _, edges in sorted(violations.items()) for edge in edges]
    assert not wrong, "imports against LAYERS:\n" + "\n".join(wrong)


def test_no_import_cycles(found: list[Import]) -> None:
    rings = cycles(found)
    found_cycles = [
        "cycle between " + ", ".join(sorted(ring)) + ":\n" + "\n".join(f"  {e}" for e in edges)
        for ring, edges in sorted(rings.items(), key=lambda item: sorted(item[0]))
    ]
    assert not found_cycles, "import cycles:\n" + "\n".join(found_cycles)


def _graph(source: str, tmp_path: Path) -> list[Import]:
    """The imports of a two-module tree `ktir.a`, `ktir.b` whose `a` is `source`."""
    (tmp_path / "a.py").write_text(source)
    (tmp_path / "b.py").write_text("from ktir.a import x\n")
    return imports({"ktir.a": tmp_path / "a.py", "ktir.b": tmp_path / "b.py"})


def test_function_level_imports_count_and_type_checking_ones_do_not(tmp_path: Path) -> None:
    hidden = _graph("def f():\n    from ktir.b import y\n", tmp_path)
    assert Import("ktir.a", "ktir.b", 2) in hidden
    assert list(cycles(hidden)) == [frozenset({"ktir.a", "ktir.b"})]
    guarded = _graph(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ktir.b import y\n", tmp_path
    )
    assert guarded == [Import("ktir.b", "ktir.a", 1)]
    assert cycles(guarded) == {}


def test_an_upward_import_is_reported_with_its_line(modules: dict[str, Path]) -> None:
    upward = Import("ktir.hardware.target", "ktir.dialects", 3)
    assert layer_violations([upward]) == {("ktir.hardware.target", "ktir.dialects"): [upward]}
    sideways = Import("ktir.sim.engine", "ktir.frontend.fx", 9)
    assert list(layer_violations([sideways])) == [("ktir.sim.engine", "ktir.frontend.fx")]
    assert layer_violations([Import("ktir.sim.engine", "ktir.cores.kernels", 5)]) == {}
    assert component_of("ktir.compiler") == "ktir.compiler" and component_of("ktir.new_module") is None
