"""
`ktir-run`: run a ktir module on the simulated chip and print its outputs and cycle report.

```
ktir-run model.mlir --random                     # graph-level IR goes through ktir-compile first
ktir-run kernels.mlir --inputs x.npz -o out.npz  # core-level IR runs as is
ktir-run model.mlir --random --trace t.json --png t.png --cores 16
ktir-run model.mlir --timing-only --json report.json   # the same cycles, no values computed
ktir-run kernel.mlir --function add --inputs in.npz -o out.npz   # a ktdp (RFC 0682) kernel
```

`--function NAME` names the function to run: of ktir IR (default: the only one), or of a ktdp
kernel, which needs it (a module with `ktdp` ops runs on the ktdp engine, `tools/ktdp_run.py`;
any other on the simulator, `tools/sim_run.py`; each is imported only for its own runs).

Inputs come from an `.npz` (keys are argument names, as `ktir.name` or SSA names give them,
or `arg0`, `arg1`, ...) or are random (`--random`, the default; seeded, so runs repeat).
Errors (bad IR, a pipeline or simulation error, bad inputs) are one located message each on
stderr and exit code 1; a bad command line exits with 2; nothing is written on failure (every
output path is checked first, and `-o`, `--trace` and `--png` are written all or none). Inputs
whose arrays and device copies exceed the memory available are refused before allocation;
random inputs are drawn in each argument's own dtype. `--timing-only` takes no inputs and
computes no values: it prints the report `ktir.sim.estimate` gives (the same cycles as a run on
values; what it assumed where time depends on values is listed under the report). Each file
written is named on stderr (`wrote trace.json`); `-q` leaves stderr to errors.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from ktir import __version__
from ktir.hardware.target import load_target
from ktir.ir.context import make_context
from ktir.ir.diagnostics import (
    Diagnostic,
    DiagnosticError,
    ExecutionError,
    Severity,
    SourceError,
    decode_source,
    parse_module,
    render,
    verify_module,
)
from ktir.tools.arguments import ArgumentParser
from ktir.tools.ktdp_run import PlaceError
from ktir.tools.output_files import OutputError, check_writable, npz_path, repeated_output
from ktir.tools.run_inputs import RunError


class UsageError(Exception):
    """A bad option value; printed as one line, exit code 2."""


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = ArgumentParser(prog="ktir-run", description="Run ktir IR on the simulated Spyre chip.")
    parser.add_argument("input_file", help="a .mlir file (graph- or core-level); '-' reads stdin")
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--inputs", metavar="FILE.npz", help="input arrays by argument name (or arg0, arg1 ...)"
    )
    source.add_argument("--random", action="store_true", help="random inputs (the default)")
    parser.add_argument(
        "--weights",
        metavar="FILE.npz",
        help="arrays for the arguments they name (ktir-import --weights); the rest from --inputs or --random",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of --random (default 0)")
    parser.add_argument(
        "--timing-only",
        action="store_true",
        help="the cycle report without values: no inputs, no outputs, the same cycles (ktir.sim.estimate)",
    )
    parser.add_argument(
        "--function",
        "--func-name",
        dest="function",
        metavar="NAME",
        help="the function to run: of ktir IR (default: the only one), or of a ktdp (RFC 0682) kernel "
        "(required; with --inputs); --func-name is its old spelling",
    )
    parser.add_argument("--grid", metavar="X[,Y[,Z]]", help="ktdp kernels: override the grid attribute")
    parser.add_argument(
        "--place",
        action="append",
        default=[],
        metavar="NAME=OFFSET[@lxC]",
        help="ktdp kernels: put an input array at an element offset of device memory (or core C's LX)",
    )
    parser.add_argument(
        "--cores", type=int, default=None, help="cores for graph-level IR (default: all of the target's)"
    )
    parser.add_argument(
        "--target", metavar="FILE.toml", default="", help="the chip, as a TOML file (default: Spyre)"
    )
    parser.add_argument(
        "--policy",
        default="dataflow",
        choices=["dataflow", "default", "cost"],
        help="work division policy for graph-level IR (default: dataflow, as ktir.compile and ktir-compile)",
    )
    parser.add_argument(
        "--trace", metavar="FILE.json", help="write a Chrome trace (Perfetto, chrome://tracing)"
    )
    parser.add_argument("--png", metavar="FILE.png", help="write a timeline image (needs matplotlib)")
    parser.add_argument(
        "--roofline-png", metavar="FILE.png", help="write every kernel on a roofline chart (needs matplotlib)"
    )
    parser.add_argument(
        "--json", metavar="FILE.json", help="write the report as JSON (every number of the tables)"
    )
    parser.add_argument("-o", "--output-file", metavar="FILE.npz", help="write the outputs as .npz")
    parser.add_argument("--top", type=int, default=20, help="kernels shown, slowest first (0: all)")
    parser.add_argument(
        "--order",
        choices=["time", "program"],
        default="time",
        help="kernel rows slowest first (time, the default) or in program order",
    )
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="nothing but errors on stderr: no progress bars (compile, simulation), no 'wrote FILE' lines",
    )
    parser.add_argument("--version", action="version", version=f"ktir-run {__version__}")
    args = parser.parse_args(argv)
    try:
        args.chip = load_target(args.target)
    except ValueError as error:
        raise UsageError(f"argument --target: {error}") from None
    if args.cores is not None and not 1 <= args.cores <= args.chip.cores:
        raise UsageError(f"argument --cores: must be in 1..{args.chip.cores}, not {args.cores}")
    if args.top < 0:
        raise UsageError(f"argument --top: must be 0 (all) or positive, not {args.top}")
    if args.seed < 0:
        raise UsageError(f"argument --seed: must be non-negative, not {args.seed}")
    if args.timing_only and (given := _value_options(args)):
        raise UsageError(f"argument --timing-only: computes no values, so it takes no {' or '.join(given)}")
    if (twice := repeated_output(_output_paths(args))) is not None:
        raise UsageError(f"'{twice}' is named by two output options; give each output its own file")
    return args


def _read(path: str) -> tuple[str, str]:
    """The input's name and text; `SourceError` if it is not UTF-8."""
    if path == "-":
        return "<stdin>", decode_source(sys.stdin.buffer.read(), "<stdin>")
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise RunError(f"cannot read '{path}': {error.strerror}") from error
    return path, decode_source(data, path)


