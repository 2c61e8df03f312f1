"""
The simulator half of `ktir-run` (`tools/ktir_run.py`): a ktir module, graph-level (compiled
with `ktir-compile` first) or core-level, run on `ktir.sim` with `--inputs`, `--weights` or
seeded random arrays; its outputs table, cycle report and files.

`ktir-run` imports this module only for a ktir program: a ktdp kernel's run (`tools/ktdp_run.py`)
starts without the compiler and the simulator.
"""

from __future__ import annotations

import argparse
import math
import os
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

from ktir.dialects.ktir.attributes import TiledLayoutAttr, device_dtype_of_element
from ktir.dialects.ktir.core import KernelOp
from ktir.hardware.target import Target
from ktir.ir.diagnostics import Diagnostic, DiagnosticError, ExecutionError, Severity, location_of
from ktir.layout.dtypes import numpy_dtype
from ktir.passes.stages import expand_stages
from ktir.pipeline import parse_pipeline, run_pipeline
from ktir.progress import StageProgress
from ktir.reference.executor import argument_names, entry_function
from ktir.sim import Report, SimResult, estimate, simulate, write_png, write_roofline_png, write_trace
from ktir.tools.output_files import Writer, announce_written, npz_path, write_all
from ktir.tools.run_inputs import RunError, read_arrays

GIB = 1024**3


def run_program(module: ModuleOp, args: argparse.Namespace) -> int:
    """
    Run `args.function` of the parsed and verified ktir `module` (compiled first if it is
    graph-level) on the simulator: print the outputs table and the report, write the files
    asked for; the exit code.
    """
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


def _write_outputs(args: argparse.Namespace, report: Report, outputs: list[np.ndarray]) -> None:
    """Every requested file, all or none (`write_all`)."""
    arrays = {f"out{i}": o for i, o in enumerate(outputs)}

    def npz(path: str) -> None:
        with open(path, "wb") as f:
            np.savez(f, **arrays)  # pyright: ignore[reportArgumentType]  # NumPy's stubs: a key could be allow_pickle

    files: list[tuple[str, Writer]] = []
    if (path := npz_path(args.output_file)) is not None:
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
