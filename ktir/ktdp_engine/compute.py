"""
ktdp's compute on every tile at once: `arith`, `math`, `tensor` and `linalg` ops as one NumPy
call for all tiles, each charged on the PE arrays or the SFU of ktir's chip model.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    Float16Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    TensorType,
)
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr

from ktir.dialects.ktdp import ops as ktdp
from ktir.hardware import accounting, cost_model
from ktir.ir.diagnostics import location_of
from ktir.ir.interpreter import Implementations
from ktir.ir.values import element_type_of, shape_of
from ktir.ktdp_engine.charges import device_itemsize
from ktir.ktdp_engine.compare import compare
from ktir.ktdp_engine.folds import fold_reduce
from ktir.ktdp_engine.memory import KtdpError
from ktir.ktdp_engine.numerics import compute_precision, elementwise
from ktir.layout.dtypes import numpy_dtype
from ktir.layout.sticks import in_sticks
from ktir.reference.precision import erf, in_float64, store
from ktir.sim.gemm import matmul_f32

if TYPE_CHECKING:
    from ktir.ktdp_engine.engine import Handler, TileProgram

IMPLS: Implementations[Handler] = Implementations()
"""The compute ops (`ktir.ir.interpreter`): `tensor` ops by class, `arith` (its constants; the lock-step
core, `ktir.ir.lockstep`, runs its index arithmetic), `math` and `linalg` by dialect."""


_BINARY = {
    "addf": np.add, "subf": np.subtract, "mulf": np.multiply, "divf": np.divide,
    "maximumf": np.maximum, "minimumf": np.minimum, "maxnumf": np.fmax, "minnumf": np.fmin,
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "max": np.maximum,
    "min": np.minimum,
}  # fmt: skip
_UNARY = {
    "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "tanh": np.tanh, "negf": np.negative, "absf": np.abs, "erf": erf,
    # cos and sin in float64, rounded once, as ktir's reference evaluates them (and erf)
    "cos": lambda x: in_float64(np.cos, x), "sin": lambda x: in_float64(np.sin, x),
}  # fmt: skip
_IDENTITY = {"addf": 0.0, "add": 0.0, "mulf": 1.0, "maximumf": -np.inf, "maxnumf": -np.inf,
             "minimumf": np.inf, "minnumf": np.inf}  # fmt: skip
_REDUCE = {"addf": np.sum, "mulf": np.prod, "maximumf": np.max, "maxnumf": np.fmax.reduce,
           "minimumf": np.min, "minnumf": np.fmin.reduce}  # fmt: skip
_CASTS = ("extf", "truncf", "sitofp", "fptosi", "fptoui", "extsi", "trunci")
"""Casts whose value is the operand's, rounded (toward zero for a float to an integer) or wrapped
to the result type by `elementwise`'s `store`."""
_UNSIGNED_CASTS = ("uitofp", "extui", "index_castui")
"""Casts that read the operand's bits as unsigned."""


def _same(array: np.ndarray) -> np.ndarray:
    """A cast's value (the rounding to the result type is `elementwise`'s)."""
    return array


def _charge_sfu(
    run: TileProgram, name: str, elements: int, in_elements: int = 0, passes: float | None = None
) -> None:
    """
    The op named `name` on every tile's `elements` result elements (`in_elements` input
    elements), in whole sticks: its SFU time (`cost_model.sfu_cycles_of`) and its FLOPs
    (`accounting.sfu_flops_of`), the rules ktir's own ops are charged by.
    """
    cycles = cost_model.sfu_cycles_of(name, in_elements, elements, run.target, passes)
    flops = accounting.sfu_flops_of(name, in_elements, elements, passes)
    run.charges.charge("sfu", cycles, flops * run.tiles)


def charge_result(run: TileProgram, op: Operation) -> None:
    """An SFU op over its result's elements (`_charge_sfu`)."""
    result = op.results[0]
    shape = tuple(result.type.get_shape()) if isinstance(result.type, TensorType) else ()
    itemsize = device_itemsize(numpy_dtype(element_type_of(result)))
    _charge_sfu(run, op.name, in_sticks(shape, itemsize, run.target.stick_bytes))


