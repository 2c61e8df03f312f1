"""
Benchmark: batched prefill and decode of a Llama-3.2-1B-shaped model (docs/estimating.md).

From `bench/configs/llama-3.2-1b.json` (its public `config.json` values; no weights), prompt 512
and a 2048-position KV cache, it prints, measured in one run:

- per batch (1, 2, 4, 8, 16, 32), the attention kernel of one decoder layer's prefill and of its
  decode step: its work division, chunks per core, LPDDR5 bytes moved, simulated and bound
  time (the report's per-kernel roofline bound), their ratio and the traffic ratio, and the
  attention's *SFU floor*: the softmax work of the busiest core at the SFU rates
  (`cost_model.attention_cycles`), which no division removes and the roofline does not count;
- per batch (1, 8, 32), what `ktir.estimate_llm` answers for the whole 16-layer model: the time
  to first token, its ratio to batch 1, and the decode step;
- per batch (1, 8, 32, 64), the whole model's decode step at context 2048 (a padded static
  cache: every sequence attends over all 2048 positions), its sustained bound and datasheet
  roofline with simulated / each, and tokens per second per card (batch / step) and per user
  (1 / step).

Nothing is asserted. Run: `.venv/bin/python bench/batch_bench.py` (`--batches 1 8`,
`--estimate 1 8`, `--decode 1 64`; a few minutes in all, most of it the whole-model estimates).
"""

from __future__ import annotations

import argparse
import math
import time
import warnings
from pathlib import Path
from typing import Any

import torch
from rich.console import Console
from rich.table import Table

import ktir
from ktir.hardware import cost_model
from ktir.hardware.target import Target
from ktir.llm.cache import static_cache_model
from ktir.llm.estimate import estimate_llm
from ktir.sim.report import KernelReport
from ktir.tools.ktir_estimate import read_config

CONFIG = Path(__file__).resolve().parent / "configs" / "llama-3.2-1b.json"
PROMPT, CONTEXT = 512, 2048


def one_layer(config: Any, batch: int, phase: str) -> Any:
    """The one-layer model's prefill (`PROMPT` tokens) or decode step (at `CONTEXT - 1`), compiled."""
    import transformers

    small = config.__class__.from_dict({**config.to_dict(), "num_hidden_layers": 1, "use_cache": True})
    with warnings.catch_warnings(), torch.device("meta"):
        warnings.simplefilter("ignore")
        model = transformers.AutoModelForCausalLM.from_config(small, dtype=torch.float16).eval()
    if phase == "prefill":
        wrapper = static_cache_model(model, CONTEXT, batch, PROMPT)
        args: tuple[torch.Tensor, ...] = (torch.zeros(batch, PROMPT, dtype=torch.long),)
    else:
        wrapper = static_cache_model(model, CONTEXT, batch)
        args = (torch.zeros(batch, 1, dtype=torch.long), torch.tensor([CONTEXT - 1]))
    return ktir.compile(wrapper, args, quiet=True)


def sfu_floor_us(config: Any, batch: int, phase: str, target: Target) -> float:
    """
    The attention's SFU time on its busiest core however it is divided: every query head's
    scores (causal blocks skipped, `cost_model.attention_pairs`) spread evenly over the cores.
    """
    queries = PROMPT if phase == "prefill" else 1
    causal = 0 if phase == "prefill" else CONTEXT - 1
    pairs = float(cost_model.attention_pairs([0], queries, [0], CONTEXT, causal)[0])
    heads = batch * config.num_attention_heads
    return float(cost_model.attention_sfu_cycles(heads * pairs / target.cores, target)) / target.clock_mhz


def attention_row(config: Any, batch: int, phase: str) -> list[str]:
    """The attention kernel of one layer at `batch`: one table row."""
    start = time.perf_counter()
    report = one_layer(config, batch, phase).estimate()
    kernel: KernelReport = next(k for k in report.kernels if k.op == "ktir.attention")
    mhz = kernel.target.clock_mhz
    split = ", ".join(f"{d} {s}" for d, s in kernel.division.items() if s > 1)
    floor = sfu_floor_us(config, batch, phase, kernel.target)
    us, bound_us = kernel.cycles / mhz, kernel.bound_cycles / mhz
    return [
        phase, str(batch), split, str(kernel.chunks), f"{kernel.bytes / 1e6:,.1f}",
        f"{us:,.1f}", f"{bound_us:,.1f}", f"{kernel.vs_bound:.2f}", f"{kernel.traffic_ratio:.2f}",
        f"{floor:,.1f}", f"{us / max(floor, bound_us):.2f}",
        f"{time.perf_counter() - start:.1f}",
    ]  # fmt: skip


