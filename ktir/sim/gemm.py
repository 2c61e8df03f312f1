"""
The simulator's matmul numerics: `matmul_f32`, fp32 GEMMs over the cores' distinct operand tiles
(one GEMM per shared weight tile), on the operands as the PE arrays read them (fp32 ones rounded
to fp16), accumulating in fp32 like the PE arrays; the GEMMs run on worker threads, each on one BLAS
thread with a queue of its own, and may be left running under the caller's next chunk
(`finish_gemms`).

It takes and returns host tiles with a leading cores axis (`ktir.sim.host_tiles.HostTiles`).
"""

from __future__ import annotations

import functools
import math
import os
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future, wait
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.builtin import Float16Type
from xdsl.ir import Attribute

from ktir.hardware.cost_model import converts_to_fp16
from ktir.reference.precision import store


def pe_operand(tile: np.ndarray, element_type: Attribute) -> np.ndarray:
    """
    A matmul operand tile as the PE arrays read it: rounded to fp16 (to nearest even) where
    the operands are f32 (`ktir.hardware.cost_model.converts_to_fp16`), as it is otherwise.
    Example: an f32 1 + 2**-13 is read as 1.0 (fp16 holds 10 fraction bits).
    """
    return store(tile, Float16Type()) if _converts(element_type) else tile


