"""mlir-opt's affine syntax as the ktdp ops print it (dialects/ktdp/syntax.py)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import AffineMapAttr
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.parser import Parser

from ktir.dialects.ktdp.syntax import affine_attribute_text, affine_text
from ktir.ir.context import make_context

_DIMS = [AffineExpr.dimension(i) for i in range(3)]
_SYMBOL = AffineExpr.symbol(0)


def _leaves() -> st.SearchStrategy[AffineExpr]:
    return st.one_of(st.sampled_from([*_DIMS, _SYMBOL]), st.integers(-9, 9).map(AffineExpr.constant))


def _extend(inner: st.SearchStrategy[AffineExpr]) -> st.SearchStrategy[AffineExpr]:
    constants = st.integers(-5, 5).filter(bool)
    divisors = st.integers(1, 7)
    return st.one_of(
        st.tuples(inner, inner).map(lambda p: p[0] + p[1]),
        st.tuples(inner, inner).map(lambda p: p[0] - p[1]),
        st.tuples(inner, constants).map(lambda p: p[0] * p[1]),
        st.tuples(inner, divisors).map(lambda p: p[0] // p[1]),
        st.tuples(inner, divisors).map(lambda p: p[0] % p[1]),
        st.tuples(inner, divisors).map(lambda p: p[0].ceil_div(p[1])),
    )


_EXPRESSIONS = st.recursive(_leaves(), _extend, max_leaves=8)


def _reparsed(expr: AffineExpr) -> AffineMap:
    text = affine_text(expr, ["d0", "d1", "d2"], 0, ["s0"])
    attribute = Parser(make_context(), f"affine_map<(d0, d1, d2)[s0] -> ({text})>").parse_attribute()
    assert isinstance(attribute, AffineMapAttr)
    return attribute.data


def test_sums_print_as_mlir_opt_prints_them() -> None:
    d0, d1, _ = _DIMS
    assert affine_text(_SYMBOL - (d0 + 1), ["d0"], 0, ["s0"]) == "s0 - d0 - 1"
    assert affine_text(d0 - d1 * 2, ["d0", "d1"]) == "d0 - d1 * 2"
    assert affine_text((d0 + d1) // 4, ["d0", "d1"]) == "(d0 + d1) floordiv 4"
    assert affine_text(d0 - d1 % 3, ["d0", "d1"]) == "d0 - d1 mod 3"
    assert affine_text((d0 % 3) * -1, ["d0"]) == "-(d0 mod 3)"


@settings(max_examples=200, deadline=None)
@given(_EXPRESSIONS, st.lists(st.integers(-50, 50), min_size=4, max_size=4))
def test_the_text_parses_back_to_the_same_value(expr: AffineExpr, point: list[int]) -> None:
    original = AffineMap(3, 1, (expr,))
    assert _reparsed(expr).eval(point[:3], point[3:]) == original.eval(point[:3], point[3:])


@settings(max_examples=100, deadline=None)
@given(_EXPRESSIONS)
def test_the_text_is_a_fixed_point_after_one_reparse(expr: AffineExpr) -> None:
    """
    As with mlir-opt: the parser folds constants (`d0 + 1 + 1` reads as `d0 + 2`), so the
    first reparse may print shorter, and from then on the text stays the same."""
    names = ["d0", "d1", "d2"]
    once = _reparsed(expr).results[0]
    twice = _reparsed(once).results[0]
    assert affine_text(twice, names, 0, ["s0"]) == affine_text(once, names, 0, ["s0"])


def test_a_set_prints_its_constraints_in_mlir_opt_form() -> None:
    text = "affine_set<(d0)[s0] : (d0 >= 0, -d0 + s0 - 1 >= 0)>"
    attribute = Parser(make_context(), text).parse_attribute()
    assert affine_attribute_text(attribute) == text
