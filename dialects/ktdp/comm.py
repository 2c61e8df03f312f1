"""
Inter-tile communication of the `ktdp` dialect: `ktdp.inter_tile_produce` makes each tile's
partial value a future, and `ktdp.inter_tile_reduce` combines the partials of each group's
producer tiles and delivers the result to the group's consumer tiles (an all-reduce when they
are the same tiles), with the syntax torch-spyre's emitters write.

```mlir
%f = ktdp.inter_tile_produce producer_tiles_per_group = affine_set<(i)[g] : (i >= 0, -i + 31 >= 0)>
    -> <(tensor<64xf32>), groups = affine_set<(g) : (g == 0)>>
  { ^bb0(%gid: index): ktdp.yield_partial %partial : tensor<64xf32> }
%r = ktdp.inter_tile_reduce(%f) consumer_tiles_per_group = affine_set<(i)[g] : (i >= 0, -i + 31 >= 0)>,
    identity(%zero : tensor<64xf32>)
    : <(tensor<64xf32>), groups = affine_set<(g) : (g == 0)>> -> tensor<64xf32>
  { ^bb0(%lhs: tensor<64xf32>, %rhs: tensor<64xf32>):
      %s = arith.addf %lhs, %rhs : tensor<64xf32>
      ktdp.yield_reduced %s : tensor<64xf32> }
```

`producer_tiles_per_group` / `consumer_tiles_per_group` are sets over a tile id `i` with the
group id as symbol `g`; `groups` enumerates the group ids. A future has one use.
"""

from __future__ import annotations

from typing import cast

from xdsl.dialects.builtin import AffineSetAttr, IndexType, TensorType
from xdsl.ir import Attribute, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import IsTerminator
from xdsl.utils.exceptions import VerifyException

from ktir.dialects.ktdp.attributes import TileFutureType
from ktir.dialects.ktdp.syntax import print_affine, print_attributes


def parse_future_type(parser: Parser) -> TileFutureType:
    """A future type in full or stripped (`<(...), groups = ...>`)."""
    pos = parser.pos
    parsed = parser.parse_optional_type()
    if parsed is None:
        # xDSL: parse_parameters returns Sequence[Attribute]; the constructor verifies the parameters' types.
        return TileFutureType(*TileFutureType.parse_parameters(parser))  # pyright: ignore[reportArgumentType]
    if not isinstance(parsed, TileFutureType):
        parser.raise_error(f"expected a tile future type, not {parsed}", pos, parser.pos)
    return parsed


DEPENDENCY = "producer_dependency_per_consumer"
"""The optional set `(p)[c]` or `(p)[c, g]` of the producers each consumer waits on and receives from."""
DEPENDENCY_SHAPES = ((1, 1), (1, 2))
"""Its (dims, symbols): a producer tile `p`, for consumer tile `c` (of group `g`)."""


def parse_tile_set(parser: Parser, keyword: str) -> AffineSetAttr:
    """`keyword = affine_set<...>` (a tile set of an inter-tile op); a located error if not a set."""
    parser.parse_keyword(keyword)
    return _parse_set_value(parser, keyword)


def _parse_set_value(parser: Parser, keyword: str) -> AffineSetAttr:
    """`= affine_set<...>` after `keyword`; a located error if not a set."""
    parser.parse_punctuation("=")
    pos = parser.pos
    tile_set = parser.parse_attribute()
    if not isinstance(tile_set, AffineSetAttr):
        parser.raise_error(f"{keyword} must be an affine set", pos, parser.pos)
    return tile_set


@irdl_op_definition
class YieldPartialOp(IRDLOperation):
    """The partial values a producer tile contributes (terminates `inter_tile_produce`)."""

    name = "ktdp.yield_partial"
    values = var_operand_def(TensorType)
    traits = traits_def(IsTerminator())
    assembly_format = "$values attr-dict `:` type($values)"

    def __init__(self, *values: SSAValue) -> None:
        super().__init__(operands=[values])


@irdl_op_definition
class YieldReducedOp(IRDLOperation):
    """The combination of two partials (terminates `inter_tile_reduce`'s combiner)."""

    name = "ktdp.yield_reduced"
    values = var_operand_def(TensorType)
    traits = traits_def(IsTerminator())
    assembly_format = "$values attr-dict `:` type($values)"

    def __init__(self, *values: SSAValue) -> None:
        super().__init__(operands=[values])


@irdl_op_definition
class InterTileProduceOp(IRDLOperation):
    """Each producer tile's partials (its region, run with its group id) as a future."""

    name = "ktdp.inter_tile_produce"
    producer_tiles_per_group = prop_def(AffineSetAttr)
    body = region_def("single_block")
    future = result_def(TileFutureType)

    def __init__(
        self, producer_tiles_per_group: AffineSetAttr, future_type: TileFutureType, body: Region
    ) -> None:
        """`body` takes the group id and yields the tile's partials (`YieldPartialOp`)."""
        super().__init__(
            properties={"producer_tiles_per_group": producer_tiles_per_group},
            result_types=[future_type],
            regions=[body],
        )

    @classmethod
    def parse(cls, parser: Parser) -> InterTileProduceOp:
        producers = parse_tile_set(parser, "producer_tiles_per_group")
        partials: list[Attribute] = []
        pos = parser.pos
        if parser.parse_optional_punctuation(":"):  # the design document's `: T, ... -> future`
            partials = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        parser.parse_punctuation("->")
        future = parse_future_type(parser)
        if partials and tuple(partials) != tuple(future.types.data):
            parser.raise_error("the partial types before '->' must be the future's", pos, parser.pos)
        body = parser.parse_region()
        attributes = parser.parse_optional_attr_dict()  # discardable ones, after the region
        return cls.build(
            properties={"producer_tiles_per_group": producers},
            attributes=attributes,
            result_types=[future],
            regions=[body],
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" producer_tiles_per_group = ")
        print_affine(printer, self.producer_tiles_per_group)
        printer.print_string(" -> ")
        self.future.type.print_parameters(printer)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=True)
        print_attributes(printer, self.attributes)

    def verify_(self) -> None:
        if not self.future.has_one_use():
            raise VerifyException("future result must have exactly one use")
        block = self.body.block
        if len(block.args) != 1 or not isinstance(block.args[0].type, IndexType):
            raise VerifyException("the producer region takes one index argument, the group id")
        terminator = block.last_op
        types = self.future.type.types.data
        if not isinstance(terminator, YieldPartialOp) or tuple(v.type for v in terminator.values) != types:
            raise VerifyException("the producer region must end in ktdp.yield_partial of the future's types")


