"""
Benchmark: the deployments people run on Spyre, one table (docs/deploying.md).

For vLLM-spyre's documented configurations (Granite-3.3-8B on 1 card at 3,072 positions x 16
sequences in fp16 and fp8, on 2 cards at 8,192 x 4 and on 4 cards at 32,768 x 32; Llama-3.1-8B
at the same 1- and 4-card points; Mistral-Small-24B on 2 cards at 8,192 x 32 and on 4 cards at
32,768 x 32; prompts prefilled in 1,024-token chunks), IBM's next target models on one card,
and Llama-3-70B (which does not fit one card), it prints one row per model x dtype x cards x
(batch, context), measured in one run:

- fits: each card's device memory needed and the card's capacity (`ktir.llm.capacity`: weights,
  KV cache, activations and the runtime reserve);
- where it fits, from `ktir.estimate_llm` (public `config.json` values in `bench/configs/`, no
  weights): the time to first token (a prompt of 1,024 tokens, one chunk), one decode step at
  the full context (time per output token), tokens/s per card (batch / step / cards) and per
  user (1 / step), each beside its sustained bound (the card's sustained rates: the yardstick),
  and the smallest ratio of either phase to its datasheet roofline (never below 1); on several
  cards, each card's time by tensor parallelism (one shard plus its collectives over PCIe).

Nothing is asserted. Run: `.venv/bin/python bench/deploy_bench.py` (`--quick`: one timed row,
the 70B check and the multi-card memory rows).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

CONFIGS = Path(__file__).resolve().parent / "configs"
PROMPT = 1024
"""Prompt tokens: one of vLLM-spyre's 1,024-token prefill chunks."""
CHUNK = 1024


@dataclass(frozen=True)
class Point:
    """One deployment: a model (bench/configs/<model>.json) in a dtype on cards at (batch, context)."""

    model: str
    dtype: str
    cards: int
    batch: int
    context: int
    quick: bool = False
    """Whether `--quick` runs it."""


POINTS = (
    Point("granite-3.3-8b", "fp16", 1, 16, 3072, quick=True),
    Point("granite-3.3-8b", "fp8", 1, 16, 3072),
    Point("llama-3.1-8b", "fp16", 1, 16, 3072),
    Point("llama-3.1-8b", "fp8", 1, 16, 3072),
    Point("ministral-8b", "fp16", 1, 16, 3072),
    Point("qwen2.5-vl-7b-text", "fp16", 1, 16, 3072),
    Point("mistral-small-24b", "fp16", 1, 16, 3072),
    Point("llama-3-70b", "fp16", 1, 1, 2048, quick=True),
    Point("llama-3-70b", "fp16", 1, 16, 3072, quick=True),
    Point("granite-3.3-8b", "fp16", 2, 4, 8192, quick=True),
    Point("granite-3.3-8b", "fp16", 4, 32, 32768, quick=True),
    Point("granite-3.3-8b", "fp8", 4, 32, 32768, quick=True),
    Point("llama-3.1-8b", "fp16", 4, 32, 32768, quick=True),
    Point("mistral-small-24b", "fp16", 2, 32, 8192, quick=True),
    Point("mistral-small-24b", "fp16", 4, 32, 32768, quick=True),
    Point("llama-3-70b", "fp16", 2, 1, 2048, quick=True),
    Point("llama-3-70b", "fp16", 4, 1, 2048, quick=True),
    Point("llama-3-70b", "fp16", 4, 16, 3072, quick=True),
)


def _config(model: str) -> Any:
    from ktir.tools.ktir_estimate import read_config

    return read_config(str(CONFIGS / f"{model}.json"))


