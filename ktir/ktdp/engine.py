"""
Running a `ktdp` function on the simulated chip: every compute tile of the grid at once.

`TileProgram(function, grid, memory, target).run(arguments)` interprets the function body once,
with every SSA value batched over the grid's tiles (leading dim = tiles): an index is a vector
of per-tile values, a tensor an array (tiles, *shape). Each op runs as one NumPy call for all
tiles, so the cost is per op, not per element or per tile; an `scf.for` runs its body once per
iteration, its trip count per tile (a tile past its last iteration runs masked: `_for`).

Numerics: values are stored in their element type and every op computes in float32 (float64 for
f32 and wider) and rounds once to its result type, as ktir's own simulator does. A reduction or
matmul into an uninitialised `tensor.empty` starts from its combiner's identity (the emitter's
convention); `linalg.fill` sets a start value.

Time, on the same chip model as ktir's own programs (`ktir.hardware.cost_model`), op after op
in program order (no overlap between DMA and compute, unlike ktir's pipelined kernels):
- `ktdp.load` / `ktdp.store` of device memory: a DMA setup plus the chip-wide traffic, each
  tile moving every 128-byte stick its elements touch (`dma_cycles`); of a scratchpad view, an
  LX copy (`lx_copy_cycles`);
- `linalg.matmul` on the PE arrays (`pt_cycles`);
- elementwise ops, in whole sticks, at the SFU's pass rate (two passes for exp, log, sqrt,
  rsqrt, tanh and division), and reductions at its reduction rate.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
from xdsl.dialects import arith, func, scf, tensor
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, TensorType
from xdsl.dialects.linalg.ops import YieldOp as LinalgYieldOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.ir.affine import AffineBinaryOpKind, AffineConstantExpr, AffineDimExpr

from ktir.dialects import ktdp, ktdp_comm
from ktir.hardware import cost_model
from ktir.hardware.target import Target
from ktir.ir.diagnostics import location_of
from ktir.ktdp.memory import DeviceMemory, KtdpError
from ktir.ktdp.numerics import compute_precision, elementwise
from ktir.ktdp.tiles import (
    Box,
    TileError,
    box_of,
    box_points,
    element_indices,
    row_sticks,
    sticks_of_rows,
    sticks_touched,
)
from ktir.reference.ops import numpy_dtype, store

UNITS = ("dma", "pt", "sfu", "ring")
_TWO_PASS = {"exp", "log", "sqrt", "rsqrt", "tanh", "divf", "div"}
_BINARY = {
    "addf": np.add, "subf": np.subtract, "mulf": np.multiply, "divf": np.divide,
    "maximumf": np.maximum, "minimumf": np.minimum, "maxnumf": np.fmax, "minnumf": np.fmin,
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "max": np.maximum,
    "min": np.minimum,
}  # fmt: skip
_UNARY = {
    "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "tanh": np.tanh, "negf": np.negative, "absf": np.abs,
}  # fmt: skip
_INDEX = {
    "addi": np.add, "subi": np.subtract, "muli": np.multiply, "divui": np.floor_divide,
    "divsi": lambda a, b: np.trunc(a / b).astype(np.int64), "remui": np.remainder,
    "remsi": np.fmod, "floordivsi": np.floor_divide, "ceildivsi": lambda a, b: -((-a) // b),
    "maxsi": np.maximum, "minsi": np.minimum,
}  # fmt: skip
_IDENTITY = {"addf": 0.0, "add": 0.0, "mulf": 1.0, "maximumf": -np.inf, "maxnumf": -np.inf,
             "minimumf": np.inf, "minnumf": np.inf}  # fmt: skip
_REDUCE = {"addf": np.sum, "mulf": np.prod, "maximumf": np.max, "maxnumf": np.max,
           "minimumf": np.min, "minnumf": np.min}  # fmt: skip


@dataclass
class View:
    """A memory view: its memory (`global`, or core `core`'s LX), offset, sizes and strides."""

    space: str
    core: int
    offset: np.ndarray
    sizes: list[np.ndarray]
    strides: list[np.ndarray]
    dtype: np.dtype


@dataclass
class Tile:
    """
    An access tile: its view and the element index of each point (tiles x shape), or the
    strided `Box` they form (a direct tile on a view with the same strides on every tile).
    """

    view: View
    points: np.ndarray | None = None
    box: Box | None = None

    @property
    def indices(self) -> np.ndarray:
        """Every point's element index (tiles x shape)."""
        if self.points is None:
            self.points = cast(Box, self.box).indices()
        return self.points

    def only(self, active: np.ndarray | None) -> Tile:
        """The tile of the `active` compute tiles only (all of them for None)."""
        if active is None:
            return self
        if self.box is not None:
            box = self.box
            return Tile(self.view, box=Box(box.start[active], box.strides, box.extents, box.perm))
        return Tile(self.view, points=self.indices[active])

    @property
    def shape(self) -> tuple[int, ...]:
        """(tiles, *tile shape)."""
        if self.points is not None:
            return self.points.shape
        box = cast(Box, self.box)
        return (len(box.start), *(box.extents[p] for p in box.perm))


@dataclass
class Charges:
    """Cycles and work charged per tile and unit, in program order."""

    tiles: int
    busy: np.ndarray = field(init=False)
    cycles: float = 0.0
    bytes: float = 0.0
    flops: float = 0.0
    matmul_flops: float = 0.0

    def __post_init__(self) -> None:
        self.busy = np.zeros((self.tiles, len(UNITS)))
        self.touched = np.zeros(0, dtype=bool)
        self.active: np.ndarray | None = None  # the tiles an op runs on (None: all of them)

    def touch(self, indices: np.ndarray, itemsize: int, stick_bytes: int) -> None:
        """
        Note the device-memory sticks an access reads or writes (the compulsory traffic): rows
        of consecutive elements as stick ranges (a difference array), anything else by element.
        """
        if indices.size == 0:
            return
        per = stick_bytes // itemsize
        rows = indices.reshape(-1, indices.shape[-1]) if indices.ndim > 1 else indices.reshape(1, -1)
        first, last = rows[:, 0] // per, rows[:, -1] // per
        top = int(max(first.max(), last.max())) + 2
        if top > len(self.touched):
            grown = np.zeros(top, dtype=bool)
            grown[: len(self.touched)] = self.touched
            self.touched = grown
        if rows.shape[1] > 1 and not (rows[:, -1] - rows[:, 0] == rows.shape[1] - 1).all():
            self.touched[(rows // per).reshape(-1)] = True
            return
        self.touch_rows(first, last)

    def touch_rows(self, first: np.ndarray, last: np.ndarray) -> None:
        """Mark the stick ranges [first, last] of every row (a difference array over their span)."""
        low, top = int(first.min()), int(last.max()) + 2
        if top > len(self.touched):
            grown = np.zeros(top, dtype=bool)
            grown[: len(self.touched)] = self.touched
            self.touched = grown
        edges = np.zeros(top - low + 1, dtype=np.int64)
        np.add.at(edges, first.reshape(-1) - low, 1)
        np.add.at(edges, last.reshape(-1) + 1 - low, -1)
        self.touched[low:top] |= np.cumsum(edges)[:-1] > 0

    def charge(self, unit: str, cycles: float, flops: float = 0.0) -> None:
        """
        An op the active tiles run in lockstep for `cycles`; `flops` are all tiles' work, of
        which the active tiles' share counts.
        """
        if self.active is None:
            self.busy[:, UNITS.index(unit)] += cycles
            self.flops += flops
        else:
            self.busy[self.active, UNITS.index(unit)] += cycles
            self.flops += flops * np.count_nonzero(self.active) / self.tiles
        self.cycles += cycles


_float = compute_precision
_CASTS = ("extf", "truncf", "sitofp", "uitofp")


def _same(array: np.ndarray) -> np.ndarray:
    """A cast's value (the rounding to the result type is `elementwise`'s)."""
    return array


def _sticks(shape: Sequence[int], itemsize: int, stick_bytes: int) -> int:
    """Elements of a tile shape counted in whole sticks along its last dim."""
    if not shape:
        return 1
    per = stick_bytes // itemsize
    return math.prod(shape[:-1]) * math.ceil(shape[-1] / per) * per


class TileProgram:
    """One ktdp function on every tile of a grid (module docstring)."""

    def __init__(
        self, function: func.FuncOp, grid: Sequence[int], memory: DeviceMemory, target: Target
    ) -> None:
        self.function = function
        self.grid = list(grid)
        self.tiles = math.prod(grid)
        self.memory = memory
        self.target = target
        self.env: dict[SSAValue, Any] = {}
        self.empty: set[SSAValue] = set()
        self.charges = Charges(self.tiles)
        self.space: list[int] = []  # the iteration space of the linalg.generic running (linalg.index)

    def run(self, arguments: Sequence[np.ndarray]) -> None:
        """Bind each argument (a per-tile vector) and run the body."""
        for arg, value in zip(self.function.body.block.args, arguments, strict=True):
            self.env[arg] = value
        self._block(self.function.body.block.ops)

    def _block(self, ops: Any) -> list[Any]:
        for op in ops:
            if isinstance(
                op, (scf.YieldOp, LinalgYieldOp, ktdp_comm.YieldPartialOp, ktdp_comm.YieldReducedOp)
            ):
                return [self.env[v] for v in op.operands]
            if isinstance(op, func.ReturnOp):
                return []
            try:
                self._op(op)
            except (TileError, ValueError, TypeError, IndexError, FloatingPointError) as error:
                if isinstance(error, KtdpError) and error.location is not None:
                    raise
                raise KtdpError(f"'{op.name}': {error}", location_of(op)) from None
        return []

    def _op(self, op: Operation) -> None:
        handler = _HANDLERS.get(op.name) or _HANDLERS.get(op.name.split(".")[0] + ".*")
        if handler is None:
            raise KtdpError(f"'{op.name}' is not supported by the ktdp engine", location_of(op))
        results = handler(self, op)
        if results is not None:
            self.env.update(zip(op.results, results, strict=True))

    def per_tile(self, value: Any) -> np.ndarray:
        """An index value as a vector over tiles."""
        return np.broadcast_to(np.asarray(value, dtype=np.int64), (self.tiles,))

    @property
    def active_tiles(self) -> int:
        """How many tiles the current op runs on."""
        active = self.charges.active
        return self.tiles if active is None else int(np.count_nonzero(active))

    def uniform(self, value: SSAValue, what: str) -> int:
        """An index that must be the same on every active tile (a slice bound)."""
        values = self.per_tile(self.env[value])
        if self.charges.active is not None:
            values = values[self.charges.active]
        if (values != values[0]).any():
            raise KtdpError(f"{what} differs between compute tiles: not supported", location_of(value.owner))  # type: ignore[arg-type]
        return int(values[0])


# -- ktdp ---------------------------------------------------------------------------------------


def _tile_id(run: TileProgram, op: ktdp.GetComputeTileIdOp) -> list[np.ndarray]:
    grid = run.grid
    t = np.arange(run.tiles)
    ids, step = [], 1
    for extent in grid[: len(op.ids)]:
        ids.append((t // step) % extent)
        step *= extent
    return ids


def _memory_view(run: TileProgram, op: ktdp.ConstructMemoryViewOp) -> list[View]:
    def values(static: Sequence[int], dynamic: Sequence[SSAValue]) -> list[np.ndarray]:
        rest = iter(dynamic)
        return [run.per_tile(run.env[next(rest)] if n == ktdp.DYNAMIC else n) for n in static]

    space = op.memory_space
    kind, core = (
        space.placement() if hasattr(space, "placement") else (space.kind.data, max(space.ct_id.data, 0))
    )
    element = cast(MemRefType[Attribute], op.result.type).element_type
    return [
        View(
            kind,
            core,
            run.per_tile(run.env[op.offset]),
            values(op.static_sizes.get_values(), op.sizes),
            values(op.static_strides.get_values(), op.strides),
            numpy_dtype(element),
        )
    ]


def _access_tile(run: TileProgram, op: ktdp.ConstructAccessTileOp) -> list[Tile]:
    view = run.env[op.base]
    if not isinstance(view, View):
        raise KtdpError("access tiles of tensors are not supported yet: give a memory view", location_of(op))
    indices = [run.per_tile(run.env[v]) for v in op.indices]
    base = np.stack(
        [np.broadcast_to(_eval_expr(e, indices), (run.tiles,)) for e in op.base_map.data.results], 1
    )
    symbols = [run.per_tile(run.env[v]) for v in op.symbol_operands]
    lower, upper = box_of(op.access_tile_set.data, symbols, run.tiles)
    order = op.access_tile_order.data
    box = box_points(base, lower, upper, order, view.offset, view.strides, view.sizes)
    if box is not None:
        return [Tile(view, box=box)]
    return [Tile(view, element_indices(base, lower, upper, order, view.offset, view.strides, view.sizes))]


def _indirect_tile(run: TileProgram, op: Any) -> list[Tile]:
    """
    An indirect access tile: the intermediate variables over their box, each base coordinate a
    direct subscript or a value read from an index view (a gather or scatter's addresses).
    """
    view = run.env[op.base]
    if not isinstance(view, View):
        raise KtdpError("indirect access tiles of tensors are not supported yet", location_of(op))
    symbols = [run.per_tile(run.env[v]) for v in op.symbol_operands]
    lower, upper = box_of(op.variables_space_set.data, symbols, run.tiles)
    extents = [int(e) for e in upper[0] - lower[0] + 1]
    if (upper - lower + 1 != extents).any():
        raise TileError("the access tile's extents differ between compute tiles")
    shape = (run.tiles, *extents)
    variables = [
        np.broadcast_to((lower[:, k].reshape(-1, *([1] * len(extents))) + np.arange(e).reshape(
            [1] + [e if a == k else 1 for a in range(len(extents))])), shape)
        for k, e in enumerate(extents)
    ]  # fmt: skip
    dims = [
        np.broadcast_to(run.per_tile(run.env[v]).reshape(-1, *([1] * len(extents))), shape)
        for v in op.captured_variables
    ]
    dims += variables
    views = iter(run.env[v] for v in op.indirect_memrefs)
    coords = []
    for kind, map_attr in zip(op.per_dim_subscript_kinds.data, op.per_dim_subscript_maps.data, strict=True):
        values = [_eval_expr(e, dims) for e in map_attr.data.results]
        if not kind.value.data:
            coords.append(values[0])
            continue
        index_view = next(views)
        where = _flat_index(index_view, values, run.tiles)
        coords.append(run.memory.read(index_view, where).astype(np.int64))
        _charge_transfer(run, Tile(index_view, where))
    indices = _flat_index(view, coords, run.tiles)
    perm = [r.position for r in op.variables_space_order.data.results]
    return [Tile(view, indices.transpose(0, *(p + 1 for p in perm)))]


def _eval_expr(expr: Any, dims: Sequence[np.ndarray]) -> np.ndarray:
    """An affine expression on arrays of dim values (floordiv and mod as floor operations)."""
    if isinstance(expr, AffineDimExpr):
        return dims[expr.position]
    if isinstance(expr, AffineConstantExpr):
        return np.int64(expr.value)  # type: ignore[return-value]
    lhs, rhs = _eval_expr(expr.lhs, dims), _eval_expr(expr.rhs, dims)
    kind = expr.kind
    if kind == AffineBinaryOpKind.Add:
        return lhs + rhs
    if kind == AffineBinaryOpKind.Mul:
        return lhs * rhs
    if kind == AffineBinaryOpKind.FloorDiv:
        return lhs // rhs
    if kind == AffineBinaryOpKind.CeilDiv:
        return -((-lhs) // rhs)
    return lhs % rhs


def _flat_index(view: View, coords: Sequence[np.ndarray], tiles: int) -> np.ndarray:
    """Element indices of per-point coordinates in a view, checked against its sizes."""
    per_tile = (tiles, *([1] * (max(np.ndim(c) for c in coords) - 1)))
    flat = view.offset.reshape(per_tile).astype(np.int64)
    for coord, size, stride in zip(coords, view.sizes, view.strides, strict=True):
        if ((coord < 0) | (coord >= size.reshape(per_tile))).any():
            raise TileError("an indirect access tile reaches outside its memory view's sizes")
        flat = flat + coord * stride.reshape(per_tile)
    return np.broadcast_to(flat, np.broadcast_shapes(*(np.shape(c) for c in coords), flat.shape)).copy()


def _load(run: TileProgram, op: ktdp.LoadOp) -> list[np.ndarray]:
    tile = cast(Tile, run.env[op.access_tile])
    data = run.memory.read(tile.view, tile.indices if tile.box is None else tile.box)
    _charge_transfer(run, tile)
    return [store(data, cast(TensorType[Attribute], op.result.type).element_type)]


def _store(run: TileProgram, op: ktdp.StoreOp) -> None:
    tile = cast(Tile, run.env[op.access_tile])
    data = np.broadcast_to(np.asarray(run.env[op.data_tile]), tile.shape)
    active = run.charges.active
    if active is not None:  # tiles past their last loop iteration store nothing
        tile, data = tile.only(active), data[active]
    where = tile.indices if tile.box is None else tile.box
    run.memory.write(tile.view, where, data)
    _charge_transfer(run, tile)


def _charge_transfer(run: TileProgram, tile: Tile) -> None:
    """The DMA of the active tiles' part of an access tile (stores pass that part already)."""
    target = run.target
    if run.charges.active is not None and tile.shape[0] == run.tiles:
        tile = tile.only(run.charges.active)
    itemsize = tile.view.dtype.itemsize
    if tile.view.space == "ct_local":
        core_bytes = math.prod(tile.shape[1:]) * itemsize
        run.charges.charge("dma", cost_model.lx_copy_cycles(core_bytes, target))
        return
    per = target.stick_bytes // itemsize
    rows = tile.box.rows() if tile.box is not None else None
    sticks = sticks_of_rows(rows[0], rows[1], per) if rows is not None else None
    if sticks is None:
        sticks = sticks_touched(tile.indices, itemsize, target.stick_bytes)
    moved = float(sticks) * target.stick_bytes
    run.charges.bytes += moved
    if rows is not None:
        run.charges.touch_rows(*row_sticks(rows[0], rows[1], per))
    else:
        run.charges.touch(tile.indices, itemsize, target.stick_bytes)
    run.charges.charge("dma", cost_model.dma_cycles(moved, target))


# -- compute ------------------------------------------------------------------------------------


def _element(value: SSAValue) -> Attribute:
    value_type = value.type
    return value_type.element_type if isinstance(value_type, TensorType) else value_type


def _charge_sfu(run: TileProgram, name: str, result: SSAValue, reduce_from: np.ndarray | None = None) -> None:
    target = run.target
    if reduce_from is not None:
        elements = _sticks(reduce_from.shape[1:], reduce_from.dtype.itemsize, target.stick_bytes)
        run.charges.charge(
            "sfu", elements / target.reduce_elems_per_us * target.clock_mhz, elements * run.tiles
        )
        return
    shape = tuple(result.type.get_shape()) if isinstance(result.type, TensorType) else ()
    itemsize = numpy_dtype(_element(result)).itemsize
    elements = _sticks(shape, itemsize, target.stick_bytes)
    passes = 2.0 if name in _TWO_PASS else 1.0
    cycles = elements * passes / target.sfu_pass_elems_per_us * target.clock_mhz
    run.charges.charge("sfu", cycles, elements * passes * run.tiles)


def _arith(run: TileProgram, op: Operation) -> list[Any]:
    short = op.name.split(".")[1]
    if isinstance(op, arith.ConstantOp):
        return [_constant(run, op)]
    if short in ("cmpi", "cmpf"):
        return [_compare(run, op)]
    if short == "select":
        cond, a, b = (np.asarray(run.env[v]) for v in op.operands)
        return [np.where(cond.reshape(cond.shape + (1,) * (np.ndim(a) - cond.ndim)), a, b)]
    if short in ("index_cast", "index_castui"):
        value = np.asarray(run.env[op.operands[0]]).astype(np.int64)
        return [value if isinstance(op.results[0].type, IndexType) else store(value, _element(op.results[0]))]
    if isinstance(op.results[0].type, IndexType) or short in _INDEX:
        a, b = (np.asarray(run.env[v]) for v in op.operands)
        return [_INDEX[short](a, b).astype(np.int64)]
    fn = _BINARY.get(short) or _UNARY.get(short) or (_same if short in _CASTS else None)
    if fn is None:
        raise KtdpError(f"'{op.name}' is not supported by the ktdp engine", location_of(op))
    if isinstance(op.results[0].type, TensorType):
        _charge_sfu(run, short, op.results[0])
    return [elementwise(fn, [run.env[v] for v in op.operands], _element(op.results[0]))]


_PREDICATES = {
    "cmpi": ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"),
    "cmpf": (
        "false",
        "oeq",
        "ogt",
        "oge",
        "olt",
        "ole",
        "one",
        "ord",
        "ueq",
        "ugt",
        "uge",
        "ult",
        "ule",
        "une",
    ),
}
_COMPARE = {
    "eq": np.equal, "oeq": np.equal, "ueq": np.equal, "ne": np.not_equal, "one": np.not_equal,
    "une": np.not_equal, "slt": np.less, "ult": np.less, "olt": np.less, "sle": np.less_equal,
    "ule": np.less_equal, "ole": np.less_equal, "sgt": np.greater, "ugt": np.greater,
    "ogt": np.greater, "sge": np.greater_equal, "uge": np.greater_equal, "oge": np.greater_equal,
}  # fmt: skip


def _compare(run: TileProgram, op: Any) -> np.ndarray:
    """arith.cmpi / cmpf by predicate (index operands per tile, tensors elementwise)."""
    name = _PREDICATES[op.name.split(".")[1]][op.predicate.value.data]
    if name not in _COMPARE:
        raise KtdpError(f"comparison predicate '{name}' is not supported", location_of(op))
    a, b = (np.asarray(run.env[v]) for v in op.operands)
    return _COMPARE[name](a, b)


def _constant(run: TileProgram, op: arith.ConstantOp) -> Any:
    value = op.value
    if isinstance(value, IntegerAttr):
        return run.per_tile(value.value.data)
    data = getattr(value, "value", None)
    if data is not None and hasattr(data, "data"):  # a float scalar
        return np.float64(data.data)
    splat = value.get_values()  # type: ignore[attr-defined]
    shape = tuple(op.result.type.get_shape())  # type: ignore[attr-defined]
    return np.broadcast_to(np.asarray(splat[0] if len(splat) == 1 else splat), shape).copy()


def _math(run: TileProgram, op: Operation) -> list[np.ndarray]:
    short = op.name.split(".")[1]
    if short not in _UNARY:
        raise KtdpError(f"'{op.name}' is not supported by the ktdp engine", location_of(op))
    if isinstance(op.results[0].type, TensorType):
        _charge_sfu(run, short, op.results[0])
    return [elementwise(_UNARY[short], [run.env[op.operands[0]]], _element(op.results[0]))]


def _empty(run: TileProgram, op: tensor.EmptyOp) -> list[np.ndarray]:
    run.empty.add(op.tensor)
    shape = tuple(op.tensor.type.get_shape())  # type: ignore[attr-defined]
    return [np.zeros((run.tiles, *shape), numpy_dtype(_element(op.tensor)))]


def _linalg(run: TileProgram, op: Operation) -> list[np.ndarray]:
    short = op.name.split(".")[1]
    handler = _LINALG.get(short)
    if handler is None:
        raise KtdpError(f"'{op.name}' is not supported by the ktdp engine", location_of(op))
    return handler(run, op)


def _named_elementwise(run: TileProgram, op: Operation) -> list[np.ndarray]:
    short = op.name.split(".")[1]
    fn = _BINARY[short] if short in _BINARY else _UNARY[short]
    result = op.results[0]
    _charge_sfu(run, short, result)
    return [elementwise(fn, [run.env[v] for v in op.inputs], _element(result))]  # type: ignore[attr-defined]


def _fill(run: TileProgram, op: Operation) -> list[np.ndarray]:
    out = np.asarray(run.env[op.outputs[0]])  # type: ignore[attr-defined]
    value = np.asarray(run.env[op.inputs[0]])  # type: ignore[attr-defined]
    value = value.reshape(value.shape + (1,) * (out.ndim - value.ndim)) if value.ndim else value
    _charge_sfu(run, "fill", op.results[0])
    return [store(np.broadcast_to(value, out.shape), _element(op.results[0]))]


def _broadcast(run: TileProgram, op: Any) -> list[np.ndarray]:
    source = np.asarray(run.env[op.input])
    out_shape = tuple(op.init.type.get_shape())
    added = [d + 1 for d in op.dimensions.get_values()]  # +1: the tiles dim leads
    expanded = source
    for d in sorted(added):
        expanded = np.expand_dims(expanded, d)
    _charge_sfu(run, "broadcast", op.results[0])
    return [np.broadcast_to(expanded, (run.tiles, *out_shape)).copy()]


def _transpose(run: TileProgram, op: Any) -> list[np.ndarray]:
    perm = [0, *(p + 1 for p in op.permutation.get_values())]
    _charge_sfu(run, "transpose", op.results[0])
    return [np.ascontiguousarray(np.asarray(run.env[op.inputs[0]]).transpose(perm))]


def _reduce(run: TileProgram, op: Any) -> list[np.ndarray]:
    body = list(op.region.block.ops)
    combiner = body[0].name.split(".")[1] if body else ""
    if combiner not in _REDUCE:
        raise KtdpError(f"a linalg.reduce combining with '{combiner}' is not supported", location_of(op))
    source = np.asarray(run.env[op.input])
    dims = tuple(d + 1 for d in op.dimensions.get_values())
    value = _REDUCE[combiner](_float(source), axis=dims)
    init = op.init
    if init not in run.empty:  # an initialised accumulator joins the reduction
        value = _BINARY[combiner](value, _float(np.asarray(run.env[init])))
    _charge_sfu(run, combiner, op.results[0], reduce_from=source)
    return [store(value, _element(op.results[0]))]


def _matmul(run: TileProgram, op: Any) -> list[np.ndarray]:
    a, b = (np.asarray(run.env[v]).astype(np.float32, copy=False) for v in op.inputs)
    out = op.outputs[0]
    product = np.matmul(a, b)
    if out not in run.empty:
        product = product + _float(np.asarray(run.env[out]))
    rows, k = a.shape[-2], a.shape[-1]
    macs = float(math.prod(a.shape[1:-1]) * k * b.shape[-1])  # a batch_matmul: every batch's rows
    run.charges.matmul_flops += 2 * macs * run.active_tiles
    run.charges.charge("pt", cost_model.pt_cycles(macs, rows, run.target), 2 * macs * run.tiles)
    return [store(product, _element(op.results[0]))]


def _generic(run: TileProgram, op: Any) -> list[np.ndarray]:
    """
    A parallel `linalg.generic`: every operand viewed over the iteration space through its
    indexing map (a projected permutation), the body run once on whole arrays.
    """
    kinds = [str(k.data) for k in op.iterator_types.data]
    if any("parallel" not in k for k in kinds):
        raise KtdpError("linalg.generic with reduction iterators is not supported yet", location_of(op))
    maps = [m.data for m in op.indexing_maps.data]
    operands = [*op.inputs, *op.outputs]
    space = [0] * len(kinds)
    for value, map_ in zip(operands, maps, strict=True):
        for axis, expr in enumerate(map_.results):
            space[expr.position] = value.type.get_shape()[axis]
    block = op.body.block
    for arg, value, map_ in zip(block.args, operands, maps, strict=True):
        run.env[arg] = _over_space(run, run.env[value], value, map_, len(space))
    outer = _capture_per_tile(run, block, len(space))
    run.space = space
    results = run._block(block.ops)
    run.env.update(outer)
    out_map = maps[len(op.inputs)]
    perm = [0, *(e.position + 1 for e in out_map.results)]
    elements = math.prod(space) * run.tiles
    run.charges.charge("sfu", _generic_cycles(run, block, space), elements * len(list(block.ops)))
    outputs = []
    for value, result in zip(results, op.results, strict=True):
        full = np.broadcast_to(value, (run.tiles, *space))
        outputs.append(store(np.ascontiguousarray(full.transpose(perm)), _element(result)))
    return outputs


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
        return scalar if isinstance(value.type, IndexType) else _float(scalar)
    array = np.asarray(array)
    positions = [e.position for e in map_.results]
    order = sorted(range(len(positions)), key=lambda a: positions[a])
    moved = array.transpose(0, *(a + 1 for a in order))
    shape = [run.tiles] + [1] * dims
    for a in order:
        shape[positions[a] + 1] = array.shape[a + 1]
    return _float(moved.reshape(shape))


def _generic_cycles(run: TileProgram, block: Any, space: Sequence[int]) -> float:
    """The body's ops as SFU passes over the iteration space, in whole sticks."""
    itemsize = max(8 if isinstance(a.type, IndexType) else numpy_dtype(a.type).itemsize for a in block.args)
    elements = _sticks(space, itemsize, run.target.stick_bytes)
    body = [op for op in block.ops if op.name != "linalg.yield"]
    passes = sum(2.0 if op.name.split(".")[-1] in _TWO_PASS else 1.0 for op in body)
    return elements * max(passes, 1.0) / run.target.sfu_pass_elems_per_us * run.target.clock_mhz


def _index(run: TileProgram, op: Any) -> list[np.ndarray]:
    space = run.space
    dim = op.dim.value.data
    shape = [1] * (len(space) + 1)
    shape[dim + 1] = space[dim]
    return [np.arange(space[dim]).reshape(shape)]


@dataclass
class Future:
    """`inter_tile_produce`'s partials (tiles x ...) and which tiles produce for which group."""

    partials: list[np.ndarray]
    groups: list[int]
    producers: np.ndarray  # groups x tiles, bool


def _members(tile_set: Any, groups: Sequence[int], tiles: int) -> np.ndarray:
    """groups x tiles: whether tile i is in the set for group g (`(i)[g]` constraints)."""
    member = np.ones((len(groups), tiles), dtype=bool)
    for constraint in tile_set.constraints:
        expr = constraint.lhs - constraint.rhs
        values = np.array([[expr.eval([i], [g]) for i in range(tiles)] for g in groups])
        member &= values == 0 if constraint.kind.value == "==" else values >= 0
    return member


def _group_ids(groups_set: Any) -> list[int]:
    lower, upper = box_of(groups_set, [], 1)
    return list(range(int(lower[0, 0]), int(upper[0, 0]) + 1))


def _produce(run: TileProgram, op: Any) -> list[Future]:
    if run.charges.active is not None:
        raise KtdpError(
            "an inter-tile reduction in a loop whose trip count differs between tiles: not supported",
            location_of(op),
        )
    groups = _group_ids(op.future.type.groups.data)
    producers = _members(op.producer_tiles_per_group.data, groups, run.tiles)
    if (producers.sum(axis=0) > 1).any():
        raise KtdpError("a tile produces for more than one group: not supported", location_of(op))
    gid = np.array(groups)[producers.argmax(axis=0)]
    run.env[op.body.block.args[0]] = gid
    partials = run._block(op.body.block.ops)
    return [Future([np.asarray(p) for p in partials], groups, producers)]


def _inter_tile_reduce(run: TileProgram, op: Any) -> list[np.ndarray]:
    """Each consumer gets its group's partials folded from the identity, in tile (ring) order."""
    future = cast(Future, run.env[op.future])
    consumers = _members(op.consumer_tiles_per_group.data, future.groups, run.tiles)
    identity = np.broadcast_to(np.asarray(run.env[op.identity[0]]), future.partials[0].shape)
    group_of = np.where(consumers.any(axis=0), consumers.argmax(axis=0), -1)
    members = [np.flatnonzero(row) for row in future.producers]
    longest = max((len(m) for m in members), default=0)
    block = op.combiner.block
    accumulated = identity.copy()
    for k in range(longest):
        picks = np.array([members[g][k] if g >= 0 and k < len(members[g]) else -1 for g in group_of])
        rhs = np.where(
            (picks >= 0).reshape(-1, *[1] * (identity.ndim - 1)), future.partials[0][picks], identity
        )
        run.env[block.args[0]], run.env[block.args[1]] = accumulated, rhs
        accumulated = np.asarray(run._block(block.ops)[0])
    partial = future.partials[0][0]
    group = max(longest, 1)
    reduce = float(cost_model.ring_cycles(partial.size, partial.dtype.itemsize, group, run.target))
    # Then the sum travels back to the group's consumers: group - 1 more hops of the transfer.
    hop = run.target.ring_hop_cycles + partial.nbytes / run.target.ring_bytes_per_cycle
    run.charges.charge("ring", reduce + (group - 1) * hop)
    return [accumulated]


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


def _extract_slice(run: TileProgram, op: Any) -> list[np.ndarray]:
    source = np.asarray(run.env[op.source])
    box = _slice_box(run, op, source.shape[1:])
    return [np.ascontiguousarray(source[box]).reshape(run.tiles, *op.result.type.get_shape())]


def _insert_slice(run: TileProgram, op: Any) -> list[np.ndarray]:
    dest = np.array(run.env[op.dest], copy=True)
    box = _slice_box(run, op, dest.shape[1:])
    dest[box] = np.asarray(run.env[op.source]).reshape(dest[box].shape)
    return [dest]


def _splat(run: TileProgram, op: Any) -> list[np.ndarray]:
    shape = tuple(op.result.type.get_shape())
    value = np.asarray(run.env[op.input])
    value = value.reshape(-1, *[1] * len(shape)) if value.ndim else value
    return [store(np.broadcast_to(value, (run.tiles, *shape)), _element(op.result))]


def _extract(run: TileProgram, op: Any) -> list[np.ndarray]:
    source = np.asarray(run.env[op.tensor])
    indices = [run.per_tile(run.env[v]) for v in op.indices]
    return [source[(np.arange(run.tiles), *indices)]]


def _if(run: TileProgram, op: Any) -> list[Any]:
    condition = np.broadcast_to(np.asarray(run.env[op.cond]), (run.tiles,))
    if run.charges.active is not None:
        condition = condition[run.charges.active]
    if (condition != condition[0]).any():
        raise KtdpError("an scf.if condition differs between compute tiles: not supported", location_of(op))
    region = op.true_region if condition[0] else op.false_region
    return run._block(region.block.ops) if region.blocks else []


def _runtime_arg(run: TileProgram, op: Any) -> list[Any]:
    kind = op.kind.data
    if kind == "value":
        return [run.env[op.input]]
    return [run.per_tile(getattr(op.input.type, kind).data)]


def _for(run: TileProgram, op: scf.ForOp) -> list[Any]:
    """
    An `scf.for`, its body run once per iteration for all tiles. Bounds may differ between
    tiles (a Triton-style `for row = pid to n step grid`): the loop runs to the longest trip
    count, and a tile past its last iteration replays that iteration masked, so its addresses
    stay valid while its stores, charges and carried values skip it. A tile with no iteration
    at all borrows the induction value of a tile running (its effects masked the same way).

    Example: rows `pid to 1151 step 32` on 32 tiles: 36 iterations, tile 31 (35 rows) replays
    row 1119 + 31 = 1150 masked in the 36th.
    """
    lower, upper, step = (run.per_tile(run.env[v]) for v in (op.lb, op.ub, op.step))
    if (step <= 0).any():
        raise KtdpError("an scf.for step must be positive", location_of(op))
    trips = np.maximum(0, -((lower - upper) // step))
    outer = run.charges.active
    block = op.body.block
    carried = [run.env[v] for v in op.iter_args]
    shapes = [(run.tiles, *_shape_of(v)) for v in op.iter_args]
    for k in range(int(trips.max(initial=0))):
        live = trips > k if outer is None else outer & (trips > k)
        if not live.any():
            continue
        done = np.minimum(k, np.maximum(trips - 1, 0))
        induction = lower + done * step
        induction = np.where(trips > 0, induction, induction[np.argmax(live)])
        run.charges.active = None if live.all() else live
        run.env[block.args[0]] = induction
        for arg, value in zip(block.args[1:], carried, strict=True):
            run.env[arg] = value
        results = run._block(block.ops)
        carried = [
            _select(live, new, old, shape) if run.charges.active is not None else new
            for new, old, shape in zip(results, carried, shapes, strict=True)
        ]
    run.charges.active = outer
    return carried


def _shape_of(value: SSAValue) -> tuple[int, ...]:
    return tuple(value.type.get_shape()) if isinstance(value.type, TensorType) else ()


def _select(live: np.ndarray, new: Any, old: Any, shape: tuple[int, ...]) -> np.ndarray:
    """Per tile: `new` where the tile ran the iteration, `old` where it did not."""
    new, old = (np.broadcast_to(np.asarray(v), shape) for v in (new, old))
    return np.where(live.reshape(-1, *[1] * (len(shape) - 1)), new, old).astype(new.dtype, copy=False)


def _reshape(run: TileProgram, op: Operation) -> list[np.ndarray]:
    shape = tuple(op.results[0].type.get_shape())  # type: ignore[attr-defined]
    return [np.asarray(run.env[op.operands[0]]).reshape(run.tiles, *shape)]


def _view_only(run: TileProgram, op: Operation) -> None:
    if op.name == "ktdp.construct_distributed_memory_view":
        raise KtdpError("distributed memory views are not supported by the ktdp engine yet", location_of(op))


_LINALG: dict[str, Callable[[TileProgram, Any], list[np.ndarray]]] = {
    **{name: _named_elementwise for name in ("add", "sub", "mul", "div", "max", "min", "exp", "log", "sqrt")},
    "fill": _fill,
    "broadcast": _broadcast,
    "transpose": _transpose,
    "reduce": _reduce,
    "matmul": _matmul,
    "batch_matmul": _matmul,
    "generic": _generic,
    "index": _index,
}

_HANDLERS: dict[str, Callable[[TileProgram, Any], Any]] = {
    "ktdp.get_compute_tile_id": _tile_id,
    "ktdp.construct_memory_view": _memory_view,
    "ktdp.construct_access_tile": _access_tile,
    "ktdp.construct_indirect_access_tile": _indirect_tile,
    "ktdp.construct_distributed_memory_view": _view_only,
    "ktdp.load": _load,
    "ktdp.store": _store,
    "arith.*": _arith,
    "math.*": _math,
    "tensor.empty": _empty,
    "tensor.expand_shape": _reshape,
    "tensor.collapse_shape": _reshape,
    "tensor.extract_slice": _extract_slice,
    "tensor.insert_slice": _insert_slice,
    "tensor.splat": _splat,
    "tensor.extract": _extract,
    "scf.if": _if,
    "linalg.*": _linalg,
    "scf.for": _for,
    "ktdp.inter_tile_produce": _produce,
    "ktdp.runtime_arg_extract": _runtime_arg,
    "ktdp.inter_tile_reduce": _inter_tile_reduce,
}


__all__ = ["UNITS", "Charges", "Tile", "TileProgram", "View"]