@functools.lru_cache(maxsize=64)
def _converts(element_type: Attribute) -> bool:
    """`converts_to_fp16`, once per element type (it names the type by printing it)."""
    return converts_to_fp16(element_type)


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

    With `background` and `into`, GEMMs that run on the worker threads are left running and the
    call returns at once, so that the caller's next chunk overlaps them: the caller promises not
    to change `x` and `y` and to read `into` only after `finish_gemms` (the simulator's LX
    buffers call it on every access). A call of the same shape on the same accumulator is queued
    behind the running ones (each core's tile is added to by one worker, in call order, at most
    `QUEUED_CALLS` calls at once); any other call first waits for them.
    """
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
    count = yf.shape[0]
    caller = threading.get_ident()  # its simulation's GEMMs, scratch buffers included
    # Different y tiles' GEMMs are independent calls on one BLAS thread each
    # (`ktir.reference.blas`), and their cores' tiles of `product` are disjoint: running them on
    # threads (BLAS and NumPy's add release the GIL) changes no call, so no bit.
    workers = _gemm_workers()
    alone = count == 1 or xf.size * yf.shape[-1] < PARALLEL_GEMM_MACS or workers == 1
    # Each worker takes a fixed share of the pieces, the same in every call of the same shape:
    # a core's tile is added to by one worker only, in call order, so a call may be queued
    # behind the running ones on the same accumulator without waiting for them.
    runs = _grouping(x_index, len(xf), y_index, count, count if alone else -(-count // workers))

    def piece_product(run: _Run, task: int) -> None:
        """
        The GEMMs of a run of y tiles whose cores take the same x tiles (`_pieces`): one per y
        tile, over its cores' x tiles in core order (the same BLAS call on any thread), made by
        one NumPy call when the tiles are 2-D (its loop over y tiles calls BLAS without the GIL).
        """
        piece, members = run.piece, run.members
        # The group's x tiles in core order: all of xf as it is when that is the order (no copy).
        rows = xf if run.picked is None else xf[run.picked]
        target = _consecutive(product, members)
        # Without an accumulator the GEMMs write the cores' tiles of `product` directly; else
        # into the task's scratch (a fresh result buffer costs page faults on every call).
        part = (
            target if target is not None and into is None else _scratch((caller, task), (len(members), *tile))
        )
        if rows.ndim == 3:  # per y tile, one GEMM for its cores' rows
            out = part.reshape(len(piece), -1, tile[-1])
            np.matmul(rows.reshape(-1, k), yf[piece.start : piece.stop], out=out)
        else:
            for g, j in enumerate(piece):
                np.matmul(rows, yf[j], out=part[g * len(rows) : (g + 1) * len(rows)])
        _place(product, members, target, part, into is not None)

    if alone:
        finish_gemms()  # the accumulator's earlier adds, and the scratch of task 0
        for run in runs:
            piece_product(run, 0)
        return product
    shape = (id(into), workers, count, x_index.tobytes(), y_index.tobytes())  # decides the shares
    if into is None or not background or not _may_queue(caller, shape):
        finish_gemms()

    def run_share(task: int) -> None:
        for run in runs[task::workers]:
            piece_product(run, task)

    calls = _RUNNING.setdefault(caller, _Calls(shape))
    calls.futures.append([_worker(task).submit(run_share, task) for task in range(min(workers, len(runs)))])
    if into is None or not background:
        finish_gemms()
    return product


@dataclass(frozen=True)
class _Run:
    """A run of y tiles whose GEMMs share one NumPy call (`_pieces`), with what its call reads."""

    piece: range
    """The y tiles."""
    members: np.ndarray
    """Their cores, tile after tile, in core order."""
    picked: np.ndarray | None
    """The x tile of each core of the first y tile, in core order; None when that is every x tile in order."""


_GROUPINGS: dict[tuple[object, ...], list[_Run]] = {}
"""`_grouping`'s answers by its arguments' values."""

_GROUPINGS_KEPT = 1024
"""Groupings kept at most (a kernel uses a handful; the table is emptied when full)."""


def _grouping(x_index: np.ndarray, x_count: int, y_index: np.ndarray, count: int, longest: int) -> list[_Run]:
    """
    The runs (`_pieces`, of at most `longest` tiles) of the GEMMs of `count` y tiles, core c
    multiplying x tile `x_index[c]` (of `x_count`) by y tile `y_index[c]`, remembered by the
    indices' values: a chunk loop asks for the same ones at every chunk (which cores share a
    tile stays the same).
    """
    key = (
        x_index.dtype.str,
        x_index.tobytes(),
        x_count,
        y_index.dtype.str,
        y_index.tobytes(),
        count,
        longest,
    )
    if (found := _GROUPINGS.get(key)) is None:
        if len(_GROUPINGS) >= _GROUPINGS_KEPT:
            _GROUPINGS.clear()
        groups = [np.flatnonzero(y_index == j) for j in range(count)]
        found = _GROUPINGS[key] = [
            _run(groups, x_index, x_count, piece) for piece in _pieces(groups, x_index, longest)
        ]
    return found


def _run(groups: list[np.ndarray], x_index: np.ndarray, x_count: int, piece: range) -> _Run:
    """The run of the y tiles `piece` (each tile's cores: `groups`) over `x_count` x tiles."""
    picked = x_index[groups[piece[0]]]
    every = np.array_equal(picked, np.arange(x_count))
    return _Run(piece, np.concatenate([groups[j] for j in piece]), None if every else picked)


def _pieces(groups: list[np.ndarray], x_index: np.ndarray, longest: int) -> list[range]:
    """
    The y tiles of `groups` (each y tile's cores) cut into runs of at most `longest` consecutive
    tiles whose GEMMs can share one NumPy call: every tile's cores take the same x tiles, and
    the cores of the run follow each other in core order (one view of the result).

    Example: 8 y tiles, core 4j + i multiplying x tile i by y tile j, `longest` 4:
    [range(0, 4), range(4, 8)]. With cores 2i + j instead (not consecutive per y tile), or x
    tiles that differ between y tiles, every run is one tile.
    """
    pieces: list[range] = []
    start = 0
    for j in range(1, len(groups) + 1):
        if j < len(groups) and j - start < longest and _continues(groups, x_index, j):
            continue
        pieces.append(range(start, j))
        start = j
    return pieces


def _continues(groups: list[np.ndarray], x_index: np.ndarray, j: int) -> bool:
    """True if y tile j's GEMM can join y tile j - 1's in one call (`_pieces`)."""
    before, members = groups[j - 1], groups[j]
    return (
        len(before) > 0
        and len(members) == len(before)
        and members[0] == before[-1] + 1
        and members[-1] - members[0] == len(members) - 1
        and before[-1] - before[0] == len(before) - 1
        and np.array_equal(x_index[members], x_index[before])
    )


PARALLEL_GEMM_MACS = 1 << 24
"""A matmul call with fewer multiply-accumulates runs its GEMMs one after another (threads cost more)."""


@functools.cache
def _gemm_workers() -> int:
    """GEMMs run at once: the CPUs this process may use, at most 8."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(8, usable))


class _Worker:
    """
    A GEMM thread with a queue of its own: the jobs given to one worker run one after another in
    the order given (a pool's shared queue would not say which thread runs which job).
    """

    def __init__(self, name: str) -> None:
        self.jobs: queue.SimpleQueue[tuple[Callable[[int], None], int, Future[None]]] = queue.SimpleQueue()
        threading.Thread(target=self._serve, name=name, daemon=True).start()

    def _serve(self) -> None:
        while True:
            job, task, future = self.jobs.get()
            try:
                job(task)
            except BaseException as error:  # handed to whoever waits for the future
                future.set_exception(error)
            else:
                future.set_result(None)
            # Not kept while the queue waits: the job holds its call's accumulator and operands.
            del job, future

    def submit(self, job: Callable[[int], None], task: int) -> Future[None]:
        """Queue `job(task)` behind this worker's earlier jobs; its future."""
        future: Future[None] = Future()
        self.jobs.put((job, task, future))
        return future


_WORKERS: dict[int, _Worker] = {}
"""The GEMM threads by task number, made on first use and kept."""

_WORKERS_LOCK = threading.Lock()
"""Held while a worker is made: two simulation threads must not each make their own task t."""


def _worker(task: int) -> _Worker:
    """The thread task `task` of every parallel call runs on."""
    with _WORKERS_LOCK:
        if (worker := _WORKERS.get(task)) is None:
            worker = _WORKERS[task] = _Worker(f"ktir-gemm-{task}")
        return worker


def _forget_workers() -> None:
    """In a forked child: the parent's GEMM threads do not exist there, nor do its running jobs."""
    global _WORKERS_LOCK
    _WORKERS_LOCK = threading.Lock()  # the parent may have held it while forking
    _WORKERS.clear()
    _RUNNING.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_workers)


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


@dataclass
class _Calls:
    """The parallel `matmul_f32` calls of one thread not waited for yet, and the shape they share."""

    shape: tuple[object, ...]
    """
    The accumulator's identity, the worker count, the y tile count and the cores' tile indices
    of every call: what decides which worker adds to which core's tile.
    """
    futures: list[list[Future[None]]] = field(default_factory=list)
    """Each call's jobs, oldest call first."""


_RUNNING: dict[int, _Calls] = {}
"""
The GEMM jobs `matmul_f32` left running, by the thread that called it (simulations running on
different threads wait only for their own).
"""

QUEUED_CALLS = 8
"""Calls a thread may have running at once: later ones wait for the oldest (bounds the operands held)."""


def _may_queue(caller: int, shape: tuple[object, ...]) -> bool:
    """
    True if a call of `shape` may be queued behind `caller`'s running ones: they add to the same
    accumulator with the same share per worker. Waits for the oldest call when too many run.
    """
    calls = _RUNNING.get(caller)
    if calls is None:
        return True
    if calls.shape != shape:
        return False
    while len(calls.futures) >= QUEUED_CALLS:
        _settled(calls.futures.pop(0))
    return True


def _settled(futures: list[Future[None]]) -> None:
    """Wait for `futures`; re-raise the first one's error."""
    wait(futures)
    for future in futures:
        future.result()


def finish_gemms() -> None:
    """
    Wait for every GEMM this thread's `matmul_f32` calls left running (`background`); re-raise
    the first one's error.
    """
    calls = _RUNNING.pop(threading.get_ident(), None)
    if calls is None:
        return
    every = [future for call in calls.futures for future in call]
    _settled(every)


_SCRATCH: dict[tuple[int, int], np.ndarray] = {}
"""
The GEMM result buffer of each task of a `matmul_f32` call, by calling thread and task number
(task t of every parallel call runs on worker t, one job after another; a sequential call uses
task 0 after the parallel ones ended), kept across calls and grown when a result needs more.
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
    calls = _RUNNING.pop(threading.get_ident(), None)
    if calls is not None:
        wait([future for call in calls.futures for future in call])


def release_scratch() -> None:
    """Free this thread's GEMM scratch buffers (after a simulation; the next one regrows them)."""
    drop_gemms()
    caller = threading.get_ident()
    for key in [key for key in _SCRATCH if key[0] == caller]:
        del _SCRATCH[key]
