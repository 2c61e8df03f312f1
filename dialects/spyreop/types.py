"""
Types and enumerations of the `spyreop` dialect: the `df16` float and the fused pairs, the
reduction kinds and scopes of `spyreop.slice_reduction`, and the predicates of `spyreop.compare`.

- `!spyreop.df16` is IBM's 16-bit float with 1 sign, 6 exponent and 9 mantissa bits, laid out as
  an IEEE-754 binary format with those parameters (`ktir.layout.df16` gives its numerics: bias
  31, largest finite value (2 - 2^-9) * 2^31, about 4.29e9).
- `!spyreop.fp16_fused`, `!spyreop.df16_fused`, `!spyreop.fp32_fused` hold two values of their
  scalar type as one, as `spyreop.exx2_fused` makes a mean and a mean of squares.
"""

from __future__ import annotations

from typing import Any

from xdsl.dialects.builtin import Float16Type, Float32Type
from xdsl.dialects.utils.enum_attribute import EnumAttribute
from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.str_enum import StrEnum


@irdl_attr_definition
class DF16Type(ParametrizedAttribute, TypeAttribute):
    """`!spyreop.df16`: IBM's 16-bit float, 1 sign, 6 exponent and 9 mantissa bits."""

    name = "spyreop.df16"


@irdl_attr_definition
class FP16FusedType(ParametrizedAttribute, TypeAttribute):
    """`!spyreop.fp16_fused`: two f16 values held as one."""

    name = "spyreop.fp16_fused"


@irdl_attr_definition
class DF16FusedType(ParametrizedAttribute, TypeAttribute):
    """`!spyreop.df16_fused`: two df16 values held as one."""

    name = "spyreop.df16_fused"


@irdl_attr_definition
class FP32FusedType(ParametrizedAttribute, TypeAttribute):
    """`!spyreop.fp32_fused`: two f32 values held as one."""

    name = "spyreop.fp32_fused"


SCALAR_FLOATS: tuple[type[Attribute], ...] = (Float16Type, DF16Type, Float32Type)
"""The element types of the float intrinsics: f16, df16 and f32."""


def fused_pair_of(scalar: Attribute) -> Attribute | None:
    """The fused type holding two `scalar`s (f16: `!spyreop.fp16_fused`); None if there is none."""
    if isinstance(scalar, Float16Type):
        return FP16FusedType()
    if isinstance(scalar, DF16Type):
        return DF16FusedType()
    if isinstance(scalar, Float32Type):
        return FP32FusedType()
    return None


def scalar_of_pair(fused: Attribute) -> Attribute | None:
    """The scalar type a fused type holds two of (`!spyreop.fp16_fused`: f16); None otherwise."""
    if isinstance(fused, FP16FusedType):
        return Float16Type()
    if isinstance(fused, DF16FusedType):
        return DF16Type()
    if isinstance(fused, FP32FusedType):
        return Float32Type()
    return None


class ReductionKind(StrEnum):
    """The operator of a `spyreop.slice_reduction`."""

    ADD = "add"
    SUB = "sub"
    MAX = "max"
    MIN = "min"
    MUL = "mul"
    ABS_MAX = "abs_max"


class ReductionScope(StrEnum):
    """Whether a `spyreop.slice_reduction` reduces within each slice or across the slices."""

    IN_SLICE = "in_slice"
    ACROSS_SLICE = "across_slice"


class ComparePredicate(StrEnum):
    """The comparison of a `spyreop.compare`."""

    EQUAL = "equal"
    NOT_EQUAL = "notequal"
    GREATER_THAN = "greaterthan"
    GREATER_EQUAL = "greaterequal"
    LESSER_THAN = "lesserthan"
    LESSER_EQUAL = "lesserequal"


class _AngleBracketed:
    """MLIR's `EnumAttr` syntax, `#dialect.name<value>` (xDSL's `EnumAttribute` prints it bare)."""

    def print_parameter(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            super().print_parameter(printer)  # pyright: ignore[reportAttributeAccessIssue]  # the EnumAttribute this is mixed into

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> Any:
        with parser.in_angle_brackets():
            return super().parse_parameter(parser)  # pyright: ignore[reportAttributeAccessIssue]  # the EnumAttribute this is mixed into


@irdl_attr_definition
class ReductionKindAttr(_AngleBracketed, EnumAttribute[ReductionKind]):
    """`#spyreop.reduction_kind<add>`."""

    name = "spyreop.reduction_kind"


@irdl_attr_definition
class ReductionScopeAttr(_AngleBracketed, EnumAttribute[ReductionScope]):
    """`#spyreop.reduction_scope<in_slice>`."""

    name = "spyreop.reduction_scope"


@irdl_attr_definition
class ComparePredicateAttr(_AngleBracketed, EnumAttribute[ComparePredicate]):
    """`<equal>` in `spyreop.compare <equal> %a, %b : f32`; `#spyreop.predicate<equal>` generic."""

    name = "spyreop.predicate"
