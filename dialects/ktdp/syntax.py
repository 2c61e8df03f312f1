"""
MLIR's pretty affine syntax, which the `ktdp` ops print: subscripts over SSA names
(`%row + %i`, `%t floordiv 64`) and, in their attribute dictionaries, affine maps and sets as
mlir-opt writes them (`affine_set<(d0, d1) : (d0 >= 0, -d0 + 127 >= 0)>`, not xDSL's
`((d0 * -1) + 127) >= 0`). Both forms parse to the same attribute.

Example: the set with constraints `d0 >= 0`, `-d0 + s0 - 1 >= 0` prints as
`affine_set<(d0)[s0] : (d0 >= 0, -d0 + s0 - 1 >= 0)>`. While a module prints with aliases
(`aliases`, `ktir.dialects.ktdp.aliases`), each map and set prints as its alias (`#set`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from io import StringIO

from xdsl.dialects.builtin import AffineMapAttr, AffineSetAttr, IndexType, IntAttr, StringAttr
from xdsl.ir import Attribute, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineConstraintKind,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)
from xdsl.parser import AttrParser, Parser, UnresolvedOperand
from xdsl.parser.affine_parser import AffineParser
from xdsl.printer import Printer

_PRECEDENCE = {
    AffineBinaryOpKind.Add: 1,
    AffineBinaryOpKind.Mul: 2,
    AffineBinaryOpKind.FloorDiv: 2,
    AffineBinaryOpKind.CeilDiv: 2,
    AffineBinaryOpKind.Mod: 2,
}
_KEYWORD = {
    AffineBinaryOpKind.Mul: "*",
    AffineBinaryOpKind.FloorDiv: "floordiv",
    AffineBinaryOpKind.CeilDiv: "ceildiv",
    AffineBinaryOpKind.Mod: "mod",
}


def _negated(expr: AffineExpr) -> AffineExpr | None:
    """`x` when `expr` is `x * -1`, else None."""
    if (
        isinstance(expr, AffineBinaryOpExpr)
        and expr.kind == AffineBinaryOpKind.Mul
        and isinstance(expr.rhs, AffineConstantExpr)
        and expr.rhs.value == -1
    ):
        return expr.lhs
    return None


def _terms(expr: AffineExpr) -> list[AffineExpr]:
    """The summands of `expr` from left to right: `(a + b) + (c + d)` gives a, b, c, d."""
    if isinstance(expr, AffineBinaryOpExpr) and expr.kind == AffineBinaryOpKind.Add:
        return _terms(expr.lhs) + _terms(expr.rhs)
    return [expr]


def _subtracted(term: AffineExpr) -> AffineExpr | None:
    """`x` when `term` is `-x` (`x * -1`, `x * -c` as `x * c`, or a negative constant)."""
    if isinstance(term, AffineConstantExpr) and term.value < 0:
        return AffineExpr.constant(-term.value)
    if (negated := _negated(term)) is not None:
        return negated
    if (
        isinstance(term, AffineBinaryOpExpr)
        and term.kind == AffineBinaryOpKind.Mul
        and isinstance(term.rhs, AffineConstantExpr)
        and term.rhs.value < 0
    ):
        return term.lhs * -term.rhs.value
    return None


def affine_text(expr: AffineExpr, dims: Sequence[str], parent: int = 0, symbols: Sequence[str] = ()) -> str:
    """
    An affine expression in MLIR's pretty form over named dims and symbols (`%row + %i`,
    `%t floordiv 64`, `-d0 + s0 - 1`). A sum prints as its summands from left to right, a
    negative one subtracted, as mlir-opt prints it: `s0 + ((d0 * -1) + -1)` is `s0 - d0 - 1`.
    The text parses back to an expression of the same value (sums associate to the left).
    """
    if isinstance(expr, AffineDimExpr):
        return dims[expr.position]
    if isinstance(expr, AffineSymExpr):
        return symbols[expr.position] if expr.position < len(symbols) else f"s{expr.position}"
    if isinstance(expr, AffineConstantExpr):
        return str(expr.value)
    if not isinstance(expr, AffineBinaryOpExpr):
        return str(expr)
    if (negated := _negated(expr)) is not None:
        return f"-{affine_text(negated, dims, 3, symbols)}"
    level = _PRECEDENCE[expr.kind]
    if expr.kind != AffineBinaryOpKind.Add:
        lhs = affine_text(expr.lhs, dims, level, symbols)
        text = f"{lhs} {_KEYWORD[expr.kind]} {affine_text(expr.rhs, dims, level + 1, symbols)}"
        return f"({text})" if level < parent else text
    first, *rest = _terms(expr)
    text = affine_text(first, dims, level + 1, symbols)
    for term in rest:
        if (subtracted := _subtracted(term)) is not None:
            text += f" - {affine_text(subtracted, dims, level + 1, symbols)}"
        else:
            text += f" + {affine_text(term, dims, level + 1, symbols)}"
    return f"({text})" if level < parent else text


def _header(dims: int, symbols: int) -> tuple[str, list[str], list[str]]:
    names = [f"d{i}" for i in range(dims)]
    symbol_names = [f"s{i}" for i in range(symbols)]
    text = f"({', '.join(names)})" + (f"[{', '.join(symbol_names)}]" if symbols else "")
    return text, names, symbol_names


def affine_attribute_text(attribute: Attribute) -> str | None:
    """An `affine_map<...>` or `affine_set<...>` attribute as mlir-opt prints it; None otherwise."""
    if isinstance(attribute, AffineMapAttr):
        amap = attribute.data
        head, dims, symbols = _header(amap.num_dims, amap.num_symbols)
        results = ", ".join(affine_text(e, dims, 0, symbols) for e in amap.results)
        return f"affine_map<{head} -> ({results})>"
    if isinstance(attribute, AffineSetAttr):
        aset = attribute.data
        head, dims, symbols = _header(aset.num_dims, aset.num_symbols)
        parts = []
        for constraint in aset.constraints:
            relation = "==" if constraint.kind == AffineConstraintKind.eq else ">="
            lhs = affine_text(constraint.lhs, dims, 0, symbols)
            parts.append(f"{lhs} {relation} {affine_text(constraint.rhs, dims, 0, symbols)}")
        return f"affine_set<{head} : ({', '.join(parts)})>"
    return None


_Aliases = tuple[dict[Attribute, str], dict[str, int]]
_TABLE: ContextVar[_Aliases | None] = ContextVar("affine_aliases", default=None)
"""While a module prints with aliases: each map's and set's name, and how many of each kind have one."""


def _kind(attribute: Attribute) -> str | None:
    if isinstance(attribute, AffineMapAttr):
        return "map"
    return "set" if isinstance(attribute, AffineSetAttr) else None


def alias_of(attribute: Attribute) -> str | None:
    """
    The alias `attribute` prints as in the module being printed (`#map2`), named at its first
    use; None for another attribute, or outside `aliases`.
    """
    active = _TABLE.get()
    kind = _kind(attribute)
    if active is None or kind is None:
        return None
    names, counts = active
    if (name := names.get(attribute)) is None:
        count = counts.get(kind, 0)
        counts[kind] = count + 1
        name = names[attribute] = f"#{kind}{count or ''}"
    return name


@contextmanager
def aliases() -> Iterator[dict[Attribute, str]]:
    """While the body prints, maps and sets print as aliases; yields the table (attribute -> name)."""
    names: dict[Attribute, str] = {}
    token = _TABLE.set((names, {}))
    try:
        yield names
    finally:
        _TABLE.reset(token)


def print_affine(printer: Printer, attribute: Attribute) -> None:
    """An attribute, affine maps and sets in mlir-opt's pretty form, or as their aliases (`alias_of`)."""
    if (name := alias_of(attribute)) is not None:
        printer.print_string(name)
        return
    text = affine_attribute_text(attribute)
    if text is None:
        printer.print_attribute(attribute)
    else:
        printer.print_string(text)


