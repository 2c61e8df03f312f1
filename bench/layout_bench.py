"""
Benchmark: host <-> device packing of a 4096x4096 fp16 tensor against a plain NumPy copy.

Both sides move the same 32 MiB and allocate their output, in the same run; the ratio is
`ktir time / copy time` (best of several repetitions each). Target: at most 3x.
Run: `make bench` or `.venv/bin/python bench/layout_bench.py`.
"""

import time
from collections.abc import Callable

import numpy as np
from rich.console import Console
from rich.table import Table

from ktir.layout.spyre import SpyreTensorLayout
from ktir.layout.transfer import to_device, to_host

SIZE = (4096, 4096)
REPEATS = 7
TARGET_RATIO = 3.0


def best_time(fn: Callable[[], object]) -> float:
    """Best wall time of `fn` over REPEATS runs (after one warm-up)."""
    fn()
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    host = np.random.default_rng(0).standard_normal(SIZE).astype(np.float16)
    copy_time = best_time(host.copy)
    table = Table(title=f"{SIZE[0]}x{SIZE[1]} fp16 ({host.nbytes / 2**20:.0f} MiB)")
    for column in ("layout", "direction", "ms", "copy ms", "ratio", f"<= {TARGET_RATIO}x"):
        table.add_column(column, justify="right" if column != "layout" else "left")
    for name, order in (("default", [0, 1]), ("permuted [1, 0]", [1, 0])):
        stl = SpyreTensorLayout(SIZE, "float16", dim_order=order)
        device = to_device(host, stl)
        assert np.array_equal(to_host(device, stl, SIZE), host)
        for direction, fn in (
            ("to_device", lambda stl=stl: to_device(host, stl)),
            ("to_host", lambda stl=stl, device=device: to_host(device, stl, SIZE)),
        ):
            seconds = best_time(fn)
            ratio = seconds / copy_time
            table.add_row(
                name,
                direction,
                f"{seconds * 1e3:.2f}",
                f"{copy_time * 1e3:.2f}",
                f"{ratio:.2f}",
                "yes" if ratio <= TARGET_RATIO else "NO",
            )
    Console().print(table)


if __name__ == "__main__":
    main()
