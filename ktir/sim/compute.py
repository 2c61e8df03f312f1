"""
The simulator's vectorized numerics: one NumPy call for all cores where the tiles allow it.

- `rows_at_once`: a row-wise op (elementwise, softmax, norms) on all cores' tiles at once,
  concatenated along the one host dim the cores split.

It takes and returns host tiles with a leading cores axis (`ktir.sim.host_tiles.HostTiles`).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from xdsl.ir import Operation, SSAValue

from ktir.cores.iteration import iteration_space
from ktir.dialects.ktir import elementwise as ew
from ktir.dialects.ktir import structured as st
from ktir.hardware import accounting, cost_model
from ktir.hardware.target import Target
from ktir.ir.values import element_type_of, shape_of
from ktir.layout.dtypes import numpy_dtype
from ktir.layout.sticks import in_sticks
from ktir.reference.executor import IMPLEMENTATIONS
from ktir.reference.structured import ATTENTION_BLOCK_BYTES
from ktir.sim.executor import attention_tile
from ktir.sim.fused_execution import Trace, fp32_matmul, run_fused
from ktir.sim.host_tiles import HostTiles

ELEMENTWISE = ew.POINTWISE
"""Graph ops that map each element position (after broadcasting) to the same output position."""

_ROW_WISE = (*ELEMENTWISE, st.SoftmaxOp, st.NormOp)
"""Ops whose result along a dim they do not normalize is computed row by row."""


def rows_at_once(payload: Operation, maps: list[HostTiles], hosts: list[np.ndarray]) -> np.ndarray | None:
    """
    All cores' results from one call of the op, or None.

    When the cores' output boxes differ along one host dim d only, and the op treats d row by
    row (an elementwise op, or a softmax / norm that does not normalize d), the cores' input
    tiles concatenated along d are one valid input: each input either follows the output along
    d, or is the same on every core (broadcast along d, e.g. a norm's weight). Returns the
    results as (cores, *output tile).
    """
    out = maps[-1]
    rank, cores = len(out.extent), out.lo.shape[0]
    if not isinstance(payload, _ROW_WISE) or cores == 1 or not payload.operands:
        return None
    varying = np.flatnonzero(np.any(out.lo != out.lo[0], axis=0))
    if len(varying) != 1:
        return None
    d = int(varying[0])
    if isinstance(payload, st.SoftmaxOp) and d == payload.dim.value.data % rank:
        return None
    if isinstance(payload, st.NormOp) and d >= rank - len(st.ints(payload.normalized_shape)):
        return None
    inputs = []
    for m, h in zip(maps, hosts, strict=False):
        dim = d - (rank - len(m.extent))
        if dim >= 0 and m.extent[dim] == out.extent[d] and np.array_equal(m.lo[:, dim], out.lo[:, d]):
            others = np.delete(m.lo, dim, axis=1)
            if np.any(others != others[0]):
                return None
            inputs.append(_merged(h, dim))
        elif (dim < 0 or m.extent[dim] == 1) and not np.any(m.lo != m.lo[0]):
            inputs.append(h[0])
        else:
            return None
    result = np.asarray(IMPLEMENTATIONS[type(payload)](payload, inputs)[0])
    return _split(result, d, cores, out.extent)


def _merged(tiles: np.ndarray, dim: int) -> np.ndarray:
    """The cores' tiles (cores, *tile) concatenated along `dim`, in core order."""
    merged = np.moveaxis(tiles, 0, dim)  # (..., cores, rows, ...) -> (..., cores * rows, ...)
    return merged.reshape(*tiles.shape[1 : dim + 1], -1, *tiles.shape[dim + 2 :])


def _split(result: np.ndarray, dim: int, cores: int, extent: tuple[int, ...]) -> np.ndarray:
    """A result concatenated along `dim` back into the cores' tiles (cores, *extent)."""
    split = result.reshape(*extent[:dim], cores, extent[dim], *extent[dim + 1 :])
    return np.moveaxis(split, dim, 0)


class _Unbatched(Exception):
    """A fused body whose ops do not treat the cores' rows independently (`fused_rows_at_once`)."""


@dataclass(frozen=True)
class _Rows:
    """
    A value of a fused body on the concatenated tiles: the dim the cores' rows run along, and
    each core's extent along it.
    """

    dim: int
    size: int


def fused_rows_at_once(
    payload: st.FusedOp, maps: list[HostTiles], hosts: list[np.ndarray]
) -> np.ndarray | None:
    """
    All cores' results of a fused kernel from one run on its inputs concatenated along the
    dim the cores split, or None.

    Each input either varies along one dim (concatenated along it in core order) or is the
    same on every core. The body's ops carry that dim through (a permute moves it, a reshape
    that only adds or drops size-1 dims shifts it) and must treat it row by row: elementwise
    ops, slices and cats along other dims, and reductions, softmaxes and norms over trailing
    dims after it (NumPy reduces each row the same way, however many rows there are). A matmul
    is allowed only on values the same on every core. Returns (cores, *output tile).
    """
    out = maps[-1]
    cores = out.lo.shape[0]
    varying = np.flatnonzero(np.any(out.lo != out.lo[0], axis=0))
    if cores == 1 or len(varying) != 1:
        return None
    rows: list[_Rows | None] = []
    inputs = []
    for m, h in zip(maps, hosts, strict=False):
        moving = np.flatnonzero(np.any(m.lo != m.lo[0], axis=0))
        if len(moving) > 1:
            return None
        rows.append(_Rows(int(moving[0]), m.extent[moving[0]]) if len(moving) else None)
        inputs.append(_merged(h, int(moving[0])) if len(moving) else h[0])
    env: dict[SSAValue, _Rows | None] = dict(zip(payload.body.block.args, rows, strict=True))
    try:
        for member in payload.members:
            env[member.results[0]] = _member_rows(member, [env[v] for v in member.operands])
    except _Unbatched:
        return None
    assert payload.body.block.last_op is not None
    if env[payload.body.block.last_op.operands[0]] != _Rows(int(varying[0]), out.extent[varying[0]]):
        return None
    return _split(run_fused(payload, inputs, fp32_matmul), int(varying[0]), cores, out.extent)


def _member_rows(op: Operation, operands: list[_Rows | None]) -> _Rows | None:
    """Where the cores' rows of one body op's result run (None: the same on every core)."""
    varying = [(r, len(shape_of(v))) for r, v in zip(operands, op.operands, strict=True) if r is not None]
    if not varying:
        return None  # computed alike on every core, whatever the op
    rank = len(shape_of(op.results[0]))
    from_right = {n - r.dim for r, n in varying}
    sizes = {r.size for r, _ in varying}
    if len(from_right) != 1 or len(sizes) != 1:
        raise _Unbatched
    (offset,), (size,) = from_right, sizes
    dim = rank - offset
    if isinstance(op, (*ELEMENTWISE, st.SliceOp, st.CatOp)):
        _check_broadcast(op, operands, offset)
        if isinstance(op, (st.SliceOp, st.CatOp)) and op.dim.value.data % rank == dim:
            raise _Unbatched
        return _Rows(dim, size)
    if isinstance(op, st.PermuteOp):
        return _Rows(st.ints(op.perm).index(varying[0][0].dim), size)
    if isinstance(op, st.ReshapeOp):  # only size-1 dims added or dropped: the k-th real dim stays
        before = [d for d, n in enumerate(shape_of(op.input)) if n != 1]
        after = [d for d, n in enumerate(shape_of(op.result)) if n != 1]
        if varying[0][0].dim not in before or len(before) != len(after):
            raise _Unbatched
        return _Rows(after[before.index(varying[0][0].dim)], size)
    if dim < _first_reduced(op, rank):
        return _Rows(dim, size)
    raise _Unbatched


def _check_broadcast(op: Operation, operands: list[_Rows | None], offset: int) -> None:
    """
    Raise unless each operand the same on every core broadcasts along the rows (no extent
    there): a cat needs all its operands concatenated.
    """
    for rows, value in zip(operands, op.operands, strict=True):
        at = len(shape_of(value)) - offset
        if rows is None and (isinstance(op, st.CatOp) or (at >= 0 and shape_of(value)[at] != 1)):
            raise _Unbatched


def _first_reduced(op: Operation, rank: int) -> int:
    """The first of the trailing dims a reduction, softmax or norm works over (rank: none)."""
    if isinstance(op, st.NormOp):
        return rank - len(st.ints(op.normalized_shape))
    if isinstance(op, st.SoftmaxOp) and op.dim.value.data % rank == rank - 1:
        return rank - 1
    if isinstance(op, st.ReductionOp) and op.keepdim is not None:
        dims = sorted(d % rank for d in st.ints(op.dims))
        if dims == list(range(rank - len(dims), rank)):
            return rank - len(dims)
    return -1


def fused_at_once(payload: st.FusedOp, maps: list[HostTiles], hosts: list[np.ndarray]) -> np.ndarray | None:
    """
    All cores' results of a fused kernel of elementwise ops (`ELEMENTWISE`, `ktir.full`) from
    one run on the cores' tiles stacked, or None for any other body.

    Each element is computed from the same operand elements by the same NumPy calls as in a
    run per core: an operand of lower rank gets size-1 dims after the cores axis, so it
    broadcasts against the others within each core, as it would alone. Returns (cores, *tile).
    """
    if not all(isinstance(member, (*ELEMENTWISE, ew.FullOp)) for member in payload.members):
        return None
    out = maps[-1]
    rank, cores = len(out.extent), out.lo.shape[0]
    if any(len(m.extent) > rank for m in maps):
        return None
    inputs = [
        h.reshape(cores, *(1,) * (rank - len(m.extent)), *m.extent) for m, h in zip(maps, hosts, strict=False)
    ]
    result = run_fused(payload, inputs)
    return result if result.shape == (cores, *out.extent) else None


def attention_at_once(
    payload: st.AttentionOp, maps: list[HostTiles], hosts: list[np.ndarray]
) -> np.ndarray | None:
    """
    All cores' `ktir.attention` tiles from one call on the tiles stacked along the batch dim,
    or None. The reference computes every batch entry with its own GEMMs (one per query and
    key head, the same calls whatever the batch) and its softmax per row, so the stacked call
    gives each core's bits, provided it scores all query rows in one block, as each core alone
    does, and (under a causal limit) every core's tiles start at the same query and key.
    Returns (cores, *output tile).
    """
    q, k = maps[0], maps[1]
    batch, rows, keys = q.extent[0], q.extent[3], k.extent[2]
    cores = q.lo.shape[0]
    starts_differ = np.any(q.lo[:, 3] != q.lo[0, 3]) or np.any(k.lo[:, 2] != k.lo[0, 2])
    if payload.causal is not None and starts_differ:
        return None
    per_row = cores * math.prod(q.extent[:3]) * keys * 8  # the reference's float64 scores per query row
    if any(m.extent[0] != batch for m in maps) or rows > max(1, ATTENTION_BLOCK_BYTES // per_row):
        return None  # the batch would not line up, or the scores would be cut in row blocks
    stacked = [h.reshape(cores * batch, *h.shape[2:]) for h in hosts]
    result = attention_tile(payload, stacked, [q.lo[0], k.lo[0]])
    return result.reshape(cores, batch, *result.shape[1:])


@functools.lru_cache(maxsize=4096)
def _moves_no_data(op: Operation) -> bool:
    """A view inside a fused kernel that only re-reads its input's bytes (decided once per op)."""
    return isinstance(op, st.ShapeChangeOp) and iteration_space(op) is None


def fused_cost(trace: Trace, target: Target) -> tuple[float, float, float, float]:
    """
    (PE-array cycles, SFU cycles, FLOPs, matmul FLOPs) of one chunk of a fused kernel from the tile shapes
    each of its ops saw (`ktir.sim.fused_execution.run_fused`): each op costs what it would
    alone on that tile (`ktir.hardware.cost_model`), an f32 matmul's operand conversion to fp16
    included; a view that moves no data costs nothing.
    """
    pt = sfu = flops = matmul_flops = 0.0
    for op, ins, out in trace:
        if isinstance(op, st.MatmulBase):
            element = element_type_of(op.x)
            itemsize = numpy_dtype(element).itemsize
            converted = sum(in_sticks(tile, itemsize, target.stick_bytes) for tile in ins[:2])
            rows = ins[0][-2] if len(ins[0]) > 1 else 1
            charge = cost_model.matmul_charge(math.prod(out) * ins[0][-1], rows, element, converted, target)  # pyright: ignore[reportGeneralTypeIssues]  # a matmul tile has dims
            pt, sfu = pt + charge[0], sfu + charge[1]
            flops, matmul_flops = flops + charge[2], matmul_flops + charge[3]
            continue
        if _moves_no_data(op):
            continue
        element_bytes = numpy_dtype(element_type_of(op.results[0])).itemsize
        out_elements = in_sticks(out, element_bytes, target.stick_bytes)
        in_elements = in_sticks(ins[0], element_bytes, target.stick_bytes) if ins else 0
        sfu += cost_model.sfu_cycles(op, in_elements, out_elements, target)
        flops += accounting.sfu_flops_of(op.name, in_elements, out_elements, cost_model.sfu_passes(op))
    return pt, sfu, flops, matmul_flops