def _parse(filename: str, text: str) -> ModuleOp:
    """The parsed and verified module; `DiagnosticError` with locations."""
    module = parse_module(make_context(), text, filename)
    if errors := verify_module(module):
        raise DiagnosticError(errors)
    return module


def _is_ktdp(module: ModuleOp) -> bool:
    """A module with RFC 0682 `ktdp` ops: it runs on the ktdp engine, not through ktir-compile."""
    return any(op.dialect_name() == "ktdp" for op in module.walk())


def _ktdp_function(module: ModuleOp, filename: str, function: str | None) -> str:
    """The ktdp function to run: `--function` is required (a kernel file holds several)."""
    functions = [op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp) and op.body.blocks]
    names = ", ".join(f"@{name}" for name in functions) or "none"
    if function is None:
        raise UsageError(
            f"'{filename}' is a ktdp (RFC 0682) kernel: name the function to run with --function NAME "
            f"(it has: {names}) and give its arrays with --inputs FILE.npz"
        )
    if function not in functions:
        raise RunError(f"no function @{function} with a body; the module has: {names}")
    return function


_GRAPH_ONLY = ("--random", "--weights", "--timing-only", "--cores", "--trace", "--png", "--roofline-png")
"""Flags of ktir IR runs that a ktdp kernel's run has no use for (its report has no timeline to draw)."""


def _graph_only_flags(args: argparse.Namespace) -> list[str]:
    """The `_GRAPH_ONLY` flags given on the command line (a ktdp kernel would ignore them)."""
    return [flag for flag in _GRAPH_ONLY if getattr(args, flag[2:].replace("-", "_")) not in (None, False)]


