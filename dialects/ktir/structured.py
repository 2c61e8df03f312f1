"""
Graph-level structured ops of the `ktir` dialect: matmul, reductions, the named compound ops
(softmax, layer_norm, rms_norm), views and data movement, `ktir.restickify` and
`ktir.cpu_fallback`.

As in `ktir.dialects.ktir.elementwise`, operands are builtin ranked tensors with static host shapes; the
verifiers check shapes and element types through the rules in `ktir.layout.shapes`.
"""

from __future__ import annotations

import re
from abc import ABC
from collections.abc import Callable, Sequence
from typing import ClassVar, TypeVar, cast

from xdsl.dialects.builtin import (
    I64,
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import IsolatedFromAbove, Pure
from xdsl.utils.exceptions import VerifyException

from ktir.dialects.ktir.attributes import device_dtype_of_element, operand_refs
from ktir.dialects.ktir.core import YieldOp
from ktir.dialects.ktir.elementwise import (
    checked_shape,
    is_bool,
    is_fp8,
    require_element_type,
    require_float,
    require_like_input,
    require_same_element_type,
    require_shape,
    tensor_of,
)
from ktir.layout import shapes
from ktir.layout.shapes import ShapeError

_R = TypeVar("_R")


def _shape_rule(function: Callable[..., _R], *args: object) -> _R:
    """Call a `ktir.layout.shapes` rule, turning its `ShapeError` into a `VerifyException`."""
    try:
        return function(*args)
    except ShapeError as error:
        raise VerifyException(str(error)) from error


def int_array(values: Sequence[int]) -> DenseArrayBase:
    """An `array<i64: ...>` property (printed `[0, 1]` in the custom form)."""
    return DenseArrayBase.from_list(i64, list(values))


def ints(attr: DenseArrayBase) -> tuple[int, ...]:
    """The integers of an `array<i64: ...>` property."""
    return tuple(int(v) for v in cast("DenseArrayBase[IntegerType]", attr).get_values())


#### Matmul ####


def padded_k(k: int, element_type: Attribute) -> int:
    """
    `k` rounded up to whole sticks of `element_type`'s device format (64 for f16, 32 for f32).

    Example: K = 67 in f16 pads to 128; K = 128 stays 128.
    """
    eps = device_dtype_of_element(element_type).elems_per_stick
    return -(-k // eps) * eps


class MatmulBase(IRDLOperation, ABC):
    """
    Base of `ktir.matmul` and `ktir.bmm`: `x @ y`, accumulated in fp32, same element type; or
    two f8E4M3FN operands giving their f32 accumulator (the PE arrays' fp8 mode, torch-spyre's
    `batchmatmulfp8`), which the scales then multiply: an fp8 product of 448s overflows fp16.

    After `ktir-pad-matmul`, y's K may be x's K rounded up to whole sticks: the extra rows are
    zero padding that the multiply-accumulate never reads (the reduction range stays x's K).
    """

    x = operand_def(TensorType)
    y = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$x `,` $y attr-dict `:` type($x) `,` type($y) `->` type($result)"

    RANKS: ClassVar[tuple[tuple[int, int], ...]] = ()

    def verify_(self) -> None:
        element_type = require_same_element_type([(self.x, "x"), (self.y, "y")])
        if not is_fp8(element_type):
            require_float(self.x, "x", self.name)
        x_shape, y_shape = checked_shape(self.x, "x"), checked_shape(self.y, "y")
        if (len(x_shape), len(y_shape)) not in self.RANKS:
            forms = ", ".join(f"{a}D x {b}D" for a, b in self.RANKS)
            raise VerifyException(f"{self.name} takes {forms}, not {len(x_shape)}D x {len(y_shape)}D")
        y_k = y_shape[-2]
        if y_k != x_shape[-1] and y_k == padded_k(x_shape[-1], element_type):
            y_shape = (*y_shape[:-2], x_shape[-1], y_shape[-1])  # y padded along K
        require_shape(self.result, _shape_rule(shapes.matmul_shape, x_shape, y_shape), "x @ y, which is")
        if is_fp8(element_type):  # fp8 x fp8 accumulates in fp32 (`batchmatmulfp8`), kept for its scales
            require_element_type(self.result, Float32Type(), "f32 (the accumulator) for fp8 operands")
            return
        require_element_type(self.result, element_type, "the operands' element type")


@irdl_op_definition
class MatmulOp(MatmulBase):
    """`[M, K] @ [K, N]` or `[B, M, K] @ [K, N]` (a shared weight): PyTorch's `mm` and `linear`."""

    name = "ktir.matmul"
    RANKS: ClassVar[tuple[tuple[int, int], ...]] = ((2, 2), (3, 2))


@irdl_op_definition
class BmmOp(MatmulBase):
    """Batched `x @ y`: `[B, M, K] @ [B, K, N]`, `[A, B, M, K] @ [A, B, K, N]` or `[B, M, K] @ [K, N]`."""

    name = "ktir.bmm"
    RANKS: ClassVar[tuple[tuple[int, int], ...]] = ((3, 3), (4, 4), (3, 2))


#### Reductions ####


class ReductionOp(IRDLOperation, ABC):
    """
    Base of the reductions over a list of dims (sorted, distinct); `keepdim` keeps them as
    size 1. The result has the input's element type.
    """

    input = operand_def(TensorType)
    dims = prop_def(DenseArrayBase.constr(I64))
    keepdim = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `dims` $dims (`keepdim` $keepdim^)? attr-dict `:` type($input) `->` type($result)"
    )

    FLOAT_ONLY: ClassVar[bool] = False

    def verify_(self) -> None:
        shape = checked_shape(self.input, "input")
        dims = ints(self.dims)
        if not shape:
            raise VerifyException("a rank-0 tensor has no dim to reduce")
        if not dims:
            raise VerifyException("dims must name at least one dim")
        if _shape_rule(shapes.check_dims, dims, len(shape)) != dims:
            raise VerifyException(f"dims {list(dims)} must be sorted")
        if self.FLOAT_ONLY:
            require_float(self.input, "input", self.name)
        reduced = shapes.reduce_shape(shape, dims, self.keepdim is not None)
        require_shape(self.result, reduced, "the reduced shape")
        require_element_type(self.result, tensor_of(self.input, "input").element_type, "the input's")


@irdl_op_definition
class SumOp(ReductionOp):
    """Sum over `dims` (accumulated in fp32 for floating-point inputs)."""

    name = "ktir.sum"

    def verify_(self) -> None:
        super().verify_()
        if is_bool(tensor_of(self.input, "input").element_type):
            raise VerifyException("ktir.sum of i1 is a count: convert the mask to an integer type first")


@irdl_op_definition
class MaxOp(ReductionOp):
    """Maximum over `dims` (PyTorch's `amax`)."""

    name = "ktir.max"


@irdl_op_definition
class MinOp(ReductionOp):
    """Minimum over `dims` (PyTorch's `amin`)."""

    name = "ktir.min"


@irdl_op_definition
class MeanOp(ReductionOp):
    """Mean over `dims` (accumulated in fp32), on floating-point tensors."""

    name = "ktir.mean"
    FLOAT_ONLY: ClassVar[bool] = True


#### Named compound ops ####


@irdl_op_definition
class SoftmaxOp(IRDLOperation):
    """`exp(x - max) / sum(exp(x - max))` along `dim`, kept whole so lowering sees the real computation."""

    name = "ktir.softmax"
    input = operand_def(TensorType)
    dim = prop_def(IntegerAttr[I64])
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input `dim` $dim attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        require_float(self.input, "input", self.name)
        require_like_input(self)
        rank = len(checked_shape(self.input, "input"))
        _shape_rule(shapes.check_dims, [self.dim.value.data], rank)


class NormOp(IRDLOperation, ABC):
    """
    Base of the normalizations over the trailing `normalized_shape` dims of `input`, with an
    optional elementwise `weight` (and, for layer_norm, `bias`) of exactly that shape.
    """

    input = operand_def(TensorType)
    weight = opt_operand_def(TensorType)
    normalized_shape = prop_def(DenseArrayBase.constr(I64))
    eps = prop_def(FloatAttr[Float64Type])
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        require_float(self.input, "input", self.name)
        require_like_input(self)
        shape = checked_shape(self.input, "input")
        normalized = ints(self.normalized_shape)
        suffix = shape[len(shape) - len(normalized) :]
        if not normalized or len(normalized) > len(shape) or suffix != normalized:
            raise VerifyException(
                f"normalized_shape {list(normalized)} must be a non-empty suffix "
                f"of the input shape {list(shape)}"
            )
        if not self.eps.value.data >= 0:  # also rejects NaN
            raise VerifyException("eps must be non-negative")
        for name in ("weight", "bias"):
            operand = getattr(self, name, None)
            if operand is None:
                continue
            if checked_shape(operand, name) != normalized:
                raise VerifyException(
                    f"{name} shape {list(checked_shape(operand, name))} "
                    f"must equal normalized_shape {list(normalized)}"
                )
            require_same_element_type([(self.input, "input"), (operand, name)])


@irdl_op_definition
class LayerNormOp(NormOp):
    """`(x - mean) / sqrt(var + eps) * weight + bias` over the trailing `normalized_shape` dims."""

    name = "ktir.layer_norm"
    # Redeclared so the operand order is (input, weight, bias): IRDL lists a subclass's own
    # fields before its bases', which would otherwise put `bias` first.
    input = operand_def(TensorType)
    weight = opt_operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    assembly_format = (
        "$input (`weight` $weight^ `:` type($weight))? (`bias` $bias^ `:` type($bias))? "
        "`normalized_shape` $normalized_shape attr-dict `:` type($input) `->` type($result)"
    )


@irdl_op_definition
class RmsNormOp(NormOp):
    """`x / sqrt(mean(x^2) + eps) * weight` over the trailing `normalized_shape` dims."""

    name = "ktir.rms_norm"
    assembly_format = (
        "$input (`weight` $weight^ `:` type($weight))? "
        "`normalized_shape` $normalized_shape attr-dict `:` type($input) `->` type($result)"
    )
    irdl_options = (ParsePropInAttrDict(),)


#### Attention ####


@irdl_op_definition
class AttentionOp(IRDLOperation):
    """
    Scaled dot-product attention in grouped form: PyTorch's `scaled_dot_product_attention`
    (with `enable_gqa`) where the `G` query heads that share a key/value head sit in their own
    dim, so a kernel reads each key and value once for the whole group.

        q: [B, H, G, S, D]   k: [B, H, L, D]   v: [B, H, L, E]   ->   [B, H, G, S, E]
        scores[b, h, g, s, l] = scale * sum_d q[b, h, g, s, d] * k[b, h, l, d]  (+ mask)
        result = softmax(scores over l) @ v

    The optional mask broadcasts to [B, H, G, S, L]: an additive float mask (-inf hides a key),
    or an i1 mask that keeps the keys where it is true. `causal c` also hides key l from query
    s when l > s + c (PyTorch's `is_causal` is c = 0; a prefill after a cache of P keys is
    c = P). A query row with every key hidden gives zeros (PyTorch's safe softmax). Example:
    Llama-3-8B's 32 query heads over 8 KV heads are H = 8, G = 4; MHA is G = 1.
    """

    name = "ktir.attention"
    q = operand_def(TensorType)
    k = operand_def(TensorType)
    v = operand_def(TensorType)
    mask = opt_operand_def(TensorType)
    scale = prop_def(FloatAttr[Float64Type])
    causal = opt_prop_def(IntegerAttr[I64])
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$q `,` $k `,` $v (`mask` $mask^ `:` type($mask))? `scale` $scale (`causal` $causal^)? attr-dict "
        "`:` type($q) `,` type($k) `,` type($v) `->` type($result)"
    )
    irdl_options = (ParsePropInAttrDict(),)

    def verify_(self) -> None:
        element_type = require_same_element_type([(self.q, "q"), (self.k, "k"), (self.v, "v")])
        require_float(self.q, "q", self.name)
        q, k, v = (checked_shape(x, n) for x, n in ((self.q, "q"), (self.k, "k"), (self.v, "v")))
        if (len(q), len(k), len(v)) != (5, 4, 4):
            raise VerifyException(
                f"ktir.attention takes q [B, H, G, S, D], k [B, H, L, D], v [B, H, L, E]; "
                f"got ranks {len(q)}, {len(k)}, {len(v)}"
            )
        if k[:2] != q[:2] or v[:2] != q[:2]:
            raise VerifyException(
                f"q, k and v must agree on [B, H]: {list(q[:2])}, {list(k[:2])}, {list(v[:2])}"
            )
        if k[3] != q[4]:
            raise VerifyException(f"q and k must have the same head size D: {q[4]} vs {k[3]}")
        if v[2] != k[2]:
            raise VerifyException(f"k and v must have the same key count L: {k[2]} vs {v[2]}")
        scores = (*q[:4], k[2])
        if self.mask is not None:
            mask = checked_shape(self.mask, "mask")
            try:
                broadcast: tuple[int, ...] | None = shapes.broadcast_shapes(mask, scores)
            except ShapeError:
                broadcast = None
            if broadcast != scores:
                raise VerifyException(f"the mask {list(mask)} must broadcast to the scores {list(scores)}")
            mask_type = tensor_of(self.mask, "mask").element_type
            if not is_bool(mask_type) and mask_type != element_type:
                raise VerifyException("the mask must be i1 or have q's element type")
        require_shape(self.result, (*q[:4], v[3]), "[B, H, G, S, E], which is")
        require_element_type(self.result, element_type, "the operands' element type")


