"""`ktir-divide-work`: the issue's examples through the pass, hints, the cost policy, errors."""

from __future__ import annotations

import pytest
from helpers import matmul, unary

import ktir
from ktir.ir.context import make_context
from ktir.ir.diagnostics import DiagnosticError, parse_module
from ktir.ir.state import read_division
from ktir.passes.propagate_layouts import functions_of


def divided(text: str, options: str = "") -> list[dict[str, int] | None]:
    module = parse_module(make_context(), text)
    ktir.run_pipeline(
        module, f"ktir-propagate-layouts,ktir-insert-restickify,ktir-pad-matmul,ktir-divide-work{options}"
    )
    return [read_division(op) for op in functions_of(module)[0].body.block.ops]


def test_the_seed_abs_on_two_cores() -> None:
    assert divided(unary("ktir.abs", "4x64"), "{cores=2}")[0] == {"d0": 2, "d1": 1}


@pytest.mark.parametrize(("cores", "d0"), [(32, 32), (16, 16)])
def test_abs_on_a_3d_fp32_tensor(cores: int, d0: int) -> None:
    division = divided(unary("ktir.abs", "256x128x512", "f32"), f"{{cores={cores}}}")[0]
    assert division == {"d0": d0, "d1": 1, "d2": 1}


def test_span_reduction_splits_k_of_a_huge_matmul() -> None:
    assert divided(matmul(8192, 32768, 4096))[0] == {"m": 16, "n": 1, "k": 2}


def test_a_dim_inside_one_stick_is_never_split() -> None:
    # 32 fp16 columns are half a stick: only the rows can be divided.
    assert divided(unary("ktir.abs", "64x32"))[0] == {"d0": 32, "d1": 1}


def test_a_valid_hint_is_taken_as_given() -> None:
    assert divided(matmul(256, 256, 256, "m = 2 : i64, k = 2 : i64"))[0] == {"m": 2, "n": 1, "k": 2}


@pytest.mark.parametrize(
    ("hint", "message"),
    [
        ("m = 64 : i64", "uses 64 cores"),
        ("m = 3 : i64", "does not divide"),
        ("q = 2 : i64", "not one of the dims"),
        ("m = 0 : i64", "positive integer"),
    ],
)
def test_bad_hints_are_located_errors(hint: str, message: str) -> None:
    with pytest.raises(DiagnosticError, match=message):
        divided(matmul(256, 256, 256, hint))


def test_cost_policy_never_uses_fewer_cores_and_differs_from_default() -> None:
    default = divided(matmul(256, 4096, 4096))[0]
    cost = divided(matmul(256, 4096, 4096), "{policy=cost}")[0]
    assert default is not None and cost is not None
    used = lambda s: s["m"] * s["n"] * s["k"]  # noqa: E731
    assert used(cost) >= used(default) == 32
    assert default == {"m": 32, "n": 1, "k": 1}
    assert cost["m"] * cost["n"] * cost["k"] == 32 and cost["m"] < 32  # rows per core fill the PE array


def test_views_and_returns_get_no_division() -> None:
    text = """
func.func @f(%x: tensor<4x64xf16>) -> tensor<64x4xf16> {
  %y = ktir.permute %x perm [1, 0] : tensor<4x64xf16> -> tensor<64x4xf16>
  return %y : tensor<64x4xf16>
}"""
    assert divided(text) == [None, None]
