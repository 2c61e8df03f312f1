"""
The inter-tile deliveries that place pieces (upstream KTIR's inter-tile design): each consumer
tile receives a part or an assembly of the partials, by the placement algebra of
`ktir.dialects.ktdp.placement`.

| op | combine | placement | producers per group | axis lists |
|---|---|---|---|---|
| `ktdp.inter_tile_reduce_scatter` | the combiner | split | all | `scatter_dimensions` |
| `ktdp.inter_tile_gather` | none | concat | all | `gather_dimensions` |
| `ktdp.inter_tile_all_to_all` | none | split, then concat | all | `split_dimensions`, `concat_dimensions` |
| `ktdp.inter_tile_scatter` | none | split | one | `scatter_dimensions` |

```mlir
%g = ktdp.inter_tile_gather(%f) consumer_tiles_per_group = #all, gather_dimensions = [0]
    : <(tensor<1x64xf32>), groups = #one> -> tensor<4x64xf32>
%s = ktdp.inter_tile_reduce_scatter(%h) consumer_tiles_per_group = #all, scatter_dimensions = [1],
    identity(%zero : tensor<1x64xf32>) : <(tensor<1x64xf32>), groups = #one> -> tensor<1x16xf32> {
  ^bb0(%lhs: tensor<1x64xf32>, %rhs: tensor<1x64xf32>):
    %sum = arith.addf %lhs, %rhs : tensor<1x64xf32>
    ktdp.yield_reduced %sum : tensor<1x64xf32>
}
```

A consumer's local index `l` is its position in ascending tile order among its group's
consumers (for a split) or a producer's among the producers it receives from (for a concat).
The result type follows from the partial type and the part and piece counts, which only the
tile sets evaluated on a grid give: the verifier checks the axis lists and that the result has
the partial's rank and element type, the ktdp engine the extents when it runs. Every op but
scatter takes `producer_dependency_per_consumer`, a set `(p)[c]` or `(p)[c, g]` naming the
producers each consumer waits on and receives from (default: all of its group's).
"""

from __future__ import annotations

from typing import ClassVar, cast

from xdsl.dialects.builtin import AffineSetAttr, DenseArrayBase, IntegerType, TensorType, i64
from xdsl.ir import Attribute, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    var_operand_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from ktir.dialects.ktdp.attributes import TileFutureType
from ktir.dialects.ktdp.comm import (
    DEPENDENCY,
    DEPENDENCY_SHAPES,
    YieldReducedOp,
    parse_future_type,
    parse_tile_set,
)
from ktir.dialects.ktdp.placement import PlacementError, check_axes
from ktir.dialects.ktdp.syntax import print_affine, print_attributes


def axes_of(op: IRDLOperation, name: str) -> tuple[int, ...]:
    """The values of an axis-list property (`array<i64: ...>`)."""
    return cast("DenseArrayBase[IntegerType]", op.properties[name]).get_values()