#### Views and data movement ####


class ShapeChangeOp(IRDLOperation, ABC):
    """Base of the one-input data movement ops: the element type is kept, the shape may change."""

    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        require_element_type(self.result, tensor_of(self.input, "input").element_type, "the input's")
        self.verify_shape(checked_shape(self.input, "input"), checked_shape(self.result, "result"))

    def verify_shape(self, source: tuple[int, ...], target: tuple[int, ...]) -> None:
        """Check the op's shape rule; subclasses override."""


@irdl_op_definition
class PermuteOp(ShapeChangeOp):
    """Result dim `i` is input dim `perm[i]` (PyTorch's `permute`; `transpose` and `t` are permutes)."""

    name = "ktir.permute"
    perm = prop_def(DenseArrayBase.constr(I64))
    assembly_format = "$input `perm` $perm attr-dict `:` type($input) `->` type($result)"

    def verify_shape(self, source: tuple[int, ...], target: tuple[int, ...]) -> None:
        permuted = _shape_rule(shapes.permute_shape, source, ints(self.perm))
        require_shape(self.result, permuted, "the permuted shape")


@irdl_op_definition
class ReshapeOp(ShapeChangeOp):
    """Same elements in row-major order, new shape (PyTorch's `view`, `reshape`, `(un)squeeze`)."""

    name = "ktir.reshape"
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_shape(self, source: tuple[int, ...], target: tuple[int, ...]) -> None:
        _shape_rule(shapes.check_reshape, source, target)


