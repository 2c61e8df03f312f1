"""
The ops of RFC 0682's `ktdp` dialect: compute-tile ids, memory views, access tiles, loads and
stores, with the reference implementation's syntax and verifier messages (the dialect and an
example program: `ktir.dialects.ktdp`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AffineMapAttr,
    AffineSetAttr,
    ArrayAttr,
    DenseArrayBase,
    IndexType,
    IntAttr,
    IntegerType,
    MemRefType,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from ktir.dialects.ktdp.attributes import AccessTileType, MemorySpaceAttr, parse_access_tile_type
from ktir.dialects.ktdp.legacy import (
    SpyreMemorySpaceAttr,
)
from ktir.dialects.ktdp.syntax import affine_text, operand_text, parse_subscripts, print_attributes

DYNAMIC = DYNAMIC_INDEX
"""MLIR's `ShapedType::kDynamic` in `static_sizes` / `static_strides`: an SSA operand's place."""


@irdl_op_definition
class GetComputeTileIdOp(IRDLOperation):
    """The id of the compute tile running the program, one `index` per grid dim (1 to 3)."""

    name = "ktdp.get_compute_tile_id"
    ids = var_result_def(IndexType)
    traits = traits_def(Pure())
    assembly_format = "attr-dict `:` type($ids)"

    def __init__(self, grid_dims: int = 1) -> None:
        super().__init__(result_types=[[IndexType()] * grid_dims])

    def verify_(self) -> None:
        if not self.ids:
            raise VerifyException("must return at least one index (num tile-grid dims >= 1)")


def _parse_dynamic_index_list(parser: Parser) -> tuple[list[int], list[SSAValue]]:
    """MLIR's DynamicIndexList: `[64, %n, 1]` -> static values (DYNAMIC for SSA) and operands."""
    static: list[int] = []
    dynamic: list[SSAValue] = []

    def entry() -> None:
        if (operand := parser.parse_optional_unresolved_operand()) is not None:
            dynamic.append(parser.resolve_operand(operand, IndexType()))
            static.append(DYNAMIC)
        else:
            static.append(parser.parse_integer())

    parser.parse_comma_separated_list(parser.Delimiter.SQUARE, entry)
    return static, dynamic


def _ints(attr: DenseArrayBase) -> tuple[int, ...]:
    """The values of an `array<i64: ...>` property (xDSL types `get_values` only for a known element type)."""
    return cast("DenseArrayBase[IntegerType]", attr).get_values()


def _print_dynamic_index_list(printer: Printer, static: Sequence[int], dynamic: Sequence[SSAValue]) -> None:
    values = iter(dynamic)
    with printer.in_square_brackets():
        printer.print_list(
            static, lambda n: printer.print_operand(next(values)) if n == DYNAMIC else printer.print_int(n)
        )


