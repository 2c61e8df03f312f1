"""
Benchmark: wall time of ktdp (RFC 0682) kernels run as a user runs them (docs/ktdp.md).

Kernels (`test/lit/Inputs/ktdp/`), at the sizes the public interpreter ktir-cpu is measured at
where ktir runs them: a 4096 x 1024 fp16 row softmax on 32 tiles (ktir-cpu: about 6.5 s of CPU),
a 64 x 2048 x 8192 fp16 matmul with a K loop (about 5.7 s), RoPE over 163840 x 128 (about 2 s),
a LayerNorm of 1151 x 8192 fp16 whose 32 tiles take rows t, t + 32, ... (about 9.1 s),
decode paged attention (8 tokens x 32 query heads x 128, 8 KV heads, 16-position pages, contexts
up to 128; about 8.4 s for ktir-cpu's paged-attention kernel), and smaller kernels: the RFC's
96 x 64 add (its time is ktir-run's start-up), a paged gather, an RMSNorm with an all-reduce.

For each: the wall time of the process `ktir-run KERNEL.mlir --function F --inputs in.npz -o
out.npz --json report.json` (start-up, reading the inputs and writing the outputs included; the
inputs are written beforehand), the speed-up over ktir-cpu's figure and, over the five kernels
that have one, its geometric mean; the time of `ktir.ktdp_engine.run` in this process (parse,
verify, run, read back: no start-up, no files); the largest error of the outputs against NumPy;
the simulated time and its ratio to the roofline bound. Measured in one run; nothing is
asserted. Run: `.venv/bin/python bench/ktdp_bench.py` (`--repeat N`: best of N).
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

import ktir.ktdp_engine as ktdp
from ktir.sim import Report

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
    lx = (rng.standard_normal((1151, 8192)) * 2 + 0.5).astype(np.float16)
    lw = (1 + rng.standard_normal((1, 8192)) / 10).astype(np.float16)
    lb = (rng.standard_normal((1, 8192)) / 10).astype(np.float16)
    layernorm_inputs = {"x": lx, "w": lw, "b": lb, "y": np.zeros_like(lx)}
    layernorm_inputs |= {"mean": np.zeros(1151, np.float32), "rstd": np.zeros(1151, np.float32)}
    attention = {
        "q": rng.standard_normal((8, 32, 128)).astype(np.float16),
        "key_cache": rng.standard_normal((64, 16, 8, 128)).astype(np.float16),
        "value_cache": rng.standard_normal((64, 16, 8, 128)).astype(np.float16),
        "block_table": rng.permutation(64).reshape(8, 8).astype(np.int32),
        "context_lens": rng.integers(1, 129, 8).astype(np.int32),
        "out": np.zeros((8, 32, 128), np.float16),
    }

    def rope(arrays: dict[str, np.ndarray]) -> np.ndarray:
        x = arrays["x"]
        rotated = np.concatenate([-x[:, 64:], x[:, :64]], 1).astype(np.float32)
        return x.astype(np.float32) * arrays["cos"] + rotated * arrays["sin"]

    def rms(arrays: dict[str, np.ndarray]) -> np.ndarray:
        wide = arrays["x"].astype(np.float32)
        return wide / np.sqrt((wide**2).mean(1, keepdims=True) + 1e-5)

    def layernorm(arrays: dict[str, np.ndarray]) -> np.ndarray:
        wide = arrays["x"].astype(np.float32)
        centred = wide - wide.mean(1, keepdims=True)
        return centred / np.sqrt((centred**2).mean(1, keepdims=True) + 1e-5) * arrays["w"] + arrays["b"]

    def paged_attention(arrays: dict[str, np.ndarray]) -> np.ndarray:
        out = np.zeros((8, 32, 128), np.float32)
        for token, length in enumerate(arrays["context_lens"]):
            positions = np.arange(length)
            pages = arrays["block_table"][token, positions // 16]
            keys = arrays["key_cache"][pages, positions % 16].astype(np.float32)  # length x 8 x 128
            values = arrays["value_cache"][pages, positions % 16].astype(np.float32)
            queries = arrays["q"][token].astype(np.float32).reshape(8, 4, 128)  # 4 per KV head
            scores = np.einsum("hgd,phd->hgp", queries, keys) / np.sqrt(128)
            weights = np.exp(scores - scores.max(-1, keepdims=True))
            weights /= weights.sum(-1, keepdims=True)
            out[token] = np.einsum("hgp,phd->hgd", weights, values).reshape(32, 128)
        return out

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
        ("LayerNorm 1151x8192 (rows t + 32 k)", "layernorm.mlir", "layernorm", layernorm_inputs,
         layernorm, "y", 9.0),
        ("paged attention 8x32x128, GQA 4:1, ctx <= 128", "paged_attention.mlir", "paged_attention",
         attention, paged_attention, "out", 8.4),
        ("RFC add 96x64", "add.mlir", "add", {"a": p, "b": q, "c": np.zeros_like(p)},
         lambda v: v["a"].astype(np.float32) + v["b"], "c", None),
        ("paged gather 256x128 (16-row pages)", "paged_gather.mlir", "paged",
         {"cache": cache, "table": table, "out": np.zeros((256, 128), np.float16)},
         lambda v: v["cache"][v["table"][np.arange(256) // 16], np.arange(256) % 16], "out", None),
        ("RMSNorm 16x4096, all-reduce over 4 tiles", "rmsnorm_distributed.mlir", "rmsnorm",
         {"x": r, "y": np.zeros_like(r)}, rms, "y", None),
    ]  # fmt: skip


KTIR_RUN = Path(sys.executable).with_name("ktir-run")


def process_seconds(
    kernel: Path, function: str, arrays: dict[str, np.ndarray], scratch: Path, repeat: int
) -> tuple[float, dict[str, np.ndarray], Report]:
    """Best wall time of `ktir-run` on the kernel over `repeat` runs; its outputs and report."""
    inputs, outputs, report = scratch / "in.npz", scratch / "out.npz", scratch / "report.json"
    np.savez(inputs, **arrays)  # pyright: ignore[reportArgumentType]  # NumPy's stubs: a key could be allow_pickle
    command = [str(KTIR_RUN), str(kernel), "--function", function, "--inputs", str(inputs)]
    command += ["-o", str(outputs), "--json", str(report), "-q"]
    best = float("inf")
    for _ in range(max(repeat, 1)):
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        best = min(best, time.perf_counter() - start)
    with np.load(outputs) as written:
        values = {name: written[name] for name in written.files}
    return best, values, Report.from_json(report.read_text())


def engine_seconds(kernel: Path, function: str, arrays: dict[str, np.ndarray], repeat: int) -> float:
    """Best wall time of `ktir.ktdp_engine.run` in this process over `repeat` runs."""
    best = float("inf")
    for _ in range(max(repeat, 1)):
        start = time.perf_counter()
        ktdp.run(kernel, function, arrays)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    """Run every kernel and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--repeat", type=int, default=1, help="best of N wall times")
    args = parser.parse_args()
    table = Table(
        title="ktdp kernels: ktir-run's wall time (start-up and files included) against ktir-cpu",
        caption="ktir-cpu: the public interpreter's reported CPU times on this machine class (not run here)",
    )
    columns = ("kernel", "ktir-run s", "ktir-cpu s", "speed-up", "engine s", "max |error|")
    for column in (*columns, "simulated µs", "x bound"):
        table.add_column(column, justify="left" if column == "kernel" else "right")
    speedups = []
    with tempfile.TemporaryDirectory() as scratch:
        for name, file, function, arrays, reference, output, peer in cases():
            kernel = KERNELS / file
            wall, outputs, report = process_seconds(kernel, function, arrays, Path(scratch), args.repeat)
            engine = engine_seconds(kernel, function, arrays, args.repeat)
            error = float(np.abs(outputs[output].astype(np.float32) - reference(arrays)).max())
            if peer is not None:
                speedups.append(peer / wall)
            table.add_row(
                name, f"{wall:.3f}", "-" if peer is None else f"{peer:.1f}",
                "-" if peer is None else f"{peer / wall:.1f}x", f"{engine:.3f}", f"{error:.2e}",
                f"{report.time_us:,.1f}", f"{report.vs_bound:.2f}",
            )  # fmt: skip
    Console(width=170).print(table)
    geomean = math.exp(sum(math.log(s) for s in speedups) / len(speedups))
    print(f"geometric mean speed-up over ktir-cpu ({len(speedups)} kernels): {geomean:.1f}x")


if __name__ == "__main__":
    main()
