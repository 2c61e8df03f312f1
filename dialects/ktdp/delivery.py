"""
`ktdp.inter_tile_consume`, the copy delivery of inter-tile communication (upstream KTIR's
inter-tile design, broadcast and routing): each consumer tile receives one producer's partial
unchanged, with no combiner.

```mlir
%r = ktdp.inter_tile_consume(%f) consumer_tiles_per_group = affine_set<(i)[g] : (i >= 0, -i + 3 >= 0)>
    : <(tensor<1x64xf16>), groups = affine_set<(g) : (g == 0)>> -> tensor<1x64xf16>
%s = ktdp.inter_tile_consume(%h) consumer_tiles_per_group = #pairs,
    producer_dependency_per_consumer = affine_set<(p)[c, g] : (p + c - 4 * g - 1 == 0)>
    : <(tensor<1x64xf16>), groups = #two> -> tensor<1x64xf16>
```

- Broadcast: a group of one producer; every consumer of the group receives its partial.
- Routing: a group of several producers; `producer_dependency_per_consumer`, a set `(p)[c]` or
  `(p)[c, g]` over producer tiles `p` for consumer tile `c` (of group `g`), names each
  consumer's one producer. Every consumer has exactly one source (checked when it runs).

The result has the partial's type. The reduce is in `comm.py`; the deliveries that split or
assemble (reduce_scatter, gather, all_to_all, scatter) in `placed_delivery.py`.
"""

from __future__ import annotations

from typing import cast

from xdsl.dialects.builtin import AffineSetAttr, TensorType
from xdsl.ir import SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from ktir.dialects.ktdp.attributes import TileFutureType
from ktir.dialects.ktdp.comm import DEPENDENCY, DEPENDENCY_SHAPES, parse_future_type, parse_tile_set
from ktir.dialects.ktdp.syntax import print_affine, print_attributes


@irdl_op_definition
class InterTileConsumeOp(IRDLOperation):
    """Each consumer tile receives one producer's partial unchanged (broadcast, routing)."""

    name = "ktdp.inter_tile_consume"
    future = operand_def(TileFutureType)
    consumer_tiles_per_group = prop_def(AffineSetAttr)
    producer_dependency_per_consumer = opt_prop_def(AffineSetAttr)
    result = result_def(TensorType)

    def __init__(
        self,
        future: SSAValue,
        consumer_tiles_per_group: AffineSetAttr,
        dependency: AffineSetAttr | None = None,
    ) -> None:
        """The partial of `future` delivered to the consumer tiles (one partial type)."""
        future_type = cast(TileFutureType, future.type)
        properties = {"consumer_tiles_per_group": consumer_tiles_per_group}
        if dependency is not None:
            properties[DEPENDENCY] = dependency
        super().__init__(operands=[future], properties=properties, result_types=[future_type.types.data[0]])

    @classmethod
    def parse(cls, parser: Parser) -> InterTileConsumeOp:
        parser.parse_punctuation("(")
        future = parser.parse_unresolved_operand()
        parser.parse_punctuation(")")
        properties = {"consumer_tiles_per_group": parse_tile_set(parser, "consumer_tiles_per_group")}
        if parser.parse_optional_punctuation(","):
            properties[DEPENDENCY] = parse_tile_set(parser, DEPENDENCY)
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        future_type = parse_future_type(parser)
        parser.parse_punctuation("->")
        result = parser.parse_type()
        operands = [parser.resolve_operand(future, future_type)]
        return cls.build(
            operands=operands, properties=properties, attributes=attributes, result_types=[result]
        )

    def print(self, printer: Printer) -> None:
        printer.print_string("(")
        printer.print_operand(self.future)
        printer.print_string(") consumer_tiles_per_group = ")
        print_affine(printer, self.consumer_tiles_per_group)
        if self.producer_dependency_per_consumer is not None:
            printer.print_string(f", {DEPENDENCY} = ")
            print_affine(printer, self.producer_dependency_per_consumer)
        print_attributes(printer, self.attributes)  # discardable ones
        printer.print_string(" : ")
        cast(TileFutureType, self.future.type).print_parameters(printer)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    def verify_(self) -> None:
        partials = cast(TileFutureType, self.future.type).types.data
        if len(partials) != 1:
            raise VerifyException("inter_tile_consume delivers one partial: not yet several roles")
        if self.result.type != partials[0]:
            raise VerifyException("result types must match future partial types")
        consumers = self.consumer_tiles_per_group.data
        if consumers.num_dims != 1 or consumers.num_symbols != 1:
            raise VerifyException("consumer_tiles_per_group must be a set (i)[g] of tile ids per group")
        dependency = self.producer_dependency_per_consumer
        shape = None if dependency is None else (dependency.data.num_dims, dependency.data.num_symbols)
        if shape is not None and shape not in DEPENDENCY_SHAPES:
            raise VerifyException(f"{DEPENDENCY} must be a set (p)[c] or (p)[c, g] of producer tile ids")


__all__ = ["InterTileConsumeOp"]
