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
kernel, which needs it (a module with `ktdp` ops runs on the ktdp engine, `tools/ktdp_run.py`).

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
import math
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

from ktir import __version__
from ktir.dialects.ktir.attributes import TiledLayoutAttr, device_dtype_of_element
from ktir.dialects.ktir.core import KernelOp
from ktir.hardware.target import Target, load_target
from ktir.ir.context import make_context
from ktir.ir.diagnostics import (
    Diagnostic,
    DiagnosticError,
    ExecutionError,
    Severity,
    SourceError,
    decode_source,
    location_of,
    parse_module,
    render,
    verify_module,
)
from ktir.layout.dtypes import numpy_dtype
from ktir.passes.stages import expand_stages
from ktir.pipeline import PipelineError, parse_pipeline, run_pipeline
from ktir.progress import StageProgress
from ktir.reference.executor import argument_names, entry_function
from ktir.sim import (
    Report,
    SimResult,
    SimulationError,
    estimate,
    simulate,
    write_png,
    write_roofline_png,
    write_trace,
)
from ktir.tools.arguments import ArgumentParser
from ktir.tools.ktdp_run import PlaceError
from ktir.tools.output_files import (
    OutputError,
    Writer,
    announce_written,
    check_writable,
    repeated_output,
    write_all,
)
from ktir.tools.run_inputs import RunError, read_arrays

GIB = 1024**3


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


def _entry(module: ModuleOp, function: str | None) -> None:
    """Check, before compiling, that the function to run exists; the error names those that do."""
    try:
        entry_function(module, function)
    except ExecutionError as error:
        raise RunError(f"{error} (--function NAME picks one)") from None


def _compile(module: ModuleOp, args: argparse.Namespace) -> None:
    """Graph-level IR (no `ktir.kernel`) goes through `ktir-compile`, in place."""
    if not any(isinstance(op, KernelOp) for op in module.walk()):
        options = f"policy={args.policy}" + ("" if args.cores is None else f" cores={args.cores}")
        spec = f"ktir-compile{{{options}}}"
        with StageProgress(len(expand_stages(parse_pipeline(spec))), quiet=args.quiet) as progress:
            run_pipeline(module, spec, target=args.target, progress=progress)


def random_input(tensor: TensorType[Attribute], rng: np.random.Generator) -> np.ndarray:
    """Seeded random values made in the tensor's own dtype (f16 by way of f32, which NumPy draws)."""
    shape = tuple(tensor.get_shape())
    dtype = numpy_dtype(tensor.element_type)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape, dtype=np.bool_)
    if dtype.kind in "iu":
        return rng.integers(0, 8, shape, dtype=dtype)
    if dtype == np.float16:
        return rng.standard_normal(shape, dtype=np.float32).astype(np.float16)
    return rng.standard_normal(shape, dtype=dtype)


def _argument_types(function: func.FuncOp) -> list[TensorType[Attribute]]:
    """The entry function's argument types; a located error unless each is a static tensor with storage."""
    types = []
    for i, arg in enumerate(function.body.block.args):
        problem = _argument_problem(arg.type)
        if problem is not None:
            name = f"%{arg.name_hint}" if arg.name_hint else f"arg{i}"
            message = f"'{function.name}' op ktir-run cannot pass argument {i} ({name}): {problem}"
            raise DiagnosticError([Diagnostic(Severity.ERROR, message, location_of(function))])
        types.append(cast(TensorType[Attribute], arg.type))
    return types


def _argument_problem(type_: Attribute) -> str | None:
    if not isinstance(type_, TensorType):
        return f"its type {type_} is not a tensor"
    if any(dim < 0 for dim in type_.get_shape()):
        return f"its type {type_} does not have a static shape"
    try:
        numpy_dtype(type_.element_type)
    except TypeError:
        return f"its element type {type_.element_type} has no NumPy storage"
    return None


