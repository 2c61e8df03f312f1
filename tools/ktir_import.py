"""
`ktir-import`: print the graph-level ktir of a PyTorch model defined in a Python file.

```
ktir-import path/to/model.py [-o out.mlir] [--func-name forward] [--print-debuginfo]
```

The file must define `model` (an `nn.Module` or a function) and `example_args` (a tuple);
`example_kwargs` (a dict) and `dynamic_shapes` (passed to `torch.export`) are optional.
The module is printed only when the whole graph imports: unsupported ops are listed
together, each at its source line, and the exit code is 1.
"""

from __future__ import annotations

import argparse
import logging
import os
import runpy
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ktir import __version__
from ktir.frontend import MissingDependencyError, require_torch
from ktir.ir.diagnostics import DiagnosticError, module_text, render
from ktir.tools.arguments import ArgumentParser
from ktir.tools.output_files import OutputError, Writer, check_writable, repeated_output, write_all


class ModelFileError(Exception):
    """The model file is missing, fails to run, or does not define what ktir-import needs."""


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = ArgumentParser(
        prog="ktir-import", description="Import a PyTorch model (model + example_args in a .py file) as ktir."
    )
    parser.add_argument("model_file", help="Python file defining `model` and `example_args`")
    parser.add_argument("-o", "--output-file", help="write the module here instead of stdout ('-': stdout)")
    parser.add_argument("--func-name", default="forward", help="name of the imported function")
    parser.add_argument(
        "--weights",
        metavar="FILE.npz",
        help="also write every parameter and buffer argument, by argument name (for ktir-run --weights)",
    )
    parser.add_argument(
        "--print-debuginfo",
        "--mlir-print-debuginfo",
        action="store_true",
        help="print each op's source location (loc(...))",
    )
    parser.add_argument("--version", action="version", version=f"ktir-import {__version__}")
    parser.add_argument("--print-op-generic", action="store_true", help="print ops in generic form")
    args = parser.parse_args(argv)
    if args.weights == "-":
        parser.error("argument --weights: an .npz archive is binary: give a file name, not '-'")
    if (twice := repeated_output(_output_paths(args))) is not None:
        parser.error(f"'{twice}' is named by -o and --weights; give each output its own file")
    return args


def _check_readable(path: str) -> None:
    """Raise `ModelFileError` unless `path` names a file."""
    if not Path(path).is_file():
        raise ModelFileError(f"cannot read '{path}': no such file")


def load_model_file(path: str) -> tuple[Any, tuple[Any, ...], dict[str, Any], Any]:
    """Run the model file; return its `model`, `example_args`, `example_kwargs` and `dynamic_shapes`."""
    _check_readable(path)
    try:
        namespace = runpy.run_path(path, run_name="__ktir_import__")
    except SystemExit as error:  # a model file that exits has not defined a model
        raise ModelFileError(f"running '{path}' called sys.exit({error.code!r})") from error
    except Exception as error:  # the user's code: report it, never a traceback
        raise ModelFileError(f"running '{path}' failed: {type(error).__name__}: {error}") from error
    missing = [name for name in ("model", "example_args") if name not in namespace]
    if missing:
        raise ModelFileError(f"'{path}' must define {' and '.join(missing)}")
    example_args = namespace["example_args"]
    if not isinstance(example_args, tuple | list):
        raise ModelFileError(f"example_args in '{path}' must be a tuple, not {type(example_args).__name__}")
    return (
        namespace["model"],
        tuple(example_args),
        dict(namespace.get("example_kwargs") or {}),
        namespace.get("dynamic_shapes"),
    )


def _sources(diagnostics: Sequence[Any]) -> dict[str, str]:
    sources = {}
    for diagnostic in diagnostics:
        loc = diagnostic.location
        if loc is not None and loc.file not in sources and Path(loc.file).is_file():
            sources[loc.file] = Path(loc.file).read_text(encoding="utf-8", errors="replace")
    return sources


def run(argv: Sequence[str] | None = None) -> int:
    """Import the model file named in `argv` and print it; returns the exit code."""
    args = _arguments(argv)
    try:
        _check_readable(args.model_file)  # before torch's import, which takes seconds
        require_torch("ktir-import")
        for path in _output_paths(args):  # a bad path fails before the import runs
            check_writable(path)
        imported = _import(args)
        text = module_text(imported.module, generic=args.print_op_generic, debuginfo=args.print_debuginfo)
        write_all(_files(args, imported, text))  # every file or none
    except (MissingDependencyError, OutputError, ModelFileError) as error:
        print(f"ktir-import: error: {error}", file=sys.stderr)
        return 1
    except DiagnosticError as error:
        sources = _sources(error.diagnostics)
        for diagnostic in error.diagnostics:
            print(render(diagnostic, sources), file=sys.stderr)
        return 1
    if args.output_file in (None, "-"):
        sys.stdout.write(text)
    return 0


def _output_paths(args: argparse.Namespace) -> list[str]:
    return [p for p in (args.output_file, args.weights) if p not in (None, "-")]


def _import(args: argparse.Namespace) -> Any:
    """The `FxImport` of the model file (torch is imported only now)."""
    from ktir.frontend.fx import import_program

    # PyTorch logs its own tracebacks (fake tensors, graph dumps) before raising; the raised
    # error is what ktir-import reports, in one line.
    for name in ("torch._subclasses.fake_tensor", "torch.fx.experimental.symbolic_shapes", "torch._dynamo"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    model, example_args, example_kwargs, dynamic_shapes = load_model_file(args.model_file)
    return import_program(
        model, example_args, example_kwargs, func_name=args.func_name, dynamic_shapes=dynamic_shapes
    )


def _files(args: argparse.Namespace, imported: Any, text: str) -> list[tuple[str, Writer]]:
    files: list[tuple[str, Writer]] = []
    if args.output_file not in (None, "-"):
        files.append((args.output_file, lambda path: Path(path).write_text(text, encoding="utf-8")))
    if args.weights is not None:
        files.append((args.weights, lambda path: _write_weights(imported, path)))
    return files


def _write_weights(imported: Any, path: str) -> None:
    """Every state argument (parameters, buffers, constants) of `imported`, by argument name."""
    names = imported.input_names
    arrays = {names[i]: array for i, array in imported.state_arrays().items()}
    with open(path, "wb") as f:
        np.savez(f, **arrays)


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point of `ktir-import`: one-line errors, no traceback (KTIR_DEBUG=1 re-raises)."""
    try:
        return run(argv)
    except KeyboardInterrupt:
        print("ktir-import: interrupted", file=sys.stderr)
        return 130
    except Exception as error:
        if os.environ.get("KTIR_DEBUG"):
            raise
        message = str(error).strip().splitlines()
        first = message[0] if message else type(error).__name__
        print(f"ktir-import: error: {type(error).__name__}: {first}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