@IMPLS.impl_dialect("arith")
@IMPLS.impl(arith.ConstantOp)
def _arith(run: TileProgram, op: Operation) -> list[Any]:
    short = op.name.split(".")[1]
    if isinstance(op, arith.ConstantOp):
        return [_constant(run, op)]
    if short in ("cmpi", "cmpf"):
        return [compare(op, *(np.asarray(run.env[v]) for v in op.operands))]
    if short == "select":
        cond, a, b = (np.asarray(run.env[v]) for v in op.operands)
        return [np.where(cond.reshape(cond.shape + (1,) * (np.ndim(a) - cond.ndim)), a, b)]
    if short in _UNSIGNED_CASTS or short in ("index_cast", "bitcast"):
        return [_integer_cast(run, op, short)]
    if isinstance(op.results[0].type, IndexType):  # index arithmetic is the lock-step core's
        raise KtdpError(f"'{op.name}' is not supported by the ktdp engine", location_of(op))
    fn = _BINARY.get(short) or _UNARY.get(short) or (_same if short in _CASTS else None)
    if fn is None:
        raise KtdpError(f"'{op.name}' is not supported by the ktdp engine", location_of(op))
    if isinstance(op.results[0].type, TensorType):
        charge_result(run, op)
    return [elementwise(fn, [run.env[v] for v in op.operands], element_type_of(op.results[0]))]


def _integer_cast(run: TileProgram, op: Operation, short: str) -> np.ndarray:
    """
    `index_cast`, `index_castui`, `uitofp` and `extui`: the operand as an integer, its bits read
    as unsigned for the `ui` casts from an integer type (`-1 : i8` is 255), in the result type;
    `bitcast`: the operand's bits read as the result's type (f32 <-> i32, f16 <-> i16).
    """
    source = element_type_of(op.operands[0])
    if short == "bitcast":
        bits = np.asarray(run.env[op.operands[0]]).astype(numpy_dtype(source))
        return bits.view(numpy_dtype(element_type_of(op.results[0])))
    value = np.asarray(run.env[op.operands[0]]).astype(np.int64)
    if short in _UNSIGNED_CASTS and isinstance(source, IntegerType) and source.width.data < 64:
        value = value % (1 << source.width.data)
    element = element_type_of(op.results[0])
    if isinstance(op.results[0].type, TensorType) and not isinstance(element, IndexType):
        charge_result(run, op)
    return value if isinstance(element, IndexType) else store(value, element)


def _constant(run: TileProgram, op: arith.ConstantOp) -> Any:
    value = op.value
    if isinstance(value, IntegerAttr):
        return np.int64(value.value.data)  # the same on every tile: a scalar broadcasts anywhere
    data = getattr(value, "value", None)
    if data is not None and hasattr(data, "data"):  # a float scalar
        return np.float64(data.data)
    # Neither an integer nor a float scalar: a dense elements literal.
    splat = cast(DenseIntOrFPElementsAttr, value).get_values()
    shape = shape_of(op.result)
    element = element_type_of(op.result)
    # A splat holds one value; a dense literal holds every element, flat in row-major order.
    array = np.asarray(splat[0] if len(splat) == 1 else splat)
    if array.size == math.prod(shape) and array.size > 1:
        array = array.reshape(shape)
    if not isinstance(element, IndexType):  # the constant in the type the program states
        array = store(array, element)
    # Every tile sees the same constant: a broadcast view gives it the tiles dim for free.
    return np.broadcast_to(np.broadcast_to(array, shape), (run.tiles, *shape))


@IMPLS.impl_dialect("math")
def _math(run: TileProgram, op: Operation) -> list[np.ndarray]:
    short = op.name.split(".")[1]
    if short not in _UNARY:
        raise KtdpError(f"'{op.name}' is not supported by the ktdp engine", location_of(op))
    if isinstance(op.results[0].type, TensorType):
        charge_result(run, op)
    return [elementwise(_UNARY[short], [run.env[op.operands[0]]], element_type_of(op.results[0]))]


