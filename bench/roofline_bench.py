"""
Benchmark: how close ktir's programs run to the chip's bounds (docs/performance.md).

For every workload it prints, measured in one run:

- simulated time and its two bounds, with compulsory bytes = each parameter, input and output
  once at its device-layout size: the sustained bound, max(matmul FLOPs / 72.96 TFLOP/s,
  compulsory bytes / 150 GB/s), the card's sustained rates and the schedule-quality yardstick;
  and the datasheet roofline, max(matmul FLOPs / 98.304 TFLOP/s, compulsory bytes / 204.8 GB/s),
  physics; their ratios (simulated / bound; 1.0 is the best the rates allow);
- the traffic ratio: LPDDR5 bytes moved / compulsory bytes, and the LPDDR5 megabytes moved;
- kernels run on the chip, and for the layers the same program compiled without `ktir-fuse`
  (kernels, simulated / sustained bound) for comparison;
- compile and simulation wall time.

Workloads: fp16 matmuls M x K x N for M in {1, 32, 512, 2048} and (K, N) in {(4096, 4096),
(4096, 14336), (14336, 4096)}, the weight a parameter; and a Llama-3-8B-shaped decoder layer
(Hugging Face `LlamaForCausalLM`, 1 layer, hidden 4096, intermediate 14336, 32 heads, 8 KV
heads, vocab 256, random fp16 weights) on a 512-token prefill and on one token. The layer's
report includes the one-time parameter load separately (host link), not in the ratio.

Nothing is asserted. Run: `.venv/bin/python bench/roofline_bench.py` (`--quick`: the matmuls with
M <= 32 and the one-token layer; `--only matmul|layer`).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from rich.console import Console
from rich.table import Table

import ktir
from ktir.ir.context import make_context
from ktir.ir.diagnostics import parse_module
from ktir.sim import Report, simulate

MATMUL_M = (1, 32, 512, 2048)
MATMUL_KN = ((4096, 4096), (4096, 14336), (14336, 4096))


@dataclass
class Row:
    """One workload's measurements (`unfused`: the layer compiled with `fuse=False`)."""

    name: str
    report: Report
    compile_s: float
    simulate_s: float
    unfused: Report | None = None


def matmul_row(m: int, k: int, n: int) -> Row:
    """Compile and simulate `x @ w` (x: m x k input, w: k x n parameter), fp16."""
    x, w, y = f"tensor<{m}x{k}xf16>", f"tensor<{k}x{n}xf16>", f"tensor<{m}x{n}xf16>"
    text = (
        f'func.func @mm(%x: {x}, %w: {w} {{ktir.parameter = "w"}}) -> {y} {{\n'
        f"  %y = ktir.matmul %x, %w : {x}, {w} -> {y}\n  return %y : {y}\n}}"
    )
    start = time.perf_counter()
    module = parse_module(make_context(), text)
    ktir.run_pipeline(module, "ktir-compile")
    compiled = time.perf_counter()
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((m, k)).astype(np.float16), rng.standard_normal((k, n)).astype(np.float16)]
    report = simulate(module, inputs).report
    return Row(f"matmul {m}x{k}x{n}", report, compiled - start, time.perf_counter() - compiled)


def layer_row(tokens: int, fuse: bool = True) -> Row:
    """Compile and simulate a Llama-3-8B-shaped decoder layer on `tokens` tokens."""
    import torch
    import transformers

    config = transformers.LlamaConfig(
        hidden_size=4096,
        intermediate_size=14336,
        num_attention_heads=32,
        num_key_value_heads=8,
        num_hidden_layers=1,
        vocab_size=256,
        max_position_embeddings=max(tokens, 8),
        use_cache=False,
    )
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(config).to(torch.float16).eval()
    ids = torch.randint(0, config.vocab_size, (1, tokens))
    start = time.perf_counter()
    program = ktir.compile(model, (ids,), fuse=fuse)
    compiled = time.perf_counter()
    program(ids)
    name = "Llama-3-8B layer, " + ("one token" if tokens == 1 else f"prefill {tokens}")
    row = Row(name, program.report, compiled - start, time.perf_counter() - compiled)
    if fuse:
        row.unfused = layer_row(tokens, fuse=False).report
    return row


def table(rows: list[Row]) -> Table:
    """One line per workload."""
    out = Table(
        title="ktir against its bounds (x sustained: simulated / sustained bound; x roofline: simulated / "
        "datasheet roofline; traffic = moved / compulsory bytes)"
    )
    columns = (
        "workload", "simulated µs", "sustained µs", "x sustained", "roofline µs", "x roofline",
        "traffic", "LPDDR5 MB", "kernels", "unfused: kernels", "x sustained", "load ms", "compile s",
        "sim s",
    )  # fmt: skip
    for column in columns:
        out.add_column(column, justify="left" if column == "workload" else "right")
    for row in rows:
        r = row.report
        u = row.unfused
        out.add_row(
            row.name, f"{r.time_us:,.1f}", f"{r.sustained_bound_us:,.1f}", f"{r.vs_sustained:.2f}",
            f"{r.bound_us:,.1f}", f"{r.vs_bound:.2f}", f"{r.traffic_ratio:.2f}", f"{r.bytes / 1e6:,.1f}",
            str(r.device_kernels), "-" if u is None else str(u.device_kernels),
            "-" if u is None else f"{u.vs_sustained:.2f}",
            f"{r.load_us / 1e3:,.2f}", f"{row.compile_s:.1f}", f"{row.simulate_s:.1f}",
        )  # fmt: skip
    return out


def main() -> None:
    """Run the workloads and print the table (and each layer's slowest kernels)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--quick", action="store_true", help="small-M matmuls and the one-token layer")
    parser.add_argument("--only", choices=["matmul", "layer"], help="run one kind of workload")
    parser.add_argument("--kernels", type=int, default=8, help="slowest kernels to show per layer")
    args = parser.parse_args()
    console = Console(width=220)  # the table: 14 columns, the workload names on one line
    jobs: list[Callable[[], Row]] = []
    if args.only != "layer":
        for m in MATMUL_M[:2] if args.quick else MATMUL_M:
            for k, n in MATMUL_KN:
                jobs.append(lambda m=m, k=k, n=n: matmul_row(m, k, n))
    if args.only != "matmul":
        for tokens in (1,) if args.quick else (1, 512):
            jobs.append(lambda tokens=tokens: layer_row(tokens))
    rows: list[Row] = []
    for job in jobs:
        row = job()
        rows.append(row)
        console.print(
            f"{row.name}: {row.report.vs_sustained:.2f}x sustained bound, {row.report.vs_bound:.2f}x "
            f"datasheet roofline, traffic {row.report.traffic_ratio:.2f}x",
            highlight=False,
        )
        if row.name.startswith("Llama"):
            console.print(row.report.kernel_table(args.kernels, width=console.width))
    console.print(table(rows))


if __name__ == "__main__":
    main()
