"""
Host tiles moved and reshaped with `tensor` and `linalg` ops: a new `tensor.empty`
destination, reshapes (a collapse to 1-D and an expand), slices, zero padding, transposes,
copies, and the named ops (`linalg.matmul`, `batch_matmul`, `copy`) into a new destination.

Example: `reshaped(emitter, t, (2, 64))` of a 2 x 1 x 64 tile is
`tensor.collapse_shape %t [[0, 1, 2]]` to 128 elements, then `tensor.expand_shape` to 2 x 64.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import cast

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    TensorType,
    i64,
)
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Attribute, SSAValue

from ktir.dialects.linalg_ext import BatchMatmulOp, MatmulOp
from ktir.export.to_ktdp.emitter import Emitter, HostTensor, tensor_type

PRODUCTS: dict[str, type[MatmulOp | BatchMatmulOp]] = {"matmul": MatmulOp, "batch_matmul": BatchMatmulOp}
"""The `linalg` products by name: a 2-D matmul, or one over a leading batch dim."""


def destination(emitter: Emitter, shape: Sequence[int], element: Attribute) -> tuple[str, HostTensor]:
    """A linalg op's result name (taken first) and its new `tensor.empty` destination."""
    name = emitter.fresh("t")
    empty = emitter.tensor(tensor.EmptyOp([], tensor_type(shape, element)), "e")
    return name, empty


def _reassociation(groups: Sequence[Sequence[int]]) -> ArrayAttr[ArrayAttr[IntegerAttr]]:
    return ArrayAttr([ArrayAttr([IntegerAttr(d, i64) for d in group]) for group in groups])


def _collapsed(emitter: Emitter, value: HostTensor, shape: tuple[int, ...]) -> HostTensor:
    """`tensor.collapse_shape` of `value` to `shape` (rank 0 or 1: one group, or none)."""
    groups = [list(range(len(value.shape)))] if shape else []
    op = tensor.CollapseShapeOp.build(
        operands=[value.value],
        properties={"reassociation": _reassociation(groups)},
        result_types=[tensor_type(shape, value.element)],
    )
    return emitter.tensor(op)


def reshaped(emitter: Emitter, value: HostTensor, shape: tuple[int, ...]) -> HostTensor:
    """
    `value` in `shape` (the same elements in row-major order): a collapse to 1-D and an expand.
    To rank 0, a collapse with no groups (`collapse_shape %t [] : tensor<1x1xf32> into
    tensor<f32>`); from rank 0, its element splat (xDSL's verifier refuses MLIR's group-less
    expand).
    """
    if value.shape == shape:
        return value
    if math.prod(shape) != math.prod(value.shape):
        raise ValueError(f"cannot reshape a {value.shape} tile to {shape}")
    if not shape:
        return _collapsed(emitter, value, shape)
    if not value.shape:
        name = emitter.fresh("t")
        element = emitter.value(tensor.ExtractOp(value.value, [], value.element), "v")
        return HostTensor(emitter.named(tensor.SplatOp(element, [], tensor_type(shape, value.element)), name))
    flat = value
    if len(value.shape) != 1:
        flat = _collapsed(emitter, value, (math.prod(shape),))
    if len(shape) == 1:
        return flat
    expand = tensor.ExpandShapeOp(
        flat.value, [], _reassociation([list(range(len(shape)))]), shape, tensor_type(shape, value.element)
    )
    return emitter.tensor(expand)


def into_empty(
    emitter: Emitter,
    op_type: type[linalg.CopyOp | MatmulOp | BatchMatmulOp],
    ins: Sequence[HostTensor],
    shape: tuple[int, ...],
    element: Attribute,
) -> HostTensor:
    """A named `linalg` op of `ins` whose destination is a new `tensor.empty` of `shape`."""
    name, empty = destination(emitter, shape, element)
    return HostTensor(emitter.named(op_type([t.value for t in ins], [empty.value]), name))


def product(emitter: Emitter, kind: str, x: HostTensor, y: HostTensor, element: Attribute) -> HostTensor:
    """`linalg.<kind>` (`matmul` or `batch_matmul`) of `x` and `y` into a `tensor.empty`."""
    return into_empty(emitter, PRODUCTS[kind], [x, y], (*x.shape[:-1], y.shape[-1]), element)