@IMPLS.impl(tensor.EmptyOp)
def _empty(run: TileProgram, op: tensor.EmptyOp) -> list[np.ndarray]:
    run.empty.add(op.tensor)
    shape = tuple(op.tensor.type.get_shape())
    return [np.zeros((run.tiles, *shape), numpy_dtype(element_type_of(op.tensor)))]


@IMPLS.impl_dialect("linalg")
def _linalg(run: TileProgram, op: Operation) -> list[np.ndarray]:
    short = op.name.split(".")[1]
    handler = _LINALG.get(short)
    if handler is None:
        raise KtdpError(f"'{op.name}' is not supported by the ktdp engine", location_of(op))
    return handler(run, op)


def _named_elementwise(run: TileProgram, op: LinalgStructuredOperation) -> list[np.ndarray]:
    short = op.name.split(".")[1]
    fn = _BINARY[short] if short in _BINARY else _UNARY[short]
    result = op.results[0]
    charge_result(run, op)
    return [elementwise(fn, [run.env[v] for v in op.inputs], element_type_of(result))]


def _fill(run: TileProgram, op: LinalgStructuredOperation) -> list[np.ndarray]:
    out = np.asarray(run.env[op.outputs[0]])
    value = np.asarray(run.env[op.inputs[0]])
    value = value.reshape(value.shape + (1,) * (out.ndim - value.ndim)) if value.ndim else value
    # A write of the result's sticks at LX copy speed, as ktir zeroes an accumulator (`lx_fill`).
    itemsize = out.dtype.itemsize
    written = in_sticks(out.shape[1:], itemsize, run.target.stick_bytes) * itemsize
    run.charges.charge("sfu", cost_model.fill_cycles(written, run.target))
    return [store(np.broadcast_to(value, out.shape), element_type_of(op.results[0]))]


def _broadcast(run: TileProgram, op: Any) -> list[np.ndarray]:
    source = np.asarray(run.env[op.input])
    out_shape = tuple(op.init.type.get_shape())
    added = [d + 1 for d in op.dimensions.get_values()]  # +1: the tiles dim leads
    expanded = source
    for d in sorted(added):
        expanded = np.expand_dims(expanded, d)
    charge_result(run, op)
    return [np.broadcast_to(expanded, (run.tiles, *out_shape)).copy()]


def _copy(run: TileProgram, op: Any) -> list[np.ndarray]:
    """`linalg.copy`: the input moved into a new tensor, one SFU pass (a relayout in LX), no FLOPs."""
    charge_result(run, op)
    return [store(np.asarray(run.env[op.inputs[0]]), element_type_of(op.results[0]))]


def _transpose(run: TileProgram, op: Any) -> list[np.ndarray]:
    perm = [0, *(p + 1 for p in op.permutation.get_values())]
    charge_result(run, op)
    return [np.ascontiguousarray(np.asarray(run.env[op.inputs[0]]).transpose(perm))]


def _reduce(run: TileProgram, op: Any) -> list[np.ndarray]:
    """
    `linalg.reduce`. A body that yields one of `_REDUCE`'s ops combining the accumulator with a
    term, which is the input itself (`{ arith.addf }`) or computed from it first (a sum of
    squares: `mulf %in, %in` then `addf` into the accumulator): the terms are reduced over the
    dims in the compute precision and rounded once. Any other body (a maximum by `cmpf` and
    `select`) is folded element by element (`folds.fold_reduce`), then rounded once.
    """
    block = op.region.block
    source = _batched(run, op.input)
    if not _combines(block.last_op.operands[0], block.args[1], block):
        return [_general_reduce(run, op, source)]
    combiner = _combiner(op, block, block.last_op.operands[0], block.args[1], "the linalg.reduce")
    run.env[block.args[0]] = source
    run.env[block.args[1]] = np.float64(_IDENTITY[combiner])  # the combiner passes the term through
    outer = _capture_per_tile(run, block, source.ndim - 1)
    terms = np.asarray(run.run_block(block.ops)[0])
    run.env.update(outer)
    dims = tuple(d + 1 for d in op.dimensions.get_values())
    value = _REDUCE[combiner](compute_precision(np.broadcast_to(terms, source.shape)), axis=dims)
    init = op.init
    if init not in run.empty:  # an initialised accumulator joins the reduction
        value = _BINARY[combiner](value, compute_precision(np.asarray(run.env[init])))
    elements = in_sticks(source.shape[1:], source.dtype.itemsize, run.target.stick_bytes)
    _charge_sfu(run, op.name, 0, in_elements=elements)
    extra = len(list(block.ops)) - 2  # ops that compute the term before the combiner
    if extra > 0:
        _charge_sfu(run, "linalg.generic", elements, passes=float(extra))
    return [store(value, element_type_of(op.results[0]))]