def measure(point: Point) -> dict[str, Any]:
    """The row of one point: its memory per card, and (if it fits) each card's estimate."""
    from ktir.ir.diagnostics import DiagnosticError
    from ktir.llm.capacity import MemoryModel
    from ktir.llm.estimate import EstimateError, estimate_llm

    start = time.perf_counter()
    config = _config(point.model)
    prompt = min(PROMPT, point.context)
    memory = MemoryModel(config, dtype=point.dtype).per_card(
        context=point.context, batch=point.batch, prompt=min(prompt, CHUNK), cards=point.cards
    )
    row: dict[str, Any] = {"point": point, "memory": memory, "estimate": None, "error": ""}
    if memory.fits:
        try:
            row["estimate"] = estimate_llm(
                config, prompt=prompt, context=point.context, batch=point.batch, dtype=point.dtype,
                prefill_chunk=CHUNK, cards=point.cards,
            )  # fmt: skip
        except (EstimateError, DiagnosticError) as error:  # a program ktir cannot time yet: say so
            row["error"] = str(error).splitlines()[0]
    row["wall_s"] = time.perf_counter() - start
    return row


def _gib(n: float) -> str:
    return f"{n / 1024**3:,.1f}"


def _timing_cells(estimate: Any) -> list[str]:
    """TTFT, time per output token, tokens/s per card and per user, each with its sustained bound."""
    chunks = [c.phase for c in estimate.chunks] or [estimate.prefill]
    ttft_bound = sum(p.sustained_bound_us for p in chunks)
    decode = estimate.decode
    per_user_bound = 1e6 / decode.sustained_bound_us
    roof = min(decode.vs_bound, *(p.vs_bound for p in chunks))
    return [
        f"{estimate.time_to_first_token_us / 1e3:,.1f}", f"{ttft_bound / 1e3:,.1f}",
        f"{estimate.decode_us / 1e3:,.2f}", f"{decode.sustained_bound_us / 1e3:,.2f}",
        f"{estimate.tokens_per_second_per_card:,.1f}",
        f"{estimate.batch * per_user_bound / estimate.cards:,.1f}",  # the group's tokens, over its cards
        f"{estimate.tokens_per_second_per_user:,.2f}", f"{per_user_bound:,.2f}", f"{roof:.2f}",
    ]  # fmt: skip


COLUMNS = (
    "model", "dtype", "cards", "batch x context", "fits: needs / has GiB per card",
    "TTFT ms", "sust ms", "TPOT ms", "sust ms", "tok/s/card", "bound", "tok/s/user", "bound",
    "min x roof", "wall s",
)  # fmt: skip


def table(rows: list[dict[str, Any]]) -> Table:
    """One line per point."""
    out = Table(
        title=f"Deployments on Spyre (prompt {PROMPT} tokens in {CHUNK}-token chunks; TPOT: one decode "
        "step at the full context; sust / bound: at the sustained rates; min x roof: the smaller "
        "phase's simulated / datasheet roofline)"
    )
    for column in COLUMNS:
        out.add_column(column, justify="left" if column in ("model", "dtype") else "right")
    for row in rows:
        p, memory = row["point"], row["memory"]
        fits = f"{'yes' if memory.fits else 'NO'}: {_gib(memory.needed)} / {_gib(memory.capacity)}"
        if row["estimate"] is not None:
            timing = _timing_cells(row["estimate"])
        elif row["error"]:
            timing = ["not timed (below)", *[""] * 8]
        else:
            timing = ["no time: does not fit", *[""] * 8]
        cells = [p.model, p.dtype, str(p.cards), f"{p.batch} x {p.context:,}", fits, *timing]
        out.add_row(*cells, f"{row['wall_s']:.1f}")
    return out


def main() -> None:
    """Measure every point (or the `--quick` ones) and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--quick", action="store_true", help="one timed row, the 70B and the multi-card rows")
    args = parser.parse_args()
    rows = [measure(p) for p in POINTS if p.quick or not args.quick]
    console = Console(width=220)
    console.print(table(rows))
    for row in rows:
        if row["error"]:
            p = row["point"]
            console.print(f"{p.model} {p.dtype} on {p.cards} card(s) at {p.batch} x {p.context}: not timed: "
                          f"{row['error']}")  # fmt: skip
        if not row["memory"].fits:
            p = row["point"]
            console.print(f"{p.model} {p.dtype} on {p.cards} card(s) at {p.batch} x {p.context}: "
                          f"{row['memory'].describe()}")  # fmt: skip


if __name__ == "__main__":
    main()
