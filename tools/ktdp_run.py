"""
`ktir-run KERNEL.mlir --function NAME ...`: run an RFC 0682 `ktdp` function (`ktir.ktdp_engine.run`).

`ktir-run` comes here for a module with `ktdp` ops; `--function` is required for it.

```
ktir-run softmax.mlir --function softmax --inputs in.npz -o out.npz --grid 32 --json report.json
ktir-run kernel.mlir --function f --inputs in.npz --place table=4096 --place acc=0@lx3 -o out.npz
```

Each argument takes the `--inputs` entry of its name (arrays go to device memory and the
argument gets the element offset; 0-d entries are values). `--place NAME=OFFSET` puts an entry at
that element offset of device memory, `NAME=OFFSET@lxC` in core C's LX. `-o` writes the array
entries the kernel stores to, under their names, as they are after the run.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from rich.console import Console
from xdsl.dialects.builtin import ModuleOp

from ktir.tools.output_files import Writer, announce_written, npz_path, write_all
from ktir.tools.run_inputs import RunError, read_arrays


class PlaceError(ValueError):
    """A `--place` or `--grid` value that does not parse (a usage error)."""


def parse_grid(text: str) -> list[int]:
    """`32`, `32,1` or `4,8,1` -> the grid's extents."""
    try:
        grid = [int(n) for n in text.split(",")]
    except ValueError:
        raise PlaceError(f"argument --grid: expected extents like 32 or 32,1, not '{text}'") from None
    if not 1 <= len(grid) <= 3 or min(grid) < 1:
        raise PlaceError(f"argument --grid: 1 to 3 positive extents, not '{text}'")
    return grid


def parse_place(items: list[str]) -> dict[str, tuple[int, int | None]]:
    """`NAME=OFFSET` or `NAME=OFFSET@lxC` -> {name: (offset, core or None)}."""
    placed: dict[str, tuple[int, int | None]] = {}
    for item in items:
        name, _, where = item.partition("=")
        offset, _, lx = where.partition("@")
        try:
            core = int(lx.removeprefix("lx")) if lx else None
            if lx and not lx.startswith("lx"):
                raise ValueError(lx)
            placed[name] = (int(offset), core)
        except ValueError:
            raise PlaceError(
                f"argument --place: expected NAME=OFFSET or NAME=OFFSET@lxC, not '{item}'"
            ) from None
        if not name:
            raise PlaceError(f"argument --place: no array name in '{item}'")
    return placed


def run_ktdp(args: argparse.Namespace, module: ModuleOp) -> int:
    """
    Run `args.function` of the parsed and verified ktdp kernel `module` with the npz inputs;
    print and write the report.
    """
    from ktir.ktdp_engine import run  # on use: `ktir-run` of a ktir program starts without the engine

    if not args.inputs:
        raise RunError("a ktdp kernel runs on --inputs FILE.npz (one array per argument)")
    arrays = read_arrays(args.inputs, "inputs")
    grid = parse_grid(args.grid) if args.grid else None
    outputs, report = run(
        module,
        args.function,
        arrays,
        grid=grid,
        place=parse_place(args.place),
        target=args.chip,
        written_only=True,  # -o writes what the kernel stored to, not its inputs back
    )
    report.print(Console(), limit=args.top or None)
    files: list[tuple[str, Writer]] = []
    if (path := npz_path(args.output_file)) is not None:

        def npz(target: str) -> None:
            with open(target, "wb") as f:
                np.savez(f, **outputs)  # pyright: ignore[reportArgumentType]  # NumPy's stubs: a key could be allow_pickle

        files.append((path, npz))
    if args.json:
        text = report.to_json()
        files.append((args.json, lambda target: Path(target).write_text(text + "\n", encoding="utf-8")))
    write_all(files)
    announce_written([path for path, _ in files], quiet=args.quiet)
    return 0


__all__ = ["PlaceError", "parse_grid", "parse_place", "run_ktdp"]
