"""
Upstream `arith` where xDSL's differs for KTIR programs: the integer casts of tensors. Upstream
KTIR kernels turn index tensors (tile ids, offsets) into integers and floats and back; xDSL's
`index_cast`, `sitofp`, `uitofp`, `fptosi`, `fptoui`, `extsi`, `extui` and `trunci` take scalars
only, and it has no `index_castui`.

```mlir
%i = arith.index_cast %ids : tensor<4xindex> to tensor<4xi32>
%f = arith.sitofp %i : tensor<4xi32> to tensor<4xf32>
%j = arith.index_castui %n : i32 to index
```

As upstream: the operand and the result are both scalars or both tensors of one shape, and
their element types are of the kinds the cast converts between (`CASTS`). `ArithExt` is xDSL's
`arith` dialect with these ops in place of its own.
"""

from __future__ import annotations

from types import UnionType
from typing import ClassVar

from xdsl.dialects import arith as xdsl_arith
from xdsl.dialects.builtin import AnyFloat, IndexType, IntegerType, TensorType
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, result_def, traits_def
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

_KINDS: dict[str, type | UnionType] = {
    "integer": IntegerType,
    "index": IndexType,
    "float": AnyFloat,
}


def _element_and_shape(type_: Attribute) -> tuple[Attribute, tuple[int, ...] | None]:
    """The element type and the shape (None for a scalar)."""
    if isinstance(type_, TensorType):
        return type_.element_type, tuple(type_.get_shape())
    return type_, None


def _of_kinds(element: Attribute, kinds: tuple[str, ...]) -> bool:
    return any(isinstance(element, _KINDS[kind]) for kind in kinds)


class ShapedCastOp(IRDLOperation):
    """
    A cast of a scalar or, element by element, of a tensor: `SOURCE` kinds to `TARGET` kinds
    (an `index` on one side needs an integer on the other).
    """

    SOURCE: ClassVar[tuple[str, ...]] = ()
    TARGET: ClassVar[tuple[str, ...]] = ()
    input = operand_def(IntegerType | IndexType | AnyFloat | TensorType)
    result = result_def(IntegerType | IndexType | AnyFloat | TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `to` type($result)"

    def __init__(self, input_arg: SSAValue | Operation, target_type: Attribute) -> None:
        """`input_arg` cast to `target_type`."""
        super().__init__(operands=[input_arg], result_types=[target_type])

    def verify_(self) -> None:
        source, source_shape = _element_and_shape(self.input.type)
        target, target_shape = _element_and_shape(self.result.type)
        if source_shape != target_shape:
            raise VerifyException(
                f"operand type '{self.input.type}' and result type '{self.result.type}' are not both "
                "scalars or tensors of one shape"
            )
        index_on_both = isinstance(source, IndexType) and isinstance(target, IndexType)
        if index_on_both or not (_of_kinds(source, self.SOURCE) and _of_kinds(target, self.TARGET)):
            raise VerifyException(
                f"operand type '{self.input.type}' and result type '{self.result.type}' are cast incompatible"
            )


INTEGER_OR_INDEX = ("integer", "index")


@irdl_op_definition
class IndexCastOp(ShapedCastOp):
    """Index to integer or back, sign-extending."""

    name = "arith.index_cast"
    SOURCE: ClassVar[tuple[str, ...]] = INTEGER_OR_INDEX
    TARGET: ClassVar[tuple[str, ...]] = INTEGER_OR_INDEX


@irdl_op_definition
class IndexCastUIOp(ShapedCastOp):
    """Index to integer or back, zero-extending."""

    name = "arith.index_castui"
    SOURCE: ClassVar[tuple[str, ...]] = INTEGER_OR_INDEX
    TARGET: ClassVar[tuple[str, ...]] = INTEGER_OR_INDEX


@irdl_op_definition
class SIToFPOp(ShapedCastOp):
    """Signed integer to float."""

    name = "arith.sitofp"
    SOURCE: ClassVar[tuple[str, ...]] = ("integer",)
    TARGET: ClassVar[tuple[str, ...]] = ("float",)


@irdl_op_definition
class UIToFPOp(ShapedCastOp):
    """Unsigned integer to float."""

    name = "arith.uitofp"
    SOURCE: ClassVar[tuple[str, ...]] = ("integer",)
    TARGET: ClassVar[tuple[str, ...]] = ("float",)


@irdl_op_definition
class FPToSIOp(ShapedCastOp):
    """Float to signed integer, rounding toward zero."""

    name = "arith.fptosi"
    SOURCE: ClassVar[tuple[str, ...]] = ("float",)
    TARGET: ClassVar[tuple[str, ...]] = ("integer",)


@irdl_op_definition
class FPToUIOp(ShapedCastOp):
    """Float to unsigned integer, rounding toward zero."""

    name = "arith.fptoui"
    SOURCE: ClassVar[tuple[str, ...]] = ("float",)
    TARGET: ClassVar[tuple[str, ...]] = ("integer",)


@irdl_op_definition
class ExtSIOp(ShapedCastOp):
    """A wider integer, sign-extending."""

    name = "arith.extsi"
    SOURCE: ClassVar[tuple[str, ...]] = ("integer",)
    TARGET: ClassVar[tuple[str, ...]] = ("integer",)


@irdl_op_definition
class ExtUIOp(ShapedCastOp):
    """A wider integer, zero-extending."""

    name = "arith.extui"
    SOURCE: ClassVar[tuple[str, ...]] = ("integer",)
    TARGET: ClassVar[tuple[str, ...]] = ("integer",)


@irdl_op_definition
class TruncIOp(ShapedCastOp):
    """A narrower integer, keeping the low bits."""

    name = "arith.trunci"
    SOURCE: ClassVar[tuple[str, ...]] = ("integer",)
    TARGET: ClassVar[tuple[str, ...]] = ("integer",)


CASTS = (IndexCastOp, IndexCastUIOp, SIToFPOp, UIToFPOp, FPToSIOp, FPToUIOp, ExtSIOp, ExtUIOp, TruncIOp)
"""The casts of scalars or tensors, in place of xDSL's scalar-only ones."""

ArithExt = Dialect(
    "arith",
    [
        *(op for op in xdsl_arith.Arith.operations if op.name not in {cast.name for cast in CASTS}),
        *CASTS,
    ],
    list(xdsl_arith.Arith.attributes),
)
"""xDSL's `arith` with the casts of `CASTS`."""


__all__ = [
    "CASTS",
    "ArithExt",
    "ExtSIOp",
    "ExtUIOp",
    "FPToSIOp",
    "FPToUIOp",
    "IndexCastOp",
    "IndexCastUIOp",
    "SIToFPOp",
    "ShapedCastOp",
    "TruncIOp",
    "UIToFPOp",
]
