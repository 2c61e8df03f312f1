"""
`ktir-check-cores`: the static checks of core-level ktir (`ktir.cores.check`) as a pass.

`ktir-lower-to-cores` runs them on what it builds; this pass runs them on any core-level IR,
e.g. hand-written or edited kernels. An LX overflow or an out-of-bounds DMA is a located
error naming the op, the core and the byte counts.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import func

from ktir.cores.check import check_function
from ktir.hardware.target import Target
from ktir.passes.function_pass import FunctionPass


@dataclass(frozen=True)
class CheckCoresPass(FunctionPass):
    """Check every core's LX use and every DMA's bounds (see the module docstring)."""

    name = "ktir-check-cores"

    def apply_function(self, function: func.FuncOp, target: Target) -> None:
        check_function(function, target)