@irdl_op_definition
class ExpandOp(ShapeChangeOp):
    """Broadcast size-1 dims (and add leading dims) to the result shape (PyTorch's `expand`)."""

    name = "ktir.expand"
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_shape(self, source: tuple[int, ...], target: tuple[int, ...]) -> None:
        _shape_rule(shapes.check_expand, source, target)


@irdl_op_definition
class SliceOp(ShapeChangeOp):
    """Elements `start, start+step, ... < end` of `dim` (0 <= start <= end <= size, step > 0)."""

    name = "ktir.slice"
    dim = prop_def(IntegerAttr[I64])
    start = prop_def(IntegerAttr[I64])
    end = prop_def(IntegerAttr[I64])
    step = prop_def(IntegerAttr[I64])
    assembly_format = (
        "$input `dim` $dim `start` $start `end` $end `step` $step attr-dict "
        "`:` type($input) `->` type($result)"
    )

    def verify_shape(self, source: tuple[int, ...], target: tuple[int, ...]) -> None:
        dim = self.dim.value.data
        if not source:
            raise VerifyException("ktir.slice needs an input of rank >= 1")
        _shape_rule(shapes.check_dims, [dim], len(source))
        length = _shape_rule(
            shapes.slice_length, source[dim], self.start.value.data, self.end.value.data, self.step.value.data
        )
        expected = tuple(length if i == dim else s for i, s in enumerate(source))
        require_shape(self.result, expected, "the sliced shape")


