"""
Benchmark: importing a Llama-shaped decoder (hidden size 4096, fp16) from PyTorch into ktir.

The model is Hugging Face's `LlamaForCausalLM` built on the `meta` device, so no weights are
allocated and `torch.export` traces it with fake tensors. Each stage is timed on its own, in the
same run, for two depths (16 and 32 layers by default):

- `torch.export.export` (one run: it is slow),
- `run_decompositions` to core ATen, with the table `ktir.frontend.fx.export_program` uses,
- `import_exported`, the importer proper, and `str(module)`, printing its result: best of
  several rounds, each round running both depths one after the other so that load from other
  processes affects both alike (export is run once, so its ratio is the noisier one).

It prints the importer's FX nodes per second, the ratios import / export and
import / (export + decompose), and the deep / shallow ratio of every stage next to the ratio of
FX node counts: linear growth means the two match (about 2.0 for 32 vs 16 layers; the two
PyTorch stages, timed once, are shown for scale and are not ktir's to make linear). Times are
wall clock (`time.perf_counter`); the linearity verdict uses CPU time (`time.process_time`)
of the same calls, which other processes on a busy machine disturb less. As a measure free of
timing noise, the number of Python function calls made by the importer walk and by the printing
(one extra run of each under cProfile) is compared with the node count too.
Nothing is asserted about time. Run: `make bench` or `.venv/bin/python bench/import_bench.py`
(`--quick` uses 4 and 8 layers).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from rich.console import Console
from rich.table import Table
from torch.export import ExportedProgram
from transformers import LlamaConfig, LlamaForCausalLM

from ktir.frontend.fx import FxImport, export_program, import_exported

HIDDEN = 4096
INTERMEDIATE = 11008
HEADS = 32
VOCAB = 32000
SEQ = 128
REPEATS = 9
LINEAR_TOLERANCE = 1.15
"""A stage counts as linear when its deep / shallow CPU-time ratio is at most this many times the
ratio of FX node counts (the embedding and the LM head are a fixed cost, so the node ratio is a
little under the layer ratio)."""

STAGES = ("build", "export", "decompose", "import_walk", "print_text")


@dataclass
class Run:
    """One depth: wall and CPU seconds per stage (see `STAGES`) and what was imported."""

    layers: int
    wall: dict[str, float]
    cpu: dict[str, float]
    nodes: int
    ktir_ops: int
    text_chars: int
    calls: dict[str, int]
    """Python function calls made by the importer walk and by the printing (deterministic)."""

    @property
    def nodes_per_second(self) -> float:
        return self.nodes / self.wall["import_walk"]


def timed(fn: Callable[[], Any]) -> tuple[tuple[float, float], Any]:
    """(wall, CPU) seconds of one call of `fn`, and its result."""
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return (time.perf_counter() - wall, time.process_time() - cpu), result


def python_calls(fn: Callable[[], Any]) -> int:
    """How many Python function calls one run of `fn` makes: a measure of work free of timing noise."""
    profile = cProfile.Profile()
    profile.runcall(fn)
    return pstats.Stats(profile).total_calls


def build_model(layers: int) -> torch.nn.Module:
    config = LlamaConfig(
        hidden_size=HIDDEN,
        intermediate_size=INTERMEDIATE,
        num_attention_heads=HEADS,
        num_key_value_heads=HEADS,
        num_hidden_layers=layers,
        vocab_size=VOCAB,
        max_position_embeddings=2048,
    )
    with torch.device("meta"):
        return LlamaForCausalLM(config).to(torch.float16).eval()


def export_stages(layers: int, run: dict[str, list[tuple[float, float]]]) -> ExportedProgram:
    """Build, export and decompose once, appending each stage's time to `run`."""
    seconds, model = timed(lambda: build_model(layers))
    run["build"].append(seconds)
    input_ids = torch.zeros((1, SEQ), dtype=torch.int64, device="meta")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # torch 2.13 pytree internals (LeafSpec)
        seconds, exported = timed(
            lambda: torch.export.export(model, (input_ids,), kwargs={"use_cache": False})
        )
    run["export"].append(seconds)
    # `export_program` given an ExportedProgram only runs the decompositions (same table).
    seconds, program = timed(lambda: export_program(exported, ()))
    run["decompose"].append(seconds)
    return program


