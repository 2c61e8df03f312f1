"""Tests of the pipeline API (`ktir.compile`)."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import ModuleOp

import ktir
from ktir.ir.context import make_context
from ktir.ir.diagnostics import parse_module
from ktir.pipeline import PipelineError, available_passes, parse_pipeline, run_pipeline

SOURCE = """
func.func @f(%x: tensor<4x64xf16>) -> tensor<4x64xf16> {
  %unused = ktir.exp %x : tensor<4x64xf16> -> tensor<4x64xf16>
  %a = ktir.abs %x : tensor<4x64xf16> -> tensor<4x64xf16>
  %b = ktir.abs %x : tensor<4x64xf16> -> tensor<4x64xf16>
  %c = ktir.add %a, %b : tensor<4x64xf16>, tensor<4x64xf16> -> tensor<4x64xf16>
  func.return %c : tensor<4x64xf16>
}
"""


def module() -> ModuleOp:
    return parse_module(make_context(), SOURCE, "<test>")


def test_runs_passes_in_place_with_ktir_opt_syntax() -> None:
    target = module()
    assert ktir.run_pipeline(target, "cse,dce") is target
    text = str(target)
    assert "ktir.exp" not in text  # dead pure op removed
    assert text.count("ktir.abs") == 1  # common subexpression merged


def test_pipeline_options_parse() -> None:
    (only,) = parse_pipeline("arith-add-fastmath{flags=none}")
    assert only.name == "arith-add-fastmath"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no-such-pass", "invalid pass pipeline 'no-such-pass': "),
        ("cse{bogus=1}", "invalid pass pipeline 'cse{bogus=1}': "),
        ("cse,,", "invalid pass pipeline 'cse,,': "),
    ],
)
def test_bad_specs_name_the_problem_and_the_available_passes(spec: str, message: str) -> None:
    with pytest.raises(PipelineError) as caught:
        run_pipeline(module(), spec)
    text = str(caught.value)
    assert text.startswith(message)
    assert text.endswith("available passes: " + ", ".join(sorted(available_passes())))
