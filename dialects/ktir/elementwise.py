"""
Graph-level elementwise ops of the `ktir` dialect: unary, binary with broadcasting, `where`,
`clamp`, `pow`, dtype conversion and constants.

Graph-level ops work on builtin ranked tensors with static host shapes. The layout
(`#ktir.tiled` encoding) is added later by layout propagation, so verifiers compare shapes and
element types and ignore encodings. Each op is the functional meaning the reference executor
(`ktir.reference`) implements: fp16 tensors are computed in fp32 and rounded once per op.
"""

from __future__ import annotations

import math
import struct
from abc import ABC
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    BFloat16Type,
    Float8E4M3FNType,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    Signedness,
    StringAttr,
    TensorType,
    f64,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.lexer import Span

from ktir.dialects.ktir.attributes import FLOAT_TYPES, require_fits_device
from ktir.layout.shapes import ShapeError, broadcast_shapes
from ktir.layout.tiled import MAX_HOST_RANK

#### Element-type and shape helpers shared by all graph ops ####


def is_float(element_type: Attribute) -> bool:
    """True for the floating-point element types graph ops compute on (f16, bf16, f32, f64)."""
    return isinstance(element_type, FLOAT_TYPES)


def is_fp8(element_type: Attribute) -> bool:
    """
    True for `f8E4M3FN`: a storage type (fp8 weights and their quantized activations, 128 to a
    stick) that graph ops move and convert, and that `ktir.matmul` multiplies into f16.
    """
    return isinstance(element_type, Float8E4M3FNType)


def is_bool(element_type: Attribute) -> bool:
    """True for `i1`, the element type of masks and comparison results."""
    return isinstance(element_type, IntegerType) and element_type.width.data == 1


def tensor_of(value: SSAValue | Attribute, what: str) -> TensorType[Attribute]:
    """The ranked tensor type of `value` (or the type itself); a `VerifyException` otherwise."""
    value_type = value if isinstance(value, Attribute) else value.type
    if not isinstance(value_type, TensorType):
        raise VerifyException(f"{what} must be a ranked tensor, not {value_type}")
    if any(size < 0 for size in value_type.get_shape()):
        raise VerifyException(f"{what} must have a static shape (graph-level ktir has no dynamic dims)")
    if (rank := value_type.get_num_dims()) > MAX_HOST_RANK:
        raise VerifyException(
            f"{what} has rank {rank}; Spyre layouts hold tensors of rank at most {MAX_HOST_RANK}"
        )
    if not is_supported_element(value_type.element_type):
        raise VerifyException(
            f"{what} has element type {value_type.element_type}; graph-level ktir supports "
            "f16, bf16, f32, f64, f8E4M3FN and signless i1, i8, i16, i32, i64"
        )
    require_fits_device(value_type, what)
    return value_type


def is_supported_element(element_type: Attribute) -> bool:
    """The element types graph ops (and the reference executor) handle."""
    if isinstance(element_type, FLOAT_TYPES) or is_fp8(element_type):
        return True
    return (
        isinstance(element_type, IntegerType)
        and element_type.signedness.data == Signedness.SIGNLESS
        and element_type.width.data in (1, 8, 16, 32, 64)
    )


def is_compute_scalar(scalar: SSAValue, tensor: SSAValue) -> bool:
    """
    True when `scalar` is a size-1 f32 operand next to an f16/bf16 `tensor`: a Python scalar
    kept at compute precision, as PyTorch's kernels keep it (`x_f16 * 0.1` multiplies by the
    fp32 value 0.1 and rounds once).
    """
    scalar_type, tensor_type = tensor_of(scalar, "scalar"), tensor_of(tensor, "tensor")
    return (
        math.prod(scalar_type.get_shape()) == 1
        and isinstance(scalar_type.element_type, Float32Type)
        and isinstance(tensor_type.element_type, Float16Type | BFloat16Type)
    )


def checked_shape(value: SSAValue | Attribute, what: str) -> tuple[int, ...]:
    """The static shape of a tensor-typed `value`; a `VerifyException` naming `what` if it is not one."""
    return tuple(tensor_of(value, what).get_shape())


def require_float(value: SSAValue, what: str, op_name: str) -> None:
    """Ops with transcendental or fractional results are defined on floating-point tensors only."""
    element_type = tensor_of(value, what).element_type
    if not is_float(element_type):
        raise VerifyException(f"{op_name} needs a floating-point {what}, not {element_type}")