@irdl_op_definition
class ConstructMemoryViewOp(IRDLOperation):
    """
    A strided view of memory at element `offset`: `sizes` and `strides` per dim (integers or
    SSA values), the `memory_space` it lives in and the `coordinate_set` of the global index
    space it covers. It allocates nothing and moves nothing. Upstream requires the set; ktir,
    as the peer interpreter ktir-cpu, reads a view without one as covering the full index space
    of its sizes (upstream's own description of the usual set), and prints none back.
    """

    name = "ktdp.construct_memory_view"
    offset = operand_def(IndexType)
    sizes = var_operand_def(IndexType)
    strides = var_operand_def(IndexType)
    static_sizes = prop_def(DenseArrayBase)
    static_strides = prop_def(DenseArrayBase)
    memory_space = prop_def(MemorySpaceAttr | SpyreMemorySpaceAttr)
    coordinate_set = opt_prop_def(AffineSetAttr)
    result = result_def(MemRefType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(Pure())

    def __init__(
        self,
        offset: SSAValue,
        sizes: Sequence[int],
        strides: Sequence[int],
        coordinate_set: AffineSetAttr,
        memory_space: MemorySpaceAttr,
        result_type: MemRefType,
    ) -> None:
        """A view of static `sizes` and `strides` (no SSA operands among them)."""
        super().__init__(
            operands=[offset, [], []],
            properties={
                "static_sizes": DenseArrayBase.from_list(i64, list(sizes)),
                "static_strides": DenseArrayBase.from_list(i64, list(strides)),
                "coordinate_set": coordinate_set,
                "memory_space": memory_space,
            },
            result_types=[result_type],
        )

    @classmethod
    def parse(cls, parser: Parser) -> ConstructMemoryViewOp:
        offset = parser.resolve_operand(parser.parse_unresolved_operand(), IndexType())
        parser.parse_punctuation(",")
        parser.parse_keyword("sizes")
        parser.parse_punctuation(":")
        static_sizes, sizes = _parse_dynamic_index_list(parser)
        parser.parse_punctuation(",")
        parser.parse_keyword("strides")
        parser.parse_punctuation(":")
        static_strides, strides = _parse_dynamic_index_list(parser)
        pos = parser.pos
        attributes = dict(parser.parse_optional_attr_dict())
        properties: dict[str, Attribute] = {
            "static_sizes": DenseArrayBase.from_list(i64, static_sizes),
            "static_strides": DenseArrayBase.from_list(i64, static_strides),
        }
        if "memory_space" not in attributes:
            parser.raise_error("requires attribute 'memory_space'", pos, parser.pos)
        if "coordinate_set" in attributes:  # optional (the class docstring), printed in this order
            properties["coordinate_set"] = attributes.pop("coordinate_set")
        properties["memory_space"] = attributes.pop("memory_space")
        parser.parse_punctuation(":")
        result = parser.parse_type()
        op = cls.build(
            operands=[offset, sizes, strides],
            properties=properties,
            attributes=attributes,
            result_types=[result],
        )
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.offset)
        printer.print_string(", sizes: ")
        _print_dynamic_index_list(printer, _ints(self.static_sizes), self.sizes)
        printer.print_string(", strides: ")
        _print_dynamic_index_list(printer, _ints(self.static_strides), self.strides)
        attributes = {**self.attributes, "memory_space": self.memory_space}
        if self.coordinate_set is not None:
            attributes["coordinate_set"] = self.coordinate_set
        print_attributes(printer, dict(sorted(attributes.items())))
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    def verify_(self) -> None:
        static_sizes, static_strides = _ints(self.static_sizes), _ints(self.static_strides)
        if len(static_sizes) != len(static_strides):
            raise VerifyException("static_sizes and static_strides must have equal length")
        if len(self.sizes) != sum(1 for n in static_sizes if n == DYNAMIC):
            raise VerifyException(
                "number of dynamic size operands does not match kDynamic entries in static_sizes"
            )
        if len(self.strides) != sum(1 for n in static_strides if n == DYNAMIC):
            raise VerifyException(
                "number of dynamic stride operands does not match kDynamic entries in static_strides"
            )
        if self.result.type.get_num_dims() != len(static_sizes):
            raise VerifyException("result memref rank does not match sizes/strides length")