def print_attributes(printer: Printer, attributes: Mapping[str, Attribute]) -> None:
    """An op's attribute dictionary (` {a = .., b = ..}`), affine maps and sets pretty."""
    if not attributes:
        return
    printer.print_string(" {")
    for index, (name, attribute) in enumerate(attributes.items()):
        if index:
            printer.print_string(", ")
        printer.print_identifier_or_string_literal(name)
        printer.print_string(" = ")
        print_affine(printer, attribute)
    printer.print_string("}")


def parse_subscripts(parser: Parser) -> tuple[AffineMap, Sequence[SSAValue]]:
    """
    `[%row + %i, 0]`: an affine map with one dim per distinct SSA name, in order of first
    appearance (MLIR's affine map of SSA ids; xDSL's parser makes them symbols), and the names.
    """
    # xDSL's own parse_affine_map_of_ssa_ids takes no `%v#1`: the affine parser runs here on the
    # same token stream, with an SSA-name hook that does.
    affine = AffineParser(parser._parser_state)
    positions: dict[tuple[str, int], int] = {}
    names: list[UnresolvedOperand] = []

    def ssa_name() -> AffineExpr | None:
        """`%row` or `%ids#1` (a result of a multi-result op, unlike xDSL's own parser)."""
        operand = parser.parse_optional_unresolved_operand()
        if operand is None:
            return None
        key = (operand.span.text, operand.index)
        if key not in positions:
            positions[key] = len(names)
            names.append(operand)
        return AffineExpr.dimension(positions[key])

    exprs = affine.parse_comma_separated_list(
        affine.Delimiter.SQUARE,
        lambda: affine._parse_affine_expr(ssa_name),
    )
    operands = [parser.resolve_operand(name, IndexType()) for name in names]
    return AffineMap(len(names), 0, tuple(exprs)), operands


def operand_text(printer: Printer, value: SSAValue) -> str:
    """The name `printer` gives `value` (`%row`, `%0`)."""
    stream = printer.stream
    printer.stream = StringIO()
    try:
        printer.print_operand(value)
        return printer.stream.getvalue()
    finally:
        printer.stream = stream


__all__ = [
    "affine_attribute_text",
    "affine_text",
    "alias_of",
    "aliases",
    "operand_text",
    "parse_subscripts",
    "print_affine",
    "print_attributes",
]


def parse_kind_and_core(parser: AttrParser, key: str) -> tuple[StringAttr, IntAttr]:
    """`<kind>` or `<kind, key = N>` (a memory space and its core; -1 when absent)."""
    with parser.in_angle_brackets():
        kind = parser.parse_identifier()
        core = -1
        if parser.parse_optional_punctuation(",") is not None:
            parser.parse_keyword(key)
            parser.parse_punctuation("=")
            core = parser.parse_integer()
    return StringAttr(kind), IntAttr(core)


def kind_and_core_text(kind: StringAttr, core: IntAttr, key: str) -> str:
    """The parameters `parse_kind_and_core` reads: `<LX, core = 7>`, `<HBM>`."""
    suffix = f", {key} = {core.data}" if core.data != -1 else ""
    return f"<{kind.data}{suffix}>"
