"""
Upstream `scf` where xDSL's parser is narrower: `scf.for` whose iteration results are one type
without parentheses, as upstream MLIR reads it (an arrow type list: `-> f32` or `-> (f32, i32)`)
and KTIR kernels of the reference stack write it:

```mlir
%sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f32 {
  ...
  scf.yield %next : f32
}
```

`ScfExt` is xDSL's `scf` dialect with this `scf.for` in place of its own. It is a subclass of
xDSL's `ForOp`: it prints as xDSL's does (`-> (f32)`, as mlir-opt prints) and everything that
matches xDSL's `ForOp` matches it (the interpreters look implementations up along the class's
bases, `ktir.ir.interpreter`).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import scf as xdsl_scf
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Attribute, Dialect
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.traits import SingleBlockImplicitTerminator, ensure_terminator


def parse_arrow_types(parser: Parser) -> Sequence[Attribute]:
    """After `->`: one type, or a parenthesized list of them (MLIR's arrow type list)."""
    if parser.parse_optional_punctuation("(") is None:
        return [parser.parse_type()]
    if parser.parse_optional_punctuation(")") is not None:
        return []
    types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
    parser.parse_punctuation(")")
    return types


def _parse_iter_args(parser: Parser) -> tuple[list[Parser.UnresolvedArgument], list[UnresolvedOperand]]:
    """`iter_args(%acc = %init, ...)`, the block arguments and their initial values."""

    def assignment() -> tuple[Parser.UnresolvedArgument, UnresolvedOperand]:
        argument = parser.parse_argument(expect_type=False)
        parser.parse_punctuation("=")
        return argument, parser.parse_unresolved_operand()

    pairs = parser.parse_comma_separated_list(parser.Delimiter.PAREN, assignment)
    return [a for a, _ in pairs], [o for _, o in pairs]


class ForOp(xdsl_scf.ForOp):
    """
    xDSL's `scf.for`, reading `-> type` as well as `-> (types)` (module docstring). Only the
    parser differs, so the class keeps its base's IRDL definition (a subclass cannot be
    redefined with `irdl_op_definition`).
    """

    @classmethod
    def parse(cls, parser: Parser) -> ForOp:
        indvar = parser.parse_argument(expect_type=False)
        parser.parse_punctuation("=")
        lower = parser.parse_unresolved_operand()
        parser.parse_keyword("to")
        upper = parser.parse_unresolved_operand()
        parser.parse_keyword("step")
        step = parser.parse_unresolved_operand()
        pos = parser.pos
        arguments: list[Parser.UnresolvedArgument] = []
        initial: list[UnresolvedOperand] = []
        types: Sequence[Attribute] = ()
        if parser.parse_optional_keyword("iter_args"):
            arguments, initial = _parse_iter_args(parser)
            parser.parse_punctuation("->")
            types = parse_arrow_types(parser)
        initial_values = parser.resolve_operands(initial, types, pos)
        iter_args = [argument.resolve(t) for argument, t in zip(arguments, types, strict=False)]
        indvar_type = parser.parse_type() if parser.parse_optional_punctuation(":") else IndexType()
        lb, ub, step_value = (parser.resolve_operand(v, indvar_type) for v in (lower, upper, step))
        body = parser.parse_region((indvar.resolve(indvar_type), *iter_args))
        attributes = parser.parse_optional_attr_dict()
        op = cls(lb, ub, step_value, initial_values, body)
        op.attributes |= attributes
        if not iter_args:
            for trait in op.get_traits_of_type(SingleBlockImplicitTerminator):
                ensure_terminator(op, trait)
        return op


ScfExt = Dialect(
    "scf",
    [*(op for op in xdsl_scf.Scf.operations if op.name != ForOp.name), ForOp],
    list(xdsl_scf.Scf.attributes),
)
"""xDSL's `scf` with the `scf.for` above."""


__all__ = ["ForOp", "ScfExt", "parse_arrow_types"]
