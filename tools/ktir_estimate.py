"""
`ktir-estimate`: how fast a Hugging Face language model would run on the chip, from its
`config.json` alone (no weights): time to first token, decode time per token, tokens per second,
each against its sustained bound (the card's sustained rates, the schedule-quality yardstick) and
its datasheet roofline (physics), for Spyre and any what-if targets side by side.

```
ktir-estimate config.json --prompt 512 --context 2048
ktir-estimate path/to/model --target big.toml --target wide.toml --json est.json --png est.png
```

The config is a `config.json` or the model folder that holds one. One column per target: Spyre
first, then each `--target` TOML file in order. `--png` draws the time to first token and the
decode step per target, each split by op kind, with each one's sustained bound (dashed) and
datasheet roofline (dotted) marked (needs matplotlib). On a terminal an estimate that takes
more than 2 s shows a progress bar on stderr, and each file written is named there
(`wrote est.png`); `-q` shows neither. A missing or
malformed config, an architecture that is not a decoder-only causal LM (an encoder such as
BERT, an encoder-decoder) or a bad target file is one line on stderr and exit code 1; a bad
option exits with 2; no output file is written on failure. A model that does not fit the card's
device memory (weights, KV cache, activations, runtime reserve) is such an error, with the
numbers; `--max-fit` tables the largest batch and context that fit 1, 2, 4 and 8 cards.
`--cards N` splits the model over N cards by tensor parallelism: each card's memory, and each
card's time (one shard plus its collectives between cards, which the report lists).
`--prefill-chunk N` times a chunked prefill: the time to first token is the sum of its chunks,
each listed. The decode rates are per card (batch / step) and per user (1 / step).
See docs/estimating.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO, TypedDict

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ktir import __version__
from ktir.hardware.target import load_target
from ktir.progress import StageProgress
from ktir.tools.arguments import ArgumentParser
from ktir.tools.estimate_serve import ServeUsageError, add_serve_arguments, check_serve_arguments, run_serve
from ktir.tools.output_files import (
    OutputError,
    Writer,
    announce_written,
    check_writable,
    repeated_output,
    write_all,
)


class EstimateUsageError(Exception):
    """A bad option value; exit code 2."""


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = ArgumentParser(
        prog="ktir-estimate", description="Estimate a language model's latency on the simulated Spyre chip."
    )
    parser.add_argument(
        "config", help="a Hugging Face config.json, or the model folder that holds it (no weights needed)"
    )
    parser.add_argument("--prompt", type=int, default=512, help="prompt tokens of the prefill (default 512)")
    parser.add_argument(
        "--context",
        type=int,
        default=2048,
        help="positions of the KV cache the decode step reads (default 2048)",
    )
    parser.add_argument("--batch", type=int, default=1, help="sequences decoded together (default 1)")
    parser.add_argument(
        "--prefill-chunk",
        type=int,
        default=None,
        metavar="N",
        help="prefill the prompt N tokens at a time, as vLLM-spyre (time to first token: the sum of "
        "the chunks, each over the cache so far); with --serve, a request's largest chunk in a step "
        "(default 1024)",
    )
    parser.add_argument(
        "--target",
        action="append",
        default=[],
        metavar="FILE.toml",
        help="a what-if chip, next to Spyre (repeatable)",
    )
    parser.add_argument(
        "--cores", type=int, default=None, help="cores to use (default: all of each target's)"
    )
    parser.add_argument("--json", metavar="FILE.json", help="write every estimate as JSON")
    parser.add_argument(
        "--png", metavar="FILE.png", help="plot latency per target and op kind, bounds marked (matplotlib)"
    )
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="nothing but errors on stderr: no progress bar, no 'wrote FILE'",
    )
    parser.add_argument("--version", action="version", version=f"ktir-estimate {__version__}")
    add_fit_arguments(parser)
    add_serve_arguments(parser)
    args = parser.parse_args(argv)
    check_fit_arguments(args)
    if args.serve:
        check_serve_arguments(args)
    for name in ("prompt", "context", "batch", "prefill_chunk"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            flag = name.replace("_", "-")
            raise EstimateUsageError(f"argument --{flag}: must be positive, not {getattr(args, name)}")
    if args.context < args.prompt:
        raise EstimateUsageError(
            f"argument --context: must hold --prompt ({args.prompt}), not {args.context}"
        )
    if args.prefill_chunk is not None and capacity_only(args):
        raise EstimateUsageError("argument --prefill-chunk: nothing is timed with --max-fit")
    if args.cores is not None and args.cores < 1:
        raise EstimateUsageError(f"argument --cores: must be positive, not {args.cores}")
    if (twice := repeated_output([p for p in (args.json, args.png) if p])) is not None:
        raise EstimateUsageError(f"'{twice}' is named by two output options; give each output its own file")
    for path in args.target:
        try:
            load_target(path)
        except ValueError as error:
            raise EstimateUsageError(f"argument --target: {error}") from None
    return args


def read_config(path: str) -> Any:
    """
    A transformers config from a `config.json`, or from the one in the model folder `path`;
    `ValueError` naming the file and the problem.
    """
    import transformers

    if Path(path).is_dir():
        folder, path = path, str(Path(path) / "config.json")
        if not Path(path).is_file():
            raise ValueError(f"model folder '{folder}' has no config.json")
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise ValueError(f"cannot read config '{path}': {error.strerror or error}") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"config '{path}' is not JSON: {error}") from None
    if not isinstance(data, dict) or not isinstance(data.get("model_type"), str):
        raise ValueError(f"config '{path}' has no \"model_type\": is it a Hugging Face config.json?")
    try:
        return transformers.AutoConfig.for_model(**data)
    except (ValueError, TypeError, KeyError) as error:
        raise ValueError(f"config '{path}': {error}") from None


def _ms(us: float) -> str:
    return f"{us / 1e3:,.2f}"


def table(estimates: Sequence[Any]) -> Table:
    """One column per target: latency, both bounds and ratios, traffic and throughput of both phases."""
    first = estimates[0]
    title = (
        f"{first.model_type}, {first.layers} layers: prompt {first.prompt}, "
        f"context {first.context}, batch {first.batch}"
    )
    if first.cards > 1:
        title += f", tensor parallel over {first.cards} cards (times per card)"
    if first.prefill_chunk is not None:
        title += f", prefill chunks of {first.prefill_chunk}"
    out = Table(title=title)
    out.add_column("", justify="left")
    for estimate in estimates:
        out.add_column(estimate.target.name, justify="right")
    rows: list[tuple[str, Any]] = [
        ("time to first token (ms)", lambda e: _ms(e.time_to_first_token_us)),
        *_chunk_rows(first),
        *_phase_rows("prefill", first.cards),
        ("decode step (ms / token)", lambda e: _ms(e.decode_us)),
        *_phase_rows("decode", first.cards),
        ("tokens / s per card (batch / step)", lambda e: f"{e.tokens_per_second_per_card:,.1f}"),
        ("tokens / s per user (1 / step)", lambda e: f"{e.tokens_per_second_per_user:,.1f}"),
        ("estimate wall time (s)", lambda e: f"{e.wall_seconds:.1f}"),
    ]
    for label, cell in rows:
        out.add_row(label, *(cell(e) for e in estimates))
    return out


def _phase_rows(name: str, cards: int = 1) -> list[tuple[str, Any]]:
    """
    The rows under a phase's time: on several cards the collectives' time in it; its sustained
    bound and ratio (the yardstick), its datasheet roofline and ratio, its traffic ratio and one
    decoder layer's time.
    """

    def phase(e: Any) -> Any:
        return getattr(e, name)

    collectives = ("  collectives between cards (ms)", lambda e: _ms(phase(e).collective_us))
    return [
        *([collectives] if cards > 1 else []),
        ("  sustained bound (ms)", lambda e: _ms(phase(e).sustained_bound_us)),
        ("  x sustained bound", lambda e: f"{phase(e).vs_sustained:.2f}"),
        ("  datasheet roofline (ms)", lambda e: _ms(phase(e).bound_us)),
        ("  x datasheet roofline", lambda e: f"{phase(e).vs_bound:.2f}"),
        ("  traffic (moved / compulsory)", lambda e: f"{phase(e).traffic_ratio:.2f}"),
        ("  one layer (ms)", lambda e: _ms(phase(e).layer_cycles / e.target.clock_mhz)),
    ]


def _chunk_rows(first: Any) -> list[tuple[str, Any]]:
    """
    With chunked prefill, a row per chunk (its tokens after the cached ones) and the unchunked
    prefill, which the bound, ratio, traffic and layer rows under them describe.
    """
    if not first.chunks:
        return []
    rows: list[tuple[str, Any]] = [
        (
            f"  chunk {i + 1}: {chunk.tokens} after {chunk.cached} (ms)",
            lambda e, i=i: _ms(e.chunks[i].phase.time_us),
        )
        for i, chunk in enumerate(first.chunks)
    ]
    return [*rows, ("  unchunked prefill (ms)", lambda e: _ms(e.prefill.time_us))]


def op_table(estimates: Sequence[Any], top: int = 6) -> Table:
    """The op kinds that take the most time, per phase and target (ms)."""
    out = Table(title="where the time goes (ms, whole model)")
    out.add_column("phase", justify="left")
    out.add_column("op", justify="left")
    for estimate in estimates:
        out.add_column(estimate.target.name, justify="right")
    for phase in ("prefill", "decode"):
        ops = list(getattr(estimates[0], phase).ops)[:top]
        for op in ops:
            cells = [_ms(getattr(e, phase).ops.get(op, 0.0) / e.target.clock_mhz) for e in estimates]
            out.add_row(phase, escape(op.removeprefix("ktir.")), *cells)  # `[...]` is not markup
    return out


BAR_WIDTH = 0.8
"""Width of a target's bar (matplotlib's default); its bound marks span it."""


def figure(estimates: Sequence[Any], top: int = 6) -> Any:
    """
    The `--png` figure: one panel per phase, a stacked bar per target split by op kind, and
    a dashed line across each bar at that phase's sustained bound and a dotted one at its
    datasheet roofline, labelled with both ratios.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    drawn, axes = plt.subplots(1, 2, figsize=(12, 5))
    for axis, phase, unit in (
        (axes[0], "prefill", "time to first token (ms)"),
        (axes[1], "decode", "ms / token"),
    ):
        kinds = list(getattr(estimates[0], phase).ops)[:top]
        names = [e.target.name for e in estimates]
        bottom = [0.0] * len(estimates)
        for kind in [*kinds, "other"]:
            heights = [_kind_ms(getattr(e, phase).ops, kind, kinds, e.target.clock_mhz) for e in estimates]
            axis.bar(names, heights, bottom=bottom, width=BAR_WIDTH, label=kind.removeprefix("ktir."))
            bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
        _mark_bounds(axis, [getattr(e, phase) for e in estimates], bottom)
        axis.set_title(f"{phase}: {unit}")
        axis.set_ylabel("ms")
    axes[1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    drawn.tight_layout()
    return drawn


def _kind_ms(ops: dict[str, float], kind: str, kinds: Sequence[str], clock_mhz: float) -> float:
    """Milliseconds of one op kind of a phase; `other` is every kind not in `kinds`."""
    cycles = sum(v for k, v in ops.items() if k not in kinds) if kind == "other" else ops.get(kind, 0.0)
    return cycles / clock_mhz / 1e3


def _mark_bounds(axis: Any, phases: Sequence[Any], tops: Sequence[float]) -> None:
    """
    A dashed line across each bar at its sustained bound, a dotted one at its datasheet
    roofline, and `N.NNx sustained, N.NNx roofline` over the bar.
    """
    sustained = [p.sustained_bound_us / 1e3 for p in phases]
    roofline = [p.bound_us / 1e3 for p in phases]
    starts = [i - BAR_WIDTH / 2 for i in range(len(phases))]
    ends = [i + BAR_WIDTH / 2 for i in range(len(phases))]
    for bounds, style, label in ((sustained, "--", "sustained bound"), (roofline, ":", "datasheet roofline")):
        axis.hlines(bounds, starts, ends, colors="black", linestyles=style, linewidths=2, label=label)
    axis.margins(y=0.1)  # room for the labels over the bars
    for i, (phase, top) in enumerate(zip(phases, tops, strict=True)):
        label = f"{phase.vs_sustained:.2f}x sustained\n{phase.vs_bound:.2f}x roofline"
        axis.annotate(label, (i, max(top, sustained[i])), ha="center", va="bottom", fontsize=8)


def write_png(estimates: Sequence[Any], path: str, top: int = 6) -> None:
    """Write `figure(estimates)` as a PNG."""
    import matplotlib.pyplot as plt

    drawn = figure(estimates, top)
    drawn.savefig(path, dpi=100)
    plt.close(drawn)


def progress_for(quiet: bool, targets: int, stream: TextIO | None = None) -> StageProgress:
    """
    The progress of estimating on `targets` chips (each `STAGES` programs): a bar on `stream`
    (default stderr) only if it is a terminal, not `quiet`, once the run has taken 2 s.
    """
    from ktir.llm.estimate import STAGES

    return StageProgress(STAGES * targets, quiet=quiet, stream=stream)


def run(argv: Sequence[str] | None = None) -> int:
    """Estimate the model named in `argv` on every target; print the tables and write the files."""
    from ktir.llm.estimate import estimate_llm, stages

    args = _arguments(argv)
    for path in (args.json, args.png):
        if path:
            check_writable(path)
    config = read_config(args.config)
    if args.serve:
        return run_serve(args, config, args.quiet)
    if capacity_only(args):
        return run_fit(args, config)
    shape = {"prompt": args.prompt, "context": args.context, "batch": args.batch, "cores": args.cores}
    shape |= {"cards": args.cards}
    shape |= {"dtype": args.dtype, "kv_dtype": args.kv_dtype, "prefill_chunk": args.prefill_chunk}
    targets = [None, *args.target]
    with progress_for(args.quiet, len(targets)) as progress:
        progress.total = len(targets) * stages(args.prompt, args.prefill_chunk)  # chunks add programs
        estimates = [estimate_llm(config, target=t, progress=progress, **shape) for t in targets]
    console = Console()
    console.print(table(estimates))
    console.print(op_table(estimates))
    print_memory(console, estimates)
    for assumption in estimates[0].assumptions:
        console.print(f"assumed (timing only): {assumption}")
    files: list[tuple[str, Writer]] = []
    if args.json:
        text = json.dumps([e.to_dict() for e in estimates], indent=2)
        files.append((args.json, lambda path: Path(path).write_text(text + "\n", encoding="utf-8")))
    if args.png:
        files.append((args.png, lambda path: write_png(estimates, path)))
    write_all(files)
    announce_written([path for path, _ in files], quiet=args.quiet)
    return 0


# -- Does it fit? `--max-fit` (device memory per card, `ktir.llm.capacity`) and `--cards` ---------------


def add_fit_arguments(parser: argparse.ArgumentParser) -> None:
    """The device-memory options (`--max-fit`: capacity only, nothing is compiled) and `--cards`."""
    group = parser.add_argument_group("does it fit? (device memory per card) and several cards")
    group.add_argument(
        "--max-fit",
        action="store_true",
        help="the largest batch at --context and the largest context at --batch that fit "
        "1, 2, 4 and 8 cards (tensor parallelism); device memory only, no timing",
    )
    group.add_argument(
        "--cards",
        type=int,
        default=1,
        help="cards the model is split over (tensor parallelism, 1 to 8): each card's memory and "
        "time, one shard plus its collectives between cards (all-reduces, the logits' all-gather)",
    )
    group.add_argument(
        "--dtype",
        choices=("fp16", "fp8", "int8"),
        default=None,
        help="weight format of the linear layers, with fp32 scales per output row (default: the config's "
        "quantization_config, else fp16); fp8 is compiled and timed (W8A8), int8 counts in memory only",
    )
    group.add_argument(
        "--kv-dtype",
        choices=("fp16", "fp8"),
        default=None,
        help="KV-cache format the memory counts (default: the config's, else fp16); timing stays fp16",
    )


def check_fit_arguments(args: argparse.Namespace) -> None:
    """`EstimateUsageError` for device-memory options that do not go together."""
    if not 1 <= args.cards <= 8:
        raise EstimateUsageError(f"argument --cards: must be 1 to 8 (cards in a group), not {args.cards}")
    if args.max_fit and args.cards != 1:
        raise EstimateUsageError(
            "argument --cards: --max-fit reports 1, 2, 4 and 8 cards; give one or the other"
        )
    if capacity_only(args) and args.png:
        raise EstimateUsageError("argument --png: there is no timing to plot with --max-fit")


def capacity_only(args: argparse.Namespace) -> bool:
    """Whether the run reports device memory only (`--max-fit`)."""
    return bool(args.max_fit)


def run_fit(args: argparse.Namespace, config: Any) -> int:
    """`--max-fit`: the memory table per target (and `--json`); exit 1 if it does not fit."""
    from ktir.llm.capacity import MemoryModel

    shape: _FitShape = {"prompt": args.prompt, "context": args.context, "batch": args.batch}
    models = [
        MemoryModel(config, dtype=args.dtype, kv_dtype=args.kv_dtype, target=t) for t in [None, *args.target]
    ]
    data = _max_fit(models, config, shape)
    if args.json:
        text = json.dumps(data, indent=2)
        write_all([(args.json, lambda path: Path(path).write_text(text + "\n", encoding="utf-8"))])
        announce_written([args.json], quiet=args.quiet)
    return 0


class _FitShape(TypedDict):
    """The request `--max-fit` sizes for: `ktir.llm.capacity.max_fit`'s keywords."""

    prompt: int
    context: int
    batch: int


def _max_fit(models: Sequence[Any], config: Any, shape: _FitShape) -> list[dict[str, Any]]:
    """Print the `--max-fit` table; its JSON."""
    from ktir.llm.capacity import max_fit

    fits = [max_fit(m, **shape) for m in models]
    limit = getattr(config, "max_position_embeddings", None)
    Console().print(max_fit_table(models, fits, **shape, positions=limit))
    return [
        {"format": "ktir-max-fit", "version": 1, "target": m.target.name, **shape,
         "max_position_embeddings": limit, "cards": [row.to_dict() for row in rows]}
        for m, rows in zip(models, fits, strict=True)
    ]  # fmt: skip


def max_fit_table(
    models: Sequence[Any],
    fits: Sequence[Sequence[Any]],
    *,
    prompt: int,
    context: int,
    batch: int,
    positions: int | None = None,
) -> Table:
    """
    One row per target and card count: weights per card, largest batch, largest context; the
    caption names the model's own position limit (`positions`), which memory does not know.
    """
    from ktir.llm.capacity import GIB

    out = Table(title=f"what fits (prompt {prompt}; device memory only, tensor parallelism over the cards)")
    if positions:
        out.caption = f"the model itself is trained for {positions:,} positions (max_position_embeddings)"
    columns = (
        "cards",
        "weights / card (GiB)",
        f"max batch at context {context}",
        f"max context at batch {batch}",
    )
    out.add_column("target", justify="left")
    for name in columns:
        out.add_column(name, justify="right")
    for model, rows in zip(models, fits, strict=True):
        for row in rows:
            if row.reason:
                out.add_row(model.target.name, str(row.cards), "-", "-", escape(row.reason))
                continue
            batch_cell = f"{row.batch:,}" if row.batch else "does not fit"
            context_cell = f"{row.context:,}" if row.context else "does not fit"
            out.add_row(
                model.target.name, str(row.cards), f"{row.weights / GIB:,.1f}", batch_cell, context_cell
            )
    return out


def print_memory(console: Console, estimates: Sequence[Any]) -> None:
    """The memory line under the latency table: what the model holds on each card of each target."""
    for estimate in estimates:
        if estimate.memory is not None:
            console.print(f"device memory, {estimate.target.name}: {estimate.memory.describe()}")


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point: one-line errors, exit 1 for bad input and 2 for bad usage."""
    from ktir.llm.estimate import EstimateError

    try:
        return run(argv)
    except SystemExit as exit_:  # argparse's usage errors exit with 2
        return int(exit_.code or 0)
    except (EstimateUsageError, ServeUsageError) as error:
        print(f"ktir-estimate: error: {error}", file=sys.stderr)
        return 2
    except (ValueError, EstimateError, OutputError, ImportError) as error:
        print(f"ktir-estimate: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("ktir-estimate: interrupted", file=sys.stderr)
        return 130
    except Exception as error:
        if os.environ.get("KTIR_DEBUG"):
            raise
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        print(
            f"ktir-estimate: internal error: {type(error).__name__}: {first} (set KTIR_DEBUG=1)",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":
    sys.exit(main())