def attention_table(config: Any, batches: list[int]) -> Table:
    """One row per phase and batch."""
    out = Table(title=f"Llama-3.2-1B attention kernel, one layer (prompt {PROMPT}, cache {CONTEXT})")
    columns = (
        "phase", "batch", "division", "chunks", "MB moved", "µs", "bound µs", "x bound", "traffic",
        "SFU floor µs", "x max(bound, floor)", "wall s",
    )  # fmt: skip
    for column in columns:
        out.add_column(column, justify="left" if column in ("phase", "division") else "right")
    for phase in ("prefill", "decode"):
        for batch in batches:
            out.add_row(*attention_row(config, batch, phase))
    return out


def estimate_table(config: Any, batches: list[int]) -> Table:
    """The whole model per batch: TTFT (and its ratio to the first batch) and the decode step."""
    out = Table(title=f"Llama-3.2-1B, 16 layers: ktir.estimate_llm (prompt {PROMPT}, context {CONTEXT})")
    for column in ("batch", "TTFT ms", "x bound", "TTFT / first", "decode ms", "x bound", "wall s"):
        out.add_column(column, justify="right")
    first = math.nan
    for batch in batches:
        estimate = estimate_llm(config, prompt=PROMPT, context=CONTEXT, batch=batch)
        ttft = estimate.time_to_first_token_us / 1e3
        first = ttft if math.isnan(first) else first
        out.add_row(
            str(batch), f"{ttft:,.2f}", f"{estimate.prefill.vs_bound:.2f}", f"{ttft / first:.2f}",
            f"{estimate.decode_us / 1e3:,.2f}", f"{estimate.decode.vs_bound:.2f}",
            f"{estimate.wall_seconds:.1f}",
        )  # fmt: skip
    return out


def decode_table(config: Any, batches: list[int]) -> Table:
    """
    The whole model's decode step per batch, and tokens per second per card and per user. The
    estimate's prompt is one token: its prefill is not reported, so it is kept cheap to compile.
    """
    title = f"Llama-3.2-1B, 16 layers: decode step at context {CONTEXT} (padded static KV cache)"
    out = Table(title=title)
    columns = (
        "batch", "step ms", "sustained ms", "x sustained", "roofline ms", "x roofline",
        "tokens/s per card", "tokens/s per user", "wall s",
    )  # fmt: skip
    for column in columns:
        out.add_column(column, justify="right")
    for batch in batches:
        estimate = estimate_llm(config, prompt=1, context=CONTEXT, batch=batch)
        step = estimate.decode
        out.add_row(
            str(batch), f"{estimate.decode_us / 1e3:,.2f}", f"{step.sustained_bound_us / 1e3:,.2f}",
            f"{step.vs_sustained:.2f}", f"{step.bound_us / 1e3:,.2f}", f"{step.vs_bound:.2f}",
            f"{estimate.tokens_per_second_per_card:,.1f}",
            f"{estimate.tokens_per_second_per_user:,.1f}", f"{estimate.wall_seconds:.1f}",
        )  # fmt: skip
    return out


def main() -> None:
    """Print the attention table and the whole-model estimates."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--batches", type=int, nargs="*", default=[1, 2, 4, 8, 16, 32])
    parser.add_argument(
        "--estimate", type=int, nargs="*", default=[1, 8, 32], help="batches of whole-model estimates"
    )
    parser.add_argument(
        "--decode", type=int, nargs="*", default=[1, 8, 32, 64], help="batches of the decode-step table"
    )
    args = parser.parse_args()
    config = read_config(str(CONFIG))
    console = Console(width=200)
    if args.batches:
        console.print(attention_table(config, args.batches))
    if args.estimate:
        console.print(estimate_table(config, args.estimate))
    if args.decode:
        console.print(decode_table(config, args.decode))


if __name__ == "__main__":
    main()
