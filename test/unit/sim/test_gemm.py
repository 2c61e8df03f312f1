"""The simulator's matmul over the cores' distinct tiles (ktir/sim/gemm.py)."""

from __future__ import annotations

import threading
import tracemalloc
from collections.abc import Callable

import numpy as np
import pytest
from xdsl.dialects.builtin import Float16Type, Float32Type
from xdsl.parser import Parser

from ktir.ir.context import make_context
from ktir.sim import gemm
from ktir.sim.gemm import matmul_f32

F16 = Float16Type()


def _tiles(rng: np.random.Generator, count: int, *shape: int) -> np.ndarray:
    return rng.standard_normal((count, *shape)).astype(np.float16)


def _integers(rng: np.random.Generator, count: int, *shape: int) -> np.ndarray:
    """Small integers: every product and sum is exact in fp32, whatever order BLAS adds in."""
    return rng.integers(-3, 4, (count, *shape)).astype(np.float16)


@pytest.mark.parametrize(
    ("x_index", "y_index"),
    [
        ([0, 1, 2, 3, 0, 1, 2, 3], [0, 0, 0, 0, 1, 1, 1, 1]),  # M split 4 ways, N 2: consecutive cores
        ([0, 0, 1, 1, 2, 2, 3, 3], [0, 1, 0, 1, 0, 1, 0, 1]),  # cores sharing a y tile are not consecutive
        ([2, 0, 1], [0, 0, 0]),  # one shared y tile, x tiles not in core order
    ],
)
@pytest.mark.parametrize("batch", [(), (3,)])
def test_an_accumulating_matmul_adds_the_products_that_one_without_would_give(
    x_index: list[int], y_index: list[int], batch: tuple[int, ...]
) -> None:
    """
    `into` adds each core's product to its accumulator in place: the same GEMMs as without it
    (so the same bits on any CPU), then product + accumulator rounded to fp32 once.
    """
    rng = np.random.default_rng(0)
    xi, yi = np.array(x_index), np.array(y_index)
    x = _tiles(rng, xi.max() + 1, *batch, 24, 40)
    y = _tiles(rng, yi.max() + 1, *batch, 48, 16)  # K' = 48 >= K = 40: padding rows are not read
    accumulator = rng.standard_normal((len(xi), *batch, 24, 16)).astype(np.float32)
    expected = matmul_f32(x, xi, y, yi, F16)
    expected += accumulator
    into = accumulator.copy()
    assert matmul_f32(x, xi, y, yi, F16, into) is into
    assert np.array_equal(into.view(np.uint32), expected.view(np.uint32))


@pytest.mark.parametrize("element", [F16, Float32Type()])
def test_each_core_gets_the_product_of_its_own_tiles(element: Float16Type | Float32Type) -> None:
    """
    Three cores share one y tile and hold all three x tiles, in another order than the cores:
    core c's rows are x[x_index[c]] @ y, exact for integer-valued tiles.
    """
    rng = np.random.default_rng(1)
    xi, yi = np.array([2, 0, 1]), np.array([0, 0, 0])
    x, y = _integers(rng, 3, 8, 64), _integers(rng, 1, 64, 32)
    if isinstance(element, Float32Type):
        x, y = x.astype(np.float32), y.astype(np.float32)
    product = matmul_f32(x, xi, y, yi, element)
    for core in range(3):
        exact = x[xi[core]].astype(np.float64) @ y[0].astype(np.float64)
        assert np.array_equal(product[core], exact)