def measure(depths: Sequence[int], repeats: int, console: Console) -> list[Run]:
    """
    Export stages once per depth, then the importer walk and the printing best-of `repeats`,
    alternating between the depths so that load from other processes hits both alike.
    """
    times = {layers: {stage: [] for stage in STAGES} for layers in depths}
    programs = {}
    for layers in depths:
        with console.status(f"torch.export + run_decompositions, {layers} layers"):
            programs[layers] = export_stages(layers, times[layers])
    imported: dict[int, FxImport] = {}
    texts: dict[int, str] = {}
    with console.status(f"import_exported and str(module), {repeats} rounds"):
        for _ in range(repeats):
            for layers in depths:
                program = programs[layers]
                seconds, imported[layers] = timed(lambda program=program: import_exported(program))
                times[layers]["import_walk"].append(seconds)
                result = imported[layers]
                seconds, texts[layers] = timed(lambda result=result: str(result.module))
                times[layers]["print_text"].append(seconds)
    runs = []
    for layers in depths:
        samples = times[layers]
        program, result = programs[layers], imported[layers]
        calls = {
            "import_walk": python_calls(lambda program=program: import_exported(program)),
            "print_text": python_calls(lambda result=result: str(result.module)),
        }
        runs.append(
            Run(
                layers,
                wall={stage: min(wall for wall, _ in samples[stage]) for stage in STAGES},
                cpu={stage: min(cpu for _, cpu in samples[stage]) for stage in STAGES},
                nodes=imported[layers].node_count,
                ktir_ops=sum(1 for _ in imported[layers].module.walk()) - 1,  # not builtin.module
                text_chars=len(texts[layers]),
                calls=calls,
            )
        )
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", type=int, nargs=2, default=[16, 32], metavar=("SHALLOW", "DEEP"))
    parser.add_argument("--quick", action="store_true", help="4 and 8 layers")
    parser.add_argument(
        "--repeats", type=int, default=REPEATS, help="rounds of the importer walk and print (best is kept)"
    )
    options = parser.parse_args()
    shallow_layers, deep_layers = (4, 8) if options.quick else sorted(options.layers)

    console = Console()
    measure([1], 1, console)  # warm-up: first-call costs of torch.export / xDSL are not per layer
    shallow, deep = measure([shallow_layers, deep_layers], options.repeats, console)
    node_ratio = deep.nodes / shallow.nodes

    table = Table(
        title=f"LlamaForCausalLM on meta: hidden {HIDDEN}, MLP {INTERMEDIATE}, {HEADS} heads, "
        f"fp16, input (1, {SEQ})",
        caption=f"wall seconds; linear = CPU-time (or call-count) ratio <= {LINEAR_TOLERANCE} x node ratio",
    )
    ratio_name = f"{deep.layers}/{shallow.layers}"
    columns = ("stage", f"{shallow.layers} layers", f"{deep.layers} layers", ratio_name, f"{ratio_name} CPU")
    for column in (*columns, "linear"):
        table.add_column(column, justify="left" if column == "stage" else "right")
    table.add_row("FX nodes imported", str(shallow.nodes), str(deep.nodes), f"{node_ratio:.2f}", "", "")
    table.add_row(
        "ktir ops built",
        str(shallow.ktir_ops),
        str(deep.ktir_ops),
        f"{deep.ktir_ops / shallow.ktir_ops:.2f}",
        "",
        "",
    )
    labels = {
        "build": "build model (meta)",
        "export": "torch.export (PyTorch, once)",
        "decompose": "run_decompositions (PyTorch, once)",
        "import_walk": f"import_exported (best of {options.repeats})",
        "print_text": f"str(module) (best of {options.repeats})",
    }
    linear = {}
    for stage in STAGES:
        a, b = shallow.wall[stage], deep.wall[stage]
        cpu_ratio = deep.cpu[stage] / shallow.cpu[stage]
        linear[stage] = cpu_ratio <= node_ratio * LINEAR_TOLERANCE
        table.add_row(
            labels[stage],
            f"{a:.3f}",
            f"{b:.3f}",
            f"{b / a:.2f}",
            f"{cpu_ratio:.2f}",
            "yes" if linear[stage] else "NO",
        )
    for stage, label in (("import_walk", "importer Python calls"), ("print_text", "printer Python calls")):
        a, b = shallow.calls[stage], deep.calls[stage]
        linear[f"{stage} calls"] = b / a <= node_ratio * LINEAR_TOLERANCE
        table.add_row(
            label, f"{a:,}", f"{b:,}", f"{b / a:.2f}", "", "yes" if linear[f"{stage} calls"] else "NO"
        )
    table.add_section()
    table.add_row(
        "importer FX nodes / s",
        f"{shallow.nodes_per_second:,.0f}",
        f"{deep.nodes_per_second:,.0f}",
        f"{deep.nodes_per_second / shallow.nodes_per_second:.2f}",
        "",
        "",
    )
    for label, fn in (
        ("import / export", lambda r: r.wall["import_walk"] / r.wall["export"]),
        (
            "import / (export + decompose)",
            lambda r: r.wall["import_walk"] / (r.wall["export"] + r.wall["decompose"]),
        ),
        ("str(module) / import", lambda r: r.wall["print_text"] / r.wall["import_walk"]),
    ):
        table.add_row(label, f"{fn(shallow):.3f}", f"{fn(deep):.3f}", "", "", "")
    table.add_row(
        "printed text, MiB", f"{shallow.text_chars / 2**20:.2f}", f"{deep.text_chars / 2**20:.2f}", "", "", ""
    )
    console.print(table)

    walk, export, decompose = (deep.wall[s] for s in ("import_walk", "export", "decompose"))
    console.print(
        f"{deep.layers} layers: {deep.nodes} FX nodes imported in {walk * 1e3:.0f} ms "
        f"({deep.nodes_per_second:,.0f} nodes/s), {walk / export:.3f}x torch.export ({export:.1f} s) "
        f"and {walk / (export + decompose):.3f}x export + decompose; {ratio_name} importer CPU time "
        f"{deep.cpu['import_walk'] / shallow.cpu['import_walk']:.2f}x for {node_ratio:.2f}x nodes "
        f"({'linear' if linear['import_walk'] else 'NOT linear'}), Python calls "
        f"{deep.calls['import_walk'] / shallow.calls['import_walk']:.2f}x "
        f"({'linear' if linear['import_walk calls'] else 'NOT linear'})."
    )


if __name__ == "__main__":
    main()
