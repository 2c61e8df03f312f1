"""
The simulator's matmul numerics: `matmul_f32`, fp32 GEMMs over the cores' distinct operand tiles
(one GEMM per shared weight tile), on the operands as the PE arrays read them (fp32 ones rounded
to fp16), accumulating in fp32 like the PE arrays; the GEMMs run on a small thread pool, each on
one BLAS thread, and may be left running under the caller's next chunk (`finish_gemms`).

It takes and returns host tiles with a leading cores axis (`ktir.cores.host_tiles.HostTiles`).
"""

from __future__ import annotations

import functools
import math
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor, wait

import numpy as np
from xdsl.ir import Attribute

from ktir.cores.fused_execution import pe_operand


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
