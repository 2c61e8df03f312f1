"""
`ktir-check-cores`: the static checks of core-level ktir (`ktir.cores.check`) as a pass.

`ktir-lower-to-cores` runs them on what it builds; this pass runs them on any core-level IR,
e.g. hand-written or edited kernels. An LX overflow or an out-of-bounds DMA is a located
error naming the op, the core and the byte counts.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ktir.cores.check import CoreCheckError, check_function
from ktir.hardware.target import load_target
from ktir.ir.diagnostics import op_error
from ktir.ir.values import functions_of


@dataclass(frozen=True)
class CheckCoresPass(ModulePass):
    """Check every core's LX use and every DMA's bounds (see the module docstring)."""

    name = "ktir-check-cores"

    target: str = ""
    """A target TOML file (`ktir.hardware.target.load_target`); default: Spyre."""

    def __post_init__(self) -> None:
        load_target(self.target)  # a bad file is a usage error when the pipeline is parsed

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = load_target(self.target)
        for function in functions_of(op):
            try:
                check_function(function, target)
            except CoreCheckError as error:
                raise op_error(error.op, str(error)) from error