@irdl_op_definition
class PadOp(ShapeChangeOp):
    """Constant padding: `low[i]` elements before and `high[i]` after dim `i`, filled with `value`."""

    name = "ktir.pad"
    low = prop_def(DenseArrayBase.constr(I64))
    high = prop_def(DenseArrayBase.constr(I64))
    value = prop_def(FloatAttr[Float64Type])
    assembly_format = "$input `low` $low `high` $high attr-dict `:` type($input) `->` type($result)"
    irdl_options = (ParsePropInAttrDict(),)  # `value` prints in the dictionary (see PowOp)

    def verify_shape(self, source: tuple[int, ...], target: tuple[int, ...]) -> None:
        padded = _shape_rule(shapes.pad_shape, source, ints(self.low), ints(self.high))
        require_shape(self.result, padded, "the padded shape")


@irdl_op_definition
class CopyOp(ShapeChangeOp):
    """A materialized copy, same shape and values (PyTorch's `clone`, `contiguous`); may change layout."""

    name = "ktir.copy"
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_shape(self, source: tuple[int, ...], target: tuple[int, ...]) -> None:
        require_shape(self.result, source, "the input shape")


@irdl_op_definition
class RestickifyOp(ShapeChangeOp):
    """
    Relayout: the same host tensor stored with a different `#ktir.tiled` layout (another stick
    dim). Values never change. Inserted by `ktir-insert-restickify`.
    """

    name = "ktir.restickify"
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_shape(self, source: tuple[int, ...], target: tuple[int, ...]) -> None:
        require_shape(self.result, source, "the input shape")


