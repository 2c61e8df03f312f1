"""
`ktdp.construct_indirect_access_tile`: coordinates some of whose components are read from index
views (gathers, scatters, paged caches), with the reference implementation's syntax.

```mlir
%t = ktdp.construct_indirect_access_tile intermediate_variables(%p, %q)
    %X[ind(%IDX[%p, %q]), (%q)]
    {variables_space_order = affine_map<(d0, d1) -> (d0, d1)>,
     variables_space_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 15 >= 0, d1 >= 0, -d1 + 63 >= 0)>}
    : memref<512x64xf16>, memref<16x64xi32> -> !ktdp.access_tile<16x64xindex>
```

The intermediate variables range over `variables_space_set` (enumerated in
`variables_space_order`); at each point a direct subscript `( expr )` is a coordinate of the
base, and an indirect one `ind(%view[exprs])` reads the index view there and uses the value as
the coordinate: the example gathers `X[IDX[p, q], q]`. Other SSA names in the subscripts are
captured variables (operands). Every subscript map is stored over (captured..., intermediate...)
dims, in `per_dim_subscript_kinds` (true: indirect) and `per_dim_subscript_maps`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from xdsl.dialects.builtin import (
    AffineMapAttr,
    AffineSetAttr,
    ArrayAttr,
    BoolAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    TensorType,
    i1,
)
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    region_def,
    result_def,
    var_operand_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.parser.affine_parser import AffineParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.lexer import Span
from xdsl.utils.mlir_lexer import MLIRTokenKind

from ktir.dialects.ktdp.attributes import AccessTileType
from ktir.dialects.ktdp.syntax import affine_text, operand_text, print_attributes


class _Subscripts:
    """Parses subscript expressions, naming intermediate and captured variables as it goes."""

    def __init__(self, parser: Parser, intermediate: Sequence[str]) -> None:
        self.parser = parser
        self.intermediate = list(intermediate)
        self.captured: dict[str, int] = {}
        self.spans: list[Span[str]] = []

    def expression(self) -> AffineExpr:
        """One affine expression; intermediate k is symbol k, captured j is dim j, for now."""
        affine = AffineParser(self.parser._parser_state)

        def ssa_name() -> AffineExpr | None:
            token = affine._parse_optional_token(MLIRTokenKind.PERCENT_IDENT)
            if token is None:
                return None
            name = token.span.text
            if name in self.intermediate:
                return AffineExpr.symbol(self.intermediate.index(name))
            if name not in self.captured:
                self.captured[name] = len(self.captured)
                self.spans.append(token.span)
            return AffineExpr.dimension(self.captured[name])

        return affine._parse_affine_expr(ssa_name)

    def canonical(self, exprs: Sequence[AffineExpr]) -> AffineMap:
        """The expressions over (captured..., intermediate...) dims."""
        captured = len(self.captured)
        dims = [AffineExpr.dimension(j) for j in range(captured)]
        symbols = [AffineExpr.dimension(captured + k) for k in range(len(self.intermediate))]
        total = captured + len(self.intermediate)
        return AffineMap(total, 0, tuple(e.replace_dims_and_symbols(dims, symbols) for e in exprs))


@irdl_op_definition
class ConstructIndirectAccessTileOp(IRDLOperation):
    """Coordinates with components read from index views (module docstring)."""

    name = "ktdp.construct_indirect_access_tile"
    base = operand_def(MemRefType | TensorType)
    indirect_memrefs = var_operand_def(MemRefType)
    captured_variables = var_operand_def(IndexType)
    symbol_operands = var_operand_def(IndexType)
    per_dim_subscript_kinds = prop_def(ArrayAttr)
    per_dim_subscript_maps = prop_def(ArrayAttr)
    variables_space_set = prop_def(AffineSetAttr)
    variables_space_order = prop_def(AffineMapAttr)
    body = region_def("single_block")
    result = result_def(AccessTileType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    @classmethod
    def parse(cls, parser: Parser) -> ConstructIndirectAccessTileOp:
        parser.parse_keyword("intermediate_variables")
        names = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_unresolved_operand)
        subscripts = _Subscripts(parser, [n.span.text for n in names])
        base = parser.parse_unresolved_operand()
        kinds: list[bool] = []
        exprs: list[list[AffineExpr]] = []
        views: list[UnresolvedOperand] = []

        def subscript() -> None:
            if parser.parse_optional_keyword("ind") is not None:
                parser.parse_punctuation("(")
                views.append(parser.parse_unresolved_operand())
                exprs.append(
                    parser.parse_comma_separated_list(parser.Delimiter.SQUARE, subscripts.expression)
                )
                parser.parse_punctuation(")")
                kinds.append(True)
                return
            parser.parse_punctuation("(")
            exprs.append([subscripts.expression()])
            parser.parse_punctuation(")")
            kinds.append(False)

        parser.parse_comma_separated_list(parser.Delimiter.SQUARE, subscript)
        symbols: list[SSAValue] = []
        if parser.parse_optional_keyword("symbols") is not None:
            unresolved = parser.parse_comma_separated_list(
                parser.Delimiter.PAREN, parser.parse_unresolved_operand
            )
            symbols = [parser.resolve_operand(u, IndexType()) for u in unresolved]
        pos = parser.pos
        attributes = dict(parser.parse_optional_attr_dict())
        properties: dict[str, Attribute] = {}
        for name in ("variables_space_set", "variables_space_order"):
            if name not in attributes:
                parser.raise_error(f"requires attribute '{name}'", pos, parser.pos)
            properties[name] = attributes.pop(name)
        parser.parse_punctuation(":")
        pos = parser.pos
        types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        if len(types) != 1 + len(views):
            parser.raise_error(
                f"expected {1 + len(views)} types (base + {len(views)} indirect memrefs), "
                f"but got {len(types)}",
                pos,
                parser.pos,
            )
        parser.parse_punctuation("->")
        result = parser.parse_type()
        captured = [
            parser.resolve_operand(UnresolvedOperand(span, 0), IndexType()) for span in subscripts.spans
        ]
        properties["per_dim_subscript_kinds"] = ArrayAttr(BoolAttr(k, i1) for k in kinds)
        properties["per_dim_subscript_maps"] = ArrayAttr(
            AffineMapAttr(subscripts.canonical(e)) for e in exprs
        )
        operands = [
            parser.resolve_operand(base, types[0]),
            [parser.resolve_operand(v, t) for v, t in zip(views, types[1:], strict=True)],
            captured,
            symbols,
        ]
        region = Region(Block(arg_types=[IndexType()] * len(names)))
        for arg, name in zip(region.block.args, names, strict=True):
            arg.name_hint = name.span.text[1:]
        return cls.build(
            operands=operands,
            properties=properties,
            attributes=attributes,
            result_types=[result],
            regions=[region],
        )

    def print(self, printer: Printer) -> None:

        names = [operand_text(printer, v) for v in (*self.captured_variables, *self.body.block.args)]
        printer.print_string(" intermediate_variables(")
        printer.print_string(", ".join(names[len(self.captured_variables) :]))
        printer.print_string(") ")
        printer.print_operand(self.base)
        parts = []
        views = iter(self.indirect_memrefs)
        for kind, map_attr in zip(
            self.per_dim_subscript_kinds.data, self.per_dim_subscript_maps.data, strict=True
        ):
            exprs = [affine_text(e, names) for e in cast(AffineMapAttr, map_attr).data.results]
            if cast(IntegerAttr, kind).value.data:
                parts.append(f"ind({operand_text(printer, next(views))}[{', '.join(exprs)}])")
            else:
                parts.append(f"({exprs[0]})")
        printer.print_string(f"[{', '.join(parts)}]")
        if self.symbol_operands:
            printer.print_string(" symbols(")
            printer.print_list(self.symbol_operands, printer.print_operand)
            printer.print_string(")")
        attributes = {
            **self.attributes,
            "variables_space_order": self.variables_space_order,
            "variables_space_set": self.variables_space_set,
        }
        print_attributes(printer, dict(sorted(attributes.items())))
        printer.print_string(" : ")
        printer.print_list(
            [self.base.type, *(v.type for v in self.indirect_memrefs)], printer.print_attribute
        )
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    def verify_(self) -> None:
        space, order = self.variables_space_set.data, self.variables_space_order.data
        if space.num_dims != order.num_dims:
            raise VerifyException(
                f"variables_space_set dimensions ({space.num_dims}) must match variables_space_order inputs "
                f"({order.num_dims})"
            )
        if order.num_dims != len(order.results):
            raise VerifyException(
                f"variables_space_order must have equal number of inputs ({order.num_dims}) and outputs "
                f"({len(order.results)})"
            )
        variables = len(self.body.block.args)
        if variables != space.num_dims:
            raise VerifyException(
                f"number of intermediate variables ({variables}) must match variables_space_set dimensions "
                f"({space.num_dims})"
            )
        if space.num_symbols != len(self.symbol_operands):
            raise VerifyException(
                f"variables_space_set has {space.num_symbols} symbols but got {len(self.symbol_operands)} "
                "symbol operands"
            )
        self._verify_subscripts(variables)
        rank = len(self.result.type.get_shape())
        if rank != space.num_dims:
            raise VerifyException(
                f"result type rank ({rank}) must match variables_space_set dimensions ({space.num_dims})"
            )

    def _verify_subscripts(self, variables: int) -> None:
        kinds, maps = self.per_dim_subscript_kinds.data, self.per_dim_subscript_maps.data
        if len(kinds) != len(maps):
            raise VerifyException(
                f"per_dim_subscript_kinds size ({len(kinds)}) must match per_dim_subscript_maps "
                f"size ({len(maps)})"
            )
        _verify_entries(kinds, maps)
        rank = cast(MemRefType | TensorType, self.base.type).get_num_dims()
        if len(kinds) != rank:
            raise VerifyException(f"number of subscripts ({len(kinds)}) must match base rank ({rank})")
        indirect = [k for k in kinds if isinstance(k, IntegerAttr) and k.value.data]
        if len(indirect) != len(self.indirect_memrefs):
            raise VerifyException(
                f"number of indirect dimensions ({len(indirect)}) must match number of indirect memrefs "
                f"({len(self.indirect_memrefs)})"
            )
        expected = len(self.captured_variables) + variables
        views = iter(self.indirect_memrefs)
        for i, (kind, map_attr) in enumerate(zip(kinds, maps, strict=True)):
            map_ = cast(AffineMapAttr, map_attr).data
            if map_.num_dims != expected:
                raise VerifyException(
                    f"subscript map for dimension {i} has {map_.num_dims} dimensions, but expected "
                    f"{expected} (captured_variables + intermediate_variables)"
                )
            if cast(IntegerAttr, kind).value.data:
                view_rank = cast(MemRefType, next(views).type).get_num_dims()
                if len(map_.results) != view_rank:
                    raise VerifyException(
                        f"indirect subscript map for dimension {i} produces {len(map_.results)} results, but "
                        f"indirect memref has rank {view_rank}"
                    )
            elif len(map_.results) != 1:
                raise VerifyException(
                    f"direct subscript map for dimension {i} must produce exactly 1 result, but produces "
                    f"{len(map_.results)}"
                )


def _verify_entries(kinds: Sequence[Attribute], maps: Sequence[Attribute]) -> None:
    """Each subscript's kind is an integer (true: indirect) and its map an affine map."""
    for i, (kind, map_attr) in enumerate(zip(kinds, maps, strict=True)):
        if not isinstance(kind, IntegerAttr):
            raise VerifyException(
                f"per_dim_subscript_kinds entry {i} must be an integer attribute (true: indirect), not {kind}"
            )
        if not isinstance(map_attr, AffineMapAttr):
            raise VerifyException(f"per_dim_subscript_maps entry {i} must be an affine map, not {map_attr}")


__all__ = ["ConstructIndirectAccessTileOp"]