def input_bytes(types: Sequence[TensorType[Attribute]]) -> int:
    """Host bytes of arrays of `types` in their NumPy storage dtypes."""
    return sum(math.prod(t.get_shape()) * numpy_dtype(t.element_type).itemsize for t in types)


def device_copy_bytes(types: Sequence[TensorType[Attribute]]) -> int:
    """
    Bytes of the simulator's device copies of `types`: the `#ktir.tiled` device tensor (padding
    included) when there is one, else as many bytes as on the host.
    """
    total = 0
    for t in types:
        if isinstance(t.encoding, TiledLayoutAttr):
            element_bytes = device_dtype_of_element(t.element_type).element_bytes
            total += math.prod(t.encoding.tiled.device_size) * element_bytes
        else:
            total += input_bytes([t])
    return total


def available_memory() -> int | None:
    """Bytes this process may still allocate: `MemAvailable`, less under an address-space limit."""
    limits = []
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            limits += [int(line.split()[1]) * 1024 for line in f if line.startswith("MemAvailable:")]
    except OSError:
        pass
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            with open("/proc/self/statm", encoding="ascii") as f:
                used = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
            limits.append(max(soft - used, 0))
    except (ImportError, OSError, ValueError):
        pass
    return min(limits) if limits else None


def _check_memory(types: Sequence[TensorType[Attribute]]) -> None:
    """Refuse, before allocating anything, inputs the host cannot hold with their device copies."""
    host, device = input_bytes(types), device_copy_bytes(types)
    available = available_memory()
    if available is not None and host + device > available:
        raise RunError(
            f"the inputs need {(host + device) / GIB:.1f} GiB of memory ({host / GIB:.1f} GiB of arrays "
            f"and {device / GIB:.1f} GiB of device copies), more than the {available / GIB:.1f} GiB "
            "available on this host"
        )


def _inputs(module: ModuleOp, args: argparse.Namespace) -> list[np.ndarray]:
    function = entry_function(module, args.function)
    names = argument_names(function)
    types = _argument_types(function)
    _check_memory(types)
    weights = read_arrays(args.weights, "weights") if args.weights else {}
    if args.weights and not set(weights) & set(names):
        raise RunError(
            f"weights '{args.weights}' name no argument of the function; found: {', '.join(weights)}"
        )
    if args.inputs is None:  # random where no weight is given
        rng = np.random.default_rng(args.seed)
        return [
            weights[n] if n in weights else random_input(t, rng) for n, t in zip(names, types, strict=True)
        ]
    arrays = read_arrays(args.inputs, "inputs")
    values = []
    for i, name in enumerate(names):
        for key in (name, f"arg{i}"):
            if key in arrays:
                values.append(arrays[key])
                break
        else:
            if name in weights:
                values.append(weights[name])
                continue
            raise RunError(
                f"inputs '{args.inputs}' have no array '{name}' (or 'arg{i}'); found: {', '.join(arrays)}"
                + (f"; weights '{args.weights}' have none either" if args.weights else "")
            )
    return values