@irdl_op_definition
class CatOp(IRDLOperation):
    """Concatenation along `dim`: other dims equal, one element type."""

    name = "ktir.cat"
    inputs = var_operand_def(TensorType)
    dim = prop_def(IntegerAttr[I64])
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$inputs `dim` $dim attr-dict `:` type($inputs) `->` type($result)"

    def verify_(self) -> None:
        if not self.inputs:
            raise VerifyException("ktir.cat needs at least one input")
        element_type = require_same_element_type([(v, f"input {i}") for i, v in enumerate(self.inputs)])
        input_shapes = [checked_shape(v, f"input {i}") for i, v in enumerate(self.inputs)]
        dim = self.dim.value.data
        _shape_rule(shapes.check_dims, [dim], len(input_shapes[0]))
        require_shape(self.result, _shape_rule(shapes.cat_shape, input_shapes, dim), "the concatenated shape")
        require_element_type(self.result, element_type, "the inputs'")


#### CPU fallback ####


ATEN_NAME = re.compile(r"^aten::[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*$")


@irdl_op_definition
class CpuFallbackOp(IRDLOperation):
    """
    An ATen op that runs on the host CPU (the reference stack's fallback list: embedding,
    arange, sin, cos, cumsum, tril, triu, index, argmax, isin, bitwise ops, ...).

    `aten` names the op as `aten::<name>.<overload>`; `args` is its positional argument list and
    `kwargs` its keyword arguments, where `#ktir.operand<i>` stands for operand `i` and other
    values are builtin attributes (integers, floats, strings, `none`, element types, arrays).

    ```mlir
    %r = ktir.cpu_fallback "aten::cumsum.default"(%x) {args = [#ktir.operand<0>, 1 : i64]}
        : (tensor<16xi64>) -> tensor<16xi64>
    ```
    """

    name = "ktir.cpu_fallback"
    aten = prop_def(StringAttr)
    inputs = var_operand_def(TensorType)
    args = prop_def(ArrayAttr)
    kwargs = opt_prop_def(DictionaryAttr)
    outputs = var_result_def(TensorType)
    assembly_format = "$aten `(` $inputs `)` attr-dict `:` functional-type($inputs, $outputs)"
    irdl_options = (ParsePropInAttrDict(),)

    def verify_(self) -> None:
        if not ATEN_NAME.match(self.aten.data):
            raise VerifyException(
                f'aten must name an op as "aten::<name>.<overload>", not "{self.aten.data}"'
            )
        referenced = operand_refs(self.args) + (operand_refs(self.kwargs) if self.kwargs else [])
        count = len(self.inputs)
        for index in referenced:
            if index >= count:
                raise VerifyException(f"#ktir.operand<{index}> refers past the {count} operand(s)")
        unused = sorted(set(range(count)) - set(referenced))
        if unused:
            raise VerifyException(f"operand {unused[0]} is not referenced by args or kwargs")
        if not self.outputs:
            raise VerifyException("ktir.cpu_fallback must produce at least one tensor")
        for i, value in enumerate((*self.inputs, *self.outputs)):
            tensor_of(value, f"value {i}")


