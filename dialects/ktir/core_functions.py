"""
What a function of `ktir.kernel`s (core-level IR) may hold besides its kernels: views, the
function-level ops the simulator times as a whole, and CPU fallbacks, each on `#ktir.tiled`
tensors (`misplaced_next_to_kernels`, a rule of `ktir.dialects.ktir.functions.verify_function`).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation

from ktir.dialects.ktir.attributes import TiledLayoutAttr
from ktir.dialects.ktir.collective import AllGatherOp, AllReduceOp
from ktir.dialects.ktir.core import KernelOp
from ktir.dialects.ktir.data import GatherRowsOp, TakeAlongOp
from ktir.dialects.ktir.routing import GroupedMatmulOp, HistcOp, ScatterRowsOp, SortOp, TopkOp
from ktir.dialects.ktir.structured import CpuFallbackOp, ExpandOp, PermuteOp, ReshapeOp, SliceOp

TIMED_FUNCTION_LEVEL_OPS = (
    GatherRowsOp,
    TakeAlongOp,
    TopkOp,
    SortOp,
    HistcOp,
    ScatterRowsOp,
    GroupedMatmulOp,
    AllReduceOp,
    AllGatherOp,
)
"""Ops that stay at function level (not `ktir.kernel`s), each timed as a whole when it runs
(`ktir.sim.machine`): data-dependent ones, whose time depends on values, and the collectives
between cards, which run over the card-to-card link rather than on the cores."""

FUNCTION_LEVEL_OPS = (PermuteOp, ReshapeOp, ExpandOp, SliceOp, CpuFallbackOp, *TIMED_FUNCTION_LEVEL_OPS)
"""Graph-level ops that may stay next to kernels: views (which may reuse their input's device
bytes), the data-dependent ops the simulator times as a whole (`TIMED_FUNCTION_LEVEL_OPS`) and
CPU fallbacks, which run on the host."""


def misplaced_next_to_kernels(ops: Sequence[Operation]) -> tuple[Operation, str] | None:
    """
    If the function body `ops` holds a `ktir.kernel`, the first other ktir op in it that is not
    one of `FUNCTION_LEVEL_OPS` with `#ktir.tiled` operands and results, and why; else None.
    """
    if not any(isinstance(op, KernelOp) for op in ops):
        return None
    return next((found for op in ops if (found := _misplaced(op)) is not None), None)


def _misplaced(op: Operation) -> tuple[Operation, str] | None:
    if op.dialect_name() != "ktir" or isinstance(op, KernelOp):
        return None
    if not isinstance(op, FUNCTION_LEVEL_OPS):
        return (
            op,
            "is a graph-level op in a function of ktir.kernel ops: core-level IR keeps only views "
            "and CPU fallbacks outside kernels (compile a graph-level function whole with ktir-compile)",
        )
    for value in (*op.operands, *op.results):
        if not isinstance(value.type, TensorType) or not isinstance(value.type.encoding, TiledLayoutAttr):
            return op, f"in a function of ktir.kernel ops needs #ktir.tiled tensors, not {value.type}"
    return None
