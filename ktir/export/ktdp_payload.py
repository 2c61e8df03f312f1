"""
The payload of a `ktir.compute` as `linalg` on host tiles, in ktir's numerics.

Each graph op of a payload (a `ktir.fused` region op by op) becomes one `linalg` op on tensors
of the host tile's shape; the value it computes is the one ktir's reference computes for it:
- an elementwise op is a `linalg.generic` that widens fp16 operands to f32 (`arith.extf`),
  computes the reference's formula in f32 op by op, and rounds once to the result type
  (`arith.truncf`); operands broadcast as NumPy broadcasts host tiles (right-aligned, a size-1
  dim read at 0 through its indexing map);
- `ktir.matmul` / `ktir.bmm` are `linalg.matmul` / `linalg.batch_matmul` into a
  `tensor.empty` (the product accumulated in f32 and rounded once, as the PE arrays do).

Example: `ktir.silu` of a 2 x 64 f16 tile is a generic whose body is `extf`, `negf`,
`math.exp`, `addf 1.0`, `divf`, `truncf`: the reference's `x / (1 + exp(-x))` in f32.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import cast

import numpy as np
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, Float64Type, TensorType, i1
from xdsl.ir import Attribute, Operation

from ktir.dialects.ktir import elementwise as ew
from ktir.dialects.ktir import structured as st
from ktir.ir.diagnostics import op_error
from ktir.ir.values import shape_of
from ktir.layout.dtypes import numpy_dtype
from ktir.layout.shapes import ShapeError, broadcast_shapes


@dataclass(frozen=True)
class HostTensor:
    """An SSA tensor of the emitted program: its name, host tile shape and element type."""

    name: str
    shape: tuple[int, ...]
    element: Attribute
    read_as: Attribute | None = None
    """The narrower type an op reads it in (a matmul epilogue's fp32 accumulator read as fp16)."""

    @property
    def type_text(self) -> str:
        """Its MLIR type: `tensor<2x64xf16>`."""
        return tensor_type(self.shape, self.element)


def float_literal(value: float, element: Attribute) -> str:
    """
    A float attribute's literal: its decimal form, or for an infinity or NaN (which MLIR has
    no decimal for) its bits in hex: -inf in f16 is `0xFC00`.
    """
    if math.isfinite(value):
        return repr(value)
    if isinstance(element, BFloat16Type):
        bits = int(np.float32(value).view(np.uint32)) >> 16
        return f"0x{bits:04X}"
    dtype = numpy_dtype(element)
    unsigned = np.dtype(f"u{dtype.itemsize}")
    return f"0x{int(np.asarray(value, dtype).view(unsigned)):0{2 * dtype.itemsize}X}"


def dims_text(shape: Sequence[int]) -> str:
    """The dims of a shaped type: `2x64x` for (2, 64), empty for rank 0."""
    return "".join(f"{n}x" for n in shape)


def tensor_type(shape: Sequence[int], element: Attribute) -> str:
    """`tensor<2x64xf16>` (`tensor<f16>` for rank 0)."""
    return f"tensor<{dims_text(shape)}{element}>"


def destination(writer: Writer, shape: Sequence[int], element: Attribute) -> tuple[HostTensor, str]:
    """A linalg op's result (a fresh name) and its `tensor.empty` destination, emitted."""
    out = HostTensor(writer.fresh("t"), tuple(shape), element)
    empty = writer.fresh("e")
    writer.emit(f"{empty} = tensor.empty() : {out.type_text}")
    return out, empty


@dataclass
class Writer:
    """
    The lines of one emitted function, a supply of fresh SSA names, and the routine functions
    it calls (`ktdp_routines.outlined`), shared with their writers.
    """

    lines: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    depth: int = 0
    """Regions the next line is nested in beyond the function body (an `scf.for`'s)."""
    function: str = "kernel"
    """The kernel function's name (routines are named after it)."""
    routines: list[str] = field(default_factory=list)
    """The text of every routine function the kernel calls."""

    def fresh(self, stem: str) -> str:
        """A new SSA name `%stem<k>`."""
        k = self.counts.get(stem, 0)
        self.counts[stem] = k + 1
        return f"%{stem}{k}"

    def emit(self, line: str, indent: int = 1) -> None:
        """One line of the body."""
        self.lines.append("  " * (self.depth + indent) + line)


_F32 = Float32Type()

Formula = Callable[[Writer, list[str]], str]
"""Scalar ops of a generic body on f32 values (SSA names); returns the result's name."""


def scalar_op(writer: Writer, text: str) -> str:
    """One scalar op of a region body (`text` its right-hand side); its result's name."""
    name = writer.fresh("v")
    writer.emit(f"{name} = {text}", 2)
    return name


def _constant(writer: Writer, value: float) -> str:
    return scalar_op(writer, f"arith.constant {value!r} : f32")


def _binary(name: str) -> Formula:
    return lambda w, a: scalar_op(w, f"arith.{name} {a[0]}, {a[1]} : f32")


def _unary(name: str) -> Formula:
    return lambda w, a: scalar_op(w, f"{name} {a[0]} : f32")


def _reciprocal(w: Writer, a: list[str]) -> str:
    return scalar_op(w, f"arith.divf {_constant(w, 1.0)}, {a[0]} : f32")


def _sigmoid(w: Writer, a: list[str]) -> str:
    e = scalar_op(w, f"math.exp {scalar_op(w, f'arith.negf {a[0]} : f32')} : f32")
    return scalar_op(
        w,
        f"arith.divf {_constant(w, 1.0)}, {scalar_op(w, f'arith.addf {e}, {_constant(w, 1.0)} : f32')} : f32",
    )


def _silu(w: Writer, a: list[str]) -> str:
    e = scalar_op(w, f"math.exp {scalar_op(w, f'arith.negf {a[0]} : f32')} : f32")
    return scalar_op(
        w, f"arith.divf {a[0]}, {scalar_op(w, f'arith.addf {e}, {_constant(w, 1.0)} : f32')} : f32"
    )


def _half_x_times_one_plus(w: Writer, x: str, t: str) -> str:
    """GELU's `0.5 * x * (1 + t)`, in the reference's order: `(0.5 * x) * (1 + t)`."""
    half = scalar_op(w, f"arith.mulf {_constant(w, 0.5)}, {x} : f32")
    return scalar_op(
        w, f"arith.mulf {half}, {scalar_op(w, f'arith.addf {_constant(w, 1.0)}, {t} : f32')} : f32"
    )


def _erf_gelu(w: Writer, a: list[str]) -> str:
    # 0.5 * x * (1 + erf(x * (1 / sqrt 2))), in the reference's order of operations
    scaled = scalar_op(w, f"arith.mulf {a[0]}, {_constant(w, float(np.float32(1 / math.sqrt(2))))} : f32")
    erf = scalar_op(w, f"math.erf {scaled} : f32")
    return _half_x_times_one_plus(w, a[0], erf)


def _tanh_gelu(w: Writer, a: list[str]) -> str:
    # 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x * x * x)))
    cube = scalar_op(w, f"arith.mulf {_constant(w, float(np.float32(0.044715)))}, {a[0]} : f32")
    cube = scalar_op(w, f"arith.mulf {scalar_op(w, f'arith.mulf {cube}, {a[0]} : f32')}, {a[0]} : f32")
    inner = scalar_op(w, f"arith.addf {a[0]}, {cube} : f32")
    inner = scalar_op(
        w, f"arith.mulf {_constant(w, float(np.float32(math.sqrt(2 / math.pi))))}, {inner} : f32"
    )
    tanh = scalar_op(w, f"math.tanh {inner} : f32")
    return _half_x_times_one_plus(w, a[0], tanh)


GELU: dict[bool, Formula] = {False: _erf_gelu, True: _tanh_gelu}
"""`ktir.gelu`'s formula, by whether it is the tanh approximation."""

FORMULAS: dict[type[Operation], Formula] = {
    ew.AddOp: _binary("addf"),
    ew.SubOp: _binary("subf"),
    ew.MulOp: _binary("mulf"),
    ew.DivOp: _binary("divf"),
    ew.MaximumOp: _binary("maximumf"),
    ew.MinimumOp: _binary("minimumf"),
    ew.NegOp: _unary("arith.negf"),
    ew.AbsOp: _unary("math.absf"),
    ew.ExpOp: _unary("math.exp"),
    ew.LogOp: _unary("math.log"),
    ew.SqrtOp: _unary("math.sqrt"),
    ew.RsqrtOp: _unary("math.rsqrt"),
    ew.TanhOp: _unary("math.tanh"),
    ew.ReciprocalOp: _reciprocal,
    ew.SigmoidOp: _sigmoid,
    ew.SiluOp: _silu,
    ew.SquareOp: lambda w, a: scalar_op(w, f"arith.mulf {a[0]}, {a[0]} : f32"),
    ew.ConvertOp: lambda w, a: a[0],
}
"""The reference's formula of each elementwise op the emitter writes, in f32 (`ktir.reference.ops`)."""


def _float_element(element: Attribute) -> bool:
    return isinstance(element, Float16Type | BFloat16Type | Float32Type | Float64Type)


def _widened(writer: Writer, name: str, element: Attribute, compute: Attribute = _F32) -> str:
    if element == compute or not _float_element(element):  # a mask's i1 is read as it is
        return name
    return scalar_op(writer, f"arith.extf {name} : {element} to {compute}")


def _rounded(writer: Writer, name: str, element: Attribute, compute: Attribute = _F32) -> str:
    if element == compute:
        return name
    return scalar_op(writer, f"arith.truncf {name} : {compute} to {element}")


def broadcast_shape(op: Operation, shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    """NumPy's broadcast of host tile shapes (right-aligned); a located error if they clash."""
    try:
        return broadcast_shapes(*shapes)
    except ShapeError:
        raise op_error(op, f"its host tiles {list(shapes)} do not broadcast") from None


def _indexing_map(shape: tuple[int, ...], out: tuple[int, ...]) -> str:
    """
    The map from the output's dims to an operand's: right-aligned, a size-1 dim the output
    broadcasts read at 0. Example: a (64,) bias in a (2, 64) add is `(d0, d1) -> (d1)`, a
    (2, 1) column is `(d0, d1) -> (d0, 0)`.
    """
    rank = len(out)
    dims = ", ".join(f"d{i}" for i in range(rank))
    skip = rank - len(shape)
    results = ["0" if size == 1 and out[skip + i] != 1 else f"d{skip + i}" for i, size in enumerate(shape)]
    return f"affine_map<({dims}) -> ({', '.join(results)})>"


def generic(
    writer: Writer,
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
    if not _float_element(element) or not all(_float_element(t.element) or t.element == i1 for t in operands):
        raise op_error(op, "ktir-emit-ktdp writes elementwise ops on float tensors (and i1 masks) only")
    shape = broadcast_shape(op, [t.shape for t in operands])
    rank = len(shape)
    maps = [_indexing_map(t.shape, shape) for t in operands] + [_indexing_map(shape, shape)]
    out, empty = destination(writer, shape, element)
    iterators = ", ".join(['"parallel"'] * rank)
    ins = ", ".join(t.name for t in operands)
    in_types = ", ".join(t.type_text for t in operands)
    writer.emit(
        f"{out.name} = linalg.generic {{indexing_maps = [{', '.join(maps)}], "
        f"iterator_types = [{iterators}]}} "
        f"ins({ins} : {in_types}) outs({empty} : {out.type_text}) {{"
    )
    args = [writer.fresh("a") for _ in operands]
    block_args = ", ".join(f"{a}: {t.element}" for a, t in zip(args, operands, strict=True))
    writer.emit(f"^bb0({block_args}, {writer.fresh('o')}: {element}):")
    # An fp32 accumulator read by an fp16 op is rounded to fp16 first, in the body (a cast: no
    # pass of its own), as ktir rounds it once to the matmul's result type (`run_fused`).
    read = [
        (_rounded(writer, a, t.read_as, t.element), t.read_as) if t.read_as is not None else (a, t.element)
        for a, t in zip(args, operands, strict=True)
    ]
    wide = [_widened(writer, a, e, compute) for a, e in read]
    result = _rounded(writer, formula(writer, wide), element, compute)
    writer.emit(f"linalg.yield {result} : {element}", 2)
    writer.emit(f"}} -> {out.type_text}")
    return out


def elementwise(writer: Writer, op: Operation, operands: list[HostTensor]) -> HostTensor:
    """An elementwise graph op as a `linalg.generic` over the broadcast host tile (module docstring)."""
    element = cast(TensorType, op.results[0].type).element_type
    return generic(writer, op, operands, element, FORMULAS[type(op)])


def matmul(
    writer: Writer, op: Operation, operands: list[HostTensor], sticks: tuple[int, int] | None = None
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
        return _in_whole_sticks(writer, op, x, y, sticks)
    if x.shape[-1] > y.shape[-2]:
        raise op_error(op, f"its x tile {x.shape} is longer than its y tile {y.shape} along K")
    if x.shape[-1] < y.shape[-2]:  # y carries matmul padding rows: the product reads x's K only
        y = _k_rows(writer, y, x.shape[-1])
    element = cast(TensorType, op.results[0].type).element_type
    out_shape = (*broadcast_shape(op, [x.shape[:-2], y.shape[:-2]]), x.shape[-2], y.shape[-1])
    if all(n == 1 for n in y.shape[:-2]):  # one y for every row of x: a 2-D product
        x2 = reshaped(writer, x, (math.prod(x.shape[:-1]), x.shape[-1]))
        y2 = reshaped(writer, y, y.shape[-2:])
        return reshaped(writer, product(writer, "linalg.matmul", x2, y2, element), out_shape)
    if x.shape[:-2] != y.shape[:-2]:
        raise op_error(
            op, f"ktir-emit-ktdp writes batched matmuls of equal batches, not {x.shape} x {y.shape}"
        )
    batch = math.prod(x.shape[:-2])
    x3 = reshaped(writer, x, (batch, *x.shape[-2:]))
    y3 = reshaped(writer, y, (batch, *y.shape[-2:]))
    return reshaped(writer, product(writer, "linalg.batch_matmul", x3, y3, element), out_shape)


def _in_whole_sticks(
    writer: Writer, op: Operation, x: HostTensor, y: HostTensor, sticks: tuple[int, int]
) -> HostTensor:
    """`matmul` on zero-padded K and N (`sticks`), cut back to y's N."""
    k, n = x.shape[-1], y.shape[-1]
    k_padded, n_padded = max(sticks[0], k), max(sticks[1], n)
    if y.shape[-2] > k:
        y = _k_rows(writer, y, k)
    x = zero_padded(writer, x, (*x.shape[:-1], k_padded))
    y = zero_padded(writer, y, (*y.shape[:-2], k_padded, n_padded))
    out = _per_core(writer, op, x, y) or matmul(writer, op, [x, y])
    return extract_slice(writer, out, [0] * len(out.shape), (*out.shape[:-1], n))


def per_core_operands(writer: Writer, x: HostTensor, y: HostTensor) -> tuple[HostTensor, HostTensor] | None:
    """
    A matmul kernel's x tile with leading size-1 dims (1 x M x K) and a 2-D y as a batch of one
    each: ktir's simulator runs such a tile as one GEMM per core (a 2-D x tile: one GEMM over
    the cores that share y), and the ktdp engine runs a batch matmul per tile (a kernel's 2-D
    `linalg.matmul`: one GEMM per shared y); a GEMM's bits depend on its rows. None otherwise.
    """
    if len(x.shape) < 3 or math.prod(x.shape[:-2]) != 1 or len(y.shape) != 2:
        return None
    return reshaped(writer, x, (1, *x.shape[-2:])), reshaped(writer, y, (1, *y.shape))


def _per_core(writer: Writer, op: Operation, x: HostTensor, y: HostTensor) -> HostTensor | None:
    """`linalg.batch_matmul` of a batch of one (`per_core_operands`), in x's shape; None otherwise."""
    operands = per_core_operands(writer, x, y)
    if operands is None:
        return None
    element = cast(TensorType, op.results[0].type).element_type
    out = product(writer, "linalg.batch_matmul", *operands, element)
    return reshaped(writer, out, (*x.shape[:-1], y.shape[-1]))


def zero_padded(writer: Writer, value: HostTensor, shape: tuple[int, ...]) -> HostTensor:
    """`value` at the start of a zero tensor of `shape` (itself when the shapes agree)."""
    if value.shape == tuple(shape):
        return value
    zeros = HostTensor(writer.fresh("z"), tuple(shape), value.element)
    writer.emit(f"{zeros.name} = arith.constant dense<0.0> : {zeros.type_text}")
    return insert_slice(writer, value, zeros, [0] * len(shape))


def product(writer: Writer, name: str, x: HostTensor, y: HostTensor, element: Attribute) -> HostTensor:
    """`name` (`linalg.matmul` or `linalg.batch_matmul`) of `x` and `y` into a `tensor.empty`."""
    return _into_empty(writer, name, [x, y], (*x.shape[:-1], y.shape[-1]), element)


def _into_empty(
    writer: Writer, name: str, ins: Sequence[HostTensor], shape: tuple[int, ...], element: Attribute
) -> HostTensor:
    """A named `linalg` op of `ins` whose destination is a new `tensor.empty` of `shape`."""
    out, empty = destination(writer, shape, element)
    names, types = ", ".join(t.name for t in ins), ", ".join(t.type_text for t in ins)
    writer.emit(
        f"{out.name} = {name} ins({names} : {types}) outs({empty} : {out.type_text}) -> {out.type_text}"
    )
    return out


def reshaped(writer: Writer, value: HostTensor, shape: tuple[int, ...]) -> HostTensor:
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
        out = HostTensor(writer.fresh("t"), shape, value.element)
        writer.emit(
            f"{out.name} = tensor.collapse_shape {value.name} [] : {value.type_text} into {out.type_text}"
        )
        return out
    if not value.shape:
        out, element = HostTensor(writer.fresh("t"), shape, value.element), writer.fresh("v")
        writer.emit(f"{element} = tensor.extract {value.name}[] : {value.type_text}")
        writer.emit(f"{out.name} = tensor.splat {element} : {out.type_text}")
        return out
    flat = value
    if len(value.shape) != 1:
        flat = HostTensor(writer.fresh("t"), (math.prod(shape),), value.element)
        group = ", ".join(str(d) for d in range(len(value.shape)))
        writer.emit(
            f"{flat.name} = tensor.collapse_shape {value.name} [[{group}]] : "
            f"{value.type_text} into {flat.type_text}"
        )
    if len(shape) == 1:
        return flat
    out = HostTensor(writer.fresh("t"), shape, value.element)
    group = ", ".join(str(d) for d in range(len(shape)))
    writer.emit(
        f"{out.name} = tensor.expand_shape {flat.name} [[{group}]] output_shape {list(shape)} : "
        f"{flat.type_text} into {out.type_text}"
    )
    return out


def copied(writer: Writer, value: HostTensor) -> HostTensor:
    """`linalg.copy` of a tile into a new tensor (the data movement of a relayout kernel)."""
    return _into_empty(writer, "linalg.copy", [value], value.shape, value.element)


def permutes_elements(shape: Sequence[int], perm: Sequence[int]) -> bool:
    """Whether permuting dims by `perm` reorders elements (it does not when only size-1 dims move)."""
    moved = [p for p in perm if shape[p] != 1]
    return moved != sorted(moved)


def transpose(writer: Writer, value: HostTensor, perm: Sequence[int]) -> HostTensor:
    """
    `linalg.transpose` of a tile (result dim i is `value`'s dim `perm[i]`, as NumPy's); a
    reshape when only size-1 dims move (1 x 24 x 1 x 16 by [0, 2, 1, 3] is 1 x 1 x 24 x 16).
    """
    if list(perm) == list(range(len(perm))):
        return value
    shape = tuple(value.shape[p] for p in perm)
    if not permutes_elements(value.shape, perm):
        return reshaped(writer, value, shape)
    out, empty = destination(writer, shape, value.element)
    writer.emit(
        f"{out.name} = linalg.transpose ins({value.name} : {value.type_text}) "
        f"outs({empty} : {out.type_text}) "
        f"permutation = {list(perm)}"
    )
    return out


def size_one_reshape(op: st.ReshapeOp, value: HostTensor) -> HostTensor | None:
    """The tile shape of a reshape that only adds or drops size-1 dims (None for another reshape)."""
    before, after = shape_of(op.input.type), shape_of(op.result.type)
    if [n for n in before if n != 1] != [n for n in after if n != 1]:
        return None
    extents = iter(e for e, n in zip(value.shape, before, strict=True) if n != 1)
    return HostTensor(value.name, tuple(next(extents) if n != 1 else 1 for n in after), value.element)


def _k_rows(writer: Writer, y: HostTensor, k: int) -> HostTensor:
    """The first `k` rows (dim -2) of a y tile."""
    return extract_slice(writer, y, [0] * len(y.shape), (*y.shape[:-2], k, y.shape[-1]))


def extract_slice(
    writer: Writer,
    value: HostTensor,
    offsets: Sequence[int],
    shape: tuple[int, ...],
    strides: Sequence[int] | None = None,
) -> HostTensor:
    """`tensor.extract_slice` of `shape` at `offsets` (unit strides unless given)."""
    out = HostTensor(writer.fresh("t"), shape, value.element)
    steps = list(strides) if strides is not None else [1] * len(shape)
    writer.emit(
        f"{out.name} = tensor.extract_slice {value.name}{list(offsets)} {list(shape)} {steps} : "
        f"{value.type_text} to {out.type_text}"
    )
    return out


def insert_slice(writer: Writer, value: HostTensor, into: HostTensor, offsets: Sequence[int]) -> HostTensor:
    """`tensor.insert_slice` of `value` into `into` at `offsets` (unit strides)."""
    out = HostTensor(writer.fresh("t"), into.shape, into.element)
    writer.emit(
        f"{out.name} = tensor.insert_slice {value.name} into {into.name}{list(offsets)} {list(value.shape)} "
        f"{[1] * len(offsets)} : {value.type_text} into {into.type_text}"
    )
    return out


__all__ = [
    "FORMULAS",
    "GELU",
    "Formula",
    "HostTensor",
    "Writer",
    "copied",
    "destination",
    "dims_text",
    "elementwise",
    "extract_slice",
    "float_literal",
    "generic",
    "insert_slice",
    "matmul",
    "permutes_elements",
    "product",
    "reshaped",
    "scalar_op",
    "size_one_reshape",
    "tensor_type",
    "transpose",
    "zero_padded",
]