@pytest.mark.parametrize("accumulate", [False, True])
def test_gemms_on_several_threads_give_the_bits_of_one_thread(
    accumulate: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """
    Different y tiles' GEMMs run a few at once on threads (above `PARALLEL_GEMM_MACS`): each
    call is the same as on one thread, so the products are bit for bit the same.
    """
    rng = np.random.default_rng(1)
    xi, yi = np.array([0, 1, 2, 3] * 4), np.repeat(np.arange(4), 4)  # 4 y tiles shared by 4 cores
    x, y = _tiles(rng, 4, 256, 512), _tiles(rng, 4, 512, 256)
    assert x[0].size * 4 * 256 >= gemm.PARALLEL_GEMM_MACS  # the threaded path
    accumulator = rng.standard_normal((16, 256, 256)).astype(np.float32)
    results = []
    for workers in (1, 3):
        monkeypatch.setattr(gemm, "_gemm_workers", lambda workers=workers: workers)
        into = accumulator.copy() if accumulate else None
        results.append(matmul_f32(x, xi, y, yi, F16, into))
    assert np.array_equal(results[0].view(np.uint32), results[1].view(np.uint32))


def _shared_weights(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """4 x tiles and 4 y tiles, core c = 4j + i multiplying x[i] by y[j]: the threaded path."""
    xi, yi = np.array([0, 1, 2, 3] * 4), np.repeat(np.arange(4), 4)
    x, y = _tiles(rng, 4, 256, 512), _tiles(rng, 4, 512, 256)
    assert x[0].size * 4 * 256 >= gemm.PARALLEL_GEMM_MACS
    return x, xi, y, yi


def _traced_peak(run: Callable[[], object]) -> int:
    """Peak bytes NumPy allocates while `run` runs (tracemalloc)."""
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("workers", [1, 2])
def test_gemms_write_their_products_with_no_buffer_per_call(
    workers: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """
    Without an accumulator the GEMMs of consecutive cores write their tiles of the result; with
    one, into a scratch buffer per thread kept across calls: once warm, a call allocates nothing
    near a group's 1 MiB of products (a fresh buffer per GEMM cost page faults on every call).
    """
    monkeypatch.setattr(gemm, "_gemm_workers", lambda: workers)
    x, xi, y, yi = _shared_weights(np.random.default_rng(2))
    xf, yf = x.astype(np.float32), y.astype(np.float32)  # fp32 already: no conversion in the calls
    group_bytes = 4 * 256 * 256 * 4
    result_bytes = 4 * group_bytes
    assert _traced_peak(lambda: matmul_f32(xf, xi, yf, yi, F16)) < result_bytes + group_bytes // 2
    into = np.zeros((16, 256, 256), np.float32)
    matmul_f32(xf, xi, yf, yi, F16, into)  # warms the threads' scratch buffers
    assert _traced_peak(lambda: matmul_f32(xf, xi, yf, yi, F16, into)) < group_bytes // 2
    gemm.release_scratch()


def test_a_background_matmul_is_added_before_its_accumulator_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """
    `background=True` returns with the GEMMs still running; reading the LX buffer that holds the
    accumulator (here `data`) waits for them, so it sees the same bits as a call that waits.
    """
    from ktir.ir.values import tensor_layout
    from ktir.sim import gemm
    from ktir.sim.host_tiles import HostTiles
    from ktir.sim.memory import LxBuffer

    monkeypatch.setattr(gemm, "_gemm_workers", lambda: 2)  # the pool, whatever the machine's CPUs
    x, xi, y, yi = _shared_weights(np.random.default_rng(3))
    xf, yf = x.astype(np.float32), y.astype(np.float32)
    expected = matmul_f32(xf, xi, yf, yi, F16)
    expected += matmul_f32(xf, xi, yf, yi, F16)
    # 256 x 4096 in sticks of 64 columns; core c holds columns [256c, 256c + 256): 4 sticks.
    text = "tensor<256x4096xf16, #ktir.tiled<device_size = [64, 256, 64], stride_map = [64, 4096, 1]>>"
    layout, shape, _ = tensor_layout(Parser(make_context(), text).parse_type())
    tiles = HostTiles.of(layout, shape, (4, 256, 64), np.array([[4 * c, 0, 0] for c in range(16)]), 16)
    assert tiles is not None and tiles.extent == (256, 256)
    buffer = LxBuffer(0, 0, (16, 1, 4, 256, 64), np.dtype(np.float32), np.ones((16, 1), bool), False)
    for _ in range(2):
        matmul_f32(xf, xi, yf, yi, F16, buffer.host_slot(0, tiles), background=True)
    assert gemm._RUNNING[threading.get_ident()]  # the second call's GEMMs were left running
    want = np.zeros((16, 4, 256, 64), np.float32)
    tiles.to_device(expected, want)
    assert np.array_equal(buffer.data[:, 0].view(np.uint32), want.view(np.uint32))
    assert threading.get_ident() not in gemm._RUNNING


def test_each_thread_waits_for_its_own_background_gemms(monkeypatch: pytest.MonkeyPatch) -> None:
    """
    Simulations on two threads keep their GEMMs and scratch buffers apart: the main thread's
    `finish_gemms` leaves another thread's running GEMMs to that thread, whose result is the
    bits of a call that waits.
    """
    monkeypatch.setattr(gemm, "_gemm_workers", lambda: 2)
    x, xi, y, yi = _shared_weights(np.random.default_rng(4))
    xf, yf = x.astype(np.float32), y.astype(np.float32)
    expected = matmul_f32(xf, xi, yf, yi, F16)
    into = np.zeros_like(expected)
    other: list[int] = []

    def simulate_elsewhere() -> None:
        other.append(threading.get_ident())
        matmul_f32(xf, xi, yf, yi, F16, into, background=True)

    thread = threading.Thread(target=simulate_elsewhere)
    thread.start()
    thread.join()
    gemm.finish_gemms()  # the main thread's own: none
    gemm.drop_gemms()
    assert other[0] in gemm._RUNNING
    for call in gemm._RUNNING.pop(other[0]).futures:  # as that thread's next read would
        for future in call:
            future.result()
    assert np.array_equal(into.view(np.uint32), expected.view(np.uint32))
    for key in [key for key in gemm._SCRATCH if key[0] == other[0]]:
        del gemm._SCRATCH[key]


@pytest.mark.parametrize("queued", [1, 2, 3])
def test_calls_queued_behind_running_ones_add_in_call_order(
    queued: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """
    Background calls on one accumulator are queued on the workers without waiting (up to
    `QUEUED_CALLS` at once): each core's tile is added to by one worker in call order, so six
    calls give the bits of six calls that each wait. Products of unit normals: the fp32 sums
    depend on their order.
    """
    monkeypatch.setattr(gemm, "_gemm_workers", lambda: 2)
    monkeypatch.setattr(gemm, "QUEUED_CALLS", queued)
    rng = np.random.default_rng(5)
    operands = [_shared_weights(rng) for _ in range(6)]
    expected = np.zeros((16, 256, 256), np.float32)
    for x, xi, y, yi in operands:
        matmul_f32(x, xi, y, yi, F16, expected)
    into = np.zeros_like(expected)
    for x, xi, y, yi in operands:
        matmul_f32(x, xi, y, yi, F16, into, background=True)
        assert len(gemm._RUNNING[threading.get_ident()].futures) <= queued
    gemm.finish_gemms()
    assert np.array_equal(into.view(np.uint32), expected.view(np.uint32))


def test_a_call_on_another_accumulator_waits_for_the_running_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    """A call of another shape (here another accumulator) is not queued: the running calls end first."""
    monkeypatch.setattr(gemm, "_gemm_workers", lambda: 2)
    x, xi, y, yi = _shared_weights(np.random.default_rng(6))
    first, second = np.zeros((16, 256, 256), np.float32), np.zeros((16, 256, 256), np.float32)
    matmul_f32(x, xi, y, yi, F16, first, background=True)
    running = gemm._RUNNING[threading.get_ident()].futures[0]
    matmul_f32(x, xi, y, yi, F16, second, background=True)
    assert all(future.done() for future in running)
    gemm.finish_gemms()
    assert np.array_equal(first.view(np.uint32), second.view(np.uint32))


def test_the_gemms_of_y_tiles_sharing_x_tiles_are_cut_into_runs() -> None:
    """`_pieces`: the docstring's example, and the forms that give one y tile per run."""
    shared = [np.arange(4 * j, 4 * j + 4) for j in range(8)]  # core 4j + i: x tile i, y tile j
    x_index = np.array([0, 1, 2, 3] * 8)
    assert gemm._pieces(shared, x_index, 4) == [range(0, 4), range(4, 8)]
    assert gemm._pieces(shared, x_index, 8) == [range(0, 8)]
    interleaved = [np.arange(j, 32, 8) for j in range(8)]  # core 8i + j: not consecutive per y tile
    assert gemm._pieces(interleaved, np.repeat(np.arange(4), 8), 4) == [range(j, j + 1) for j in range(8)]
    other_x = np.array([0, 1, 2, 3] * 4 + [4, 5, 6, 7] * 4)  # the last 4 y tiles take other x tiles
    assert gemm._pieces(shared, other_x, 8) == [range(0, 4), range(4, 8)]


def test_a_forked_child_runs_its_gemms_on_threads_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """
    The parent's GEMM threads do not exist in a child forked after they started: the child makes
    its own (before, its first parallel call would have waited forever for the parent's).
    """
    import os
    import signal
    import time

    monkeypatch.setattr(gemm, "_gemm_workers", lambda: 2)
    x, xi, y, yi = _shared_weights(np.random.default_rng(7))
    expected = matmul_f32(x, xi, y, yi, F16)  # starts the parent's workers
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child
        product = matmul_f32(x, xi, y, yi, F16)
        os.write(write, b"1" if np.array_equal(product, expected) else b"0")
        os._exit(0)
    os.close(write)
    deadline = time.monotonic() + 60
    while os.waitpid(child, os.WNOHANG) == (0, 0):
        if time.monotonic() > deadline:
            os.kill(child, signal.SIGKILL)
            os.waitpid(child, 0)
            pytest.fail("the forked child's matmul did not finish in 60 s")
        time.sleep(0.05)
    assert os.read(read, 1) == b"1"
    os.close(read)


def test_a_call_with_other_y_tiles_waits_even_on_the_same_accumulator(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """
    The workers' shares follow the y tiles: with one more (unused) y tile the same cores may go
    to another worker, so the call waits for the running ones instead of queuing behind them.
    """
    monkeypatch.setattr(gemm, "_gemm_workers", lambda: 2)
    x, xi, y, yi = _shared_weights(np.random.default_rng(8))
    into = np.zeros((16, 256, 256), np.float32)
    matmul_f32(x, xi, y, yi, F16, into, background=True)
    running = gemm._RUNNING[threading.get_ident()].futures[0]
    matmul_f32(x, xi, np.concatenate([y, y[:1]]), yi, F16, into, background=True)
    assert all(future.done() for future in running)
    gemm.finish_gemms()


def test_a_grouping_is_each_y_tiles_cores_cut_into_runs_and_remembered() -> None:
    """
    `_grouping`: each run's y tiles, their cores in core order and the x tiles the run reads
    (None for every x tile in order), the same as `_pieces` on the groups; asked again, the same
    object.
    """
    x_index, y_index = np.array([0, 1, 2, 3] * 8), np.repeat(np.arange(8), 4)  # core 4j + i
    runs = gemm._grouping(x_index, 4, y_index, 8, 4)
    assert [run.piece for run in runs] == [range(0, 4), range(4, 8)]
    assert [run.members.tolist() for run in runs] == [list(range(16)), list(range(16, 32))]
    assert all(run.picked is None for run in runs)
    assert gemm._grouping(x_index, 4, y_index, 8, 4) is runs
    # Fewer x tiles picked than there are: the run reads the ones it picks.
    (run,) = gemm._grouping(np.array([2, 0]), 3, np.array([0, 0]), 1, 1)
    assert run.picked is not None and run.picked.tolist() == [2, 0]
    groups = [np.flatnonzero(y_index == j) for j in range(8)]
    assert [r.piece for r in gemm._grouping(x_index, 4, y_index, 8, 8)] == gemm._pieces(groups, x_index, 8)
