"""
What `ktir-opt` does around the passes it runs, with `mlir-opt`'s flags: `--pass-pipeline`
syntax, `--list-passes`, `--mlir-print-ir-before/after[-all]` and `--mlir-timing`.

`ktir-compile` is a pipeline of stages (`ktir.passes.compile.CompilePass.passes`); `ktir-opt`
runs the stages one by one (`ktir.passes.stages.expand_stages`), so each one can be printed and timed, and
`--mlir-print-ir-after=ktir-compile` means after its last stage. The output is the same as
running `ktir-compile` as one pass.

Example (what `--mlir-timing` prints on stderr for `-p ktir-compile`, times elided):

    ===-------------------------------------------------------------------------===
                             ... Execution time report ...
    ===-------------------------------------------------------------------------===
      Total Execution Time: 0.4213 seconds

      ----Wall Time----  ----Name----
        0.0102 (  2.4%)  Parser
        0.4011 ( 95.2%)  ktir-compile
        0.0340 (  8.1%)    ktir-propagate-layouts
        ...
        0.0100 (  2.4%)  Output
        0.4213 (100.0%)  Total
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ktir.passes.stages import Stage

_MODULE_ANCHOR = re.compile(r"^\s*builtin\.module\s*\((?P<body>.*)\)\s*$", re.DOTALL)


def pipeline_from_mlir(spec: str) -> str:
    """
    The `-p` form of an MLIR `--pass-pipeline`: `builtin.module(a,b{x=1})` -> `a,b{x=1}`.
    Every ktir pass runs on a module (function passes visit each function themselves), so the
    only anchor is `builtin.module`; a nested anchor such as `func.func(cse)` is a `ValueError`.
    """
    match = _MODULE_ANCHOR.match(spec)
    if match is None:
        raise ValueError(f"expected 'builtin.module(...)', got '{spec}'")
    body = match.group("body").strip()
    if re.search(r"[\w.]+\s*\(", _without_options(body)):
        raise ValueError(
            f"nested pass anchors are not supported in '{spec}': ktir-opt runs module passes "
            "(list them directly inside builtin.module(...))"
        )
    return body


def _without_options(spec: str) -> str:
    """`spec` with every `{...}` option block removed (their values may contain parentheses)."""
    depth, kept = 0, []
    for char in spec:
        depth += char == "{"
        if depth == 0:
            kept.append(char)
        depth -= char == "}" and depth > 0
    return "".join(kept)


def describe_passes(available: dict[str, Callable[[], type[ModulePass]]]) -> str:
    """
    `--list-passes`: each pass with the first line of its docstring, then its options as
    `name: type = default`, one per line, sorted by pass name.
    """
    lines = ["Available passes:"]
    for name in sorted(available):
        cls = available[name]()
        lines.append(f"  {name}")
        if summary := _summary(cls):
            lines.append(f"      {summary}")
        for option in dataclasses.fields(cls) if dataclasses.is_dataclass(cls) else ():
            if option.name == "name" or not option.init:
                continue
            lines.append(f"      {option.name}: {_type_name(option.type)} = {_default(option)!r}")
    return "\n".join(lines)


_UNDOCUMENTED = {
    "cse": "Eliminate common subexpressions (xDSL).",
    "dce": "Remove ops whose results are unused and that have no side effects (xDSL).",
}
"""Summaries of the upstream passes whose classes carry no docstring of their own."""


def _summary(cls: type[ModulePass]) -> str:
    """The first line of the pass class's own docstring, without a pointer to the module's."""
    own = cls.__dict__.get("__doc__")
    if not own:
        return _UNDOCUMENTED.get(cls.name, "")
    first = inspect.cleandoc(own).splitlines()[0]
    return first.replace(" (see the module docstring)", "")


def _type_name(annotation: object) -> str:
    if isinstance(annotation, str):
        return annotation
    if isinstance(annotation, type):
        return annotation.__name__
    return str(annotation).replace("typing.", "")


def _default(option: dataclasses.Field[object]) -> object:
    if option.default is not dataclasses.MISSING:
        return option.default
    if option.default_factory is not dataclasses.MISSING:
        return option.default_factory()
    return None


@dataclass
class Instrumentation:
    """
    The `--mlir-print-ir-*` and `--mlir-timing` flags around a pipeline of stages: `dump`
    writes a header line and the module (on stderr), `timing` collects wall time per stage.
    """

    stages: list[Stage]
    dump: Callable[[str, ModuleOp], None]
    before_all: bool = False
    after_all: bool = False
    before: frozenset[str] = frozenset()
    after: frozenset[str] = frozenset()
    times: dict[int, float] = field(default_factory=dict)
    """Seconds per stage index (a pass run twice is two stages, two rows)."""
    _mark: float = 0.0

    def stage_done(self, index: int, module: ModuleOp) -> None:
        """Stage `index` finished: charge its time, then print the IR after it if asked."""
        stage = self.stages[index]
        self.times[index] = self.times.get(index, 0.0) + time.perf_counter() - self._mark
        if self.after_all or self._named(stage, self.after, stage.last):
            self.dump(_header("After", stage.module_pass), module)

    def stage_next(self, index: int, module: ModuleOp) -> None:
        """Stage `index` is about to run: print the IR before it if asked, then start its clock."""
        stage = self.stages[index]
        if self.before_all or self._named(stage, self.before, stage.first):
            self.dump(_header("Before", stage.module_pass), module)
        self._mark = time.perf_counter()

    @staticmethod
    def _named(stage: Stage, names: frozenset[str], boundary: bool) -> bool:
        return stage.module_pass.name in names or (stage.parent in names and boundary)


def _header(when: str, module_pass: ModulePass) -> str:
    """MLIR's dump header: `// -----// IR Dump After CSE (cse) //----- //`."""
    return f"// -----// IR Dump {when} {type(module_pass).__name__} ({module_pass.name}) //----- //"


