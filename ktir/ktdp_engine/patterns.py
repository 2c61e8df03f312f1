"""
The access pattern of a `ktdp` kernel, so that the engine moves its bytes as ktir's simulator
moves those of the kernel it was written from (`ktir.sim.patterns.access_pattern`).

A function is recognised as `ktir-emit-ktdp` writes a kernel that runs one graph op alone:

- a transport: nothing but copies (`linalg.copy`, `linalg.transpose`) between its loads and
  stores, one access tile walking the device's stick dim (its last) other than innermost
  (`access_tile_order`): a restickify (`RESTICKIFY`);
- one call of a `ktir.routine` reduction (sum, mean, max, min) and nothing else computed: a
  `ROW_REDUCTION` when its `linalg.reduce` reduces the last dim, else a `COLUMN_REDUCTION`; the
  rows are the sticks of the tensor it stores (one per row);
- one `linalg.generic` of two inputs, one of them broadcast (an indexing map that is not a
  permutation of the loop dims), and nothing else computed: `BROADCAST`.

Anything else (a fused payload, a matmul, an unbroadcast elementwise op) is ordinary traffic.
"""

from __future__ import annotations

import math
from typing import cast

from xdsl.dialects import func
from xdsl.dialects.builtin import AffineMapAttr, MemRefType, StringAttr
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Attribute, Operation
from xdsl.ir.affine import AffineDimExpr
from xdsl.traits import SymbolTable

from ktir.dialects.ktdp import ROUTINE_ATTRIBUTE
from ktir.dialects.ktdp import ops as ktdp
from ktir.dialects.linalg_ext import ReduceOp
from ktir.hardware import accounting, cost_model
from ktir.hardware.target import Target

_COPIES = {"linalg.copy", "linalg.transpose", "linalg.yield"}
_ROUTINE_REDUCTIONS = frozenset(name for name in accounting.REDUCTIONS if name.startswith("ktir."))
"""The reductions a routine may compute (ktir graph ops; `linalg.reduce` is an op, not a routine)."""


def kernel_bandwidth(function: func.FuncOp, cores: int, target: Target) -> float | None:
    """The LPDDR5 bytes per second of the kernel's transfers if it follows a pattern (module docstring)."""
    ops = list(function.walk())
    computes = [op for op in ops if op.name.startswith("linalg.") and op.name not in _COPIES]
    calls = [op for op in ops if isinstance(op, func.CallOp)]
    pattern, rows = None, 0
    if not computes and not calls:
        pattern = cost_model.RESTICKIFY if any(_moves_sticks(op) for op in ops) else None
    elif len(calls) == 1 and not computes:
        pattern = _reduction(calls[0])
        rows = _stored_sticks(ops)
    elif not calls and len(computes) == 1 and isinstance(computes[0], GenericOp) and _broadcasts(computes[0]):
        pattern = cost_model.BROADCAST
    return None if pattern is None else cost_model.pattern_bandwidth(pattern, cores, rows, target)


def _moves_sticks(op: Operation) -> bool:
    """An access tile that walks the device's last (stick) dim other than innermost."""
    if not isinstance(op, ktdp.ConstructAccessTileOp):
        return False
    order = op.access_tile_order.data.results
    return bool(order) and not (isinstance(order[-1], AffineDimExpr) and order[-1].position == len(order) - 1)


def _reduction(call: func.CallOp) -> str | None:
    """`ROW_REDUCTION` or `COLUMN_REDUCTION` for a call of a reduction routine, else None."""
    callee = SymbolTable.lookup_symbol(call, call.callee)
    name = callee.attributes.get(ROUTINE_ATTRIBUTE) if isinstance(callee, func.FuncOp) else None
    kind = name.data if isinstance(name, StringAttr) else None
    reduce = next((op for op in callee.walk() if isinstance(op, ReduceOp)), None) if callee else None
    if kind not in _ROUTINE_REDUCTIONS or reduce is None:
        return None
    rank = len(cast(MemRefType[Attribute], reduce.input.type).get_shape())
    row = rank - 1 in reduce.dimensions.get_values()
    return cost_model.ROW_REDUCTION if row else cost_model.COLUMN_REDUCTION


def _stored_sticks(ops: list[Operation]) -> int:
    """The sticks of the device tensor the kernel stores to (its memory view's dims but the last)."""
    store = next((op for op in ops if isinstance(op, ktdp.StoreOp)), None)
    tile = store.access_tile.owner if store is not None else None
    if not isinstance(tile, ktdp.ConstructAccessTileOp):
        return 0
    return math.prod(cast(MemRefType[Attribute], tile.base.type).get_shape()[:-1])


def _broadcasts(generic: GenericOp) -> bool:
    """A generic of two inputs one of which is broadcast: its map is not a permutation of the loop dims."""
    maps = [cast(AffineMapAttr, m).data for m in generic.indexing_maps.data]
    if len(generic.inputs) != 2:
        return False
    for m in maps[: len(generic.inputs)]:
        dims = [r.position for r in m.results if isinstance(r, AffineDimExpr)]
        if len(dims) != len(m.results) or sorted(dims) != list(range(m.num_dims)):
            return True
    return False
