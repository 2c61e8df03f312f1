"""
Benchmark: the whole pipeline (`ktir-compile`) on Llama-shaped decoders.

The graphs are Hugging Face's `LlamaForCausalLM` (hidden 4096, 32 heads, seq 128, fp16) with
8, 16 and 32 layers, exported and imported once per depth (not timed). Then, best of several
rounds, a fresh copy of each module goes through `ktir-compile` (layouts, restickify,
padding, work division, scratchpad, lowering to core-level kernels with the static LX
check). It prints the graph-level op count, the kernels and chunks produced, the time per
op, the 32-layer / 16-layer time ratio (target <= 2.2), and the pipeline's time over xDSL's
own time to print the resulting core-level module and parse it back (the cost of merely
reading and writing that IR). Nothing is asserted.
Run: `.venv/bin/python bench/pipeline_bench.py` (`--quick`: 2, 4, 8 layers).
"""

from __future__ import annotations

import argparse
import gc
import io
import time

from layout_pass_bench import measure  # bench/ is on sys.path when run as a script
from rich.console import Console
from rich.table import Table
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.printer import Printer

from ktir.dialects.ktir.core import KernelOp
from ktir.ir.context import make_context
from ktir.passes.propagate_layouts import functions_of

PIPELINE = "ktir-compile"


def time_print_parse(module: ModuleOp) -> float:
    """Seconds for xDSL to print `module` and parse the text back."""
    gc.collect()
    start = time.perf_counter()
    stream = io.StringIO()
    Printer(stream=stream).print_op(module)
    Parser(make_context(), stream.getvalue()).parse_module()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="2, 4 and 8 layers")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    depths = (2, 4, 8) if args.quick else (8, 16, 32)
    console = Console()
    _, best, results, ops = measure(PIPELINE, depths, args.repeats, console)
    io_time = {layers: time_print_parse(results[layers]) for layers in depths}

    table = Table(title=f"{PIPELINE} on Llama decoders (hidden 4096, seq 128), best of {args.repeats}")
    for column in (
        "layers",
        "ops",
        "kernels",
        "chunks",
        "time (s)",
        "µs / op",
        "print+parse (s)",
        "pipeline / io",
    ):
        table.add_column(column, justify="right")
    for layers in depths:
        kernels = [op for op in functions_of(results[layers])[0].body.block.ops if isinstance(op, KernelOp)]
        table.add_row(
            str(layers),
            str(ops[layers]),
            str(len(kernels)),
            str(sum(k.chunks.value.data for k in kernels)),
            f"{best[layers]:.2f}",
            f"{best[layers] / ops[layers] * 1e6:.0f}",
            f"{io_time[layers]:.2f}",
            f"{best[layers] / io_time[layers]:.2f}",
        )
    console.print(table)
    deep, shallow = depths[-1], depths[-2]
    console.print(
        f"time ratio {deep}/{shallow} layers: {best[deep] / best[shallow]:.2f} "
        f"(ops ratio {ops[deep] / ops[shallow]:.2f}; target <= 2.2)"
    )


if __name__ == "__main__":
    main()