class PlacedDeliveryOp(IRDLOperation):
    """
    The syntax and checks the four placed deliveries share: `(%future)
    consumer_tiles_per_group = S, <axis lists> [, producer_dependency_per_consumer = S]
    [, identity(%id : T)] : <future> -> T [combiner]`.
    """

    AXES: ClassVar[tuple[str, ...]] = ()
    """The op's axis-list properties, in their printed order."""
    TAKES_DEPENDENCY: ClassVar[bool] = True
    FOLDS: ClassVar[bool] = False
    """Whether the op has `identity` and a combiner region (reduce_scatter)."""

    @classmethod
    def parse(cls, parser: Parser) -> PlacedDeliveryOp:
        parser.parse_punctuation("(")
        future = parser.parse_unresolved_operand()
        parser.parse_punctuation(")")
        properties: dict[str, Attribute] = {
            "consumer_tiles_per_group": parse_tile_set(parser, "consumer_tiles_per_group")
        }
        for name in cls.AXES:
            parser.parse_punctuation(",")
            parser.parse_keyword(name)
            parser.parse_punctuation("=")
            values = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_integer)
            properties[name] = DenseArrayBase.from_list(i64, values)
        identity = None
        while parser.parse_optional_punctuation(","):
            if cls.FOLDS and parser.parse_optional_keyword("identity"):
                identity = _parse_identity(parser)
                continue
            properties[DEPENDENCY] = parse_tile_set(parser, DEPENDENCY)
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        future_type = parse_future_type(parser)
        parser.parse_punctuation("->")
        result = parser.parse_type()
        operands: list = [parser.resolve_operand(future, future_type)]
        regions = []
        if cls.FOLDS:
            if identity is None:
                parser.raise_error(f"{cls.name} takes identity(%value : type)")
            operands.append([parser.resolve_operand(*identity)])
            regions.append(parser.parse_region())
        return cls.build(
            operands=operands,
            properties=properties,
            attributes=attributes,
            result_types=[result],
            regions=regions,
        )

    def print(self, printer: Printer) -> None:
        printer.print_string("(")
        printer.print_operand(self.operands[0])
        printer.print_string(") consumer_tiles_per_group = ")
        print_affine(printer, self.properties["consumer_tiles_per_group"])
        for name in self.AXES:
            printer.print_string(f", {name} = [{', '.join(map(str, axes_of(self, name)))}]")
        if (dependency := self.properties.get(DEPENDENCY)) is not None:
            printer.print_string(f", {DEPENDENCY} = ")
            print_affine(printer, dependency)
        if self.FOLDS:
            printer.print_string(", identity(")
            printer.print_operand(self.operands[1])
            printer.print_string(" : ")
            printer.print_attribute(self.operands[1].type)
            printer.print_string(")")
        print_attributes(printer, self.attributes)  # discardable ones
        printer.print_string(" : ")
        cast(TileFutureType, self.operands[0].type).print_parameters(printer)
        printer.print_string(" -> ")
        printer.print_attribute(self.results[0].type)
        if self.FOLDS:
            printer.print_string(" ")
            printer.print_region(self.regions[0], print_entry_block_args=True)

    def verify_(self) -> None:
        partials = cast(TileFutureType, self.operands[0].type).types.data
        if len(partials) != 1:
            raise VerifyException(f"{self.name} delivers one partial: not yet several roles")
        partial = cast(TensorType, partials[0])
        result = self.results[0].type
        if not isinstance(result, TensorType) or result.element_type != partial.element_type:
            raise VerifyException("the result must be a tensor of the partial's element type")
        if any(extent < 0 for extent in result.get_shape()):
            raise VerifyException("the result must have a static shape")
        if len(result.get_shape()) != len(partial.get_shape()):
            raise VerifyException("the result must have the partial's rank (no rank reduction)")
        for name in self.AXES:
            try:
                check_axes(axes_of(self, name), len(partial.get_shape()), name)
            except PlacementError as error:
                raise VerifyException(str(error)) from None
        self._verify_sets()
        if self.FOLDS:
            self._verify_combiner(partial)

    def _verify_sets(self) -> None:
        consumers = cast(AffineSetAttr, self.properties["consumer_tiles_per_group"]).data
        if consumers.num_dims != 1 or consumers.num_symbols != 1:
            raise VerifyException("consumer_tiles_per_group must be a set (i)[g] of tile ids per group")
        dependency = cast(AffineSetAttr | None, self.properties.get(DEPENDENCY))
        if dependency is None:
            return
        if not self.TAKES_DEPENDENCY:
            raise VerifyException(f"{self.name} takes no {DEPENDENCY}: its group has one producer")
        if (dependency.data.num_dims, dependency.data.num_symbols) not in DEPENDENCY_SHAPES:
            raise VerifyException(f"{DEPENDENCY} must be a set (p)[c] or (p)[c, g] of producer tile ids")

    def _verify_combiner(self, partial: TensorType) -> None:
        if len(self.operands) != 2:
            raise VerifyException(f"{self.name} takes one identity value")
        if self.operands[1].type != partial:
            raise VerifyException("the identity must have the partial's type")
        block = self.regions[0].block
        if len(block.args) != 2 or any(a.type != partial for a in block.args):
            raise VerifyException("the combiner takes two values of the partial's type")
        if not isinstance(block.last_op, YieldReducedOp):
            raise VerifyException("the combiner must end in ktdp.yield_reduced")


def _parse_identity(parser: Parser) -> tuple[UnresolvedOperand, Attribute]:
    """`(%value : type)` after the `identity` keyword."""
    parser.parse_punctuation("(")
    value = parser.parse_unresolved_operand()
    parser.parse_punctuation(":")
    value_type = parser.parse_type()
    parser.parse_punctuation(")")
    return value, value_type


def _properties(
    consumers: AffineSetAttr, axes: dict[str, list[int]], dependency: AffineSetAttr | None
) -> dict[str, Attribute]:
    """The properties of a placed delivery."""
    properties: dict[str, Attribute] = {"consumer_tiles_per_group": consumers}
    properties.update({name: DenseArrayBase.from_list(i64, values) for name, values in axes.items()})
    if dependency is not None:
        properties[DEPENDENCY] = dependency
    return properties


