"""
The simulator's vectorized numerics: one NumPy call for all cores where the tiles allow it.

- `matmul_f32`: fp32 GEMMs over the cores' distinct operand tiles (one GEMM per shared weight
  tile), on the operands as the PE arrays read them (fp32 ones rounded to fp16), accumulating
  in fp32 like the PE arrays;
- `rows_at_once`: a row-wise op (elementwise, softmax, norms) on all cores' tiles at once,
  concatenated along the one host dim the cores split.

Both take and return host tiles with a leading cores axis (`ktir.cores.host_tiles.HostTiles`).
"""

from __future__ import annotations

import functools
import math
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass

import numpy as np
from xdsl.ir import Attribute, Operation, SSAValue

from ktir.cores.executor import attention_tile
from ktir.cores.fused_execution import Trace, fp32_matmul, pe_operand, run_fused
from ktir.cores.fusion import in_sticks
from ktir.cores.host_tiles import HostTiles
from ktir.cores.iteration import iteration_space
from ktir.dialects.ktir import elementwise as ew
from ktir.dialects.ktir import structured as st
from ktir.hardware import accounting, cost_model
from ktir.hardware.target import Target
from ktir.ir.values import shape_of
from ktir.reference.executor import IMPLEMENTATIONS
from ktir.reference.ops import numpy_dtype
from ktir.reference.structured import ATTENTION_BLOCK_BYTES

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


def matmul_f32(
    x: np.ndarray,
    x_index: np.ndarray,
    y: np.ndarray,
    y_index: np.ndarray,
    element_type: Attribute,
    into: np.ndarray | None = None,
    background: bool = False,
) -> np.ndarray:
    """
    fp32 products of host tiles of `element_type`: core c multiplies x[x_index[c]] (..., M, K) by
    y[y_index[c]] (..., K', N), K' >= K (y may carry matmul padding rows), the operands as the
    PE arrays read them (`pe_operand`: f32 rounded to fp16), accumulating in fp32 in BLAS.
    Returns (cores, ..., M, N). Cores sharing a y tile go through one GEMM.

    With `into` (cores, ..., M, N) fp32, an accumulator: each product is added to it in place
    (product + accumulator, rounded once to fp32, as `product += accumulator` would) and `into`
    is returned. The GEMMs are the same either way: which rows go into one BLAS call decides its
    bits (a row's result depends on where it falls in the BLAS kernel's blocking), so every
    call has the rows of one y tile's cores in core order, whether or not it accumulates.

    With `background` and `into`, GEMMs that run on the thread pool are left running and the
    call returns at once, so that the caller's next chunk overlaps them: the caller promises not
    to change `x` and `y` and to read `into` only after `finish_gemms` (the simulator's LX
    buffers call it on every access). Each call first waits for the GEMMs left running, so the
    chunks add to an accumulator in call order.
    """
    finish_gemms()
    x, y = pe_operand(x, element_type), pe_operand(y, element_type)
    k = x.shape[-1]
    # A batched x with a 2-D y (or the reverse) broadcasts batch dims, which sit after the
    # leading tile axis: line the ranks up so NumPy does not broadcast tiles against batch.
    x = x.reshape(x.shape[0], *(1,) * (y.ndim - x.ndim), *x.shape[1:])
    y = y.reshape(y.shape[0], *(1,) * (x.ndim - y.ndim), *y.shape[1:])
    # C order: NumPy's matmul uses BLAS only for contiguous operands (astype keeps strides).
    xf = np.ascontiguousarray(x, dtype=np.float32)
    yf = np.ascontiguousarray(y[..., :k, :], dtype=np.float32)
    batch = np.broadcast_shapes(xf.shape[1:-2], yf.shape[1:-2])
    tile = (*batch, xf.shape[-2], yf.shape[-1])
    product = np.empty((len(x_index), *tile), dtype=np.float32) if into is None else into
    groups = [np.flatnonzero(y_index == j) for j in range(yf.shape[0])]
    caller = threading.get_ident()  # its simulation's GEMMs, scratch buffers included

    def group_product(j: int, task: int) -> None:
        """One y tile's GEMM over its cores' x tiles, in core order (the same call on any thread)."""
        members = groups[j]
        picked = x_index[members]
        # The group's x tiles in core order: all of xf as it is when that is the order (no copy).
        rows = xf if np.array_equal(picked, np.arange(len(xf))) else xf[picked]
        target = _consecutive(product, members)
        # Without an accumulator the GEMM writes the cores' tiles of `product` directly; else
        # into the task's scratch (a fresh result buffer costs page faults on every call).
        part = (
            target if target is not None and into is None else _scratch((caller, task), (len(members), *tile))
        )
        if rows.ndim == 3:  # one GEMM for the group's rows
            np.matmul(rows.reshape(-1, k), yf[j], out=part.reshape(-1, tile[-1]))
        else:
            np.matmul(rows, yf[j], out=part)
        _place(product, members, target, part, into is not None)

    # Different y tiles' GEMMs are independent calls on one BLAS thread each
    # (`ktir.reference.blas`), and their cores' tiles of `product` are disjoint: running them on
    # threads (BLAS and NumPy's add release the GIL) changes no call, so no bit.
    macs = xf.size * yf.shape[-1]
    if len(groups) == 1 or macs < PARALLEL_GEMM_MACS or _gemm_workers() == 1:
        for j in range(len(groups)):
            group_product(j, 0)
        return product
    # A few tasks (one per worker) take the groups in turn: one future per worker, not per GEMM.
    order = iter(range(len(groups)))

    def take_groups(task: int) -> None:
        for j in order:  # the threads share the iterator (each next() is atomic)
            group_product(j, task)

    tasks = min(_gemm_workers(), len(groups))
    running = _RUNNING.setdefault(caller, [])
    running.extend(_gemm_pool().submit(take_groups, task) for task in range(tasks))
    if into is None or not background:
        finish_gemms()
    return product


