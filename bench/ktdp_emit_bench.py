"""
Benchmark: the `ktir-emit-ktdp` round trip over the model zoo (docs/ktdp.md, "Emission").

Each zoo model is compiled (`ktir.compile`); every kernel is written as ktdp, read back, run by
ktir's ktdp engine on seeded random device buffers and compared with ktir's simulation of the
kernel (`tools/ktdp_roundtrip.py`). Per model: the kernels, how many are written, how many of
those give ktir's outputs bit for bit, how many take ktir's cycles (to a relative 1e-9: the
same costs summed in another order), the total cycles
of the written kernels on both engines and their ratio (ktdp / ktir), and the wall time.
Measured in one run; nothing is asserted.
Run: `.venv/bin/python bench/ktdp_emit_bench.py`.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test" / "unit"))  # the zoo's models

import ktir
from ktir.tools.ktdp_roundtrip import roundtrip_module
from ktir.tools.replay import zoo_models


def main(argv: list[str] | None = None) -> int:
    """Print one row per zoo model."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.parse_args(argv)
    table = Table(title="ktir-emit-ktdp round trip over the model zoo")
    for column in (
        "model",
        "kernels",
        "written",
        "equal outputs",
        "same cycles",
        "ktir cycles",
        "ktdp cycles",
        "ktdp / ktir",
        "s",
    ):
        table.add_column(column, justify="left" if column == "model" else "right")
    totals = [0, 0, 0, 0, 0.0, 0.0]
    for name, factory in zoo_models().items():
        start = time.perf_counter()
        model, args, kwargs = factory()
        results = roundtrip_module(ktir.compile(model, args, kwargs).module)
        written = [r for r in results if not r.skipped]
        ktir_cycles = sum(r.ktir_cycles for r in written)
        ktdp_cycles = sum(r.ktdp_cycles for r in written)
        close = sum(r.same_cycles for r in written)
        row = [len(results), len(written), sum(r.equal for r in written), close, ktir_cycles, ktdp_cycles]
        totals = [t + v for t, v in zip(totals, row, strict=True)]
        table.add_row(
            name,
            *(str(v) for v in row[:4]),
            f"{ktir_cycles:,.0f}",
            f"{ktdp_cycles:,.0f}",
            f"{ktdp_cycles / ktir_cycles:.2f}" if ktir_cycles else "-",
            f"{time.perf_counter() - start:.1f}",
        )
    table.add_row(
        "all",
        *(str(v) for v in totals[:4]),
        f"{totals[4]:,.0f}",
        f"{totals[5]:,.0f}",
        f"{totals[5] / totals[4]:.2f}" if totals[4] else "-",
        "",
    )
    Console(width=140).print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