@irdl_op_definition
class InterTileGatherOp(PlacedDeliveryOp):
    """Each consumer receives its producers' partials concatenated over `gather_dimensions`."""

    name = "ktdp.inter_tile_gather"
    AXES: ClassVar[tuple[str, ...]] = ("gather_dimensions",)
    future = operand_def(TileFutureType)
    consumer_tiles_per_group = prop_def(AffineSetAttr)
    gather_dimensions = prop_def(DenseArrayBase)
    producer_dependency_per_consumer = opt_prop_def(AffineSetAttr)
    result = result_def(TensorType)

    def __init__(
        self,
        future: SSAValue,
        consumers: AffineSetAttr,
        gather_dimensions: list[int],
        result_type: TensorType,
        dependency: AffineSetAttr | None = None,
    ) -> None:
        """The partials of `future` gathered over `gather_dimensions` into `result_type`."""
        properties = _properties(consumers, {"gather_dimensions": gather_dimensions}, dependency)
        super().__init__(operands=[future], properties=properties, result_types=[result_type])


@irdl_op_definition
class InterTileScatterOp(PlacedDeliveryOp):
    """Each consumer receives its part (by local index) of its group's one producer's partial."""

    name = "ktdp.inter_tile_scatter"
    AXES: ClassVar[tuple[str, ...]] = ("scatter_dimensions",)
    TAKES_DEPENDENCY: ClassVar[bool] = False
    future = operand_def(TileFutureType)
    consumer_tiles_per_group = prop_def(AffineSetAttr)
    scatter_dimensions = prop_def(DenseArrayBase)
    producer_dependency_per_consumer = opt_prop_def(AffineSetAttr)
    result = result_def(TensorType)

    def __init__(
        self,
        future: SSAValue,
        consumers: AffineSetAttr,
        scatter_dimensions: list[int],
        result_type: TensorType,
    ) -> None:
        """The partial of `future`'s producer split over `scatter_dimensions` among the consumers."""
        properties = _properties(consumers, {"scatter_dimensions": scatter_dimensions}, None)
        super().__init__(operands=[future], properties=properties, result_types=[result_type])


@irdl_op_definition
class InterTileAllToAllOp(PlacedDeliveryOp):
    """Consumer `l` receives part `l` of every producer's partial, concatenated in producer order."""

    name = "ktdp.inter_tile_all_to_all"
    AXES: ClassVar[tuple[str, ...]] = ("split_dimensions", "concat_dimensions")
    future = operand_def(TileFutureType)
    consumer_tiles_per_group = prop_def(AffineSetAttr)
    split_dimensions = prop_def(DenseArrayBase)
    concat_dimensions = prop_def(DenseArrayBase)
    producer_dependency_per_consumer = opt_prop_def(AffineSetAttr)
    result = result_def(TensorType)

    def __init__(
        self,
        future: SSAValue,
        consumers: AffineSetAttr,
        split_dimensions: list[int],
        concat_dimensions: list[int],
        result_type: TensorType,
        dependency: AffineSetAttr | None = None,
    ) -> None:
        """Every producer's partial split over one axis list and reassembled over the other."""
        axes = {"split_dimensions": split_dimensions, "concat_dimensions": concat_dimensions}
        super().__init__(
            operands=[future], properties=_properties(consumers, axes, dependency), result_types=[result_type]
        )


@irdl_op_definition
class InterTileReduceScatterOp(PlacedDeliveryOp):
    """Each consumer receives its part of its group's partials combined by the region."""

    name = "ktdp.inter_tile_reduce_scatter"
    AXES: ClassVar[tuple[str, ...]] = ("scatter_dimensions",)
    FOLDS: ClassVar[bool] = True
    future = operand_def(TileFutureType)
    identity = var_operand_def(TensorType)
    consumer_tiles_per_group = prop_def(AffineSetAttr)
    scatter_dimensions = prop_def(DenseArrayBase)
    producer_dependency_per_consumer = opt_prop_def(AffineSetAttr)
    combiner = region_def("single_block")
    result = result_def(TensorType)

    def __init__(
        self,
        future: SSAValue,
        consumers: AffineSetAttr,
        scatter_dimensions: list[int],
        identity: SSAValue,
        combiner: Region,
        result_type: TensorType,
        dependency: AffineSetAttr | None = None,
    ) -> None:
        """The partials combined by `combiner` from `identity`, split over `scatter_dimensions`."""
        super().__init__(
            operands=[future, [identity]],
            properties=_properties(consumers, {"scatter_dimensions": scatter_dimensions}, dependency),
            result_types=[result_type],
            regions=[combiner],
        )


PLACED_DELIVERY_OPS = (InterTileGatherOp, InterTileScatterOp, InterTileAllToAllOp, InterTileReduceScatterOp)
"""The deliveries that place pieces."""

__all__ = [
    "PLACED_DELIVERY_OPS",
    "InterTileAllToAllOp",
    "InterTileGatherOp",
    "InterTileReduceScatterOp",
    "InterTileScatterOp",
    "PlacedDeliveryOp",
    "axes_of",
]