@irdl_op_definition
class ConstructDistributedMemoryViewOp(IRDLOperation):
    """One logical memref over the union of its inputs' coordinate sets; moves nothing."""

    name = "ktdp.construct_distributed_memory_view"
    memrefs = var_operand_def(MemRefType)
    result = result_def(MemRefType)
    traits = traits_def(Pure())

    def __init__(self, memrefs: Sequence[SSAValue], result_type: MemRefType) -> None:
        super().__init__(operands=[memrefs], result_types=[result_type])

    @classmethod
    def parse(cls, parser: Parser) -> ConstructDistributedMemoryViewOp:
        parser.parse_punctuation("(")
        unresolved: list[UnresolvedOperand] = []
        types: list[Attribute] = []
        if parser.parse_optional_punctuation(")") is None:
            unresolved = parser.parse_comma_separated_list(
                parser.Delimiter.NONE, parser.parse_unresolved_operand
            )
            parser.parse_punctuation(":")
            types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
            parser.parse_punctuation(")")
        operands = parser.resolve_operands(unresolved, types, parser.pos)
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        return cls.build(operands=[operands], attributes=attributes, result_types=[parser.parse_type()])

    def print(self, printer: Printer) -> None:
        printer.print_string("(")
        if self.memrefs:
            printer.print_list(self.memrefs, printer.print_operand)
            printer.print_string(" : ")
            printer.print_list([v.type for v in self.memrefs], printer.print_attribute)
        printer.print_string(")")
        print_attributes(printer, self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    def verify_(self) -> None:
        result = self.result.type
        for value in self.memrefs:
            memref = cast(MemRefType, value.type)
            if memref.element_type != result.element_type:
                raise VerifyException("all input memrefs must have the same element type as the result")
            if memref.get_num_dims() != result.get_num_dims():
                raise VerifyException("all input memrefs must have the same rank as the result")


@irdl_op_definition
class ConstructAccessTileOp(IRDLOperation):
    """
    A set of coordinates into `base` (a memref or tensor), relative to `base_map(indices)`:
    the points of `access_tile_set`, enumerated in `access_tile_order`; `symbols(...)` bind the
    set's symbols (a tile sized at run time). Moves nothing.
    """

    name = "ktdp.construct_access_tile"
    base = operand_def(MemRefType | TensorType)
    indices = var_operand_def(IndexType)
    symbol_operands = var_operand_def(IndexType)
    base_map = prop_def(AffineMapAttr)
    access_tile_set = prop_def(AffineSetAttr)
    access_tile_order = prop_def(AffineMapAttr)
    result = result_def(AccessTileType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(Pure())

    def __init__(
        self,
        base: SSAValue,
        indices: Sequence[SSAValue],
        base_map: AffineMapAttr,
        access_tile_set: AffineSetAttr,
        access_tile_order: AffineMapAttr,
        shape: Sequence[int],
    ) -> None:
        """A tile of `shape` (the points of its set in `access_tile_order`) at `base_map(indices)`."""
        super().__init__(
            operands=[base, indices, []],
            properties={
                "base_map": base_map,
                "access_tile_set": access_tile_set,
                "access_tile_order": access_tile_order,
            },
            result_types=[AccessTileType(ArrayAttr(IntAttr(n) for n in shape), IndexType())],
        )

    @classmethod
    def parse(cls, parser: Parser) -> ConstructAccessTileOp:
        base = parser.parse_unresolved_operand()
        base_map, indices = parse_subscripts(parser)
        symbols: list[SSAValue] = []
        if parser.parse_optional_keyword("symbols") is not None:
            pos = parser.pos
            unresolved = parser.parse_comma_separated_list(
                parser.Delimiter.PAREN, parser.parse_unresolved_operand
            )
            symbols = [parser.resolve_operand(u, IndexType()) for u in unresolved] if unresolved else []
            if pos == parser.pos:
                parser.raise_error("Failed to parse symbol operands")
        pos = parser.pos
        attributes = dict(parser.parse_optional_attr_dict())
        tile_set = attributes.pop("access_tile_set", None)
        if not isinstance(tile_set, AffineSetAttr):
            parser.raise_error("Access tile set is missing in the operation", pos, parser.pos)
        if tile_set.data.num_dims != len(base_map.results):
            parser.raise_error("Access tile set and Base input dimensions should match", pos, parser.pos)
        if tile_set.data.num_symbols != len(symbols):
            parser.raise_error(
                f"access_tile_set has {tile_set.data.num_symbols} symbols but got {len(symbols)} "
                "symbol operands",
                pos,
                parser.pos,
            )
        order = attributes.pop("access_tile_order", None)
        if not isinstance(order, AffineMapAttr):
            parser.raise_error("Access tile order is missing in the operation", pos, parser.pos)
        if order.data.num_dims != len(order.data.results):
            parser.raise_error(
                "Number of input dimensions and output dimensions in the access tile order should match", pos
            )
        if len(order.data.results) != tile_set.data.num_dims:
            parser.raise_error(
                "Number of dimensions in the access tile order and access tile set must match!", pos
            )
        parser.parse_punctuation(":")
        base_type = parser.parse_type()
        parser.parse_punctuation("->")
        result = parser.parse_type()
        properties = {
            "base_map": AffineMapAttr(base_map),
            "access_tile_set": tile_set,
            "access_tile_order": order,
        }
        return cls.build(
            operands=[parser.resolve_operand(base, base_type), indices, symbols],
            properties=properties,
            attributes=attributes,
            result_types=[result],
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.base)
        printer.print_string("[")
        operands = [operand_text(printer, v) for v in self.indices]
        printer.print_string(", ".join(affine_text(e, operands) for e in self.base_map.data.results))
        printer.print_string("]")
        if self.symbol_operands:
            printer.print_string(" symbols(")
            printer.print_list(self.symbol_operands, printer.print_operand)
            printer.print_string(")")
        attributes = {
            **self.attributes,
            "access_tile_order": self.access_tile_order,
            "access_tile_set": self.access_tile_set,
        }
        print_attributes(printer, dict(sorted(attributes.items())))
        printer.print_string(" : ")
        printer.print_attribute(self.base.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    def verify_(self) -> None:
        tile_set, base_map, order = self.access_tile_set.data, self.base_map.data, self.access_tile_order.data
        if tile_set.num_dims != len(base_map.results):
            raise VerifyException(
                f"access_tile_set dimensions ({tile_set.num_dims}) must match base_map dims "
                f"({len(base_map.results)})"
            )
        if base_map.num_dims != len(self.indices):
            raise VerifyException(
                f"base_map expects {base_map.num_dims} operands but got {len(self.indices)}"
            )
        if tile_set.num_symbols != len(self.symbol_operands):
            raise VerifyException(
                f"access_tile_set has {tile_set.num_symbols} symbols but got "
                f"{len(self.symbol_operands)} symbol operands"
            )
        if order.num_dims != len(order.results):
            raise VerifyException(
                f"access_tile_order must have equal number of inputs ({order.num_dims}) and outputs "
                f"({len(order.results)})"
            )
        if len(order.results) != tile_set.num_dims:
            raise VerifyException(
                f"access_tile_order dimensions ({len(order.results)}) must match access_tile_set "
                f"dimensions ({tile_set.num_dims})"
            )
        rank = len(self.result.type.get_shape())
        if rank != tile_set.num_dims:
            raise VerifyException(
                f"result type rank ({rank}) must match access_tile_set dimensions ({tile_set.num_dims})"
            )


@irdl_op_definition
class LoadOp(IRDLOperation):
    """The elements at an access tile's coordinates, as a tensor of the tile's shape."""

    name = "ktdp.load"
    access_tile = operand_def(AccessTileType)
    result = result_def(TensorType)

    def __init__(self, access_tile: SSAValue, element_type: Attribute) -> None:
        """The tile's elements as a tensor of its shape and `element_type`."""
        shape = cast(AccessTileType, access_tile.type).get_shape()
        super().__init__(operands=[access_tile], result_types=[TensorType(element_type, shape)])

    @classmethod
    def parse(cls, parser: Parser) -> LoadOp:
        tile = parser.parse_unresolved_operand()
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        tile_type = parse_access_tile_type(parser)
        parser.parse_punctuation("->")
        result = parser.parse_type()
        return cls.build(
            operands=[parser.resolve_operand(tile, tile_type)], attributes=attributes, result_types=[result]
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.access_tile)
        print_attributes(printer, self.attributes)
        printer.print_string(" : ")
        cast(AccessTileType, self.access_tile.type).print_parameters(printer)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    def verify_(self) -> None:
        if tuple(self.result.type.get_shape()) != cast(AccessTileType, self.access_tile.type).get_shape():
            raise VerifyException("access tile shape must match result tensor shape")


@irdl_op_definition
class StoreOp(IRDLOperation):
    """Writes a tensor of the tile's shape to the access tile's coordinates."""

    name = "ktdp.store"
    data_tile = operand_def(TensorType)
    access_tile = operand_def(AccessTileType)

    def __init__(self, data_tile: SSAValue, access_tile: SSAValue) -> None:
        super().__init__(operands=[data_tile, access_tile])

    @classmethod
    def parse(cls, parser: Parser) -> StoreOp:
        data = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        tile = parser.parse_unresolved_operand()
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        data_type = parser.parse_type()
        parser.parse_punctuation(",")
        tile_type = parse_access_tile_type(parser)
        operands = [parser.resolve_operand(data, data_type), parser.resolve_operand(tile, tile_type)]
        return cls.build(operands=operands, attributes=attributes)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.data_tile)
        printer.print_string(", ")
        printer.print_operand(self.access_tile)
        print_attributes(printer, self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.data_tile.type)
        printer.print_string(", ")
        cast(AccessTileType, self.access_tile.type).print_parameters(printer)

    def verify_(self) -> None:
        access_tile = cast(AccessTileType, self.access_tile.type)
        if tuple(cast(TensorType, self.data_tile.type).get_shape()) != access_tile.get_shape():
            raise VerifyException("data tile shape must match access tile shape")
