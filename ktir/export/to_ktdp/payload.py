"""
The payload ops of a `ktir.compute` as `linalg` on host tiles, in ktir's numerics.

- an elementwise op is a `linalg.generic` that widens fp16 operands to f32 (`arith.extf`),
  computes the reference's formula in f32 op by op (`ktir.export.to_ktdp.formulas`), and
  rounds once to the result type (`arith.truncf`); operands broadcast as NumPy broadcasts host
  tiles (right-aligned, a size-1 dim read at 0 through its indexing map); integer operands are
  read as they are (`ktir.add` of i64 positions is an `arith.addi`), and an integer converted
  to a float is an `arith.sitofp` (`uitofp` for an i1) to the result type;
- `ktir.matmul` / `ktir.bmm` are `linalg.matmul` / `linalg.batch_matmul` into a
  `tensor.empty` (the product accumulated in f32 and rounded once, as the PE arrays do).

Example: `ktir.silu` of a 2 x 64 f16 tile is a generic whose body is `extf`, `negf`,
`math.exp`, `addf 1.0`, `divf`, `truncf`: the reference's `x / (1 + exp(-x))` in f32.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import cast

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    AffineMapAttr,
    AnyFloat,
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerType,
    TensorType,
    i1,
)
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from ktir.dialects.ktir import structured as st
from ktir.export.to_ktdp.emitter import Emitter, HostTensor
from ktir.export.to_ktdp.formulas import FORMULAS, INTEGER_OPS, Formula, scalar
from ktir.export.to_ktdp.tensors import destination, extract_slice, k_rows, product, reshaped, zero_padded
from ktir.ir.diagnostics import op_error
from ktir.ir.values import shape_of
from ktir.layout.shapes import ShapeError, broadcast_shapes

_F32 = Float32Type()


def _float_element(element: Attribute) -> bool:
    return isinstance(element, Float16Type | BFloat16Type | Float32Type | Float64Type)


def _widened(emitter: Emitter, value: SSAValue, element: Attribute, compute: Attribute = _F32) -> SSAValue:
    if element == compute or not _float_element(element):  # a mask's i1 is read as it is
        return value
    return scalar(emitter, arith.ExtFOp(value, compute))


def _rounded(emitter: Emitter, value: SSAValue, element: Attribute, compute: Attribute = _F32) -> SSAValue:
    if element == compute:
        return value
    return scalar(emitter, arith.TruncFOp(value, element))


def _converted(emitter: Emitter, value: SSAValue, element: Attribute) -> SSAValue:
    """
    A formula's result in the result type: a float rounded once (`truncf`), an integer
    converted to a float as the reference's `astype` does (`sitofp`; `uitofp` for an i1, whose
    true is 1.0), a value to an i1 as `value != 0`, to another integer type as `_to_integer`;
    a result of the element type (an integer sum, a comparison's i1) as it is.
    """
    if value.type == element:
        return value
    source = value.type
    if isinstance(source, IntegerType) and _float_element(element):
        convert = arith.UIToFPOp if source.width.data == 1 else arith.SIToFPOp
        return scalar(emitter, convert(value, cast(AnyFloat, element)))
    if element == i1:  # the reference's bool is `value != 0`
        return _nonzero(emitter, value)
    if isinstance(element, IntegerType):
        return scalar(emitter, _to_integer(value, element))
    return scalar(emitter, arith.TruncFOp(value, element))


def _nonzero(emitter: Emitter, value: SSAValue) -> SSAValue:
    """`value != 0` as an i1 (`cmpi ne`, or `cmpf une`: a NaN is true, as NumPy's bool)."""
    source = value.type
    if isinstance(source, IntegerType):
        zero = scalar(emitter, arith.ConstantOp.from_int_and_width(0, source))
        return scalar(emitter, arith.CmpiOp(value, zero, "ne"))
    zero = scalar(emitter, arith.ConstantOp(FloatAttr(0.0, cast(AnyFloat, source))))
    return scalar(emitter, arith.CmpfOp(value, zero, "une"))


def _to_integer(value: SSAValue, element: IntegerType) -> Operation:
    """A float toward zero (`fptosi`, as the reference's `astype`), an integer wrapped or extended."""
    source = value.type
    if not isinstance(source, IntegerType):
        return arith.FPToSIOp(value, element)
    if source.width.data > element.width.data:
        return arith.TruncIOp(value, element)
    return (arith.ExtUIOp if source.width.data == 1 else arith.ExtSIOp)(value, element)


def broadcast_shape(op: Operation, shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    """NumPy's broadcast of host tile shapes (right-aligned); a located error if they clash."""
    try:
        return broadcast_shapes(*shapes)
    except ShapeError:
        raise op_error(op, f"its host tiles {list(shapes)} do not broadcast") from None


def _indexing_map(shape: tuple[int, ...], out: tuple[int, ...]) -> AffineMapAttr:
    """
    The map from the output's dims to an operand's: right-aligned, a size-1 dim the output
    broadcasts read at 0. Example: a (64,) bias in a (2, 64) add is `(d0, d1) -> (d1)`, a
    (2, 1) column is `(d0, d1) -> (d0, 0)`.
    """
    rank = len(out)
    skip = rank - len(shape)
    results = [
        AffineExpr.constant(0) if size == 1 and out[skip + i] != 1 else AffineExpr.dimension(skip + i)
        for i, size in enumerate(shape)
    ]
    return AffineMapAttr(AffineMap(rank, 0, tuple(results)))


def generic(
    emitter: Emitter,
    op: Operation,
    operands: list[HostTensor],
    element: Attribute,
    formula: Formula,
    compute: Attribute = _F32,
) -> HostTensor:
    """
    A `linalg.generic` over the broadcast of the operands' host tiles: each float element widened
    to `compute` (f32, or f64 where the reference computes in float64), `formula` applied, the
    result rounded to `element`.
    """
    if not all(
        _float_element(e) or isinstance(e, IntegerType) for e in [element, *(t.element for t in operands)]
    ):
        raise op_error(op, "ktir-emit-ktdp writes elementwise ops on float and integer tensors only")
    shape = broadcast_shape(op, [t.shape for t in operands])
    maps = [_indexing_map(t.shape, shape) for t in operands] + [_indexing_map(shape, shape)]
    name, empty = destination(emitter, shape, element)
    body = Block(arg_types=[*(t.element for t in operands), element])
    for arg in body.args[:-1]:
        emitter.name([arg], "a")
    emitter.name([body.args[-1]], "o")
    with emitter.inside(body):
        # An fp32 accumulator read by an fp16 op is rounded to fp16 first, in the body (a cast:
        # no pass of its own), as ktir rounds it once to the matmul's result type (`run_fused`).
        read = [
            (_rounded(emitter, a, t.read_as, t.element), t.read_as)
            if t.read_as is not None
            else (a, t.element)
            for a, t in zip(body.args, operands, strict=False)
        ]
        wide = [_widened(emitter, a, e, compute) for a, e in read]
        result = _converted(emitter, formula(emitter, wide), element)
        emitter.add(linalg.YieldOp(result))
    iterators = [IteratorTypeAttr.parallel()] * len(shape)
    built = linalg.GenericOp(
        [t.value for t in operands], [empty.value], Region(body), maps, iterators, [empty.type]
    )
    return HostTensor(emitter.named(built, name))


def elementwise(emitter: Emitter, op: Operation, operands: list[HostTensor]) -> HostTensor:
    """An elementwise graph op as a `linalg.generic` over the broadcast host tile (module docstring)."""
    element = cast(TensorType[Attribute], op.results[0].type).element_type
    integers = [e for e in [element, *(t.element for t in operands)] if isinstance(e, IntegerType)]
    if integers and type(op) not in INTEGER_OPS:
        raise op_error(
            op,
            f"ktir-emit-ktdp writes '{op.name}' on float tensors only, not {integers[0]} (integer tensors: "
            "add, sub, mul, comparisons and convert)",
        )
    return generic(emitter, op, operands, element, FORMULAS[type(op)])


def matmul(
    emitter: Emitter, op: Operation, operands: list[HostTensor], sticks: tuple[int, int] | None = None
) -> HostTensor:
    """
    `ktir.matmul` / `ktir.bmm` of host tiles: `linalg.matmul` of 2-D tiles (an x tile with
    leading dims, against a 2-D y, is collapsed to rows first), `linalg.batch_matmul` of 3-D
    tiles with the same batch. With `sticks` (K, N of the tiles in whole sticks), the product
    runs on tiles zero-padded to them, as a matmul kernel's PE arrays do, and is cut back to N:
    a 3 x 64 @ 64 x 32 tile is 3 x 64 @ 64 x 64, its last 32 columns dropped.
    """
    x, y = operands
    if sticks is not None:
        return _in_whole_sticks(emitter, op, x, y, sticks)
    if x.shape[-1] > y.shape[-2]:
        raise op_error(op, f"its x tile {x.shape} is longer than its y tile {y.shape} along K")
    if x.shape[-1] < y.shape[-2]:  # y carries matmul padding rows: the product reads x's K only
        y = k_rows(emitter, y, x.shape[-1])
    element = cast(TensorType[Attribute], op.results[0].type).element_type
    out_shape = (*broadcast_shape(op, [x.shape[:-2], y.shape[:-2]]), x.shape[-2], y.shape[-1])
    if all(n == 1 for n in y.shape[:-2]):  # one y for every row of x: a 2-D product
        x2 = reshaped(emitter, x, (math.prod(x.shape[:-1]), x.shape[-1]))
        y2 = reshaped(emitter, y, y.shape[-2:])
        return reshaped(emitter, product(emitter, "matmul", x2, y2, element), out_shape)
    if x.shape[:-2] != y.shape[:-2]:
        raise op_error(
            op, f"ktir-emit-ktdp writes batched matmuls of equal batches, not {x.shape} x {y.shape}"
        )
    batch = math.prod(x.shape[:-2])
    x3 = reshaped(emitter, x, (batch, *x.shape[-2:]))
    y3 = reshaped(emitter, y, (batch, *y.shape[-2:]))
    return reshaped(emitter, product(emitter, "batch_matmul", x3, y3, element), out_shape)


def _in_whole_sticks(
    emitter: Emitter, op: Operation, x: HostTensor, y: HostTensor, sticks: tuple[int, int]
) -> HostTensor:
    """`matmul` on zero-padded K and N (`sticks`), cut back to y's N."""
    k, n = x.shape[-1], y.shape[-1]
    k_padded, n_padded = max(sticks[0], k), max(sticks[1], n)
    if y.shape[-2] > k:
        y = k_rows(emitter, y, k)
    x = zero_padded(emitter, x, (*x.shape[:-1], k_padded))
    y = zero_padded(emitter, y, (*y.shape[:-2], k_padded, n_padded))
    out = _per_core(emitter, op, x, y) or matmul(emitter, op, [x, y])
    return extract_slice(emitter, out, [0] * len(out.shape), (*out.shape[:-1], n))


def per_core_operands(emitter: Emitter, x: HostTensor, y: HostTensor) -> tuple[HostTensor, HostTensor] | None:
    """
    A matmul kernel's x tile with leading size-1 dims (1 x M x K) and a 2-D y as a batch of one
    each: ktir's simulator runs such a tile as one GEMM per core (a 2-D x tile: one GEMM over
    the cores that share y), and the ktdp engine runs a batch matmul per tile (a kernel's 2-D
    `linalg.matmul`: one GEMM per shared y); a GEMM's bits depend on its rows. None otherwise.
    """
    if len(x.shape) < 3 or math.prod(x.shape[:-2]) != 1 or len(y.shape) != 2:
        return None
    return reshaped(emitter, x, (1, *x.shape[-2:])), reshaped(emitter, y, (1, *y.shape))


def _per_core(emitter: Emitter, op: Operation, x: HostTensor, y: HostTensor) -> HostTensor | None:
    """`linalg.batch_matmul` of a batch of one (`per_core_operands`), in x's shape; None otherwise."""
    operands = per_core_operands(emitter, x, y)
    if operands is None:
        return None
    element = cast(TensorType[Attribute], op.results[0].type).element_type
    out = product(emitter, "batch_matmul", *operands, element)
    return reshaped(emitter, out, (*x.shape[:-1], y.shape[-1]))


def size_one_reshape(op: st.ReshapeOp, value: HostTensor) -> tuple[int, ...] | None:
    """The tile shape of a reshape that only adds or drops size-1 dims (None for another reshape)."""
    before, after = shape_of(op.input.type), shape_of(op.result.type)
    if [n for n in before if n != 1] != [n for n in after if n != 1]:
        return None
    extents = iter(e for e, n in zip(value.shape, before, strict=True) if n != 1)
    return tuple(next(extents) if n != 1 else 1 for n in after)


__all__ = ["broadcast_shape", "elementwise", "generic", "matmul", "per_core_operands", "size_one_reshape"]
