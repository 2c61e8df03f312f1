"""`ktir.tools.pass_instrumentation`: MLIR pipeline syntax, stages, pass listing, timing report."""

from __future__ import annotations

import re

import pytest

from ktir.passes.stages import expand_stages
from ktir.pipeline import available_passes, parse_pipeline
from ktir.tools.pass_instrumentation import (
    describe_passes,
    pipeline_from_mlir,
    timing_report,
    timing_rows,
)


@pytest.mark.parametrize(
    ("spec", "passes"),
    [
        ("builtin.module(cse)", "cse"),
        ("builtin.module( cse , canonicalize )", "cse , canonicalize"),
        ('builtin.module(ktir-emit-superdsc{dir="a(b)"})', 'ktir-emit-superdsc{dir="a(b)"}'),
        ("builtin.module()", ""),
    ],
)
def test_mlir_pipelines_become_pass_lists(spec: str, passes: str) -> None:
    assert pipeline_from_mlir(spec) == passes


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("cse", "expected 'builtin.module(...)'"),
        ("func.func(cse)", "expected 'builtin.module(...)'"),
        ("builtin.module(func.func(cse))", "nested pass anchors are not supported"),
    ],
)
def test_bad_mlir_pipelines_say_why(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        pipeline_from_mlir(spec)


def test_ktir_compile_runs_as_its_stages() -> None:
    stages = expand_stages(parse_pipeline("cse,ktir-compile{cores=4},dce"))
    names = [s.module_pass.name for s in stages]
    assert names == [
        "cse",
        "ktir-propagate-layouts",
        "ktir-insert-restickify",
        "ktir-pad-matmul",
        "ktir-fuse",
        "ktir-divide-work",
        "ktir-plan-scratchpad",
        "ktir-plan-kernels",
        "ktir-lower-to-cores",
        "dce",
    ]
    assert [s.parent for s in stages] == [None, *["ktir-compile"] * 8, None]
    assert [(s.first, s.last) for s in stages[1:9]] == [(True, False), *[(False, False)] * 6, (False, True)]
    assert stages[5].module_pass.cores == 4  # the compile pass's options reach its stages


def test_list_passes_names_each_pass_with_its_options() -> None:
    text = describe_passes(available_passes())
    lines = text.splitlines()
    assert lines[0] == "Available passes:"
    names = [line.strip() for line in lines if line.startswith("  ") and not line.startswith("      ")]
    assert names == sorted(available_passes())
    at = lines.index("  ktir-divide-work")
    assert lines[at + 1 : at + 6] == [
        "      Write a `work_division` on every kernel op.",
        "      cores: int | None = None",
        "      policy: str = 'dataflow'",
        "      handoff: bool = True",
        "      target: str | Target = ''",
    ]


def test_timing_report_sums_the_top_level_rows() -> None:
    stages = expand_stages(parse_pipeline("cse,ktir-compile,ktir-propagate-layouts"))
    times = {0: 0.5, 1: 0.25, 4: 1.0, 8: 1.75, 9: 0.25}  # by stage index; 9 is the last pass
    rows = timing_rows(stages, times, parse=0.25, output=0.0)
    assert rows[:4] == [
        ("Parser", 0.25, 0),
        ("cse", 0.5, 0),
        ("ktir-compile", 3.0, 0),
        ("ktir-propagate-layouts", 0.25, 1),
    ]
    assert ("ktir-fuse", 1.0, 1) in rows and rows[-2:] == [
        ("ktir-propagate-layouts", 0.25, 0),
        ("Output", 0.0, 0),
    ]
    report = timing_report(rows).splitlines()
    assert "  Total Execution Time: 4.0000 seconds" in report
    assert report[-1] == "    4.0000 (100.0%)  Total"
    assert "    3.0000 ( 75.0%)  ktir-compile" in report
    assert "    1.0000 ( 25.0%)    ktir-fuse" in report
