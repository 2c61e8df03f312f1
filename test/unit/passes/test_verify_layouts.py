"""`ktir-verify-layouts`: located errors for broken stick rules."""

from __future__ import annotations

import pytest

import ktir
from ktir.ir.context import make_context
from ktir.ir.diagnostics import DiagnosticError, parse_module

ROW = "#ktir.tiled<device_size = [2, 128, 64], stride_map = [64, 128, 1]>"
COLUMN = "#ktir.tiled<device_size = [2, 128, 64], stride_map = [8192, 1, 128]>"


def module_with(x_layout: str, result_layout: str):
    x, y, r = (f"tensor<128x128xf16, {layout}>" for layout in (x_layout, ROW, result_layout))
    return parse_module(
        make_context(),
        f"""
func.func @f(%x: {x}, %y: {y}) -> {r} {{
  %r = ktir.matmul %x, %y : {x}, {y} -> {r}
  func.return %r : {r}
}}
""",
        "m.mlir",
    )


def test_legal_matmul_passes() -> None:
    ktir.run_pipeline(module_with(ROW, ROW), "ktir-verify-layouts")


def test_x_not_on_k_is_reported_at_the_op() -> None:
    with pytest.raises(DiagnosticError) as caught:
        ktir.run_pipeline(module_with(COLUMN, ROW), "ktir-verify-layouts")
    (error,) = caught.value.diagnostics
    assert error.location is not None and (error.location.line, error.location.column) == (3, 8)
    assert error.message == (
        "'ktir.matmul' op operand #0 is sticked on dim 0, but the op reads it on dim 1; "
        "ktir-insert-restickify would fix it"
    )
    # Between propagation and insertion such edges are pending, not errors.
    ktir.run_pipeline(module_with(COLUMN, ROW), "ktir-verify-layouts{pending=true}")


def test_result_off_its_rule_is_reported() -> None:
    with pytest.raises(DiagnosticError, match="result #0 is sticked on dim 0; allowed: dim 1"):
        ktir.run_pipeline(module_with(ROW, COLUMN), "ktir-verify-layouts{pending=true}")


def test_untyped_tensors_need_propagation_first() -> None:
    module = parse_module(
        make_context(),
        "func.func @f(%x: tensor<4xf16>) -> tensor<4xf16> {\n"
        "  %r = ktir.neg %x : tensor<4xf16> -> tensor<4xf16>\n  func.return %r : tensor<4xf16>\n}\n",
    )
    with pytest.raises(DiagnosticError, match=r"has no #ktir\.tiled layout"):
        ktir.run_pipeline(module, "ktir-verify-layouts")


def test_debug_mode_checks_at_the_end_of_each_layout_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    ktir.run_pipeline(module_with(COLUMN, ROW), "ktir-pad-matmul")  # no check by default
    monkeypatch.setenv("KTIR_DEBUG", "1")
    with pytest.raises(DiagnosticError, match="operand #0 is sticked on dim 0"):
        ktir.run_pipeline(module_with(COLUMN, ROW), "ktir-pad-matmul")
    # After propagation alone, restickifiable edges are pending, not errors.
    ktir.run_pipeline(module_with(COLUMN, ROW), "ktir-propagate-layouts")
