"""
`ktir-run`: run a ktir module on the simulated chip and print its outputs and cycle report.

```
ktir-run model.mlir --random                     # graph-level IR goes through ktir-compile first
ktir-run kernels.mlir --inputs x.npz -o out.npz  # core-level IR runs as is
ktir-run model.mlir --random --trace t.json --png t.png --cores 16
```

Inputs come from an `.npz` (keys are argument names, as `ktir.name` or SSA names give them,
or `arg0`, `arg1`, ...) or are random (`--random`, the default; seeded, so runs repeat).
Errors (bad IR, a pipeline or simulation error, bad inputs) are one located message each on
stderr and exit code 1; a bad command line exits with 2; nothing is written on failure.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import cast

import numpy as np
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute

from ktir.compile import run_pipeline
from ktir.context import make_context
from ktir.diagnostics import Diagnostic, DiagnosticError, Severity, parse_module, render, verify_module
from ktir.dialects.ktir_core import KernelOp
from ktir.reference import argument_names, entry_function
from ktir.reference_ops import ExecutionError, numpy_dtype
from ktir.sim import SimResult, SimulationError, simulate, write_png, write_trace


class RunError(Exception):
    """A user-facing failure outside the IR (a file, the inputs); printed as one line."""


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="ktir-run", description="Run ktir IR on the simulated Spyre chip.")
    parser.add_argument("input_file", help="a .mlir file (graph- or core-level); '-' reads stdin")
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--inputs", metavar="FILE.npz", help="input arrays by argument name (or arg0, arg1 ...)"
    )
    source.add_argument("--random", action="store_true", help="random inputs (the default)")
    parser.add_argument("--seed", type=int, default=0, help="seed of --random (default 0)")
    parser.add_argument("--func-name", help="the function to run (default: the only one)")
    parser.add_argument("--cores", type=int, default=32, help="cores for graph-level IR (default 32)")
    parser.add_argument(
        "--policy", default="default", choices=["default", "cost"], help="work division policy"
    )
    parser.add_argument(
        "--trace", metavar="FILE.json", help="write a Chrome trace (Perfetto, chrome://tracing)"
    )
    parser.add_argument("--png", metavar="FILE.png", help="write a timeline image (needs matplotlib)")
    parser.add_argument("-o", "--output-file", metavar="FILE.npz", help="write the outputs as .npz")
    parser.add_argument("--top", type=int, default=20, help="kernels shown, slowest first (0: all)")
    return parser.parse_args(argv)


def _read(path: str) -> tuple[str, str]:
    if path == "-":
        return "<stdin>", sys.stdin.read()
    try:
        return path, Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise RunError(f"cannot read '{path}': {error.strerror}") from error


def _load_module(filename: str, text: str, cores: int, policy: str) -> ModuleOp:
    """Parse and verify; graph-level IR (no `ktir.kernel`) goes through `ktir-compile`."""
    module = parse_module(make_context(), text, filename)
    if errors := verify_module(module):
        raise DiagnosticError(errors)
    if not any(isinstance(op, KernelOp) for op in module.walk()):
        run_pipeline(module, f"ktir-compile{{cores={cores} policy={policy}}}")
    return module


def _random_input(tensor: TensorType[Attribute], rng: np.random.Generator) -> np.ndarray:
    shape = tuple(tensor.get_shape())
    dtype = numpy_dtype(tensor.element_type)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(0, 8, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _inputs(module: ModuleOp, args: argparse.Namespace) -> list[np.ndarray]:
    function = entry_function(module, args.func_name)
    names = argument_names(function)
    block_args = function.body.block.args
    if args.inputs is None:
        rng = np.random.default_rng(args.seed)
        return [_random_input(cast(TensorType[Attribute], a.type), rng) for a in block_args]
    try:
        arrays = np.load(args.inputs)
    except (OSError, ValueError) as error:
        raise RunError(f"cannot read inputs '{args.inputs}': {error}") from error
    values = []
    for i, name in enumerate(names):
        for key in (name, f"arg{i}"):
            if key in arrays:
                values.append(arrays[key])
                break
        else:
            raise RunError(
                f"inputs '{args.inputs}' have no array '{name}' (or 'arg{i}'); found: {', '.join(arrays)}"
            )
    return values


def _simulate(module: ModuleOp, inputs: list[np.ndarray], func_name: str | None) -> SimResult:
    function = entry_function(module, func_name)
    total = len(function.body.block.ops)
    console = Console(stderr=True)
    columns = (TextColumn("simulating"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True, disable=total < 50) as progress:
        task = progress.add_task("ops", total=total)
        return simulate(
            module,
            inputs,
            func_name=func_name,
            progress=lambda done, _: progress.update(task, completed=done),
        )


def _outputs_table(module: ModuleOp, result: SimResult, func_name: str | None) -> Table:
    function = entry_function(module, func_name)
    returned = next(op for op in function.body.block.ops if isinstance(op, func.ReturnOp))
    table = Table(title="outputs")
    for column in ("#", "result", "shape", "dtype", "min", "max", "mean"):
        table.add_column(column, justify="left" if column in ("result", "dtype") else "right")
    for i, (value, array) in enumerate(zip(returned.operands, result.outputs, strict=True)):
        numeric = array.astype(np.float64) if array.size else np.zeros(1)
        table.add_row(
            str(i), f"%{value.name_hint or i}", str(list(array.shape)), str(array.dtype),
            f"{numeric.min():.6g}", f"{numeric.max():.6g}", f"{numeric.mean():.6g}",
        )  # fmt: skip
    return table


def run(argv: Sequence[str] | None = None) -> int:
    """Run the file named in `argv` on the simulator and print outputs and report; the exit code."""
    args = _arguments(argv)
    filename, text = _read(args.input_file)
    module = _load_module(filename, text, args.cores, args.policy)
    inputs = _inputs(module, args)
    result = _simulate(module, inputs, args.func_name)
    # Wide enough for the tables when piped (lit, files); a terminal keeps its own width.
    console = Console(width=None if sys.stdout.isatty() else 150)
    console.print(_outputs_table(module, result, args.func_name))
    result.report.print(console, limit=args.top or None)
    if args.output_file:
        np.savez(args.output_file, **{f"out{i}": o for i, o in enumerate(result.outputs)})
    if args.trace:
        write_trace(result.report, args.trace)
    if args.png:
        write_png(result.report, args.png)
    return 0


def _sources(filename: str) -> dict[str, str]:
    try:
        return {filename: Path(filename).read_text(encoding="utf-8")} if filename != "-" else {}
    except OSError:
        return {}


def _report(diagnostics: Sequence[Diagnostic], filename: str) -> None:
    sources = _sources(filename)
    for diagnostic in diagnostics:
        print(render(diagnostic, sources), file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point of `ktir-run`: located one-line errors, no traceback (KTIR_DEBUG=1 re-raises)."""
    filename = "-"
    try:
        filename = _arguments(argv).input_file
        return run(argv)
    except SystemExit as exit_:  # argparse: usage errors exit with 2
        return int(exit_.code or 0)
    except KeyboardInterrupt:
        print("ktir-run: interrupted", file=sys.stderr)
        return 130
    except DiagnosticError as error:
        _report(error.diagnostics, filename)
        return 1
    except RunError as error:
        print(f"ktir-run: error: {error}", file=sys.stderr)
        return 1
    except SimulationError as error:
        _report([Diagnostic(Severity.ERROR, str(error), error.location)], filename)
        return 1
    except (ExecutionError, ImportError) as error:
        print(f"ktir-run: error: {error}", file=sys.stderr)
        return 1
    except Exception as error:
        if os.environ.get("KTIR_DEBUG"):
            raise
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        print(
            f"ktir-run: internal error: {type(error).__name__}: {first} (set KTIR_DEBUG=1)", file=sys.stderr
        )
        return 1


if __name__ == "__main__":
    sys.exit(main())
