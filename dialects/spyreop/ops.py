"""
The ops of the `spyreop` dialect: Spyre's SFU intrinsics on scalars, as upstream KTIR's
producers write them inside `linalg.generic` bodies, and the stick-wide `slice_reduction`.

```mlir
%e = spyreop.exp %x : !spyreop.df16
%q = spyreop.realdiv %a, %b : f16
%s = spyreop.softplus %x beta 2.000000e-01 threshold 1.000000e-01 : f16
%m, %sq = spyreop.exx2 %x : f32
%p = spyreop.exx2_fused %x : f16 -> !spyreop.fp16_fused
%c = spyreop.compare <greaterthan> %a, %b : f32
%r = spyreop.select %c, %a, %b : f32
%a2 = spyreop.idx32toaddr %i base %b stride %s
%t = spyreop.slice_reduction %v {reduction_kind = #spyreop.reduction_kind<add>,
       reduction_scope = #spyreop.reduction_scope<in_slice>} : tensor<64xf16> -> tensor<64xf16>
```

A float intrinsic's operands and results share one type: f16, `!spyreop.df16` or f32 (`gelu`
and `softplus`: f16 or df16); the integer ones take i32 (`addi64toi64`: i64). What each
computes, and which of them ktir runs, is in docs/ktdp.md ("The spyreop dialect").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import Float16Type, Float32Type, FloatAttr, IntegerType, TensorType, f32, i32
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from ktir.dialects.spyreop.types import (
    SCALAR_FLOATS,
    ComparePredicateAttr,
    DF16Type,
    ReductionKindAttr,
    ReductionScopeAttr,
    fused_pair_of,
    scalar_of_pair,
)

_TYPE_NAMES = {Float16Type: "f16", DF16Type: "!spyreop.df16", Float32Type: "f32"}


def _require_type(op: IRDLOperation, value: Attribute, allowed: Sequence[type[Attribute]], what: str) -> None:
    """A precise error when `value` (the type of `what`) is not one of `allowed`."""
    if isinstance(value, tuple(allowed)):
        return
    names = [_TYPE_NAMES[kind] for kind in allowed]
    expected = " or ".join(names) if len(names) < 3 else f"{', '.join(names[:-1])} or {names[-1]}"
    raise VerifyException(f"{what} must be {expected}, but got '{value}'")


class FloatIntrinsicOp(IRDLOperation):
    """A float intrinsic of one operand: operand and result of one type (`ALLOWED`)."""

    ALLOWED: ClassVar[tuple[type[Attribute], ...]] = SCALAR_FLOATS
    T: ClassVar = VarConstraint("T", AnyAttr())
    operand = operand_def(T)
    result = result_def(T)
    assembly_format = "operands attr-dict `:` type($result)"
    traits = traits_def(Pure())

    def __init__(self, operand: SSAValue) -> None:
        super().__init__(operands=[operand], result_types=[operand.type])

    def verify_(self) -> None:
        _require_type(self, self.operand.type, self.ALLOWED, "operand #0")


@irdl_op_definition
class ExpOp(FloatIntrinsicOp):
    """`exp(x)`."""

    name = "spyreop.exp"


@irdl_op_definition
class GeluOp(FloatIntrinsicOp):
    """GeLU, `x * CDF(x)` (f16 or df16)."""

    name = "spyreop.gelu"
    ALLOWED: ClassVar[tuple[type[Attribute], ...]] = (Float16Type, DF16Type)


@irdl_op_definition
class ReciprocalOp(FloatIntrinsicOp):
    """`1 / x`."""

    name = "spyreop.reciprocal"


@irdl_op_definition
class RsqrtOp(FloatIntrinsicOp):
    """`1 / sqrt(x)`."""

    name = "spyreop.rsqrt"


@irdl_op_definition
class SigmoidOp(FloatIntrinsicOp):
    """`1 / (1 + exp(-x))`."""

    name = "spyreop.sigmoid"


@irdl_op_definition
class SiluOp(FloatIntrinsicOp):
    """`x * sigmoid(x)`."""

    name = "spyreop.silu"


@irdl_op_definition
class SqrtOp(FloatIntrinsicOp):
    """`sqrt(x)`."""

    name = "spyreop.sqrt"


class SameTypeOperandsOp(IRDLOperation):
    """A float op whose operands and one result share one type (`realdiv`, `select`, ...)."""

    T: ClassVar = VarConstraint("T", AnyAttr())
    result = result_def(T)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        for index, operand in enumerate(self.operands):
            _require_type(self, operand.type, SCALAR_FLOATS, f"operand #{index}")


@irdl_op_definition
class RealDivOp(SameTypeOperandsOp):
    """`lhs / rhs`."""

    name = "spyreop.realdiv"
    lhs = operand_def(SameTypeOperandsOp.T)
    rhs = operand_def(SameTypeOperandsOp.T)
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($result)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue) -> None:
        super().__init__(operands=[lhs, rhs], result_types=[lhs.type])


@irdl_op_definition
class SelectOp(SameTypeOperandsOp):
    """`condition != 0 ? on_true : on_false`, the condition a float of the same type."""

    name = "spyreop.select"
    condition = operand_def(SameTypeOperandsOp.T)
    on_true = operand_def(SameTypeOperandsOp.T)
    on_false = operand_def(SameTypeOperandsOp.T)
    assembly_format = "$condition `,` $on_true `,` $on_false attr-dict `:` type($result)"


@irdl_op_definition
class CompareOp(SameTypeOperandsOp):
    """`lhs <predicate> rhs` as 1.0 (true) or 0.0 (false) of the operands' type."""

    name = "spyreop.compare"
    predicate = prop_def(ComparePredicateAttr)
    lhs = operand_def(SameTypeOperandsOp.T)
    rhs = operand_def(SameTypeOperandsOp.T)

    @classmethod
    def parse(cls, parser: Parser) -> CompareOp:
        predicate = ComparePredicateAttr(ComparePredicateAttr.parse_parameter(parser))
        lhs = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        rhs = parser.parse_unresolved_operand()
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        operand_type = parser.parse_type()
        lhs_value, rhs_value = (parser.resolve_operand(v, operand_type) for v in (lhs, rhs))
        return cls.create(
            operands=[lhs_value, rhs_value],
            result_types=[operand_type],
            properties={"predicate": predicate},
            attributes=attributes,
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        self.predicate.print_parameter(printer)
        printer.print_string(" ")
        printer.print_list(self.operands, printer.print_operand)
        printer.print_op_attributes(self.attributes)
        printer.print_string(f" : {self.result.type}")


@irdl_op_definition
class LayerNormScaleOp(SameTypeOperandsOp):
    """The scaling part of a LayerNorm from a mean (`operand`) and a mean of squares."""

    name = "spyreop.layernormscale"
    operand = operand_def(SameTypeOperandsOp.T)
    squares = operand_def(SameTypeOperandsOp.T)
    assembly_format = "$operand `squares` $squares attr-dict `:` type($result)"


@irdl_op_definition
class LayerNormNormOp(SameTypeOperandsOp):
    """The normalising part of a LayerNorm: the value, mean of squares, scale, weight and bias."""

    name = "spyreop.layernormnorm"
    operand = operand_def(SameTypeOperandsOp.T)
    squares = operand_def(SameTypeOperandsOp.T)
    scale = operand_def(SameTypeOperandsOp.T)
    weight = operand_def(SameTypeOperandsOp.T)
    bias = operand_def(SameTypeOperandsOp.T)
    assembly_format = (
        "$operand `squares` $squares `scale` $scale `weight` $weight `bias` $bias attr-dict `:` type($result)"
    )


@irdl_op_definition
class Exx2Op(IRDLOperation):
    """A mean and a mean of squares, one result each, of the operand's type."""

    name = "spyreop.exx2"
    T: ClassVar = VarConstraint("T", AnyAttr())
    operand = operand_def(T)
    result = result_def(T)
    squares = result_def(T)
    assembly_format = "$operand attr-dict `:` type($result)"
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _require_type(self, self.operand.type, SCALAR_FLOATS, "operand #0")


@irdl_op_definition
class Exx2FusedOp(IRDLOperation):
    """A mean and a mean of squares held as one value of the operand's fused pair type."""

    name = "spyreop.exx2_fused"
    operand = operand_def()
    result = result_def()
    assembly_format = "$operand attr-dict `:` type($operand) `->` type($result)"
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _require_type(self, self.operand.type, SCALAR_FLOATS, "operand #0")
        expected = fused_pair_of(self.operand.type)
        if self.result.type != expected:
            raise VerifyException(f"result must be {expected} for a {self.operand.type} operand")


@irdl_op_definition
class LayerNormScaleFusedOp(IRDLOperation):
    """The scaling part of a LayerNorm from a fused mean and mean of squares."""

    name = "spyreop.layernormscale_fused"
    operand = operand_def()
    result = result_def()
    assembly_format = "$operand attr-dict `:` type($operand) `->` type($result)"
    traits = traits_def(Pure())

    def verify_(self) -> None:
        scalar = scalar_of_pair(self.operand.type)
        if scalar is None:
            raise VerifyException(f"operand #0 must be a fused pair type, but got '{self.operand.type}'")
        if self.result.type != scalar:
            raise VerifyException(f"result must be {scalar} for a {self.operand.type} operand")


@irdl_op_definition
class SoftplusOp(IRDLOperation):
    """`1/beta * log(1 + exp(beta * x))`, or `x` where `beta * x > threshold` (f16 or df16)."""

    name = "spyreop.softplus"
    T: ClassVar = VarConstraint("T", AnyAttr())
    operand = operand_def(T)
    result = result_def(T)
    beta = prop_def(FloatAttr)
    threshold = prop_def(FloatAttr)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _require_type(self, self.operand.type, (Float16Type, DF16Type), "operand #0")
        for name, value in (("beta", self.beta), ("threshold", self.threshold)):
            if value.type != f32:
                raise VerifyException(f"attribute '{name}' must be an f32 attribute")
        if self.beta.value.data == 0.0:
            raise VerifyException("attribute 'beta' must be non-zero")

    @classmethod
    def parse(cls, parser: Parser) -> SoftplusOp:
        operand = parser.parse_unresolved_operand()
        parser.parse_keyword("beta")
        beta = parser.parse_float()
        parser.parse_keyword("threshold")
        threshold = parser.parse_float()
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        result_type = parser.parse_type()
        return cls.create(
            operands=[parser.resolve_operand(operand, result_type)],
            result_types=[result_type],
            properties={"beta": FloatAttr(beta, f32), "threshold": FloatAttr(threshold, f32)},
            attributes=attributes,
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.operand)
        printer.print_string(" beta ")
        printer.print_float(self.beta.value.data, f32)
        printer.print_string(" threshold ")
        printer.print_float(self.threshold.value.data, f32)
        printer.print_op_attributes(self.attributes)
        printer.print_string(f" : {self.result.type}")


class IntegerIntrinsicOp(IRDLOperation):
    """An integer intrinsic of two operands of one integer type (`WIDTH` bits)."""

    WIDTH: ClassVar[int] = 32
    lhs = operand_def(IntegerType)
    rhs = operand_def(IntegerType)
    result = result_def(IntegerType)
    traits = traits_def(Pure())

    @classmethod
    def parse(cls, parser: Parser) -> IntegerIntrinsicOp:
        lhs = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        rhs = parser.parse_unresolved_operand()
        attributes = parser.parse_optional_attr_dict()
        integer = IntegerType(cls.WIDTH)
        operands = [parser.resolve_operand(value, integer) for value in (lhs, rhs)]
        return cls.create(operands=operands, result_types=[integer], attributes=attributes)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.operands, printer.print_operand)
        printer.print_op_attributes(self.attributes)

    def verify_(self) -> None:
        expected = IntegerType(self.WIDTH)
        for what, value in (("operand #0", self.lhs), ("operand #1", self.rhs), ("result", self.result)):
            if value.type != expected:
                raise VerifyException(f"{what} must be {expected}, but got '{value.type}'")