def copied(emitter: Emitter, value: HostTensor) -> HostTensor:
    """`linalg.copy` of a tile into a new tensor (the data movement of a relayout kernel)."""
    return into_empty(emitter, linalg.CopyOp, [value], value.shape, value.element)


def permutes_elements(shape: Sequence[int], perm: Sequence[int]) -> bool:
    """Whether permuting dims by `perm` reorders elements (it does not when only size-1 dims move)."""
    moved = [p for p in perm if shape[p] != 1]
    return moved != sorted(moved)


def transpose(emitter: Emitter, value: HostTensor, perm: Sequence[int]) -> HostTensor:
    """
    `linalg.transpose` of a tile (result dim i is `value`'s dim `perm[i]`, as NumPy's); a
    reshape when only size-1 dims move (1 x 24 x 1 x 16 by [0, 2, 1, 3] is 1 x 1 x 24 x 16).
    """
    if list(perm) == list(range(len(perm))):
        return value
    shape = tuple(value.shape[p] for p in perm)
    if not permutes_elements(value.shape, perm):
        return reshaped(emitter, value, shape)
    name, empty = destination(emitter, shape, value.element)
    permutation = DenseArrayBase.from_list(i64, list(perm))
    return HostTensor(emitter.named(linalg.TransposeOp(value.value, empty.value, permutation), name))


def extract_slice(
    emitter: Emitter,
    value: HostTensor,
    offsets: Sequence[int | SSAValue],
    shape: tuple[int, ...],
    strides: Sequence[int] | None = None,
) -> HostTensor:
    """`tensor.extract_slice` of `shape` at `offsets` (integers or indices; unit strides unless given)."""
    steps = list(strides) if strides is not None else [1] * len(shape)
    name = emitter.fresh("t")
    op = tensor.ExtractSliceOp(
        value.value, list(offsets), list(shape), steps, tensor_type(shape, value.element)
    )
    return HostTensor(emitter.named(op, name))


def insert_slice(emitter: Emitter, value: HostTensor, into: HostTensor, offsets: Sequence[int]) -> HostTensor:
    """`tensor.insert_slice` of `value` into `into` at `offsets` (unit strides)."""
    op = tensor.InsertSliceOp.from_static_parameters(
        value.value, into.value, list(offsets), list(value.shape)
    )
    return emitter.tensor(op)


def constant(emitter: Emitter, attribute: DenseIntOrFPElementsAttr, stem: str) -> HostTensor:
    """An `arith.constant` of a tensor (`dense<...>`), named by a fresh `stem`."""
    return emitter.tensor(arith.ConstantOp(attribute), stem)


def splat(value: float, shape: Sequence[int], element: Attribute) -> DenseIntOrFPElementsAttr:
    """`dense<value> : tensor<shape x element>` (every element stored, as MLIR's parser stores it)."""
    tile_type = cast("TensorType[AnyFloat]", tensor_type(shape, element))
    return DenseIntOrFPElementsAttr.from_list(tile_type, [value] * math.prod(shape))


def zero_padded(emitter: Emitter, value: HostTensor, shape: tuple[int, ...]) -> HostTensor:
    """`value` at the start of a zero tensor of `shape` (itself when the shapes agree)."""
    if value.shape == tuple(shape):
        return value
    zeros = constant(emitter, splat(0.0, shape, value.element), "z")
    return insert_slice(emitter, value, zeros, [0] * len(shape))


def k_rows(emitter: Emitter, y: HostTensor, k: int) -> HostTensor:
    """The first `k` rows (dim -2) of a y tile."""
    return extract_slice(emitter, y, [0] * len(y.shape), (*y.shape[:-2], k, y.shape[-1]))


__all__ = [
    "PRODUCTS",
    "constant",
    "copied",
    "destination",
    "extract_slice",
    "insert_slice",
    "into_empty",
    "k_rows",
    "permutes_elements",
    "product",
    "reshaped",
    "splat",
    "transpose",
    "zero_padded",
]
