"""
`ktir-emit-superdsc{dir=. target=""}`: write the SuperDSC JSON of every kernel, one file per kernel
(`ktir.export.superdsc`, docs/superdsc.md).

Kernels are the ops carrying a `work_division` (from `ktir-divide-work`), numbered in program
order from 0 across the module's functions; kernel `i` running op `ktir.<f>` is written to
`<dir>/<i>_<f>.json` (`0_abs.json`), keys sorted and indented by 2, so the same IR always gives
the same bytes. The IR is left unchanged.

A kernel op without a `work_division` is a located error ("run ktir-divide-work first"), and so
is core-level IR (`ktir.kernel`, after `ktir-lower-to-cores`): SuperDSC describes the divided
graph op, which lowering replaces. Every
spec is built before any file is written, so a module with an error writes nothing.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from ktir.cores.fusion import FusionError
from ktir.cores.iteration import IterationError, iteration_space
from ktir.dialects.ktir.core import WORK_DIVISION_ATTR
from ktir.export.superdsc import kernel_spec
from ktir.hardware.target import Target, resolve_target
from ktir.ir.diagnostics import Diagnostic, DiagnosticError, op_error
from ktir.ir.values import functions_of


def module_specs(module: ModuleOp, cores: int) -> list[tuple[str, dict[str, Any]]]:
    """
    (file name, SuperDSC spec) of every kernel in `module`, in program order, for a chip of
    `cores` cores. Raises one
    `DiagnosticError` listing every kernel op that has no `work_division` or fails to export.
    """
    lowered = next((op for op in module.walk() if op.name == "ktir.kernel"), None)
    if lowered is not None:
        raise op_error(
            lowered,
            "is core-level IR: ktir-emit-superdsc exports divided graph-level IR, so run it after "
            "ktir-divide-work and before ktir-lower-to-cores (ktir-compile lowers past it)",
        )
    specs: list[tuple[str, dict[str, Any]]] = []
    errors: list[Diagnostic] = []
    for function in functions_of(module):
        for op in function.body.block.ops:
            try:
                if WORK_DIVISION_ATTR not in op.attributes:
                    if _is_kernel(op):
                        raise op_error(op, f"has no {WORK_DIVISION_ATTR}; run ktir-divide-work first")
                    continue
                spec = kernel_spec(op, len(specs), cores)
            except DiagnosticError as error:
                errors.extend(error.diagnostics)
                continue
            except (FusionError, IterationError) as error:  # e.g. a divided op without layouts
                errors.extend(op_error(getattr(error, "op", op), str(error)).diagnostics)
                continue
            (key,) = spec
            specs.append((f"{key}.json", spec))
    if errors:
        raise DiagnosticError(errors)
    return specs


def _is_kernel(op: Operation) -> bool:
    try:
        return iteration_space(op) is not None
    except IterationError as error:
        raise op_error(error.op, str(error)) from error


def render_spec(spec: dict[str, Any]) -> str:
    """The JSON text written for one spec: sorted keys, 2-space indent, a final newline."""
    return json.dumps(spec, indent=2, sort_keys=True) + "\n"


@dataclass(frozen=True)
class EmitSuperDscPass(ModulePass):
    """Write one SuperDSC JSON file per kernel into `dir` (see the module docstring)."""

    name = "ktir-emit-superdsc"

    dir: str = "."
    target: str | Target = ""
    """A target TOML file (`ktir.hardware.target.load_target`), or from Python a `Target`;
    default: Spyre. A division over more of its cores than it has is a located error."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        specs = module_specs(op, resolve_target(self.target).cores)
        os.makedirs(self.dir, exist_ok=True)
        for file_name, spec in specs:
            with open(os.path.join(self.dir, file_name), "w", encoding="utf-8") as file:
                file.write(render_spec(spec))