@irdl_op_definition
class InterTileReduceOp(IRDLOperation):
    """Each consumer tile receives its group's partials combined by the region, from `identity`."""

    name = "ktdp.inter_tile_reduce"
    future = operand_def(TileFutureType)
    identity = var_operand_def(TensorType)
    consumer_tiles_per_group = prop_def(AffineSetAttr)
    producer_dependency_per_consumer = opt_prop_def(AffineSetAttr)
    combiner = region_def("single_block")
    result = result_def(TensorType)

    def __init__(
        self,
        future: SSAValue,
        consumer_tiles_per_group: AffineSetAttr,
        identity: SSAValue,
        combiner: Region,
        dependency: AffineSetAttr | None = None,
    ) -> None:
        """
        The partials of `future` combined by `combiner` from `identity` (whose type is the
        result's); with `dependency`, each consumer's named producers only (a partial reduction).
        """
        properties = {"consumer_tiles_per_group": consumer_tiles_per_group}
        if dependency is not None:
            properties[DEPENDENCY] = dependency
        super().__init__(
            operands=[future, [identity]],
            properties=properties,
            result_types=[identity.type],
            regions=[combiner],
        )

    @classmethod
    def parse(cls, parser: Parser) -> InterTileReduceOp:
        parser.parse_punctuation("(")
        future = parser.parse_unresolved_operand()
        parser.parse_punctuation(")")
        properties = {"consumer_tiles_per_group": parse_tile_set(parser, "consumer_tiles_per_group")}
        parser.parse_punctuation(",")
        if parser.parse_optional_keyword(DEPENDENCY):
            properties[DEPENDENCY] = _parse_set_value(parser, DEPENDENCY)
            parser.parse_punctuation(",")
        parser.parse_keyword("identity")
        parser.parse_punctuation("(")
        identity = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        identity_type = parser.parse_type()
        parser.parse_punctuation(")")
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        future_type = parse_future_type(parser)
        parser.parse_punctuation("->")
        result = parser.parse_type()
        combiner = parser.parse_region()
        operands = [
            parser.resolve_operand(future, future_type),
            [parser.resolve_operand(identity, identity_type)],
        ]
        return cls.build(
            operands=operands,
            properties=properties,
            attributes=attributes,
            result_types=[result],
            regions=[combiner],
        )

    def print(self, printer: Printer) -> None:
        printer.print_string("(")
        printer.print_operand(self.future)
        printer.print_string(") consumer_tiles_per_group = ")
        print_affine(printer, self.consumer_tiles_per_group)
        if self.producer_dependency_per_consumer is not None:
            printer.print_string(f", {DEPENDENCY} = ")
            print_affine(printer, self.producer_dependency_per_consumer)
        printer.print_string(", identity(")
        printer.print_operand(self.identity[0])
        printer.print_string(" : ")
        printer.print_attribute(self.identity[0].type)
        printer.print_string(")")
        print_attributes(printer, self.attributes)  # discardable ones (`ktir.buffer`)
        printer.print_string(" : ")
        cast(TileFutureType, self.future.type).print_parameters(printer)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)
        printer.print_string(" ")
        printer.print_region(self.combiner, print_entry_block_args=True)

    def verify_(self) -> None:
        if len(self.identity) != 1:
            raise VerifyException("inter_tile_reduce takes one identity value")
        block = self.combiner.block
        if len(block.args) != 2 or any(a.type != self.result.type for a in block.args):
            raise VerifyException("the combiner takes two values of the result's type")
        if not isinstance(block.last_op, YieldReducedOp):
            raise VerifyException("the combiner must end in ktdp.yield_reduced")
        dependency = self.producer_dependency_per_consumer
        shape = None if dependency is None else (dependency.data.num_dims, dependency.data.num_symbols)
        if shape is not None and shape not in DEPENDENCY_SHAPES:
            raise VerifyException(f"{DEPENDENCY} must be a set (p)[c] or (p)[c, g] of producer tile ids")


COMM_OPS = (InterTileProduceOp, InterTileReduceOp, YieldPartialOp, YieldReducedOp)
"""Inter-tile communication ops of `ktdp`."""

__all__ = [
    "COMM_OPS",
    "DEPENDENCY",
    "DEPENDENCY_SHAPES",
    "InterTileProduceOp",
    "InterTileReduceOp",
    "TileFutureType",
    "YieldPartialOp",
    "YieldReducedOp",
]