def require_same_element_type(values: Sequence[tuple[SSAValue, str]]) -> Attribute:
    """All `values` share one element type (the importer inserts `ktir.convert` for promotion)."""
    first_value, first_what = values[0]
    element_type = tensor_of(first_value, first_what).element_type
    for value, what in values[1:]:
        other = tensor_of(value, what).element_type
        if other != element_type:
            raise VerifyException(
                f"{what} has element type {other} but {first_what} has {element_type}: "
                "operands must share one element type"
            )
    return element_type


def require_shape(result: SSAValue, expected: Sequence[int], rule: str) -> None:
    """The result shape must be the one the shape rule computes."""
    actual = checked_shape(result, "result")
    if actual != tuple(expected):
        raise VerifyException(f"result shape {list(actual)} does not match {rule} {list(expected)}")


def require_like_input(op: IRDLOperation) -> None:
    """
    The result has the input's shape and element type. Its layout encoding may differ: which
    layouts an op may combine is the layout legality check's concern (`ktir.planning.rules`),
    so that layout propagation can choose them one value at a time.
    """
    source = tensor_of(op.operands[0], "input")
    require_shape(op.results[0], source.get_shape(), "the input shape")
    require_element_type(op.results[0], source.element_type, "the input's")


def require_element_type(result: SSAValue, expected: Attribute, why: str) -> None:
    """The result element type must be `expected`; `why` names the rule."""
    actual = tensor_of(result, "result").element_type
    if actual != expected:
        raise VerifyException(f"result element type {actual} must be {expected} ({why})")


#### Unary ####


class UnaryOp(IRDLOperation, ABC):
    """
    Base of the elementwise unary ops: one tensor in, a tensor of the same shape and element
    type out (its layout may differ).
    """

    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    FLOAT_ONLY: ClassVar[bool] = False

    def __init__(self, input: SSAValue | Operation, properties: dict[str, Attribute] | None = None) -> None:
        value = SSAValue.get(input)
        super().__init__(operands=[value], result_types=[value.type], properties=properties or {})

    def verify_(self) -> None:
        tensor = tensor_of(self.input, "input")
        require_like_input(self)
        if self.FLOAT_ONLY:
            require_float(self.input, "input", self.name)
        elif is_bool(tensor.element_type):
            raise VerifyException(f"{self.name} is not defined on i1 tensors")


@irdl_op_definition
class AbsOp(UnaryOp):
    """`|x|` elementwise."""

    name = "ktir.abs"


@irdl_op_definition
class NegOp(UnaryOp):
    """`-x` elementwise."""

    name = "ktir.neg"


@irdl_op_definition
class ExpOp(UnaryOp):
    """`e^x` elementwise."""

    name = "ktir.exp"
    FLOAT_ONLY: ClassVar[bool] = True


@irdl_op_definition
class LogOp(UnaryOp):
    """Natural logarithm elementwise."""

    name = "ktir.log"
    FLOAT_ONLY: ClassVar[bool] = True


@irdl_op_definition
class SqrtOp(UnaryOp):
    """Square root elementwise."""

    name = "ktir.sqrt"
    FLOAT_ONLY: ClassVar[bool] = True


@irdl_op_definition
class RsqrtOp(UnaryOp):
    """`1 / sqrt(x)` elementwise."""

    name = "ktir.rsqrt"
    FLOAT_ONLY: ClassVar[bool] = True


@irdl_op_definition
class ReciprocalOp(UnaryOp):
    """`1 / x` elementwise."""

    name = "ktir.reciprocal"
    FLOAT_ONLY: ClassVar[bool] = True


@irdl_op_definition
class SigmoidOp(UnaryOp):
    """`1 / (1 + e^-x)` elementwise."""

    name = "ktir.sigmoid"
    FLOAT_ONLY: ClassVar[bool] = True


@irdl_op_definition
class TanhOp(UnaryOp):
    """Hyperbolic tangent elementwise."""

    name = "ktir.tanh"
    FLOAT_ONLY: ClassVar[bool] = True


@irdl_op_definition
class ReluOp(UnaryOp):
    """`max(x, 0)` elementwise."""

    name = "ktir.relu"


