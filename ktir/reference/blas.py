"""
One BLAS thread while a program's values are computed.

The simulators compute a matmul as the schedule does: one fp32 GEMM per tile, many of them
small. Two reasons to run those GEMMs on one BLAS thread:

- **Same bits on every machine.** OpenBLAS splits a GEMM among its threads by rows and
  columns, and the rows at the edge of its blocking go through other kernels, so the bits of a
  product depend on the thread count, that is on the machine's cores (a 2048 x 2048 x 2048
  product differs between 1 and 2 threads). With one thread they depend only on the CPU's SIMD
  kernels, as NumPy's elementwise functions do.
- **Speed.** A (2048 x 64) @ (64 x 256) GEMM is too small to share: on a busy 2-core machine
  2,048 of them took 40 s with 2 threads and 2.7 s with one.

The limit holds only inside the context (`threadpoolctl`), so a caller's own NumPy keeps its
threads.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager

from threadpoolctl import ThreadpoolController


@functools.cache
def _controller() -> ThreadpoolController:
    # Inspecting the loaded libraries takes about 0.8 ms and every simulation enters the limit,
    # so they are found once, at the first run: the simulators have imported NumPy (whose BLAS
    # they limit) by then.
    return ThreadpoolController()


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the body with every loaded BLAS library limited to one thread, then restore them."""
    with _controller().limit(limits=1, user_api="blas"):
        yield