@irdl_op_definition
class AddI32Op(IntegerIntrinsicOp):
    """`lhs + rhs` on i32, wrapping."""

    name = "spyreop.addi32toi32"


@irdl_op_definition
class AddI64Op(IntegerIntrinsicOp):
    """`lhs + rhs` on i64, wrapping."""

    name = "spyreop.addi64toi64"
    WIDTH: ClassVar[int] = 64


@irdl_op_definition
class MulI32Op(IntegerIntrinsicOp):
    """`lhs * rhs` on i32, wrapping to 32 bits."""

    name = "spyreop.muli32toi32"


@irdl_op_definition
class Idx32ToAddrOp(IRDLOperation):
    """An address `base + stride * index`, all i32."""

    name = "spyreop.idx32toaddr"
    index = operand_def(i32)
    base = operand_def(i32)
    stride = operand_def(i32)
    result = result_def(i32)
    assembly_format = "$index `base` $base `stride` $stride attr-dict"
    traits = traits_def(Pure())


@irdl_op_definition
class SliceReductionOp(IRDLOperation):
    """
    A stick-wide reduction by `reduction_kind`: within each slice (`in_slice`, into the slice's
    first element) or across the slices (`across_slice`, into the first slice).
    """

    name = "spyreop.slice_reduction"
    operand = operand_def(TensorType)
    result = result_def(TensorType)
    reduction_kind = prop_def(ReductionKindAttr)
    reduction_scope = prop_def(ReductionScopeAttr)
    assembly_format = "$operand attr-dict `:` type($operand) `->` type($result)"
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        if self.operand.type != self.result.type:
            raise VerifyException(
                "requires the same type for all operands and results, "
                f"but got {self.operand.type} and {self.result.type}"
            )


SPYREOP_OPS: tuple[type[IRDLOperation], ...] = (
    AddI32Op,
    AddI64Op,
    CompareOp,
    ExpOp,
    Exx2FusedOp,
    Exx2Op,
    GeluOp,
    Idx32ToAddrOp,
    LayerNormNormOp,
    LayerNormScaleFusedOp,
    LayerNormScaleOp,
    MulI32Op,
    RealDivOp,
    ReciprocalOp,
    RsqrtOp,
    SelectOp,
    SigmoidOp,
    SiluOp,
    SliceReductionOp,
    SoftplusOp,
    SqrtOp,
)
"""Every op of the dialect."""