def _value_options(args: argparse.Namespace) -> list[str]:
    """The options given that need values (inputs or outputs)."""
    given = {"--inputs": args.inputs, "--weights": args.weights, "--random": args.random}
    given["-o"] = args.output_file
    return [name for name, value in given.items() if value]


def _output_paths(args: argparse.Namespace) -> list[str]:
    return [p for p in (npz_path(args.output_file), args.trace, args.png, args.roofline_png, args.json) if p]


def run(argv: Sequence[str] | None = None) -> int:
    """Run the file named in `argv` on the simulator and print outputs and report; the exit code."""
    args = _arguments(argv)
    for path in _output_paths(args):
        check_writable(path)
    filename, text = _read(args.input_file)
    module = _parse(filename, text)
    # Each path imports what it runs on first use: a ktdp kernel starts without the compiler and
    # the simulator, a ktir program without the ktdp engine.
    if _is_ktdp(module):
        from ktir.tools.ktdp_run import run_ktdp

        args.function = _ktdp_function(module, filename, args.function)
        if given := _graph_only_flags(args):
            flags = ", ".join(given)
            raise UsageError(f"{flags}: not for ktdp kernels (they run on --inputs; -o and --json)")
        return run_ktdp(args, module)
    if given := [flag for flag in ("--grid", "--place") if getattr(args, flag[2:])]:
        raise UsageError(
            f"{' and '.join(given)} {'apply' if len(given) > 1 else 'applies'} to ktdp kernels only"
        )
    from ktir.tools.sim_run import run_program

    return run_program(module, args)


def _sources(filename: str) -> dict[str, str]:
    try:
        # Replacement characters: quoting a line must not fail where the input was not UTF-8.
        return (
            {filename: Path(filename).read_text(encoding="utf-8", errors="replace")}
            if filename != "-"
            else {}
        )
    except OSError:
        return {}


def _report(diagnostics: Sequence[Diagnostic], filename: str) -> None:
    sources = _sources(filename)
    for diagnostic in diagnostics:
        print(render(diagnostic, sources), file=sys.stderr)


def _raised_by(error: Exception, module: str, name: str) -> bool:
    """
    Whether `error` is the exception class `name` of `module`. Each path of a run imports its
    modules on use, and an error of a module exists only once it is imported, so asking does
    not import it (a ktir program's run stays without the ktdp engine, a kernel's without the
    simulator).
    """
    loaded = sys.modules.get(module)
    return loaded is not None and isinstance(error, getattr(loaded, name))


def _handle(error: Exception, filename: str) -> int:
    """Print `error` as located diagnostics or one line; the exit code (KTIR_DEBUG=1 re-raises)."""
    if isinstance(error, SourceError):
        print(error.rendered(), file=sys.stderr)
        return 1
    if isinstance(error, DiagnosticError):
        _report(error.diagnostics, filename)
        return 1
    if _raised_by(error, "ktir.sim.memory", "SimulationError") or _raised_by(
        error, "ktir.ktdp_engine.memory", "KtdpError"
    ):
        _report([Diagnostic(Severity.ERROR, str(error), getattr(error, "location", None))], filename)
        return 1
    if isinstance(error, PlaceError):
        print(f"ktir-run: error: {error}", file=sys.stderr)
        return 2
    # A pipeline error is an option value past the checks of the command line.
    if isinstance(error, UsageError) or _raised_by(error, "ktir.pipeline", "PipelineError"):
        print(f"ktir-run: error: {error}", file=sys.stderr)
        return 2
    if isinstance(error, (RunError, OutputError, ExecutionError, ImportError)):
        print(f"ktir-run: error: {error}", file=sys.stderr)
        return 1
    if isinstance(error, MemoryError):
        print(f"ktir-run: error: out of host memory ({error or 'MemoryError'})", file=sys.stderr)
        return 1
    if os.environ.get("KTIR_DEBUG"):
        raise error
    first = str(error).strip().splitlines()[0] if str(error).strip() else ""
    print(f"ktir-run: internal error: {type(error).__name__}: {first} (set KTIR_DEBUG=1)", file=sys.stderr)
    return 1


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
    except Exception as error:
        return _handle(error, filename)


if __name__ == "__main__":
    sys.exit(main())
