"""`ktir-propagate-layouts`: options, the recorded plan, written encodings, determinism."""

from __future__ import annotations

import pytest
import torch
from helpers import import_f16
from xdsl.dialects.builtin import ModuleOp, TensorType

import ktir
from ktir.dialects.ktir.attributes import TiledLayoutAttr
from ktir.dialects.ktir.functions import LAYOUT_PLAN
from ktir.passes.propagate_layouts import PropagateLayoutsPass, functions_of
from ktir.pipeline import PipelineError, parse_pipeline

S = 128


def plan_of(module: ModuleOp) -> dict[str, object]:
    data = functions_of(module)[0].attributes[LAYOUT_PLAN].data  # type: ignore[attr-defined]
    return {key: getattr(value, "value", value).data for key, value in data.items()}


def test_every_tensor_gets_a_layout_and_the_plan_is_recorded() -> None:
    module = import_f16(lambda x, y: (x.t() @ y).sum(dim=1, keepdim=True), (S, S), (S, S))
    ktir.run_pipeline(module, "ktir-propagate-layouts")
    function = functions_of(module)[0]
    values = [*function.body.block.args, *(r for op in function.body.block.ops for r in op.results)]
    assert all(
        isinstance(v.type, TensorType) and isinstance(v.type.encoding, TiledLayoutAttr) for v in values
    )
    assert all(isinstance(t.encoding, TiledLayoutAttr) for t in function.function_type.outputs)  # type: ignore[attr-defined]
    assert plan_of(module) == {"cost": S * S, "lower_bound": S * S, "search": "exact"}


def test_options_parse_with_mlir_spelling_and_are_validated() -> None:
    (beam,) = parse_pipeline("ktir-propagate-layouts{strategy=beam beam-width=8}")
    assert beam == PropagateLayoutsPass(strategy="beam", beam_width=8)
    with pytest.raises(PipelineError, match="unknown strategy 'greedy'"):
        parse_pipeline("ktir-propagate-layouts{strategy=greedy}")
    with pytest.raises(PipelineError, match="beam-width must be positive"):
        parse_pipeline("ktir-propagate-layouts{beam-width=0}")


def test_beam_reports_a_valid_bound() -> None:
    fn = lambda a, b, c, d, e: (a + b.t() + c.t() + d.t()) @ e  # noqa: E731
    beam = import_f16(fn, *[(S, S)] * 5)
    ktir.run_pipeline(beam, "ktir-propagate-layouts{strategy=beam beam-width=1}")
    plan = plan_of(beam)
    assert plan["search"] == "beam"
    assert plan["lower_bound"] <= 2 * S * S <= plan["cost"]


def test_same_input_same_output() -> None:
    fn = lambda a, b, c: torch.softmax(a.t() + b, dim=0) @ c  # noqa: E731
    texts = []
    for _ in range(2):
        module = import_f16(fn, (S, 64), (64, S), (S, 32))
        ktir.run_pipeline(module, "ktir-propagate-layouts,ktir-insert-restickify,ktir-pad-matmul")
        texts.append(str(module))
    assert texts[0] == texts[1]


COPY_EXP_MATMUL = """
func.func @f(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>) -> tensor<64x64xf16> {
  %c = ktir.copy %x : tensor<64x64xf16> -> tensor<64x64xf16>
  %e = ktir.exp %c : tensor<64x64xf16> -> tensor<64x64xf16>
  %m = ktir.matmul %e, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
  func.return %m : tensor<64x64xf16>
}
"""


def test_a_narrow_beam_prefers_default_sticks_and_never_declares_a_feasible_graph_infeasible() -> None:
    from ktir.ir.context import make_context
    from ktir.ir.diagnostics import parse_module

    module = parse_module(make_context(), COPY_EXP_MATMUL)
    ktir.run_pipeline(module, "ktir-propagate-layouts{strategy=beam beam-width=1},ktir-insert-restickify")
    assert plan_of(module)["cost"] == 0
    assert "stride_map = [1, -1" not in str(module)  # nothing made sparse on a tie


def test_cpu_fallback_results_take_whatever_layout_their_consumers_want() -> None:
    from ktir.ir.context import make_context
    from ktir.ir.diagnostics import parse_module

    module = parse_module(
        make_context(),
        """
func.func @f(%i: tensor<64x1xi64>, %w: tensor<64x32xf16>) -> tensor<1x32xf16> {
  %c = ktir.cpu_fallback "aten::cumsum.default"(%i) {args = [#ktir.operand<0>, 0 : i64]}
      : (tensor<64x1xi64>) -> tensor<64x1xi64>
  %h = ktir.convert %c : tensor<64x1xi64> -> tensor<64x1xf16>
  %t = ktir.permute %h perm [1, 0] : tensor<64x1xf16> -> tensor<1x64xf16>
  %m = ktir.matmul %t, %w : tensor<1x64xf16>, tensor<64x32xf16> -> tensor<1x32xf16>
  func.return %m : tensor<1x32xf16>
}
""",
    )
    ktir.run_pipeline(module, "ktir-propagate-layouts,ktir-insert-restickify,ktir-verify-layouts")
    assert plan_of(module)["cost"] == 0  # the host writes the cumsum sticked on dim 0
