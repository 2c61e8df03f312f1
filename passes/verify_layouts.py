"""
`ktir-verify-layouts`: fail with located errors if any op's stick rules do not hold
(`ktir.planning.legality`). Runs after `ktir-insert-restickify` (or, with `pending=true`,
right after `ktir-propagate-layouts`, accepting edges a restickify would fix).

With the environment variable `KTIR_DEBUG=1`, the layout passes run the same check at their
end (propagation with `pending`), so a broken invariant is reported by the pass that broke it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ktir.ir.diagnostics import DiagnosticError, op_error
from ktir.ir.values import functions_of
from ktir.planning.legality import layout_violations


def check_layouts(module: ModuleOp, pending: bool = False) -> None:
    """Raise `DiagnosticError` with one located error per layout violation in `module`."""
    errors = [
        op_error(v.op, v.args[0]).diagnostics[0]
        for function in functions_of(module)
        for v in layout_violations(function, pending)
    ]
    if errors:
        raise DiagnosticError(errors)


DEBUG_ENV = "KTIR_DEBUG"
"""Set to a non-empty value other than 0 to check layouts at the end of every layout pass."""


def check_layouts_in_debug_mode(module: ModuleOp, pending: bool = False) -> None:
    """`check_layouts` when the `KTIR_DEBUG` environment variable is set (tests, debugging)."""
    if os.environ.get(DEBUG_ENV, "") not in ("", "0"):
        check_layouts(module, pending)


@dataclass(frozen=True)
class VerifyLayoutsPass(ModulePass):
    """Check every op's stick rules; see the module docstring."""

    name = "ktir-verify-layouts"

    pending: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_layouts(op, self.pending)