PARALLEL_GEMM_MACS = 1 << 24
"""A matmul call with fewer multiply-accumulates runs its GEMMs one after another (threads cost more)."""


@functools.cache
def _gemm_workers() -> int:
    """GEMMs run at once: the CPUs this process may use, at most 8."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(8, usable))


@functools.cache
def _gemm_pool() -> ThreadPoolExecutor:
    """The threads the GEMMs run on (made once, on first use)."""
    return ThreadPoolExecutor(max_workers=_gemm_workers(), thread_name_prefix="ktir-gemm")


def _consecutive(product: np.ndarray, members: np.ndarray) -> np.ndarray | None:
    """The tiles of `members` in `product` as one view when they are consecutive cores, else None."""
    if len(members) and members[-1] - members[0] == len(members) - 1:
        return product[members[0] : members[-1] + 1]
    return None


def _place(
    product: np.ndarray, members: np.ndarray, target: np.ndarray | None, part: np.ndarray, add: bool
) -> None:
    """
    Write (or with `add`, add) one group's products `part` into the cores `members` of
    `product`; `target` is their view when consecutive (`_consecutive`), written in place.
    """
    if target is not None:
        if add:
            np.add(part, target, out=target)
        elif part is not target:
            target[...] = part
        return
    product[members] = part + product[members] if add else part


_RUNNING: dict[int, list[Future[None]]] = {}
"""
The GEMM tasks `matmul_f32` submitted to the pool that nobody has waited for yet, by the thread
that called it (simulations running on different threads wait only for their own).
"""


def finish_gemms() -> None:
    """
    Wait for every GEMM this thread's `matmul_f32` calls left running (`background`); re-raise
    the first one's error.
    """
    running = _RUNNING.pop(threading.get_ident(), None)
    if not running:
        return
    wait(running)
    for future in running:
        future.result()


_SCRATCH: dict[tuple[int, int], np.ndarray] = {}
"""
The GEMM result buffer of each task of a `matmul_f32` call, by calling thread and task number
(one call's tasks run at once; a call's tasks start after the previous call's ended), kept
across calls and grown when a result needs more.
"""


def _scratch(key: tuple[int, int], shape: tuple[int, ...]) -> np.ndarray:
    """An fp32 array of `shape` in the scratch buffer of `key` (caller, task); contents undefined."""
    size = math.prod(shape)
    buffer = _SCRATCH.get(key)
    if buffer is None or buffer.size < size:
        buffer = _SCRATCH[key] = np.empty(size, dtype=np.float32)
    return buffer[:size].reshape(shape)


def drop_gemms() -> None:
    """Wait for this thread's GEMMs left running without reading their results (after a failed kernel)."""
    wait(_RUNNING.pop(threading.get_ident(), []))


def release_scratch() -> None:
    """Free this thread's GEMM scratch buffers (after a simulation; the next one regrows them)."""
    drop_gemms()
    caller = threading.get_ident()
    for key in [key for key in _SCRATCH if key[0] == caller]:
        del _SCRATCH[key]


@functools.lru_cache(maxsize=4096)
def _moves_no_data(op: Operation) -> bool:
    """A view inside a fused kernel that only re-reads its input's bytes (decided once per op)."""
    return isinstance(op, st.ShapeChangeOp) and iteration_space(op) is None


def fused_cost(trace: Trace, target: Target) -> tuple[float, float, float, float]:
    """
    (PE-array cycles, SFU cycles, FLOPs, matmul FLOPs) of one chunk of a fused kernel from the tile shapes
    each of its ops saw (`ktir.cores.fused_execution.run_fused`): each op costs what it would
    alone on that tile (`ktir.hardware.cost_model`), an f32 matmul's operand conversion to fp16
    included; a view that moves no data costs nothing.
    """
    pt = sfu = flops = matmul_flops = 0.0
    for op, ins, out in trace:
        if isinstance(op, st.MatmulBase):
            element = op.x.type.element_type  # type: ignore[attr-defined]
            itemsize = numpy_dtype(element).itemsize
            converted = in_sticks(ins[0], itemsize) + in_sticks(ins[1], itemsize)
            rows = ins[0][-2] if len(ins[0]) > 1 else 1
            charge = cost_model.matmul_charge(math.prod(out) * ins[0][-1], rows, element, converted, target)
            pt, sfu = pt + charge[0], sfu + charge[1]
            flops, matmul_flops = flops + charge[2], matmul_flops + charge[3]
            continue
        if _moves_no_data(op):
            continue
        element_bytes = numpy_dtype(op.results[0].type.element_type).itemsize  # type: ignore[attr-defined]
        out_elements = in_sticks(out, element_bytes)
        in_elements = in_sticks(ins[0], element_bytes) if ins else 0
        sfu += cost_model.sfu_cycles(op, in_elements, out_elements, target)
        flops += accounting.sfu_flops_of(op.name, in_elements, out_elements, cost_model.sfu_passes(op))
    return pt, sfu, flops, matmul_flops