@irdl_op_definition
class GeluOp(UnaryOp):
    """
    GELU elementwise: `x * Phi(x)` (erf form), or the tanh approximation when
    `approximate = "tanh"` (PyTorch's `approximate` argument; `"none"` is the default).
    """

    name = "ktir.gelu"
    FLOAT_ONLY: ClassVar[bool] = True
    approximate = opt_prop_def(StringAttr)

    def verify_(self) -> None:
        super().verify_()
        if self.approximate is not None and self.approximate.data not in ("none", "tanh"):
            raise VerifyException(f'approximate must be "none" or "tanh", not "{self.approximate.data}"')


@irdl_op_definition
class SiluOp(UnaryOp):
    """`x * sigmoid(x)` elementwise."""

    name = "ktir.silu"
    FLOAT_ONLY: ClassVar[bool] = True


@irdl_op_definition
class SoftplusOp(UnaryOp):
    """
    `log(1 + e^(beta*x)) / beta`, and `x` where `beta*x > threshold` (PyTorch's definition).
    `beta` defaults to 1 and `threshold` to 20.
    """

    name = "ktir.softplus"
    FLOAT_ONLY: ClassVar[bool] = True
    beta = opt_prop_def(FloatAttr[Float64Type])
    threshold = opt_prop_def(FloatAttr[Float64Type])

    def verify_(self) -> None:
        super().verify_()
        if self.beta is not None and self.beta.value.data == 0.0:
            raise VerifyException("beta must be non-zero")


@irdl_op_definition
class FloorOp(UnaryOp):
    """Round down to an integer value elementwise (identity on integer tensors)."""

    name = "ktir.floor"


@irdl_op_definition
class SquareOp(UnaryOp):
    """`x * x` elementwise."""

    name = "ktir.square"


@irdl_op_definition
class CeilOp(UnaryOp):
    """Round up to an integer value elementwise (identity on integer tensors)."""

    name = "ktir.ceil"


@irdl_op_definition
class SignOp(UnaryOp):
    """`-1`, `0` or `1` by the sign of `x` elementwise; NaN and `-0` give `0`, as in PyTorch."""

    name = "ktir.sign"


@irdl_op_definition
class Log1pOp(UnaryOp):
    """`log(1 + x)` elementwise, accurate for small `x`."""

    name = "ktir.log1p"
    FLOAT_ONLY: ClassVar[bool] = True


@irdl_op_definition
class CosOp(UnaryOp):
    """Cosine elementwise (radians)."""

    name = "ktir.cos"
    FLOAT_ONLY: ClassVar[bool] = True


@irdl_op_definition
class SinOp(UnaryOp):
    """Sine elementwise (radians)."""

    name = "ktir.sin"
    FLOAT_ONLY: ClassVar[bool] = True


@irdl_op_definition
class ErfOp(UnaryOp):
    """The error function elementwise."""

    name = "ktir.erf"
    FLOAT_ONLY: ClassVar[bool] = True


@irdl_op_definition
class Expm1Op(UnaryOp):
    """`e^x - 1` elementwise, accurate for small `x`."""

    name = "ktir.expm1"
    FLOAT_ONLY: ClassVar[bool] = True


class FloatClassOp(IRDLOperation, ABC):
    """
    Base of the floating-point class tests: a float tensor in, an `i1` tensor of the same
    shape out (PyTorch's `isinf`, `isnan`, `isfinite`).
    """

    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        require_float(self.input, "input", self.name)
        require_shape(self.result, checked_shape(self.input, "input"), "the input shape")
        result_type = tensor_of(self.result, "result").element_type
        if not is_bool(result_type):
            raise VerifyException(f"result element type {result_type} must be i1")


@irdl_op_definition
class IsInfOp(FloatClassOp):
    """True where `x` is `+inf` or `-inf`."""

    name = "ktir.isinf"


@irdl_op_definition
class IsNanOp(FloatClassOp):
    """True where `x` is NaN."""

    name = "ktir.isnan"


@irdl_op_definition
class IsFiniteOp(FloatClassOp):
    """True where `x` is neither infinite nor NaN."""

    name = "ktir.isfinite"


@irdl_op_definition
class LogicalNotOp(IRDLOperation):
    """`x == 0` elementwise, giving an `i1` tensor of the same shape."""

    name = "ktir.logical_not"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        require_shape(self.result, checked_shape(self.input, "input"), "the input shape")
        result_type = tensor_of(self.result, "result").element_type
        if not is_bool(result_type):
            raise VerifyException(f"result element type {result_type} must be i1")


