"""
ATen -> graph-level ktir converters.

`CONVERTERS` maps each supported ATen overload to a function that emits ktir ops for one FX
node and returns its value (or values, for multi-output ops). `CPU_FALLBACK_OPS` names the ops
that become `ktir.cpu_fallback`, following the reference stack's fallback list. Every
converter reads result shapes and dtypes from the node's FakeTensor, so type promotion and
shape inference are PyTorch's own.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, cast

import torch
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    UnitAttr,
    f64,
    i1,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import IRDLOperation

from ktir.dialects.ktir import elementwise as ew
from ktir.dialects.ktir import routing
from ktir.dialects.ktir import structured as st
from ktir.frontend.emitter import (
    ELEMENT_TYPE_TO_TORCH,
    Emitter,
    UnsupportedNode,
    float_arg,
    int_arg,
    int_list,
    mlir_element_type,
    node_arg,
    node_type,
    tensor_type,
    type_of_fake,
    used_outputs,
)
from ktir.ir.values import shape_of
from ktir.layout.shapes import broadcast_shapes, normalize_dim

aten = torch.ops.aten
Converter = Callable[[Emitter, torch.fx.Node], SSAValue | list[SSAValue] | None]
CONVERTERS: dict[Any, Converter] = {}
CPU_FALLBACK = "cpu_fallback"
"""The key under which `ktir.frontend.aten_data` registers the CPU-fallback converter."""


def cpu_fallback_of(e: Emitter, node: torch.fx.Node) -> SSAValue | list[SSAValue]:
    """
    `node` as a `ktir.cpu_fallback` (the converter registered under `CPU_FALLBACK`, which
    `ktir.frontend.aten_data` defines: it imports this module, so this one looks it up).
    """
    # That converter always returns its op's result(s), never None.
    return cast("SSAValue | list[SSAValue]", CONVERTERS[CPU_FALLBACK](e, node))


def converts(*targets: Any) -> Callable[[Converter], Converter]:
    """Register a converter for the given ATen overloads."""

    def register(function: Converter) -> Converter:
        for target in targets:
            CONVERTERS[target] = function
        return function

    return register


NAMED_CONVERTERS: dict[str, Converter] = {}
"""Converters of custom ops other libraries register (e.g. transformers' `grouped_mm_fallback`),
keyed by the op's name, so ktir need not import those libraries to know them."""


def converts_named(*names: str) -> Callable[[Converter], Converter]:
    """Register a converter for custom ops named like `str(target)`: `namespace.op.overload`."""

    def register(function: Converter) -> Converter:
        for name in names:
            NAMED_CONVERTERS[name] = function
        return function

    return register


def converter_of(target: Any) -> Converter | None:
    """The converter of an FX call target: by the overload itself, else by its name."""
    return CONVERTERS.get(target) or NAMED_CONVERTERS.get(str(target))


def make(
    e: Emitter,
    op_class: type[IRDLOperation],
    operands: Sequence[SSAValue | None],
    result_type: Attribute,
    **properties: Attribute,
) -> SSAValue:
    """Emit one single-result ktir op and return its result (None: an optional operand left out)."""
    op = op_class.build(operands=list(operands), properties=properties, result_types=[result_type])
    return e.emit(op).results[0]


def arg(node: torch.fx.Node, index: int, name: str, default: Any = None) -> Any:
    """Positional argument `index` of the node, or keyword `name`, or `default`."""
    if len(node.args) > index:
        return node.args[index]
    return node.kwargs.get(name, default)


def f64_attr(value: float) -> FloatAttr:
    """A constant property (all ktir constants are f64)."""
    return FloatAttr(float(value), f64)


def i64_attr(value: int) -> IntegerAttr:
    """An integer property."""
    return IntegerAttr(value, i64)


#### Elementwise ####

UNARY: dict[Any, type[IRDLOperation]] = {
    aten.abs.default: ew.AbsOp,
    aten.neg.default: ew.NegOp,
    aten.exp.default: ew.ExpOp,
    aten.log.default: ew.LogOp,
    aten.sqrt.default: ew.SqrtOp,
    aten.rsqrt.default: ew.RsqrtOp,
    aten.reciprocal.default: ew.ReciprocalOp,
    aten.sigmoid.default: ew.SigmoidOp,
    aten.tanh.default: ew.TanhOp,
    aten.relu.default: ew.ReluOp,
    aten.silu.default: ew.SiluOp,
    aten.floor.default: ew.FloorOp,
    aten.square.default: ew.SquareOp,
    aten.ceil.default: ew.CeilOp,
    aten.sign.default: ew.SignOp,
    aten.log1p.default: ew.Log1pOp,
    aten.cos.default: ew.CosOp,
    aten.sin.default: ew.SinOp,
    aten.erf.default: ew.ErfOp,
    aten.expm1.default: ew.Expm1Op,
}
FLOAT_CLASS: dict[Any, type[IRDLOperation]] = {
    aten.isinf.default: ew.IsInfOp,
    aten.isnan.default: ew.IsNanOp,
    aten.isfinite.default: ew.IsFiniteOp,
}


@converts(*UNARY)
def _unary(e: Emitter, node: torch.fx.Node) -> SSAValue:
    result_type = node_type(node)
    source = e.convert(e.value(node.args[0]), result_type.element_type)
    return make(e, UNARY[node.target], [source], result_type)


@converts(*FLOAT_CLASS)
def _float_class(e: Emitter, node: torch.fx.Node) -> SSAValue:
    source = e.value(node.args[0])
    if not ew.is_float(tensor_type(source).element_type):
        # PyTorch's answer on integer and bool tensors is a constant: no value is inf or NaN.
        return e.emit(ew.FullOp(int(node.target == aten.isfinite.default), node_type(node))).results[0]
    return make(e, FLOAT_CLASS[node.target], [source], node_type(node))


@converts(aten.gelu.default)
def _gelu(e: Emitter, node: torch.fx.Node) -> SSAValue:
    result_type = node_type(node)
    approximate = arg(node, 1, "approximate", "none")
    props = {} if approximate == "none" else {"approximate": StringAttr(approximate)}
    return make(e, ew.GeluOp, [e.value(node.args[0])], result_type, **props)


@converts(aten.softplus.default)
def _softplus(e: Emitter, node: torch.fx.Node) -> SSAValue:
    beta, threshold = arg(node, 1, "beta", 1.0), arg(node, 2, "threshold", 20.0)
    props = {}
    if beta != 1:
        props["beta"] = f64_attr(beta)
    if threshold != 20:
        props["threshold"] = f64_attr(threshold)
    return make(e, ew.SoftplusOp, [e.value(node.args[0])], node_type(node), **props)


@converts(aten.logical_not.default)
def _logical_not(e: Emitter, node: torch.fx.Node) -> SSAValue:
    return make(e, ew.LogicalNotOp, [e.value(node.args[0])], node_type(node))


@converts(aten._to_copy.default, torch.ops.prims.convert_element_type.default)
def _to_copy(e: Emitter, node: torch.fx.Node) -> SSAValue:
    source = e.value(node.args[0])
    result_type = node_type(node)
    if tensor_type(source).element_type == result_type.element_type:
        return make(e, st.CopyOp, [source], result_type)
    return e.convert(source, result_type.element_type)


BINARY = {
    "add": ew.AddOp,
    "sub": ew.SubOp,
    "mul": ew.MulOp,
    "div": ew.DivOp,
    "maximum": ew.MaximumOp,
    "minimum": ew.MinimumOp,
    "eq": ew.EqOp,
    "ne": ew.NeOp,
    "lt": ew.LtOp,
    "le": ew.LeOp,
    "gt": ew.GtOp,
    "ge": ew.GeOp,
    "logical_and": ew.LogicalAndOp,
}
COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge", "logical_and"}


def _promoted(node: torch.fx.Node) -> Attribute:
    """The dtype PyTorch computes a binary op in (for comparisons, before the i1 result)."""
    operands = []
    for a in node.args[:2]:
        if isinstance(a, torch.fx.Node):
            fake = a.meta["val"]
            operands.append(torch.empty(fake.shape, dtype=fake.dtype, device="meta"))
        else:
            operands.append(a)
    return mlir_element_type(torch.result_type(*operands))


def _binary_values(
    e: Emitter, node: torch.fx.Node, element_type: Attribute, scalar_type: Attribute | None = None
) -> tuple[SSAValue, SSAValue]:
    # Only a scalar second operand keeps compute precision (PyTorch's CPU-scalar fast path);
    # a scalar first operand (`0.3 - x`) is rounded to the tensor's dtype like any operand.
    lhs, rhs = node.args[0], node.args[1]
    anchor = e.value(lhs) if isinstance(lhs, torch.fx.Node) else e.value(rhs)
    return e.operand(lhs, anchor, element_type), e.operand(rhs, anchor, element_type, scalar_type)


def _is_narrow_float(element_type: Attribute) -> bool:
    """f16 and bf16: PyTorch computes them in fp32 and keeps Python scalars in fp32."""
    return isinstance(element_type, Float16Type | BFloat16Type)


def _binary(e: Emitter, node: torch.fx.Node, kind: str) -> SSAValue:
    result_type = node_type(node)
    compute = _promoted(node) if kind in COMPARISONS else result_type.element_type
    alpha = node.kwargs.get("alpha", 1)
    if kind in ("add", "sub") and alpha != 1:
        return _binary_with_alpha(e, node, kind, float_arg(alpha), result_type)
    arithmetic = kind in ("add", "sub", "mul", "div")
    scalar_type = Float32Type() if arithmetic and _is_narrow_float(compute) else None
    lhs, rhs = _binary_values(e, node, compute, scalar_type)
    return make(e, BINARY[kind], [lhs, rhs], result_type)


def _binary_with_alpha(
    e: Emitter, node: torch.fx.Node, kind: str, alpha: float, result_type: TensorType[Attribute]
) -> SSAValue:
    """
    `lhs ± alpha * rhs` as PyTorch computes it for f16/bf16: alpha rounded to the tensor's dtype,
    the expression in fp32, one final rounding.
    """
    element_type = result_type.element_type
    compute = Float32Type() if _is_narrow_float(element_type) else element_type
    if _is_narrow_float(element_type):
        alpha = torch.tensor(alpha, dtype=ELEMENT_TYPE_TO_TORCH[str(element_type)]).item()
    lhs, rhs = _binary_values(e, node, compute)
    shape = list(result_type.get_shape())
    scaled = make(e, ew.MulOp, [rhs, e.scalar(alpha, compute, min(len(shape_of(rhs)), 1))], tensor_type(rhs))
    combined = make(e, BINARY[kind], [lhs, scaled], TensorType(compute, shape))
    return e.convert(combined, element_type)


for _name in BINARY:
    for _overload in ("Tensor", "Scalar", "default"):
        _target = getattr(getattr(aten, _name), _overload, None)
        if _target is not None:
            CONVERTERS[_target] = lambda e, node, kind=_name: _binary(e, node, kind)


@converts(aten.rsub.Scalar, aten.rsub.Tensor)
def _rsub(e: Emitter, node: torch.fx.Node) -> SSAValue:
    # `scalar - x`: the scalar is the first operand, which PyTorch rounds to x's dtype.
    result_type = node_type(node)
    lhs, rhs = _binary_values(e, node, result_type.element_type)
    alpha = node.kwargs.get("alpha", 1)
    if alpha != 1:
        raise UnsupportedNode("rsub with alpha != 1")
    return make(e, ew.SubOp, [rhs, lhs], result_type)


@converts(aten.div.Tensor_mode)
def _div_mode(e: Emitter, node: torch.fx.Node) -> SSAValue:
    mode = node.kwargs.get("rounding_mode", arg(node, 2, "rounding_mode"))
    if mode is not None and mode != "floor":
        raise UnsupportedNode(f"div with rounding_mode={mode!r} (only None and 'floor')")
    result_type = node_type(node)
    if mode is None:
        return _binary(e, node, "div")
    element_type = result_type.element_type
    if not ew.is_float(element_type):
        lhs, rhs = _binary_values(e, node, element_type)
        return make(e, ew.FloorDivOp, [lhs, rhs], result_type)
    # Divide and floor at compute precision, then round once (as PyTorch's kernel does).
    compute = Float32Type() if _is_narrow_float(element_type) else element_type
    lhs, rhs = _binary_values(e, node, compute)
    wide = TensorType(compute, list(result_type.get_shape()))
    quotient = make(e, ew.DivOp, [lhs, rhs], wide)
    return e.convert(make(e, ew.FloorOp, [quotient], wide), element_type)


@converts(aten.bitwise_and.Tensor)
def _bitwise_and(e: Emitter, node: torch.fx.Node) -> SSAValue | list[SSAValue]:
    if node_type(node).element_type == i1:
        return _binary(e, node, "logical_and")
    return cpu_fallback_of(e, node)


@converts(aten.bitwise_not.default)
def _bitwise_not(e: Emitter, node: torch.fx.Node) -> SSAValue | list[SSAValue]:
    """`~mask` of a bool tensor is `ktir.logical_not`; of integers it runs on the host."""
    if node_type(node).element_type == i1:
        return make(e, ew.LogicalNotOp, [e.value(node.args[0])], node_type(node))
    return cpu_fallback_of(e, node)


@converts(aten.pow.Tensor_Scalar)
def _pow(e: Emitter, node: torch.fx.Node) -> SSAValue:
    result_type = node_type(node)
    source = e.convert(e.value(node.args[0]), result_type.element_type)
    if not ew.is_float(result_type.element_type):
        raise UnsupportedNode("integer pow")
    if node.args[1] == 2:
        # PyTorch's own kernel computes a square as `x * x` (one rounding, the same bits as a
        # correctly rounded pow); the SFU then runs one multiply pass instead of a pow's two.
        return make(e, ew.MulOp, [source, source], result_type)
    return make(e, ew.PowOp, [source], result_type, exponent=f64_attr(float_arg(node.args[1])))


@converts(aten.pow.Tensor_Tensor, aten.pow.Scalar)
def _pow_tensor(e: Emitter, node: torch.fx.Node) -> SSAValue:
    """
    `x ** y` with a tensor exponent, or `c ** y` with a scalar base: PyTorch rounds a scalar base
    to the result's dtype (it has no compute-precision fast path for pow) and computes in fp32.
    """
    result_type = node_type(node)
    if not ew.is_float(result_type.element_type):
        raise UnsupportedNode("integer pow")
    lhs, rhs = _binary_values(e, node, result_type.element_type)
    return make(e, ew.PowfOp, [lhs, rhs], result_type)


@converts(aten.where.self)
def _where(e: Emitter, node: torch.fx.Node) -> SSAValue:
    result_type = node_type(node)
    condition = e.convert(e.value(node.args[0]), i1)
    lhs = e.operand(node.args[1], condition, result_type.element_type)
    rhs = e.operand(node.args[2], condition, result_type.element_type)
    return make(e, ew.WhereOp, [condition, lhs, rhs], result_type)


@converts(aten.clamp.default, aten.clamp_min.default, aten.clamp_max.default, aten.hardtanh.default)
def _clamp(e: Emitter, node: torch.fx.Node) -> SSAValue:
    result_type = node_type(node)
    source = e.convert(e.value(node.args[0]), result_type.element_type)
    if node.target == aten.clamp_min.default:
        low, high = node.args[1], None
    elif node.target == aten.clamp_max.default:
        low, high = None, node.args[1]
    elif node.target == aten.hardtanh.default:  # clamp to [min_val, max_val], default [-1, 1]
        low, high = arg(node, 1, "min_val", -1.0), arg(node, 2, "max_val", 1.0)
    else:
        low, high = arg(node, 1, "min"), arg(node, 2, "max")
    props = {}
    for key, bound in (("min", low), ("max", high)):
        if bound is None or bound == (-math.inf if key == "min" else math.inf):
            continue  # an infinite bound on its own side clamps nothing
        number = float_arg(bound)
        if not math.isfinite(number):
            raise UnsupportedNode(f"clamp with a non-finite {key} bound")
        props[key] = f64_attr(number)
    if not props:
        return make(e, st.CopyOp, [source], result_type)
    return make(e, ew.ClampOp, [source], result_type, **props)


@converts(aten.clamp.Tensor, aten.clamp_min.Tensor, aten.clamp_max.Tensor)
def _clamp_tensor(e: Emitter, node: torch.fx.Node) -> SSAValue:
    """`min(max(x, low), high)` with tensor bounds that broadcast, as PyTorch defines clamp."""
    result_type = node_type(node)
    element_type = result_type.element_type
    source = e.convert(e.value(node.args[0]), element_type)
    if node.target == aten.clamp_min.Tensor:
        low, high = node.args[1], None
    elif node.target == aten.clamp_max.Tensor:
        low, high = None, node.args[1]
    else:
        low, high = arg(node, 1, "min"), arg(node, 2, "max")
    value = source
    for op_class, bound in ((ew.MaximumOp, low), (ew.MinimumOp, high)):
        if bound is None:
            continue
        bound_value = e.operand(bound, value, element_type)
        shape = broadcast_shapes(shape_of(value), shape_of(bound_value))
        value = make(e, op_class, [value, bound_value], TensorType(element_type, list(shape)))
    if shape_of(value) != tuple(result_type.get_shape()):
        value = make(e, st.ExpandOp, [value], result_type)
    return value if value is not source else make(e, st.CopyOp, [source], result_type)


#### Constants ####


@converts(aten.full.default, aten.full_like.default, aten.new_full.default)
def _full(e: Emitter, node: torch.fx.Node) -> SSAValue:
    value = node.args[1] if node.target != aten.new_full.default else node.args[2]
    return _fill(e, value, node_type(node))


@converts(aten.scalar_tensor.default)
def _scalar_tensor(e: Emitter, node: torch.fx.Node) -> SSAValue:
    return _fill(e, node.args[0], node_type(node))


def _fill(e: Emitter, value: Any, result_type: TensorType[Attribute]) -> SSAValue:
    """`ktir.full`, exact for integer tensors (int64 values beyond 2**53 do not fit an f64)."""
    integer = isinstance(result_type.element_type, IntegerType) and float(value).is_integer()
    exact: float | int = int(value) if integer else float(value)
    return e.emit(ew.FullOp(exact, result_type)).results[0]


@converts(
    aten.zeros.default,
    aten.zeros_like.default,
    aten.new_zeros.default,
    aten.empty.memory_format,
    aten.empty_like.default,
    aten.new_empty.default,
    aten.empty_strided.default,
    aten.empty_permuted.default,
)
def _zeros(e: Emitter, node: torch.fx.Node) -> SSAValue:
    # `empty` has unspecified contents; zeros keep the program deterministic.
    return e.emit(ew.FullOp(0.0, node_type(node))).results[0]


@converts(aten.ones.default, aten.ones_like.default, aten.new_ones.default)
def _ones(e: Emitter, node: torch.fx.Node) -> SSAValue:
    return e.emit(ew.FullOp(1.0, node_type(node))).results[0]


#### Matmul ####


def _matmul(
    e: Emitter, op_class: type[IRDLOperation], x: Any, y: Any, result_type: TensorType[Attribute]
) -> SSAValue:
    if not ew.is_float(result_type.element_type):
        raise UnsupportedNode(f"matmul on {result_type.element_type} (Spyre's PT unit multiplies floats)")
    return make(e, op_class, [e.value(x), e.value(y)], result_type)


@converts(aten.mm.default)
def _mm(e: Emitter, node: torch.fx.Node) -> SSAValue:
    return _matmul(e, st.MatmulOp, node.args[0], node.args[1], node_type(node))


@converts(aten.bmm.default)
def _bmm(e: Emitter, node: torch.fx.Node) -> SSAValue:
    return _matmul(e, st.BmmOp, node.args[0], node.args[1], node_type(node))


@converts(aten.addmm.default)
def _addmm(e: Emitter, node: torch.fx.Node) -> SSAValue:
    result_type = node_type(node)
    beta, alpha = node.kwargs.get("beta", 1), node.kwargs.get("alpha", 1)
    product = _matmul(e, st.MatmulOp, node.args[1], node.args[2], result_type)
    if alpha != 1:
        product = make(
            e, ew.MulOp, [product, e.scalar(float_arg(alpha), result_type.element_type)], result_type
        )
    if beta == 0:
        return product  # PyTorch ignores the bias entirely (NaN and inf included)
    bias = e.value(node.args[0])
    if beta != 1:
        scaled = TensorType(result_type.element_type, shape_of(bias))
        scalar = e.scalar(float_arg(beta), result_type.element_type, min(len(shape_of(bias)), 1))
        bias = make(e, ew.MulOp, [bias, scalar], scaled)
    return make(e, ew.AddOp, [product, bias], result_type)


@converts(aten._scaled_mm.default)
def _scaled_mm(e: Emitter, node: torch.fx.Node) -> SSAValue:
    """
    `torch._scaled_mm(x, w, scale_a, scale_b, bias, ..., out_dtype=f16)` of fp8 operands as
    torch-spyre decomposes it: the fp8 matmul, then `* scale_a`, `* scale_b` and `+ bias` as
    elementwise ops. As PyTorch computes it, the scales multiply the fp32 accumulator (an fp8
    product's sum overflows fp16) and the result is rounded once to f16; the elementwise ops
    fuse into the matmul's epilogue, so the f32 product stays in LX.
    """
    result_type = node_type(node)
    x, w = e.value(node.args[0]), e.value(node.args[1])
    if not (ew.is_fp8(tensor_type(x).element_type) and ew.is_fp8(tensor_type(w).element_type)):
        raise UnsupportedNode("_scaled_mm of operands that are not both float8_e4m3fn")
    if not isinstance(result_type.element_type, Float16Type) or arg(node, 5, "scale_result") is not None:
        raise UnsupportedNode("_scaled_mm other than out_dtype=float16 without scale_result")
    # Rows flattened from (batch, tokens) are multiplied as the 3-D x they came from, as
    # `linear` is: a flattened row dim's layout could only be divided batch ways.
    rows = _unflattened_rows(x)
    shape = [*shape_of(rows)[:-1], shape_of(w)[1]]
    accumulator = TensorType(Float32Type(), shape)
    product = make(e, st.MatmulOp, [rows, w], accumulator)
    for scale in (arg(node, 2, "scale_a"), arg(node, 3, "scale_b")):
        if scale is not None:
            factor = e.convert(e.value(scale), Float32Type())
            if rows is not x and len(shape_of(factor)) == 2 and shape_of(factor)[0] > 1:  # per row
                factor = e.reshape(_unflattened_rows(factor, [*shape[:-1], 1]), [*shape[:-1], 1])
            product = make(e, ew.MulOp, [product, factor], accumulator)
    bias = arg(node, 4, "bias")
    if bias is not None:
        product = make(e, ew.AddOp, [product, e.convert(e.value(bias), Float32Type())], accumulator)
    product = e.convert(product, result_type.element_type)
    return product if rows is x else make(e, st.ReshapeOp, [product], result_type)


def _unflattened_rows(x: SSAValue, shape: Sequence[int] | None = None) -> SSAValue:
    """
    `x`'s source when `x` is a reshape of it and the source has `shape` (default: any 3-D shape
    with `x`'s last dim: rows flattened from (batch, tokens)), else `x`.
    """
    if not isinstance(x.owner, st.ReshapeOp):
        return x
    source = x.owner.operands[0]
    source_shape = shape_of(source)
    if shape is not None:
        return source if list(source_shape) == list(shape) else x
    if len(source_shape) != 3 or source_shape[-1] != shape_of(x)[-1]:
        return x
    return source


@converts(aten.linear.default)
def _linear(e: Emitter, node: torch.fx.Node) -> SSAValue:
    """`x @ w.T + b` as the reference lowers linear: a transpose, a matmul, an add."""
    result_type = node_type(node)
    x, w = e.value(node.args[0]), e.value(node.args[1])
    element_type = result_type.element_type
    n, k = shape_of(w)
    w_t = make(e, st.PermuteOp, [w], TensorType(element_type, [k, n]), perm=st.int_array([1, 0]))
    x_shape = shape_of(x)
    if len(x_shape) in (2, 3):
        product = make(e, st.MatmulOp, [x, w_t], TensorType(element_type, [*x_shape[:-1], n]))
    else:
        rows = math.prod(x_shape[:-1])
        flat = make(e, st.ReshapeOp, [x], TensorType(element_type, [rows, k]))
        flat_product = make(e, st.MatmulOp, [flat, w_t], TensorType(element_type, [rows, n]))
        product = make(e, st.ReshapeOp, [flat_product], result_type)
    bias = arg(node, 2, "bias")
    if bias is None:
        return product
    return make(e, ew.AddOp, [product, e.value(bias)], result_type)


#### Reductions ####

REDUCTIONS: dict[Any, type[IRDLOperation]] = {
    aten.sum.dim_IntList: st.SumOp,
    aten.sum.default: st.SumOp,
    aten.mean.dim: st.MeanOp,
    aten.mean.default: st.MeanOp,
    aten.amax.default: st.MaxOp,
    aten.amin.default: st.MinOp,
    aten.max.default: st.MaxOp,
    aten.min.default: st.MinOp,
    # any / all: the input converted to i1 (nonzero), then its max / min
    aten.any.dim: st.MaxOp,
    aten.any.dims: st.MaxOp,
    aten.any.default: st.MaxOp,
    aten.all.dim: st.MinOp,
    aten.all.dims: st.MinOp,
    aten.all.default: st.MinOp,
}


@converts(*REDUCTIONS)
def _reduction(e: Emitter, node: torch.fx.Node) -> SSAValue:
    result_type = node_type(node)
    source = e.convert(e.value(node.args[0]), result_type.element_type)
    rank = len(shape_of(source))
    dims = arg(node, 1, "dim") if len(node.args) > 1 or "dim" in node.kwargs else None
    if dims is None or (isinstance(dims, list | tuple) and not dims):
        dims = list(range(rank))
    if isinstance(dims, int):
        dims = [dims]
    keepdim = bool(arg(node, 2, "keepdim", False))
    if rank == 0:
        return make(e, st.CopyOp, [source], result_type)
    normalized = sorted({normalize_dim(d, rank) for d in int_list(dims)})
    props: dict[str, Attribute] = {"dims": st.int_array(normalized)}
    if keepdim:
        props["keepdim"] = UnitAttr()
    return make(e, REDUCTIONS[node.target], [source], result_type, **props)


@converts(aten.max.dim, aten.min.dim)
def _max_dim(e: Emitter, node: torch.fx.Node) -> list[SSAValue] | SSAValue:
    """
    `max.dim` gives (values, indices): values alone are `ktir.max`; with the indices, a top-1
    (`ktir.topk` along the dim, moved last), whose equal values keep the first index. `min.dim`
    with its indices runs on the host.
    """
    users = used_outputs(node)
    if users != {0} and node.target == aten.max.dim and shape_of(e.value(node.args[0])):
        return _top1(e, node)
    if users != {0}:
        return cpu_fallback_of(e, node)
    values_type = type_of_values(node, 0)
    source = e.value(node.args[0])
    if not shape_of(source):
        return [make(e, st.CopyOp, [source], values_type)]  # reducing a scalar is the scalar
    dim = normalize_dim(int_arg(node.args[1]), len(shape_of(source)))
    props: dict[str, Attribute] = {"dims": st.int_array([dim])}
    if arg(node, 2, "keepdim", False):
        props["keepdim"] = UnitAttr()
    op_class = st.MaxOp if node.target == aten.max.dim else st.MinOp
    return [make(e, op_class, [source], values_type, **props)]


def _top1(e: Emitter, node: torch.fx.Node) -> list[SSAValue]:
    source = e.value(node.args[0])
    rank = len(shape_of(source))
    dim = normalize_dim(int_arg(node.args[1]), rank)
    perm = [*(d for d in range(rank) if d != dim), dim]
    moved = e.permute(source, perm)
    picked_shape = [*shape_of(moved)[:-1], 1]
    element_type = tensor_type(source).element_type
    op = routing.TopkOp.build(
        operands=[moved],
        properties={"k": i64_attr(1)},
        result_types=[TensorType(element_type, picked_shape), TensorType(i64, picked_shape)],
    )
    values, indices = e.emit(op).results
    inverse = [perm.index(d) for d in range(rank)]
    results = []
    for value, index in ((values, 0), (indices, 1)):
        kept = e.permute(value, inverse)  # the picked dim is back in place, of size 1
        results.append(e.reshape(kept, list(type_of_values(node, index).get_shape())))
    return results


def type_of_values(node: torch.fx.Node, index: int) -> TensorType[Attribute]:
    """Result `index` of a multi-output node."""
    return type_of_fake(node.meta["val"][index], f"result {index} of '{node.name}'")


#### Named compound ops ####


@converts(aten._softmax.default, aten.softmax.int)
def _softmax(e: Emitter, node: torch.fx.Node) -> SSAValue:
    result_type = node_type(node)
    source = e.convert(e.value(node.args[0]), result_type.element_type)
    dim = normalize_dim(int_arg(node.args[1]), len(shape_of(source)))
    return make(e, st.SoftmaxOp, [source], result_type, dim=i64_attr(dim))


def _norm(
    e: Emitter,
    node: torch.fx.Node,
    op_class: type[IRDLOperation],
    weight: Any,
    bias: Any,
    eps: float,
    result_type: TensorType[Attribute],
) -> SSAValue:
    source = e.value(node.args[0])
    normalized = int_list(node.args[1])
    element_type = tensor_type(source).element_type

    def affine(arg: Any) -> SSAValue | None:
        # PyTorch accepts f32 weights on f16 inputs; ktir ops take one element type.
        return None if arg is None else e.convert(e.value(arg), element_type)

    operands: list[SSAValue | None] = [source, affine(weight)]
    if op_class is st.LayerNormOp:
        operands.append(affine(bias))
    props: dict[str, Attribute] = {"normalized_shape": st.int_array(normalized), "eps": f64_attr(eps)}
    op = op_class.build(operands=operands, properties=props, result_types=[result_type])
    return e.emit(op).results[0]


@converts(aten.layer_norm.default)
def _layer_norm(e: Emitter, node: torch.fx.Node) -> SSAValue:
    weight, bias = arg(node, 2, "weight"), arg(node, 3, "bias")
    eps = arg(node, 4, "eps", 1e-5)
    return _norm(e, node, st.LayerNormOp, weight, bias, eps, node_type(node))


@converts(aten.native_layer_norm.default)
def _native_layer_norm(e: Emitter, node: torch.fx.Node) -> list[SSAValue]:
    if used_outputs(node) - {0}:
        raise UnsupportedNode(
            "native_layer_norm's mean and rstd outputs are used (ktir keeps only the output)"
        )
    eps = float_arg(node.args[4])
    out = _norm(e, node, st.LayerNormOp, node.args[2], node.args[3], eps, type_of_values(node, 0))
    return [out]


@converts(aten.rms_norm.default)
def _rms_norm(e: Emitter, node: torch.fx.Node) -> SSAValue:
    result_type = node_type(node)
    eps = arg(node, 3, "eps")
    if eps is None:
        eps = torch.finfo(node_arg(node.args[0]).meta["val"].dtype).eps
    return _norm(e, node, st.RmsNormOp, arg(node, 2, "weight"), None, eps, result_type)