def _general_reduce(run: TileProgram, op: Any, source: np.ndarray) -> np.ndarray:
    """A `linalg.reduce` whose region is folded element by element (`folds.fold_reduce`)."""
    block = op.region.block
    init = op.init
    initial = None if init in run.empty else compute_precision(_batched(run, init))
    outer = _capture_per_tile(run, block, source.ndim - 1 - len(op.dimensions.get_values()))
    value = fold_reduce(run, op, compute_precision(source), initial)
    run.env.update(outer)
    elements = in_sticks(source.shape[1:], source.dtype.itemsize, run.target.stick_bytes)
    _charge_sfu(run, "linalg.generic", elements, passes=float(len(list(block.ops)) - 1))
    return store(value, element_type_of(op.results[0]))


def _batched(run: TileProgram, value: SSAValue) -> np.ndarray:
    """A tensor's value with its leading tiles dim (a constant has none until broadcast here)."""
    array = np.asarray(run.env[value])
    rank = len(shape_of(value))
    return np.broadcast_to(array, (run.tiles, *array.shape)) if array.ndim == rank else array


def _matmul(run: TileProgram, op: Any) -> list[np.ndarray]:
    # fp16 and fp32 products accumulate in fp32 as the PE arrays do; f64 operands stay f64.
    # C order, as ktir's simulator gives its GEMMs: NumPy's matmul uses BLAS only for
    # contiguous operands, and a slice's view (a y tile cut to K) would take its own loop.
    a, b = (np.ascontiguousarray(operand) for operand in _oriented(run, op))
    out = op.outputs[0]
    product = _kernel_gemms(run, op, a, b)
    if product is None:
        product = np.matmul(a, b)
    if out not in run.empty:
        product = product + compute_precision(np.asarray(run.env[out]))
    rows, k = a.shape[-2], a.shape[-1]
    macs = float(math.prod(a.shape[1:-1]) * k * b.shape[-1])  # a batch_matmul: every batch's rows
    element = element_type_of(op.inputs[0])
    itemsize, stick = numpy_dtype(element).itemsize, run.target.stick_bytes
    converted = in_sticks(a.shape[1:], itemsize, stick) + in_sticks(b.shape[1:], itemsize, stick)
    pt, sfu, flops, matmul_flops = cost_model.matmul_charge(macs, rows, element, converted, run.target)
    if sfu:  # fp32 operands are converted to fp16 before the PE arrays read them
        run.charges.charge("sfu", sfu)
    run.charges.charge("pt", pt, flops * run.tiles, matmul_flops=matmul_flops * run.tiles)
    return [store(product, element_type_of(op.results[0]))]


def _oriented(run: TileProgram, op: Any) -> tuple[np.ndarray, np.ndarray]:
    """
    A matmul's operands in the compute precision as (m, k) and (k, n): an operand whose
    indexing map reads it transposed (upstream's `indexing_maps`, A as (k, m) or B as (n, k),
    `dialects/linalg_ext.py`) is swapped back.
    """
    a, b = (compute_precision(np.asarray(run.env[v])) for v in op.inputs)
    if op.name != "linalg.matmul":
        return a, b
    reads = [tuple(str(e) for e in m.data.results) for m in op.indexing_maps.data[:2]]
    a = a.swapaxes(-1, -2) if reads[0] == ("d2", "d0") else a
    b = b.swapaxes(-1, -2) if reads[1] == ("d1", "d2") else b
    return a, b