def timing_report(rows: Sequence[tuple[str, float, int]]) -> str:
    """
    MLIR's execution time report for `(name, seconds, depth)` rows in run order (depth 1: a
    stage of the pass above it, counted in that pass's time too); the total is the sum of the
    depth-0 rows.
    """
    total = sum(seconds for _, seconds, depth in rows if depth == 0)
    rule = "===" + "-" * 73 + "==="
    lines = [
        rule,
        "... Execution time report ...".center(79).rstrip(),
        rule,
        f"  Total Execution Time: {total:.4f} seconds",
        "",
        "  ----Wall Time----  ----Name----",
    ]
    for name, seconds, depth in [*rows, ("Total", total, 0)]:
        share = 100.0 * seconds / total if total else 0.0
        lines.append(f"  {seconds:>8.4f} ({share:5.1f}%)  {'  ' * depth}{name}")
    return "\n".join(lines)


def timing_rows(
    stages: Sequence[Stage], times: dict[int, float], parse: float, output: float
) -> list[tuple[str, float, int]]:
    """
    The report's rows: Parser, each stage run (a pipeline pass as one row with its stages below
    it, depth 1), Output. `times` holds seconds by stage index; a pass run twice has two rows.
    """
    rows: list[tuple[str, float, int]] = [("Parser", parse, 0)]
    for index, stage in enumerate(stages):
        name = stage.module_pass.name
        if stage.parent is None:
            rows.append((name, times.get(index, 0.0), 0))
            continue
        if stage.first:  # the pipeline's row: its stages from here to its last one
            end = next(i for i in range(index, len(stages)) if stages[i].last)
            rows.append((stage.parent, sum(times.get(i, 0.0) for i in range(index, end + 1)), 0))
        rows.append((name, times.get(index, 0.0), 1))
    rows.append(("Output", output, 0))
    return rows


__all__ = [
    "Instrumentation",
    "describe_passes",
    "pipeline_from_mlir",
    "timing_report",
    "timing_rows",
]
