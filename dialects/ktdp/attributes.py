"""
The attributes and types of RFC 0682's `ktdp` dialect: memory spaces (`#ktdp.memory_space`),
access tiles (`!ktdp.access_tile`) and tile futures (`!ktdp.tile_future`). The ops build on this
module; it imports only the shared syntax helpers of `ktir.dialects.ktdp.syntax` and the
future group sets' aliases of `ktir.dialects.ktdp.aliases`.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import DYNAMIC_INDEX, AffineSetAttr, ArrayAttr, IndexType, IntAttr, StringAttr
from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from ktir.dialects.ktdp.syntax import kind_and_core_text, parse_kind_and_core, print_affine


@irdl_attr_definition
class MemorySpaceAttr(ParametrizedAttribute):
    """
    Where a memory view lives: `#ktdp.memory_space<global>` (device memory) or
    `#ktdp.memory_space<ct_local, ct_id = 3>` (compute tile 3's scratchpad); `ct_id` is only for
    `ct_local`, non-negative, and -1 (not printed) leaves it unset.
    """

    name = "ktdp.memory_space"
    kind: StringAttr
    ct_id: IntAttr

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        return parse_kind_and_core(parser, "ct_id")

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(kind_and_core_text(self.kind, self.ct_id, "ct_id"))

    def verify(self) -> None:
        if self.kind.data not in ("global", "ct_local"):
            raise VerifyException(f"memory space must be 'global' or 'ct_local', not '{self.kind.data}'")
        if self.ct_id.data == -1:
            return
        if self.kind.data != "ct_local":
            raise VerifyException(
                f"ct_id is only valid for the ct_local memory space, not '{self.kind.data}'"
            )
        if self.ct_id.data < 0:
            raise VerifyException(f"ct_id must be non-negative, but got: {self.ct_id.data}")


@irdl_attr_definition
class AccessTileType(ParametrizedAttribute, TypeAttribute):
    """
    `!ktdp.access_tile<16x64xindex>`: the shape of a set of coordinates (`?` for a size known
    at run time); the element type is always `index`.
    """

    name = "ktdp.access_tile"
    shape: ArrayAttr[IntAttr]
    element_type: Attribute

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[ArrayAttr[IntAttr], Attribute]:
        with parser.in_angle_brackets():
            pos = parser.pos
            shape, element = parser.parse_ranked_shape()
            if not isinstance(element, IndexType):
                parser.raise_error(f"tile element type must be 'index', but got: {element}", pos, parser.pos)
        return ArrayAttr(IntAttr(-1 if n == DYNAMIC_INDEX else n) for n in shape), element

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{_shape_text(self.get_shape())}index>")

    def get_shape(self) -> tuple[int, ...]:
        """The tile's extents, -1 for a dynamic one."""
        return tuple(n.data for n in self.shape.data)

    def verify(self) -> None:
        if not isinstance(self.element_type, IndexType):
            raise VerifyException(f"tile element type must be 'index', but got: {self.element_type}")
        if any(n < -1 for n in self.get_shape()):
            raise VerifyException("tile dimension size must be dynamic or >= 0")


def _shape_text(shape: Sequence[int]) -> str:
    return "".join(("?" if n == -1 else str(n)) + "x" for n in shape)


def parse_access_tile_type(parser: Parser) -> AccessTileType:
    """An access-tile type in full (`!ktdp.access_tile<...>`) or stripped (`<...>`)."""
    pos = parser.pos
    parsed = parser.parse_optional_type()
    if parsed is None:  # the stripped form
        return AccessTileType(*AccessTileType.parse_parameters(parser))
    if not isinstance(parsed, AccessTileType):
        parser.raise_error(f"expected an access tile type, not {parsed}", pos, parser.pos)
    return parsed


@irdl_attr_definition
class TileFutureType(ParametrizedAttribute, TypeAttribute):
    """`!ktdp.tile_future<(tensor<64xf32>), groups = affine_set<(g) : (g == 0)>>`: partials to come."""

    name = "ktdp.tile_future"
    types: ArrayAttr[Attribute]
    groups: AffineSetAttr

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        """
        Upstream's form, `<(T, ...), groups = S>`, or the inter-tile design document's,
        `<T, ..., S>` (the partial types, then the group set, `groups =` optional).
        """
        with parser.in_angle_brackets():
            if parser.parse_optional_punctuation("(") is None:
                return cls._parse_unparenthesized(parser)
            types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
            parser.parse_punctuation(")")
            parser.parse_punctuation(",")
            parser.parse_keyword("groups")
            parser.parse_punctuation("=")
            groups = parser.parse_attribute()
        return ArrayAttr(types), groups

    @staticmethod
    def _parse_unparenthesized(parser: AttrParser) -> Sequence[Attribute]:
        types: list[Attribute] = []
        while (partial := parser.parse_optional_type()) is not None:
            types.append(partial)
            parser.parse_punctuation(",")
        if not types:
            parser.raise_error("a tile future needs at least one partial type")
        if parser.parse_optional_keyword("groups"):
            parser.parse_punctuation("=")
        return ArrayAttr(types), parser.parse_attribute()

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<(")
        printer.print_list(self.types.data, printer.print_attribute)
        printer.print_string("), groups = ")
        print_affine(printer, self.groups)
        printer.print_string(">")