def _kernel_gemms(run: TileProgram, op: Any, a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """
    A kernel's own 2-D `linalg.matmul` (not a routine's) in fp32 as ktir's simulator runs a
    matmul kernel's chunk of 2-D host tiles (`ktir.sim.gemm.matmul_f32`): one GEMM per
    distinct y tile over the rows of all the tiles that share it, in tile order. A GEMM's bits
    depend on the rows it is given, so this gives ktir's bits; a routine's matmul (a fused
    kernel's, run per core in ktir) and a batch matmul run per tile. None where this does not
    apply.
    """
    tiles = run.tiles
    element = element_type_of(op.inputs[0])
    if len(run.stack) > 1 or op.name != "linalg.matmul" or not isinstance(element, Float16Type):
        return None  # (f32 operands keep their f32 product: ktir would round them to fp16 first)
    if a.shape[0] != tiles or b.shape[0] != tiles or a.ndim != 3 or b.ndim != 3:
        return None
    first: dict[bytes, int] = {}
    y_index = np.array([first.setdefault(b[t].tobytes(), len(first)) for t in range(tiles)])
    distinct = [int(np.argmax(y_index == j)) for j in range(len(first))]
    return matmul_f32(a, np.arange(tiles), b[distinct], y_index, element)


def _generic(run: TileProgram, op: Any) -> list[np.ndarray]:
    """
    A `linalg.generic`: every operand viewed over the iteration space through its indexing map
    (a projected permutation), the body run once on whole arrays. With reduction iterators,
    each yielded value must combine the output's block argument with a term by one of
    `_REDUCE`'s ops (`%acc2 = arith.addf %term, %acc`): the body runs with the accumulator at the
    combiner's identity, and the terms are reduced over the reduction dims in the compute
    precision and rounded once, as `linalg.reduce` is.

    Example: a matmul as a generic over (i, j, k), `k` a reduction, body `mulf` then `addf`
    into the accumulator: the products over (i, j, k), summed over k, added to the init.
    """
    kinds = [str(k.data) for k in op.iterator_types.data]
    reductions = [d for d, kind in enumerate(kinds) if "parallel" not in kind]
    maps = [m.data for m in op.indexing_maps.data]
    operands = [*op.inputs, *op.outputs]
    space = [0] * len(kinds)
    for value, map_ in zip(operands, maps, strict=True):
        for axis, expr in enumerate(map_.results):
            if isinstance(expr, AffineDimExpr):
                space[expr.position] = value.type.get_shape()[axis]
            elif not isinstance(expr, AffineConstantExpr):
                raise KtdpError(
                    f"indexing map result '{expr}' is not a dim or a constant: not supported", location_of(op)
                )
    block = op.body.block
    combiners = _combiners(op, block) if reductions else []
    for arg, value, map_ in zip(block.args, operands, maps, strict=True):
        run.env[arg] = _over_space(run, run.env[value], value, map_, len(space))
    accumulators = block.args[len(op.inputs) :] if reductions else []
    for arg, combiner in zip(accumulators, combiners, strict=True):
        run.env[arg] = np.float64(_IDENTITY[combiner])  # the combiner passes the term through
    outer = _capture_per_tile(run, block, len(space))
    run.space = space
    results = run.run_block(block.ops)
    run.env.update(outer)
    _charge_generic(run, block, space, len(op.outputs))
    parallel = [d for d in range(len(space)) if d not in reductions]
    outputs = []
    for j, (value, result) in enumerate(zip(results, op.results, strict=True)):
        full = np.broadcast_to(value, (run.tiles, *space))
        if reductions:
            combiner = combiners[j]
            full = _REDUCE[combiner](compute_precision(full), axis=tuple(d + 1 for d in reductions))
        out_map = maps[len(op.inputs) + j]
        perm = [0, *(parallel.index(e.position) + 1 for e in out_map.results)]
        full = np.ascontiguousarray(full.transpose(perm))
        init = op.outputs[j]
        if reductions and init not in run.empty:  # an initialised accumulator joins the reduction
            full = _BINARY[combiners[j]](full, compute_precision(np.asarray(run.env[init])))
        outputs.append(store(full, element_type_of(result)))
    return outputs


def _combiners(op: Any, block: Any) -> list[str]:
    """Per output of a reducing generic: the op combining its accumulator with a term."""
    return [
        _combiner(op, block, yielded, block.args[len(op.inputs) + j], f"output {j} of a linalg.generic")
        for j, yielded in enumerate(block.last_op.operands)
    ]


def _combines(yielded: SSAValue, accumulator: SSAValue, block: Any) -> bool:
    """Whether `yielded` is one of `_REDUCE`'s ops, in `block`, the accumulator's only use."""
    combiner = yielded.owner
    short = combiner.name.split(".")[-1] if isinstance(combiner, Operation) else ""
    uses = [use.operation for use in accumulator.uses]
    return short in _REDUCE and uses == [combiner] and combiner.parent_block() is block


def _combiner(op: Any, block: Any, yielded: SSAValue, accumulator: SSAValue, what: str) -> str:
    """The name of the op that yields `yielded` by combining `accumulator` with a term."""
    if not _combines(yielded, accumulator, block):
        raise KtdpError(
            f"{what} does not combine its accumulator with a term by addf, mulf, max or min: not supported",
            location_of(op),
        )
    return cast(Operation, yielded.owner).name.split(".")[-1]


def _capture_per_tile(run: TileProgram, block: Any, dims: int) -> dict[SSAValue, Any]:
    """
    Rebind the scalars a generic's body uses from outside it as (tiles, 1, ..., 1) so that they
    broadcast against its (tiles, *space) values; returns their outer bindings to restore.
    """
    outer: dict[SSAValue, Any] = {}
    for body_op in block.walk():
        for value in body_op.operands:
            if value in outer or value.owner is block or isinstance(value.type, TensorType):
                continue
            if value.owner in block.ops or (
                isinstance(value.owner, Operation) and _inside(value.owner, block)
            ):
                continue
            if value in run.env and np.ndim(run.env[value]) == 1:
                outer[value] = run.env[value]
                run.env[value] = np.asarray(run.env[value]).reshape(run.tiles, *[1] * dims)
    return outer


def _inside(op: Operation, block: Any) -> bool:
    parent = op.parent_block()
    while parent is not None:
        if parent is block:
            return True
        owner = parent.parent_op()
        parent = owner.parent_block() if owner is not None else None
    return False


def _over_space(run: TileProgram, array: Any, value: SSAValue, map_: Any, dims: int) -> np.ndarray:
    """An operand (tiles, *shape) viewed over the iteration space through its map."""
    if not isinstance(value.type, TensorType):  # a scalar operand: per tile, the same everywhere
        scalar = np.broadcast_to(np.asarray(array), (run.tiles,)).reshape(run.tiles, *[1] * dims)
        return scalar if isinstance(value.type, IndexType) else compute_precision(scalar)
    array = np.asarray(array)
    # A constant result reads that one position of its axis (a broadcast operand's size-1 dim).
    constants = [(a, e.value) for a, e in enumerate(map_.results) if isinstance(e, AffineConstantExpr)]
    for axis, position in reversed(constants):
        array = np.take(array, position, axis=axis + 1)
    positions = [e.position for e in map_.results if isinstance(e, AffineDimExpr)]
    order = sorted(range(len(positions)), key=lambda a: positions[a])
    moved = array.transpose(0, *(a + 1 for a in order))
    shape = [run.tiles] + [1] * dims
    for a in order:
        shape[positions[a] + 1] = array.shape[a + 1]
    moved = moved.reshape(shape)
    # integers as they are (an addi of i64 positions); floats and i1 masks in the compute precision
    return moved if moved.dtype.kind in "iu" else compute_precision(moved)


def _charge_generic(run: TileProgram, block: Any, space: Sequence[int], outputs: int) -> None:
    """
    The body's ops as SFU passes over the iteration space (`accounting.body_passes`: casts,
    constants and the yield free, at least one pass), in whole sticks of its results' element
    type (as ktir counts an op's tile; an int64 or bool in the device's format, `device_itemsize`),
    and one FLOP per element and pass, as ktir's own ops are charged. Example: `extf, extf,
    addf, truncf` is one pass; `negf, exp, addf, divf` six; an fp16 32 x 32 result is 32
    sticks, even when an operand is f32.
    """
    results = block.args[len(block.args) - outputs :]
    itemsize = max(
        8 if isinstance(a.type, IndexType) else device_itemsize(numpy_dtype(a.type)) for a in results
    )
    elements = in_sticks(space, itemsize, run.target.stick_bytes)
    _charge_sfu(run, "linalg.generic", elements, passes=accounting.body_passes(o.name for o in block.ops))


def _index(run: TileProgram, op: Any) -> list[np.ndarray]:
    space = run.space
    dim = op.dim.value.data
    shape = [1] * (len(space) + 1)
    shape[dim + 1] = space[dim]
    return [np.arange(space[dim]).reshape(shape)]


def _slice_box(run: TileProgram, op: Any, shape: Sequence[int]) -> tuple[slice, ...]:
    """The (tiles-leading) box of an extract or insert slice; dynamic entries uniform over tiles."""

    def values(static: Sequence[int], dynamic: Sequence[SSAValue]) -> list[int]:
        rest = iter(dynamic)
        return [run.uniform(next(rest), "a slice bound") if n == ktdp.DYNAMIC else n for n in static]

    offsets = values(op.static_offsets.get_values(), op.offsets)
    sizes = values(op.static_sizes.get_values(), op.sizes)
    strides = values(op.static_strides.get_values(), op.strides)
    if len(offsets) != len(shape):
        raise KtdpError("rank-reducing slices are not supported", location_of(op))
    return (slice(None), *(slice(o, o + n * s, s) for o, n, s in zip(offsets, sizes, strides, strict=True)))


@IMPLS.impl(tensor.ExtractSliceOp)
def _extract_slice(run: TileProgram, op: Any) -> list[np.ndarray]:
    source = np.asarray(run.env[op.source])
    box = _slice_box(run, op, source.shape[1:])
    return [np.ascontiguousarray(source[box]).reshape(run.tiles, *op.result.type.get_shape())]


@IMPLS.impl(tensor.InsertSliceOp)
def _insert_slice(run: TileProgram, op: Any) -> list[np.ndarray]:
    dest = np.array(run.env[op.dest], copy=True)
    box = _slice_box(run, op, dest.shape[1:])
    dest[box] = np.asarray(run.env[op.source]).reshape(dest[box].shape)
    return [dest]


@IMPLS.impl(tensor.SplatOp)
def _splat(run: TileProgram, op: Any) -> list[np.ndarray]:
    shape = tuple(op.result.type.get_shape())
    value = np.asarray(run.env[op.input])
    value = value.reshape(-1, *[1] * len(shape)) if value.ndim else value
    return [store(np.broadcast_to(value, (run.tiles, *shape)), element_type_of(op.result))]


@IMPLS.impl(tensor.ExtractOp)
def _extract(run: TileProgram, op: Any) -> list[np.ndarray]:
    source = _batched(run, op.tensor)
    indices = [run.addressed(run.env[v]) for v in op.indices]
    return [source[(np.arange(run.tiles), *indices)]]


@IMPLS.impl(tensor.ExpandShapeOp, tensor.CollapseShapeOp)
def _reshape(run: TileProgram, op: Operation) -> list[np.ndarray]:
    shape = shape_of(op.results[0])
    return [np.asarray(run.env[op.operands[0]]).reshape(run.tiles, *shape)]


_LINALG: dict[str, Handler] = {
    **{name: _named_elementwise for name in ("add", "sub", "mul", "div", "max", "min", "exp", "log", "sqrt")},
    "fill": _fill,
    "broadcast": _broadcast,
    "transpose": _transpose,
    "copy": _copy,
    "reduce": _reduce,
    "matmul": _matmul,
    "batch_matmul": _matmul,
    "generic": _generic,
    "index": _index,
}


__all__ = ["IMPLS"]
