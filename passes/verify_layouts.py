"""
`ktir-verify-layouts`: fail with located errors if any op's stick rules do not hold
(`ktir.layout_legality`). Runs after `ktir-insert-restickify` (or, with `pending=true`,
right after `ktir-propagate-layouts`, accepting edges a restickify would fix).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ktir.diagnostics import DiagnosticError, op_error
from ktir.layout_legality import layout_violations
from ktir.passes.propagate_layouts import functions_of


def check_layouts(module: ModuleOp, pending: bool = False) -> None:
    """Raise `DiagnosticError` with one located error per layout violation in `module`."""
    errors = [
        op_error(v.op, v.args[0]).diagnostics[0]
        for function in functions_of(module)
        for v in layout_violations(function, pending)
    ]
    if errors:
        raise DiagnosticError(errors)


@dataclass(frozen=True)
class VerifyLayoutsPass(ModulePass):
    """Check every op's stick rules; see the module docstring."""

    name = "ktir-verify-layouts"

    pending: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_layouts(op, self.pending)
