"""
Legacy spellings of `ktdp` that the reference dialect's tests still use (the RFC's own attributes
and types are in `ktir.dialects.ktdp.attributes`):

- `#ktdp.spyre_memory_space<HBM>` / `<LX, core = 7>` (kinds `unspecified`, `LX`, `HBM`, `L0`):
  the snapshot's memory space, which newer producers spell `#ktdp.memory_space<global>` and
  `<ct_local, ct_id = 7>`. HBM is device memory; LX and L0 with a core are that core's
  scratchpad.
- `!ktdp.runtime_arg<index, granularity=8, upperbound=512>`: a kernel argument known at run
  time, a multiple of `granularity` at most `upperbound`; `ktdp.runtime_arg_extract value from
  %arg : <index, granularity=8, upperbound=512> -> index` reads its value, granularity or bound.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from xdsl.dialects.builtin import AnyFloat, IndexType, IntAttr, IntegerType, NoneAttr, StringAttr
from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from ktir.dialects.ktdp.syntax import kind_and_core_text, parse_kind_and_core, print_attributes

SPYRE_KINDS = ("unspecified", "LX", "HBM", "L0")


@irdl_attr_definition
class SpyreMemorySpaceAttr(ParametrizedAttribute):
    """`#ktdp.spyre_memory_space<LX, core = 7>`: a kind and, for LX or L0, a core (-1: none)."""

    name = "ktdp.spyre_memory_space"
    kind: StringAttr
    core: IntAttr

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        return parse_kind_and_core(parser, "core")

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(kind_and_core_text(self.kind, self.core, "core"))

    def verify(self) -> None:
        if self.kind.data not in SPYRE_KINDS:
            raise VerifyException(
                f"expected ::mlir::ktdp::SpyreMemorySpaceKind to be one of: {', '.join(SPYRE_KINDS)}"
            )
        core = self.core.data
        if core == -1:
            return
        if core < 0:
            raise VerifyException(f"core affinity must be non-negative, but got: {core}")
        if self.kind.data not in ("LX", "L0"):
            raise VerifyException(
                f"core affinity is only valid for LX or L0 memory spaces, but got memory space "
                f"'{self.kind.data}' with core = {core}"
            )

    def placement(self) -> tuple[str, int]:
        """(`global` or `ct_local`, core) as the engine addresses it."""
        return (
            ("global", 0)
            if self.kind.data in ("HBM", "unspecified")
            else ("ct_local", max(self.core.data, 0))
        )


@irdl_attr_definition
class RuntimeArgType(ParametrizedAttribute, TypeAttribute):
    """`!ktdp.runtime_arg<index, granularity=8, upperbound=512>` (module docstring)."""

    name = "ktdp.runtime_arg"
    underlying: Attribute
    granularity: Attribute  # IntAttr, or NoneAttr when absent
    upperbound: Attribute

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        fields: dict[str, Attribute] = {"granularity": NoneAttr(), "upperbound": NoneAttr()}
        with parser.in_angle_brackets():
            underlying = parser.parse_type()
            while parser.parse_optional_punctuation(",") is not None:
                pos = parser.pos
                key = parser.parse_identifier()
                if key not in fields:
                    parser.raise_error("expected 'granularity' or 'upperbound' keyword", pos, parser.pos)
                if not isinstance(fields[key], NoneAttr):
                    parser.raise_error(f"duplicate '{key}' keyword", pos, parser.pos)
                parser.parse_punctuation("=")
                fields[key] = IntAttr(parser.parse_integer())
        return underlying, fields["granularity"], fields["upperbound"]

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        printer.print_attribute(self.underlying)
        for key in ("granularity", "upperbound"):
            value = getattr(self, key)
            if isinstance(value, IntAttr):
                printer.print_string(f", {key}={value.data}")
        printer.print_string(">")

    def verify(self) -> None:
        if not isinstance(self.underlying, (IndexType, IntegerType, AnyFloat)):
            raise VerifyException(
                f"runtime_arg underlying type must be a builtin type (index, integer, or float), but got: "
                f"{self.underlying}"
            )
        for key in ("granularity", "upperbound"):
            value = getattr(self, key)
            if isinstance(value, IntAttr) and value.data <= 0:
                raise VerifyException(f"runtime_arg {key} must be positive, but got: {value.data}")


_EXTRACT_KINDS = ("value", "granularity", "upperbound")


@irdl_op_definition
class RuntimeArgExtractOp(IRDLOperation):
    """`ktdp.runtime_arg_extract value|granularity|upperbound from %arg : <...> -> T`."""

    name = "ktdp.runtime_arg_extract"
    input = operand_def(RuntimeArgType)
    kind = prop_def(StringAttr)
    result = result_def()

    @classmethod
    def parse(cls, parser: Parser) -> RuntimeArgExtractOp:
        pos = parser.pos
        kind = parser.parse_identifier()
        if kind not in _EXTRACT_KINDS:
            parser.raise_error(
                f"expected ::mlir::ktdp::RuntimeArgExtractKind to be one of: {', '.join(_EXTRACT_KINDS)}", pos
            )
        parser.parse_keyword("from")
        operand = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        input_type = parser.parse_optional_type() or RuntimeArgType(*RuntimeArgType.parse_parameters(parser))
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation("->")
        result = parser.parse_type()
        return cls.build(
            operands=[parser.resolve_operand(operand, input_type)],
            properties={"kind": StringAttr(kind)},
            attributes=attributes,
            result_types=[result],
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.kind.data} from ")
        printer.print_operand(self.input)
        printer.print_string(" : ")
        cast(RuntimeArgType, self.input.type).print_parameters(printer)
        print_attributes(printer, self.attributes)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    def verify_(self) -> None:
        arg = self.input.type
        kind = self.kind.data
        assert isinstance(arg, RuntimeArgType)
        if kind == "value":
            if self.result.type != arg.underlying:
                raise VerifyException(
                    f"result type ({self.result.type}) must match runtime_arg underlying type "
                    f"({arg.underlying}) when extracting value"
                )
            return
        if not isinstance(getattr(arg, kind), IntAttr):
            raise VerifyException(f"cannot extract {kind} from runtime_arg that doesn't have one")
        if not isinstance(self.result.type, IndexType):
            raise VerifyException(
                f"result type must be index when extracting {kind}, but got {self.result.type}"
            )


__all__ = ["RuntimeArgExtractOp", "RuntimeArgType", "SpyreMemorySpaceAttr"]