def _simulate(
    module: ModuleOp, inputs: list[np.ndarray], func_name: str | None, target: Target, quiet: bool
) -> SimResult:
    function = entry_function(module, func_name)
    total = len(function.body.block.ops)
    console = Console(stderr=True)
    columns = (TextColumn("simulating"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True, disable=quiet or total < 50) as progress:
        task = progress.add_task("ops", total=total)
        return simulate(
            module,
            inputs,
            func_name=func_name,
            target=target,
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


def _value_options(args: argparse.Namespace) -> list[str]:
    """The options given that need values (inputs or outputs)."""
    given = {"--inputs": args.inputs, "--weights": args.weights, "--random": args.random}
    given["-o"] = args.output_file
    return [name for name, value in given.items() if value]


def _output_paths(args: argparse.Namespace) -> list[str]:
    return [p for p in (_npz_path(args.output_file), args.trace, args.png, args.roofline_png, args.json) if p]


def _npz_path(path: str | None) -> str | None:
    """`np.savez` adds `.npz` to a name without it; so does `-o`."""
    if path is None or path.endswith(".npz"):
        return path
    return f"{path}.npz"


def _write_outputs(args: argparse.Namespace, report: Report, outputs: list[np.ndarray]) -> None:
    """Every requested file, all or none (`write_all`)."""
    arrays = {f"out{i}": o for i, o in enumerate(outputs)}

    def npz(path: str) -> None:
        with open(path, "wb") as f:
            np.savez(f, **arrays)  # pyright: ignore[reportArgumentType]  # NumPy's stubs: a key could be allow_pickle

    files: list[tuple[str, Writer]] = []
    if (path := _npz_path(args.output_file)) is not None:
        files.append((path, npz))
    if args.trace:
        files.append((args.trace, lambda path: write_trace(report, path)))
    if args.png:
        files.append((args.png, lambda path: write_png(report, path)))
    if args.roofline_png:
        files.append((args.roofline_png, lambda path: write_roofline_png(report, path)))
    if args.json:
        text = report.to_json()
        files.append((args.json, lambda path: Path(path).write_text(text + "\n", encoding="utf-8")))
    write_all(files)
    announce_written([path for path, _ in files], quiet=args.quiet)


def run(argv: Sequence[str] | None = None) -> int:
    """Run the file named in `argv` on the simulator and print outputs and report; the exit code."""
    args = _arguments(argv)
    for path in _output_paths(args):
        check_writable(path)
    filename, text = _read(args.input_file)
    module = _parse(filename, text)
    if _is_ktdp(module):
        from ktir.tools.ktdp_run import run_ktdp

        args.function = _ktdp_function(module, filename, args.function)
        if given := _graph_only_flags(args):
            flags = ", ".join(given)
            raise UsageError(f"{flags}: not for ktdp kernels (they run on --inputs; -o and --json)")
        return run_ktdp(args, text if args.input_file == "-" else Path(args.input_file))
    if given := [flag for flag in ("--grid", "--place") if getattr(args, flag[2:])]:
        raise UsageError(
            f"{' and '.join(given)} {'apply' if len(given) > 1 else 'applies'} to ktdp kernels only"
        )
    _entry(module, args.function)
    _compile(module, args)
    # The terminal's width, or 80 columns when piped (rich's default; `COLUMNS` overrides it):
    # the report's tables keep the columns that fit (`ktir.sim.tables`).
    console = Console()
    if args.timing_only:
        report = estimate(module, target=args.chip, func_name=args.function)
        report.print(console, limit=args.top or None, order=args.order)
        _write_outputs(args, report, [])
        return 0
    inputs = _inputs(module, args)
    result = _simulate(module, inputs, args.function, args.chip, args.quiet)
    console.print(_outputs_table(module, result, args.function))
    result.report.print(console, limit=args.top or None, order=args.order)
    _write_outputs(args, result.report, result.outputs)
    return 0


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


def _is_ktdp_error(error: Exception) -> bool:
    """
    Whether `error` is the ktdp engine's (`KtdpError`). The engine is imported only to run a
    ktdp kernel, and an error of it exists only once it is, so a run of a ktir program does
    not import it to ask.
    """
    memory = sys.modules.get("ktir.ktdp_engine.memory")
    return memory is not None and isinstance(error, memory.KtdpError)


def _handle(error: Exception, filename: str) -> int:
    """Print `error` as located diagnostics or one line; the exit code (KTIR_DEBUG=1 re-raises)."""
    if isinstance(error, SourceError):
        print(error.rendered(), file=sys.stderr)
        return 1
    if isinstance(error, DiagnosticError):
        _report(error.diagnostics, filename)
        return 1
    if isinstance(error, SimulationError) or _is_ktdp_error(error):
        _report([Diagnostic(Severity.ERROR, str(error), getattr(error, "location", None))], filename)
        return 1
    if isinstance(error, PlaceError):
        print(f"ktir-run: error: {error}", file=sys.stderr)
        return 2
    if isinstance(error, (UsageError, PipelineError)):  # PipelineError: an option past the checks
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
