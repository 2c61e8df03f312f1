"""
Benchmark: wall time of ktdp (RFC 0682) kernels on ktir's engine (docs/ktdp.md).

Kernels (`test/lit/Inputs/ktdp/`), at the sizes the public interpreter ktir-cpu is measured at
where ktir runs them: a 4096 x 1024 fp16 row softmax on 32 tiles (ktir-cpu: about 6.5 s of CPU),
a 64 x 2048 x 8192 fp16 matmul with a K loop (about 5.7 s), RoPE over 163840 x 128 (about 2 s),
and smaller kernels: the RFC's 96 x 64 add, a paged gather, an RMSNorm with an all-reduce. For each:
the wall time of `ktir.ktdp.run` (parse, verify, run, read back), the largest error against
NumPy, and the simulated time with its ratio to the roofline bound. Measured in one run; nothing
is asserted. Run: `.venv/bin/python bench/ktdp_bench.py` (`--repeat N`: best of N).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

import ktir.ktdp as ktdp

KERNELS = Path(__file__).resolve().parents[1] / "test" / "lit" / "Inputs" / "ktdp"
Case = tuple[
    str, str, str, dict[str, np.ndarray], Callable[[dict[str, np.ndarray]], np.ndarray], str, float | None
]


def cases() -> list[Case]:
    """(name, file, function, inputs, NumPy reference of the output, output name, ktir-cpu s)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4096, 1024)).astype(np.float16)
    a = rng.standard_normal((64, 2048)).astype(np.float16)
    b = (rng.standard_normal((2048, 8192)) / 40).astype(np.float16)
    p, q = (rng.standard_normal((96, 64)).astype(np.float16) for _ in range(2))
    cache = rng.standard_normal((64, 16, 128)).astype(np.float16)
    table = rng.permutation(64)[:16].astype(np.int32)
    r = rng.standard_normal((16, 4096)).astype(np.float16)
    rx = rng.standard_normal((163840, 128)).astype(np.float16)
    angles = rng.uniform(0, 6.28, (163840, 128))
    rc, rs = np.cos(angles).astype(np.float16), np.sin(angles).astype(np.float16)

    def rope(arrays: dict[str, np.ndarray]) -> np.ndarray:
        x = arrays["x"]
        rotated = np.concatenate([-x[:, 64:], x[:, :64]], 1).astype(np.float32)
        return x.astype(np.float32) * arrays["cos"] + rotated * arrays["sin"]

    def rms(arrays: dict[str, np.ndarray]) -> np.ndarray:
        wide = arrays["x"].astype(np.float32)
        return wide / np.sqrt((wide**2).mean(1, keepdims=True) + 1e-5)

    def softmax(arrays: dict[str, np.ndarray]) -> np.ndarray:
        wide = arrays["x"].astype(np.float32)
        e = np.exp(wide - wide.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)

    return [
        ("row softmax 4096x1024", "softmax.mlir", "softmax", {"x": x, "y": np.zeros_like(x)},
         softmax, "y", 6.5),
        (
            "matmul 64x2048x8192, K loop", "matmul.mlir", "matmul",
            {"a": a, "b": b, "c": np.zeros((64, 8192), np.float16)},
            lambda v: v["a"].astype(np.float32) @ v["b"].astype(np.float32), "c", 5.7,
        ),
        ("RoPE 163840x128 (slices)", "rope.mlir", "rope",
         {"x": rx, "cos": rc, "sin": rs, "out": np.zeros_like(rx)}, rope, "out", 2.0),
        ("RFC add 96x64", "add.mlir", "add", {"a": p, "b": q, "c": np.zeros_like(p)},
         lambda v: v["a"].astype(np.float32) + v["b"], "c", None),
        ("paged gather 256x128 (16-row pages)", "paged_gather.mlir", "paged",
         {"cache": cache, "table": table, "out": np.zeros((256, 128), np.float16)},
         lambda v: v["cache"][v["table"][np.arange(256) // 16], np.arange(256) % 16], "out", None),
        ("RMSNorm 16x4096, all-reduce over 4 tiles", "rmsnorm_distributed.mlir", "rmsnorm",
         {"x": r, "y": np.zeros_like(r)}, rms, "y", None),
    ]  # fmt: skip


def main() -> None:
    """Run every kernel and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--repeat", type=int, default=1, help="best of N wall times")
    args = parser.parse_args()
    table = Table(
        title="ktdp kernels on ktir's engine (wall time: parse, verify, run, read back)",
        caption="ktir-cpu: the public interpreter's reported CPU times on this machine class (not run here)",
    )
    for column in ("kernel", "wall s", "ktir-cpu s", "speed-up", "max |error|", "simulated µs", "x bound"):
        table.add_column(column, justify="left" if column == "kernel" else "right")
    for name, file, function, arrays, reference, output, peer in cases():
        best = float("inf")
        for _ in range(max(args.repeat, 1)):
            start = time.perf_counter()
            outputs, report = ktdp.run(KERNELS / file, function, arrays)
            best = min(best, time.perf_counter() - start)
        error = float(np.abs(outputs[output].astype(np.float32) - reference(arrays)).max())
        table.add_row(
            name, f"{best:.3f}", "-" if peer is None else f"{peer:.1f}",
            "-" if peer is None else f"{peer / best:.0f}x", f"{error:.2e}",
            f"{report.time_us:,.1f}", f"{report.vs_bound:.2f}",
        )  # fmt: skip
    Console(width=160).print(table)


if __name__ == "__main__":
    main()