@irdl_op_definition
class FusedOp(IRDLOperation):
    """
    Graph ops that run as one kernel (`ktir-fuse`): the body computes `result` from `inputs`
    and its intermediates stay in the scratchpad. The body is a single block whose arguments
    are the inputs and which ends with `ktir.yield` of the result; it holds graph-level ops only.

    ```mlir
    %y = ktir.fused(%x, %w) : (tensor<4x64xf16>, tensor<64xf16>) -> tensor<4x64xf16> {
    ^bb0(%a: tensor<4x64xf16>, %b: tensor<64xf16>):
      %s = ktir.silu %a : tensor<4x64xf16> -> tensor<4x64xf16>
      %m = ktir.mul %s, %b : tensor<4x64xf16>, tensor<64xf16> -> tensor<4x64xf16>
      ktir.yield %m : tensor<4x64xf16>
    }
    ```
    """

    name = "ktir.fused"
    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)
    body = region_def("single_block")
    traits = traits_def(Pure(), IsolatedFromAbove())
    assembly_format = "`(` $inputs `)` attr-dict `:` functional-type($inputs, $result) $body"

    def __init__(self, inputs: Sequence[SSAValue], result_type: Attribute, body: Region) -> None:
        super().__init__(operands=[list(inputs)], result_types=[result_type], regions=[body])

    @property
    def members(self) -> list[Operation]:
        """The fused graph ops, in program order (the terminator excluded)."""
        return [op for op in self.body.block.ops if not isinstance(op, YieldOp)]

    @property
    def label(self) -> str:
        """What the kernel runs: its ops' short names joined by `+` (views left out)."""
        names = [op.name.removeprefix("ktir.") for op in self.members if not isinstance(op, ShapeChangeOp)]
        return "+".join(names) or "views"

    def verify_(self) -> None:
        block: Block = self.body.block
        if [a.type for a in block.args] != [v.type for v in self.inputs]:
            raise VerifyException("the body's arguments must have the inputs' types")
        last = block.last_op
        if not isinstance(last, YieldOp) or len(last.values) != 1:
            raise VerifyException("the body must end with 'ktir.yield' of one value")
        if last.values[0].type != self.result.type:
            raise VerifyException("the yielded value must have the result's type")
        if not self.members:
            raise VerifyException("a fused kernel must hold at least one op")
        for op in self.members:
            if op.dialect_name() != "ktir" or isinstance(op, (FusedOp, CpuFallbackOp)) or op.regions:
                raise VerifyException(f"'{op.name}' cannot be fused: the body holds graph-level ktir ops")


STRUCTURED_OPS: list[type[IRDLOperation]] = [
    MatmulOp,
    BmmOp,
    SumOp,
    MaxOp,
    MinOp,
    MeanOp,
    SoftmaxOp,
    LayerNormOp,
    RmsNormOp,
    AttentionOp,
    PermuteOp,
    ReshapeOp,
    ExpandOp,
    SliceOp,
    CatOp,
    PadOp,
    CopyOp,
    RestickifyOp,
    CpuFallbackOp,
    FusedOp,
]
"""Every op defined in this file, in documentation order."""
