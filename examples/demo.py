"""
`make demo`: an unmodified Hugging Face Llama, end to end on the simulated Spyre chip.

A `LlamaForCausalLM` from a small random-initialized config (2 layers, hidden 64, grouped-query
attention) is exported, lowered by the whole ktir pipeline to per-core programs for 32 cores,
and run on `ktir.sim`. The logits are checked against PyTorch eager (fp16) within the bounds
the test suite uses; the cycle report is printed at the terminal's width (80 columns when
piped) and the timeline is written as a Chrome trace (open it in https://ui.perfetto.dev or
chrome://tracing) and, with matplotlib, as a PNG timeline and a roofline chart.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import torch
import transformers
from rich.console import Console

import ktir
from ktir.program import Program
from ktir.sim import write_png, write_roofline_png, write_trace

OUT = Path("build/demo")


def build() -> tuple[torch.nn.Module, torch.Tensor]:
    """The demo's model (2-layer HF Llama, fp16, seeded) and its 32 input ids."""
    config = transformers.LlamaConfig(
        vocab_size=256,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
    )
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(config).half().eval()
    ids = torch.randint(0, config.vocab_size, (1, 32), generator=torch.Generator().manual_seed(0))
    return model, ids


def compiled(model: torch.nn.Module, ids: torch.Tensor) -> Program:
    """The demo's program: the model lowered for 32 cores."""
    return ktir.compile(model, (ids,), {"use_cache": False}, cores=32)


def main() -> int:
    console = Console()
    model, ids = build()
    start = time.perf_counter()
    program = compiled(model, ids)
    console.print(f"compiled HF Llama (2 layers) in {time.perf_counter() - start:.1f} s")

    start = time.perf_counter()
    logits = program(ids).logits  # the model's own CausalLMOutputWithPast
    # The one count of the table, the roofline chart and this line (`Report.counts`).
    console.print(f"simulated {program.report.counts} in {time.perf_counter() - start:.1f} s")
    with torch.no_grad():
        eager = model(ids, use_cache=False).logits.float()
    ulp = float(np.spacing(np.float16(eager.abs().max().item())))
    error = (logits.float() - eager).abs().max().item()
    ok = error <= 8 * ulp
    console.print(
        f"logits {list(logits.shape)} vs eager: max |difference| {error:.3g} = {error / ulp:.2f} fp16 ulps "
        f"(bound 8): [{'green' if ok else 'red'}]{'OK' if ok else 'MISMATCH'}[/]"
    )

    report = program.report
    report.print(console, limit=12)
    OUT.mkdir(parents=True, exist_ok=True)
    write_trace(report, OUT / "llama_trace.json")
    console.print(f"trace: {OUT / 'llama_trace.json'} (open in https://ui.perfetto.dev)")
    try:
        write_png(report, OUT / "llama_timeline.png")
        write_roofline_png(report, OUT / "llama_roofline.png")
        console.print(f"timeline: {OUT / 'llama_timeline.png'}, roofline: {OUT / 'llama_roofline.png'}")
    except ImportError as error:
        console.print(f"[yellow]no PNG: {error}[/yellow]")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
