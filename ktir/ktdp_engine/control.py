"""
Control flow of a ktdp program on every tile at once: `ktdp.runtime_arg_extract`. `scf.for`
(trip counts may differ between tiles: masked replay) and `scf.if` are the lock-step core's
(`ktir.ir.lockstep`), with the engine's hooks (`ktir.ktdp_engine.engine.TileProgram`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ktir.dialects.ktdp.legacy import RuntimeArgExtractOp
from ktir.ir.interpreter import Implementations

if TYPE_CHECKING:
    from ktir.ktdp_engine.engine import Handler, TileProgram

IMPLS: Implementations[Handler] = Implementations()
"""The control ops (`ktir.ir.interpreter`)."""


@IMPLS.impl(RuntimeArgExtractOp)
def _runtime_arg(run: TileProgram, op: Any) -> list[Any]:
    kind = op.kind.data
    if kind == "value":
        return [run.env[op.input]]
    return [run.per_tile(getattr(op.input.type, kind).data)]


__all__ = ["IMPLS"]