@irdl_op_definition
class ConvertOp(IRDLOperation):
    """
    Element type conversion with PyTorch's semantics (round to nearest even between floats,
    truncation toward zero from float to integer, non-zero to `i1` as true). Same shape.
    """

    name = "ktir.convert"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        require_shape(self.result, checked_shape(self.input, "input"), "the input shape")


#### Binary with broadcasting ####


class BinaryOp(IRDLOperation, ABC):
    """
    Base of the broadcasting binary ops: operands share an element type, the result shape is
    their NumPy broadcast, and the result element type is theirs (`i1` for comparisons).
    """

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)"

    IS_COMPARISON: ClassVar[bool] = False
    FLOAT_ONLY: ClassVar[bool] = False
    NO_BOOL: ClassVar[bool] = False
    ARITHMETIC: ClassVar[bool] = False

    def _operand_element_type(self) -> Attribute:
        """The shared element type; arithmetic ops also take an f32 scalar next to f16/bf16."""
        if self.ARITHMETIC and is_compute_scalar(self.rhs, self.lhs):
            return tensor_of(self.lhs, "lhs").element_type
        if self.ARITHMETIC and is_compute_scalar(self.lhs, self.rhs):
            return tensor_of(self.rhs, "rhs").element_type
        return require_same_element_type([(self.lhs, "lhs"), (self.rhs, "rhs")])

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation, result_type: Attribute) -> None:
        super().__init__(operands=[lhs, rhs], result_types=[result_type])

    def verify_(self) -> None:
        element_type = self._operand_element_type()
        try:
            shape = broadcast_shapes(checked_shape(self.lhs, "lhs"), checked_shape(self.rhs, "rhs"))
        except ShapeError as error:
            raise VerifyException(str(error)) from error
        require_shape(self.result, shape, "the broadcast shape")
        if self.FLOAT_ONLY and not is_float(element_type):
            raise VerifyException(f"{self.name} needs floating-point operands, not {element_type}")
        if self.NO_BOOL and is_bool(element_type):
            raise VerifyException(f"{self.name} is not defined on i1 tensors (as in PyTorch)")
        if self.IS_COMPARISON:
            result_type = tensor_of(self.result, "result").element_type
            if not is_bool(result_type):
                raise VerifyException(f"result element type {result_type} must be i1 (a comparison)")
        else:
            require_element_type(self.result, element_type, "the operands' element type")


@irdl_op_definition
class AddOp(BinaryOp):
    """`lhs + rhs` with broadcasting."""

    name = "ktir.add"
    ARITHMETIC: ClassVar[bool] = True


@irdl_op_definition
class SubOp(BinaryOp):
    """`lhs - rhs` with broadcasting."""

    name = "ktir.sub"
    ARITHMETIC: ClassVar[bool] = True
    NO_BOOL: ClassVar[bool] = True


@irdl_op_definition
class MulOp(BinaryOp):
    """`lhs * rhs` with broadcasting."""

    name = "ktir.mul"
    ARITHMETIC: ClassVar[bool] = True


@irdl_op_definition
class DivOp(BinaryOp):
    """`lhs / rhs` (true division) with broadcasting, on floating-point tensors."""

    name = "ktir.div"
    ARITHMETIC: ClassVar[bool] = True
    FLOAT_ONLY: ClassVar[bool] = True


@irdl_op_definition
class MaximumOp(BinaryOp):
    """Elementwise maximum with broadcasting (NaN propagates, as in PyTorch)."""

    name = "ktir.maximum"


@irdl_op_definition
class MinimumOp(BinaryOp):
    """Elementwise minimum with broadcasting (NaN propagates, as in PyTorch)."""

    name = "ktir.minimum"


@irdl_op_definition
class EqOp(BinaryOp):
    """`lhs == rhs` with broadcasting, giving `i1`."""

    name = "ktir.eq"
    IS_COMPARISON: ClassVar[bool] = True


@irdl_op_definition
class NeOp(BinaryOp):
    """`lhs != rhs` with broadcasting, giving `i1`."""

    name = "ktir.ne"
    IS_COMPARISON: ClassVar[bool] = True


@irdl_op_definition
class LtOp(BinaryOp):
    """`lhs < rhs` with broadcasting, giving `i1`."""

    name = "ktir.lt"
    IS_COMPARISON: ClassVar[bool] = True


@irdl_op_definition
class LeOp(BinaryOp):
    """`lhs <= rhs` with broadcasting, giving `i1`."""

    name = "ktir.le"
    IS_COMPARISON: ClassVar[bool] = True


