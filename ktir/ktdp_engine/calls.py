"""
`func.call` in a ktdp program. A call runs the callee's body on every tile at once, its values
batched like the caller's, and its ops are charged as they run; a callee marked
`ktir.routine = "<graph op>"` is timed as ktir times that op (`ktir.ktdp_engine.routines`,
imported at the first such call: a kernel without routines runs without ktir's graph ops).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from xdsl.dialects import func
from xdsl.traits import SymbolTable

from ktir.dialects.ktdp import ROUTINE_ATTRIBUTE
from ktir.ir.diagnostics import location_of
from ktir.ir.interpreter import Implementations
from ktir.ktdp_engine.memory import KtdpError

if TYPE_CHECKING:
    from ktir.ktdp_engine.engine import Handler, TileProgram

IMPLS: Implementations[Handler] = Implementations()
"""Calls (`ktir.ir.interpreter`)."""


def _callee(op: func.CallOp) -> func.FuncOp:
    """The called function (the verifier has checked that it exists and takes the arguments)."""
    callee = SymbolTable.lookup_symbol(op, op.callee)
    if not isinstance(callee, func.FuncOp):
        raise KtdpError(f"no function '{op.callee}' in the module", location_of(op))
    return callee


@IMPLS.impl(func.CallOp)
def _call(run: TileProgram, op: func.CallOp) -> list[Any]:
    callee = _callee(op)
    if callee in run.stack:  # its values live in one environment: a second frame would clobber them
        raise KtdpError(
            f"'@{callee.sym_name.data}' is called while it runs (recursion): not supported", location_of(op)
        )
    arguments = [run.env[v] for v in op.arguments]
    if ROUTINE_ATTRIBUTE in callee.attributes:
        from ktir.ktdp_engine.routines import run_routine  # on use: it builds ktir's graph ops

        return run_routine(run, op, callee, arguments)
    run.schedule.alias(callee.body.block.args, op.arguments)
    results = run.call(callee, arguments)
    returned = callee.body.block.last_op
    run.schedule.alias(op.results, returned.operands if returned is not None else [])
    return results


__all__ = ["IMPLS"]
