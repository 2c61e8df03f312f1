"""
Benchmark: the simulator's wall time against NumPy doing the same computation directly.

Three workloads, fp16, compiled with `ktir-compile` for 32 cores (not timed):

- a 4096 x 4096 x 4096 matmul; NumPy: `(x.astype(f32) @ w.astype(f32)).astype(f16)`;
- an 8192 x 4096 pointwise chain `tanh(silu(x) * y + x)`; NumPy: `ktir.reference.run` of the
  graph (NumPy op by op, fp32 compute, fp16 rounding per op);
- one Llama-shaped decoder layer: Hugging Face `LlamaForCausalLM` with 1 layer, hidden 4096,
  intermediate 11008, 32 heads, seq 512 (vocab 256, so the head is small); NumPy: the reference
  executor on the graph with its matmul computed in fp32 BLAS like the simulator's (the
  reference's own matmul is exact, in float64, and twice as slow).

For each it prints both wall times (best of `--repeats`), their ratio (target <= 2), the
simulated cycles, and the simulator's peak traced memory (tracemalloc, measured in a separate
untimed run) over the total bytes of every tensor the graph defines (target <= 2). Nothing is
asserted. Run: `.venv/bin/python bench/sim_bench.py` (`--quick`: smaller shapes).
"""

from __future__ import annotations

import argparse
import gc
import math
import time
import tracemalloc
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.parser import Parser

import ktir
from ktir.dialects.ktir import structured as st
from ktir.ir.context import make_context
from ktir.layout.dtypes import numpy_dtype
from ktir.reference import executor as reference
from ktir.reference.precision import store
from ktir.sim import simulate


def best_of(repeats: int, fn: Callable[[], Any]) -> float:
    """Smallest wall time of `repeats` calls of `fn` (garbage collected before each)."""
    best = math.inf
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def peak_bytes(fn: Callable[[], Any]) -> int:
    """Peak bytes traced (NumPy reports its buffers to tracemalloc) while `fn` runs."""
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def tensor_bytes(module: ModuleOp) -> int:
    """Total host bytes of every tensor the graph-level function defines (arguments and results)."""
    total = 0
    for op in module.walk():
        values = list(op.results)
        if op.name == "func.func":
            values = list(op.regions[0].block.args)
        for value in values:
            if isinstance(value.type, TensorType):
                count = math.prod(value.type.get_shape())
                total += count * numpy_dtype(value.type.element_type).itemsize
    return total


@contextmanager
def fp32_matmul() -> Any:
    """The reference executor with its matmul in fp32 BLAS (the simulator's precision)."""

    def matmul(op: Any, args: list[np.ndarray]) -> list[np.ndarray]:
        x, y = args
        product = np.matmul(x.astype(np.float32), y[..., : x.shape[-1], :].astype(np.float32))
        return [store(product, op.results[0].type.element_type)]

    saved = {t: reference.IMPLEMENTATIONS[t] for t in (st.MatmulOp, st.BmmOp)}
    reference.IMPLEMENTATIONS.update({t: matmul for t in saved})
    try:
        yield
    finally:
        reference.IMPLEMENTATIONS.update(saved)


def parse(text: str) -> ModuleOp:
    """A graph-level module from MLIR text."""
    return Parser(make_context(), text).parse_module()


def matmul_case(n: int) -> tuple[ModuleOp, list[np.ndarray], Callable[[], Any]]:
    """Graph, inputs and the NumPy baseline of an n x n x n fp16 matmul."""
    t = f"tensor<{n}x{n}xf16>"
    graph = parse(
        f"func.func @mm(%x: {t}, %w: {t}) -> {t} {{\n"
        f"  %y = ktir.matmul %x, %w : {t}, {t} -> {t}\n  return %y : {t}\n}}"
    )
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, n)).astype(np.float16)
    w = (rng.standard_normal((n, n)) / math.sqrt(n)).astype(np.float16)
    return graph, [x, w], lambda: (x.astype(np.float32) @ w.astype(np.float32)).astype(np.float16)