@irdl_op_definition
class GtOp(BinaryOp):
    """`lhs > rhs` with broadcasting, giving `i1`."""

    name = "ktir.gt"
    IS_COMPARISON: ClassVar[bool] = True


@irdl_op_definition
class GeOp(BinaryOp):
    """`lhs >= rhs` with broadcasting, giving `i1`."""

    name = "ktir.ge"
    IS_COMPARISON: ClassVar[bool] = True


@irdl_op_definition
class LogicalAndOp(BinaryOp):
    """`(lhs != 0) and (rhs != 0)` with broadcasting, giving `i1`."""

    name = "ktir.logical_and"
    IS_COMPARISON: ClassVar[bool] = True


#### Pow, where, clamp ####


@irdl_op_definition
class FloorDivOp(BinaryOp):
    """
    `floor(lhs / rhs)` with broadcasting, on integer tensors (PyTorch's `//` and
    `div(rounding_mode="floor")` of integers; float floor division is `ktir.div` then
    `ktir.floor`). Example: `-7 // 2` is `-4`.
    """

    name = "ktir.floordiv"
    NO_BOOL: ClassVar[bool] = True

    def verify_(self) -> None:
        super().verify_()
        element_type = tensor_of(self.lhs, "lhs").element_type
        if not isinstance(element_type, IntegerType):
            raise VerifyException(f"ktir.floordiv needs integer operands, not {element_type}")


@irdl_op_definition
class PowfOp(BinaryOp):
    """
    `lhs ** rhs` with broadcasting, on floating-point tensors: PyTorch's `pow` with a tensor
    exponent, and with a scalar base (a size-1 `ktir.full` as `lhs`).
    """

    name = "ktir.powf"
    ARITHMETIC: ClassVar[bool] = True
    FLOAT_ONLY: ClassVar[bool] = True


@irdl_op_definition
class PowOp(IRDLOperation):
    """`x ** exponent` elementwise, with a constant (f64) exponent, on floating-point tensors."""

    name = "ktir.pow"
    input = operand_def(TensorType)
    exponent = prop_def(FloatAttr[Float64Type])
    result = result_def(TensorType)
    traits = traits_def(Pure())
    # Float properties print in the attribute dictionary, whose parser reads every value MLIR
    # prints (including hex for inf, NaN and large whole numbers); the inline form cannot.
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    def verify_(self) -> None:
        require_float(self.input, "input", self.name)
        require_like_input(self)


@irdl_op_definition
class WhereOp(IRDLOperation):
    """
    `condition ? lhs : rhs` elementwise; the three operands broadcast together, `condition`
    is `i1` and the branches share the result's element type.
    """

    name = "ktir.where"
    condition = operand_def(TensorType)
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$condition `,` $lhs `,` $rhs attr-dict `:` type($condition) `,` type($lhs) `,` type($rhs) "
        "`->` type($result)"
    )

    def verify_(self) -> None:
        condition_type = tensor_of(self.condition, "condition").element_type
        if not is_bool(condition_type):
            raise VerifyException(f"condition element type {condition_type} must be i1")
        element_type = require_same_element_type([(self.lhs, "lhs"), (self.rhs, "rhs")])
        try:
            shape = broadcast_shapes(
                checked_shape(self.condition, "condition"),
                checked_shape(self.lhs, "lhs"),
                checked_shape(self.rhs, "rhs"),
            )
        except ShapeError as error:
            raise VerifyException(str(error)) from error
        require_shape(self.result, shape, "the broadcast shape")
        require_element_type(self.result, element_type, "the branches' element type")


@irdl_op_definition
class ClampOp(IRDLOperation):
    """`min(max(x, min), max)` elementwise with constant bounds; at least one bound is given."""

    name = "ktir.clamp"
    input = operand_def(TensorType)
    min = opt_prop_def(FloatAttr[Float64Type])
    max = opt_prop_def(FloatAttr[Float64Type])
    result = result_def(TensorType)
    traits = traits_def(Pure())
    # Bounds print in the attribute dictionary (see PowOp).
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    def verify_(self) -> None:
        if self.min is None and self.max is None:
            raise VerifyException("clamp needs a min or a max bound")
        require_like_input(self)
        if is_bool(tensor_of(self.input, "input").element_type):
            raise VerifyException("ktir.clamp is not defined on i1 tensors")


#### Constants ####


