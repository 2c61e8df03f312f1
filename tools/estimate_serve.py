"""
`ktir-estimate CONFIG --serve`: a continuous-batching serving simulation (docs/serving.md).

```
ktir-estimate config.json --serve --rate 2 --requests 200 --prompt-tokens uniform:256:1024 \\
    --output-tokens 128 --max-batch 16 --json serve.json --png serve.png
```

The run at `--rate` (or the `--trace` file) is printed and written as JSON; the PNG shows the
latency percentiles against the rate and tokens/s per card against tokens/s per user over a
sweep of rates (`SWEEP` times `--rate`, or of the trace's arrival times compressed by the same
factors). Kept apart from `ktir_estimate.py`, which only adds the arguments and calls `run_serve`.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

SWEEP = (0.25, 0.5, 1.0, 1.5, 2.0)
"""Rates of the `--png` sweep, as factors of `--rate` (or of the trace's own rate)."""


class ServeUsageError(Exception):
    """A bad `--serve` option value (exit 2)."""


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    """The `--serve` argument group."""
    group = parser.add_argument_group("serving simulation (--serve, docs/serving.md)")
    group.add_argument("--serve", action="store_true", help="simulate continuous-batching serving")
    group.add_argument("--rate", type=float, help="Poisson arrivals per second")
    group.add_argument("--requests", type=int, default=200, help="requests to simulate (default 200)")
    group.add_argument(
        "--prompt-tokens", default="512", metavar="N|DIST", help="N, uniform:LO:HI, normal:MEAN:STD"
    )
    group.add_argument("--output-tokens", default="128", metavar="N|DIST", help="as --prompt-tokens")
    group.add_argument("--trace", metavar="FILE", help="requests from a JSONL or CSV trace instead")
    group.add_argument("--max-batch", type=int, default=32, help="most sequences in a step (default 32)")
    group.add_argument("--max-batched-tokens", type=int, default=2048, help="token budget of a step (2048)")
    group.add_argument(
        "--scheduler", default="vllm", metavar="vllm|spyre",
        help="scheduling policy: upstream vLLM's (default) or the Spyre plugin's (docs/serving.md)",
    )  # fmt: skip
    group.add_argument(
        "--kv-tokens", type=int, help="KV cache capacity in tokens (default: memory less weights)"
    )
    group.add_argument("--seed", type=int, default=0, help="seed of the arrivals and token counts")
    for name in ("ttft", "tpot", "e2e"):
        group.add_argument(f"--slo-{name}", type=float, metavar="MS", help=f"{name.upper()} objective (ms)")
    group.add_argument("--cache-dir", help="step-cost table cache (default $KTIR_CACHE_DIR or ~/.cache/ktir)")
    group.add_argument(
        "--jobs", type=int, default=default_jobs(), metavar="N",
        help=f"processes timing the step table's points (default: the CPUs, at most 4: {default_jobs()})",
    )  # fmt: skip


def default_jobs() -> int:
    """Worker processes for a step table: the CPUs this process may use, at most 4 (each holds a model)."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(4, usable))


def check_serve_arguments(args: argparse.Namespace) -> None:
    """`ServeUsageError` for a bad `--serve` option (before anything is compiled or written)."""
    from ktir.llm.workload import TokenCount, WorkloadError

    if args.trace is None and args.rate is None:
        raise ServeUsageError("argument --rate: required with --serve unless --trace is given")
    if args.rate is not None and not (args.rate > 0 and math.isfinite(args.rate)):
        raise ServeUsageError(f"argument --rate: must be positive, not {args.rate}")
    for name in ("requests", "max_batch", "max_batched_tokens", "prefill_chunk", "kv_tokens", "jobs"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise ServeUsageError(f"argument --{name.replace('_', '-')}: must be positive, not {value}")
    _check_serve_deployment(args)
    _check_serve_policy(args)
    for name in ("prompt_tokens", "output_tokens"):
        try:
            TokenCount.parse(getattr(args, name))
        except WorkloadError as error:
            raise ServeUsageError(f"argument --{name.replace('_', '-')}: {error}") from None


def _check_serve_policy(args: argparse.Namespace) -> None:
    """`ServeUsageError` for an unknown `--scheduler`, or a spyre chunk that is not whole blocks."""
    from ktir.llm.serving_result import SCHEDULERS, Policy
    from ktir.llm.workload import WorkloadError

    if args.scheduler not in SCHEDULERS:
        raise ServeUsageError(f"argument --scheduler: one of {', '.join(SCHEDULERS)}, not {args.scheduler!r}")
    try:
        Policy(prefill_chunk=args.prefill_chunk or Policy.prefill_chunk, scheduler=args.scheduler).check()
    except WorkloadError as error:
        raise ServeUsageError(f"argument --prefill-chunk: {error}") from None


def _check_serve_deployment(args: argparse.Namespace) -> None:
    """`ServeUsageError` for the device-memory options `--serve` cannot take: it compiles fp16 only."""
    if len(args.target) > 1:
        raise ServeUsageError("argument --target: --serve simulates one chip; give --target once")
    if args.max_fit:
        raise ServeUsageError("argument --max-fit: reports device memory, not serving; give one or the other")
    for flag in ("dtype", "kv_dtype"):
        if getattr(args, flag) not in (None, "fp16"):
            name = flag.replace("_", "-")
            raise ServeUsageError(f"argument --{name}: --serve compiles fp16 only, not {getattr(args, flag)}")


def run_serve(args: argparse.Namespace, config: Any, quiet: bool) -> int:
    """Simulate, print the run at `--rate`, write `--json` and `--png`."""
    from ktir.llm.serving import Policy, Slo, longest_request, serve_at_rates
    from ktir.llm.step_costs import grid_for, grid_programs
    from ktir.llm.workload import TokenCount, poisson_requests, read_trace
    from ktir.progress import StageProgress
    from ktir.tools.output_files import announce_written, write_all

    requests = read_trace(args.trace) if args.trace else None
    if requests is None:
        prompts, outputs = TokenCount.parse(args.prompt_tokens), TokenCount.parse(args.output_tokens)
        requests = poisson_requests(args.rate, args.requests, prompts, outputs, args.seed)
    chunk = args.prefill_chunk or Policy.prefill_chunk  # `--prefill-chunk` is ktir-estimate's, shared
    policy = Policy(args.max_batched_tokens, args.max_batch, chunk, args.kv_tokens, scheduler=args.scheduler)
    slo = Slo(args.slo_ttft, args.slo_tpot, args.slo_e2e)
    sweep = SWEEP if args.png else (1.0,)
    grid = grid_for(policy, *longest_request(requests))
    stages = grid_programs(grid) + (len(sweep) if len(sweep) > 1 else 0)
    with StageProgress(stages, quiet=quiet) as progress:
        results = serve_at_rates(
            config,
            requests,
            policy,
            factors=sweep,
            rate=None if args.trace else args.rate,
            slo=slo,
            target=args.target[0] if args.target else None,
            cores=args.cores,
            cards=args.cards,
            cache_dir=args.cache_dir,
            progress=progress,
            jobs=args.jobs,
        )
    runs = list(zip(sweep, results, strict=True))
    policy = results[0].policy  # its KV capacity resolved from device memory
    result = dict(runs)[1.0]
    Console().print(summary(result, policy))
    files = []
    if args.json:
        # Each run in the form `ServingResult.from_json` reads back: the run and its summary.
        sweep = [json.loads(r.to_json()) for _, r in runs]
        data = {"format": "ktir-serving", "version": 2, "policy": dataclasses.asdict(policy),
                "run": json.loads(result.to_json()), "sweep": sweep}  # fmt: skip
        text = json.dumps(data, indent=2, allow_nan=False)
        files.append((args.json, lambda path: Path(path).write_text(text + "\n", encoding="utf-8")))
    if args.png:
        files.append((args.png, lambda path: write_serving_png([r for _, r in runs], path)))
    write_all(files)
    announce_written([path for path, _ in files], quiet=quiet)
    return 0


def summary(result: Any, policy: Any) -> Table:
    """The run's latencies (p50, p90, p99, ms) and throughput."""
    figures = result.to_dict()
    rate = f"{result.rate_per_s:g}/s" if result.rate_per_s else "trace"
    out = Table(title=f"{len(result.requests)} requests at {rate}, max batch {policy.max_seqs}")
    for column in ("", "p50", "p90", "p99"):
        out.add_column(column, justify="right" if column else "left")
    rows = (("TTFT (ms)", "ttft_ms"), ("inter-token (ms)", "itl_ms"), ("end to end (ms)", "e2e_ms"))
    for label, key in (*rows, ("queueing (ms)", "queue_ms")):
        out.add_row(label, *(_ms(figures[key][p]) for p in ("p50", "p90", "p99")))
    out.add_row("tokens/s per card", f"{result.tokens_per_second_per_card:,.1f}", "", "")
    out.add_row("tokens/s per user", f"{result.tokens_per_second_per_user:,.1f}", "", "")
    out.add_row("goodput (requests/s)", f"{result.goodput_per_s:,.3f}", "", "")
    return out


def _ms(value: float) -> str:
    return f"{value:,.3f}" if value < 10 else f"{value:,.1f}"


def write_serving_png(results: list[Any], path: str) -> None:
    """Latency percentiles against rate, and tokens/s per card against tokens/s per user."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    drawn, (left, right) = plt.subplots(1, 2, figsize=(12, 5))
    rates = [r.arrival_rate_per_s for r in results]
    for key, label in (("ttft_ms", "TTFT"), ("itl_ms", "inter-token")):
        for p, style in (("p50", "-"), ("p90", "--"), ("p99", ":")):
            left.plot(rates, [r.to_dict()[key][p] for r in results], style, marker="o", label=f"{label} {p}")
    left.set_xlabel("arrival rate (requests/s)")
    left.set_ylabel("ms")
    left.set_yscale("log")
    left.legend(fontsize=7)
    users = [r.tokens_per_second_per_user for r in results]
    cards = [r.tokens_per_second_per_card for r in results]
    right.plot(users, cards, marker="o")
    for rate, x, y in zip(rates, users, cards, strict=True):
        right.annotate(f"{rate:.2g}/s", (x, y), fontsize=7)
    right.set_xlabel("tokens/s per user")
    right.set_ylabel("tokens/s per card")
    drawn.tight_layout()
    drawn.savefig(path, dpi=100)
    plt.close(drawn)


__all__ = ["SWEEP", "ServeUsageError", "add_serve_arguments", "check_serve_arguments", "run_serve"]
