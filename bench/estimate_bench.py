"""
Benchmark: whole-model estimates of 7-8B language models (docs/estimating.md).

For Llama-3-8B, Granite-3.3-8B, Mistral-7B and Qwen2-7B (their public `config.json` values,
in `bench/configs/`; no weights), at prompts of 512 and 2048 tokens with a 2048-position KV
cache, it prints what `ktir.estimate_llm` answers, measured in one run:

- time to first token (the prefill), its sustained bound (max(matmul FLOPs / 72.96 TFLOP/s,
  compulsory bytes / 150 GB/s), the schedule-quality yardstick) and their ratio, its ratio to the
  datasheet roofline (98.304 TFLOP/s, 204.8 GB/s) and its traffic ratio (moved / compulsory);
- one decode step at context 2048, the same, and tokens per second;
- the estimate's own wall time and peak memory (each estimate runs in a fresh process, so its
  peak resident set includes importing torch and transformers).

Nothing is asserted. Run: `.venv/bin/python bench/estimate_bench.py` (`--only llama-3-8b`,
`--prompts 512`).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

CONFIGS = Path(__file__).resolve().parent / "configs"
MODELS = ("llama-3-8b", "granite-3.3-8b", "mistral-7b", "qwen2-7b")
CONTEXT = 2048


def one(model: str, prompt: int) -> dict:
    """Estimate one model at one prompt (in this process); the answer and what it cost."""
    from ktir.llm.estimate import estimate_llm
    from ktir.tools.ktir_estimate import read_config

    start = time.perf_counter()
    estimate = estimate_llm(read_config(str(CONFIGS / f"{model}.json")), prompt=prompt, context=CONTEXT)
    data = estimate.to_dict()
    data["wall_s"] = time.perf_counter() - start
    data["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return data


def measured(model: str, prompt: int) -> dict:
    """`one` in a fresh Python process, so its wall time and peak memory are its own."""
    start = time.perf_counter()
    command = [sys.executable, __file__, "--one", model, str(prompt)]
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    data = json.loads(result.stdout.splitlines()[-1])
    data["process_s"] = time.perf_counter() - start
    return data


def table(rows: list[dict]) -> Table:
    """One line per model and prompt."""
    out = Table(
        title=f"ktir.estimate_llm on Spyre (decode at context {CONTEXT}; x sust: simulated / sustained "
        "bound; x roof: simulated / datasheet roofline; traffic: moved / compulsory bytes)"
    )
    columns = (
        "model", "layers", "prompt", "TTFT ms", "sust ms", "x sust", "x roof", "traffic",
        "decode ms", "sust ms", "x sust", "x roof", "traffic", "tokens/s", "wall s", "process s",
        "peak MB",
    )  # fmt: skip
    for column in columns:
        out.add_column(column, justify="left" if column == "model" else "right")
    for r in rows:
        out.add_row(
            r["name"], str(r["layers"]), str(r["prompt"]), *_phase_cells(r["prefill"]),
            *_phase_cells(r["decode"]), f"{r['tokens_per_second']:.1f}", f"{r['wall_s']:.1f}",
            f"{r['process_s']:.1f}", f"{r['peak_mb']:,.0f}",
        )  # fmt: skip
    return out


def _phase_cells(phase: dict) -> list[str]:
    """A phase's time, sustained bound (ms), its ratios to both bounds and its traffic ratio."""
    return [
        f"{phase['time_us'] / 1e3:,.2f}", f"{phase['sustained_bound_us'] / 1e3:,.2f}",
        f"{phase['vs_sustained']:.3f}", f"{phase['vs_bound']:.3f}", f"{phase['traffic_ratio']:.2f}",
    ]  # fmt: skip


def main() -> None:
    """Run every model and prompt and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--only", choices=MODELS, help="one model")
    parser.add_argument("--prompts", type=int, nargs="+", default=[512, 2048], help="prompt lengths")
    parser.add_argument("--one", nargs=2, metavar=("MODEL", "PROMPT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one[0], int(args.one[1]))))
        return
    rows = []
    for model in [args.only] if args.only else MODELS:
        for prompt in args.prompts:
            rows.append({"name": model, **measured(model, prompt)})
    Console(width=200).print(table(rows))


if __name__ == "__main__":
    main()