@irdl_op_definition
class FullOp(IRDLOperation):
    """
    A tensor filled with one value (PyTorch's `full`, `zeros`, `ones`).

    The hardware has no immediate scalars: a scalar operand is a size-1 `ktir.full`
    (`tensor<1xf16>`) that broadcasts. The value is stored as f64 and converted to the result
    element type the way `ktir.convert` does; infinities and NaN print as hex, as in MLIR:

    ```mlir
    %c = ktir.full 1.250000e-01 : tensor<1xf16>
    %m = ktir.full 0xFFF0000000000000 : tensor<16x16xf16>
    ```
    """

    name = "ktir.full"
    value = prop_def(FloatAttr[Float64Type] | IntegerAttr[I64])
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, value: float | int, result_type: TensorType[Attribute]) -> None:
        # Integers stay exact (int64 values beyond 2**53 do not fit an f64); bools are 0 or 1.
        attr = IntegerAttr(int(value), i64) if isinstance(value, int) else FloatAttr(value, f64)
        super().__init__(properties={"value": attr}, result_types=[result_type])

    def verify_(self) -> None:
        element_type = tensor_of(self.result, "result").element_type
        if isinstance(self.value, IntegerAttr) and not isinstance(element_type, IntegerType):
            raise VerifyException(
                f"an integer value fills integer tensors only, not {element_type} "
                "(add a trailing dot, e.g. 1.0, or write the f64 bit pattern in hex)"
            )

    @classmethod
    def parse(cls, parser: Parser) -> FullOp:
        """
        Parse `value [attr-dict] : type`: a float, an f64 bit pattern in hex, or a decimal
        integer (integer tensors only).
        """
        negative = parser.parse_optional_punctuation("-") is not None
        start = parser.pos
        integer = parser.parse_optional_integer(allow_boolean=False, allow_negative=False)
        value: float | int
        if integer is not None and not Span(start, parser.pos, parser.lexer.input).text.startswith("0x"):
            value = -integer if negative else integer
            if not -(2**63) <= value < 2**63:
                parser.raise_error("integer value out of range for i64", start, parser.pos)
        elif integer is not None:
            literal = Span(start, parser.pos, parser.lexer.input).text.split()[0]
            if integer >= 2**64:
                parser.raise_error(
                    "hexadecimal float constant out of range for f64", start, start + len(literal)
                )
            bits = struct.unpack("<d", struct.pack("<Q", integer))[0]
            value = -bits if negative else bits
        else:
            value = parser.parse_float()
            value = -value if negative else value
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        result_type = parser.parse_type()
        op = cls(value, result_type)  # pyright: ignore[reportArgumentType]  # xDSL: parse_type gives an Attribute; the verifier checks it is a tensor
        op.attributes.update(attributes)
        return op

    def print(self, printer: Printer) -> None:
        """Print `value [attr-dict] : type`, the value with MLIR's lossless float printing."""
        printer.print_string(" ")
        if isinstance(self.value, IntegerAttr):
            printer.print_string(str(self.value.value.data))
        else:
            printer.print_float(self.value.value.data, f64)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)


POINTWISE: tuple[type[IRDLOperation], ...] = (
    UnaryOp,
    FloatClassOp,
    LogicalNotOp,
    ConvertOp,
    BinaryOp,
    PowOp,
    WhereOp,
    ClampOp,
)
"""The ops (and op bases) that compute each result element from the operand elements at its
index (NumPy broadcasting): one source for the layout rules, fusion, LX reuse and the simulator."""


ELEMENTWISE_OPS: list[type[IRDLOperation]] = [
    AbsOp,
    NegOp,
    ExpOp,
    LogOp,
    SqrtOp,
    RsqrtOp,
    ReciprocalOp,
    SigmoidOp,
    TanhOp,
    ReluOp,
    GeluOp,
    SiluOp,
    SoftplusOp,
    FloorOp,
    SquareOp,
    CeilOp,
    SignOp,
    Log1pOp,
    CosOp,
    SinOp,
    ErfOp,
    Expm1Op,
    IsInfOp,
    IsNanOp,
    IsFiniteOp,
    LogicalNotOp,
    ConvertOp,
    AddOp,
    SubOp,
    MulOp,
    DivOp,
    MaximumOp,
    MinimumOp,
    EqOp,
    NeOp,
    LtOp,
    LeOp,
    GtOp,
    GeOp,
    LogicalAndOp,
    FloorDivOp,
    PowfOp,
    PowOp,
    WhereOp,
    ClampOp,
    FullOp,
]
"""Every op defined in this file, in documentation order."""