def pointwise_case(rows: int, cols: int) -> tuple[ModuleOp, list[np.ndarray], Callable[[], Any]]:
    """Graph, inputs and NumPy baseline of tanh(silu(x) * y + x)."""
    t = f"tensor<{rows}x{cols}xf16>"
    text = (
        f"func.func @chain(%x: {t}, %y: {t}) -> {t} {{\n"
        f"  %a = ktir.silu %x : {t} -> {t}\n"
        f"  %b = ktir.mul %a, %y : {t}, {t} -> {t}\n"
        f"  %c = ktir.add %b, %x : {t}, {t} -> {t}\n"
        f"  %d = ktir.tanh %c : {t} -> {t}\n"
        f"  return %d : {t}\n}}"
    )
    graph = parse(text)
    rng = np.random.default_rng(1)
    inputs = [rng.standard_normal((rows, cols)).astype(np.float16) for _ in range(2)]
    baseline_graph = parse(text)
    return graph, inputs, lambda: reference.run(baseline_graph, inputs)


def decoder_case(
    seq: int, hidden: int, intermediate: int
) -> tuple[ModuleOp, list[np.ndarray], Callable[[], Any]]:
    """Graph, inputs and baseline of a one-layer HF Llama (random weights, fp16)."""
    import torch
    import transformers

    from ktir.frontend.fx import import_program

    config = transformers.LlamaConfig(
        vocab_size=256,
        hidden_size=hidden,
        intermediate_size=intermediate,
        num_hidden_layers=1,
        num_attention_heads=32,
        num_key_value_heads=32,
        max_position_embeddings=seq,
    )
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(config).half().eval()
    ids = torch.randint(0, config.vocab_size, (1, seq), generator=torch.Generator().manual_seed(0))
    imported = import_program(model, (ids,), {"use_cache": False})
    baseline = import_program(model, (ids,), {"use_cache": False})
    inputs = imported.arguments(ids)

    def run_baseline() -> Any:
        with fp32_matmul():
            return reference.run(baseline.module, inputs)

    return imported.module, inputs, run_baseline


def measure_simulator(graph: ModuleOp, inputs: list[np.ndarray], repeats: int) -> tuple[float, Any, int]:
    """Best wall time of `simulate`, the report of a run, and the peak traced bytes of another."""
    reports: list[Any] = []
    seconds = best_of(repeats, lambda: reports.append(simulate(graph, inputs).report))
    return seconds, reports[-1], peak_bytes(lambda: simulate(graph, inputs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="smaller shapes (1024 matmul, 1024 x 1024, seq 128)"
    )
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--only", choices=["matmul", "pointwise", "llama"], help="run one workload")
    args = parser.parse_args()
    console = Console()
    cases = {
        "matmul 4096^3": lambda: matmul_case(1024 if args.quick else 4096),
        "pointwise 8192x4096": lambda: pointwise_case(*((1024, 1024) if args.quick else (8192, 4096))),
        "Llama layer h4096 s512": lambda: decoder_case(128 if args.quick else 512, 4096, 11008),
    }
    table = Table(title=f"ktir.sim vs NumPy, best of {args.repeats} (32 cores)")
    for column in (
        "workload",
        "NumPy (s)",
        "sim (s)",
        "sim / NumPy",
        "sim cycles",
        "sim µs",
        "peak / tensors",
    ):
        table.add_column(column, justify="left" if column == "workload" else "right")
    for name, make in cases.items():
        if args.only and not name.lower().startswith(args.only):
            continue
        with console.status(f"{name}: build and compile"):
            graph, inputs, baseline = make()
            total = tensor_bytes(graph)
            ktir.run_pipeline(graph, "ktir-compile{cores=32}")
        with console.status(f"{name}: NumPy"):
            numpy_time = best_of(args.repeats, baseline)
        with console.status(f"{name}: simulator"):
            sim_time, report, peak = measure_simulator(graph, inputs, args.repeats)
        table.add_row(
            name, f"{numpy_time:.2f}", f"{sim_time:.2f}", f"{sim_time / numpy_time:.2f}",
            f"{report.total_cycles:,}", f"{report.time_us:,.0f}", f"{peak / total:.2f}",
        )  # fmt: skip
        console.print(f"{name}: NumPy {numpy_time:.2f} s, simulator {sim_time:.2f} s")
    console.print(table)


if __name__ == "__main__":
    main()
