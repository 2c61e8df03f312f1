"""
The LX capacity check of a ktdp function: every tensor a tile computes lives in its core's LX
scratchpad from the op that makes it to its last use, and at no op may the live tensors, with
the arrays placed in that core's LX, exceed the target's LX.

Lifetimes are static, over the function's ops in order: a use inside a loop or a generic's body
keeps a value defined outside it alive to the end of that op (every iteration reads it); a
loop's tensor iter_args hold a buffer of their own across its body, and its results exist from
the op after it. What
takes no LX: constants (literals), `tensor.empty` (a destination the op writing it fills) and
reshapes (`expand_shape`, `collapse_shape`: views of their source, which they keep alive).
Tensors of a dynamic shape count at their static dims only.

Example: a tile that loads a 512 x 1024 fp16 row block (1 MiB), takes its exp (1 MiB) and
stores it holds 2 MiB while the exp runs, and overflows a 2 MiB LX once anything else is live.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import arith, func, scf, tensor
from xdsl.dialects.builtin import IndexType, StringAttr, TensorType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.traits import SymbolTable

from ktir.dialects.ktdp import FUSED_ROUTINE, ROUTINE_ATTRIBUTE
from ktir.ir.diagnostics import location_of
from ktir.ir.liveness import live_bytes
from ktir.ktdp_engine.memory import KtdpError
from ktir.layout.dtypes import numpy_dtype

_FREE = (arith.ConstantOp, tensor.EmptyOp)
_VIEWS = (tensor.ExpandShapeOp, tensor.CollapseShapeOp)
_CONTROL = (scf.ForOp, scf.IfOp)


@dataclass
class _Value:
    bytes: int
    start: int
    end: int


def _tensor_bytes(value: SSAValue) -> int:
    value_type = value.type
    if not isinstance(value_type, TensorType):
        return 0
    static = [n for n in value_type.get_shape() if n >= 0]
    element = value_type.element_type
    itemsize = 8 if isinstance(element, IndexType) else numpy_dtype(element).itemsize
    return math.prod(static) * itemsize


def _outermost_below(op: Operation, block: Block | None) -> Operation:
    """The ancestor of `op` (or `op`) whose parent block is `block`."""
    while op.parent_block() is not block:
        parent = op.parent_op()
        if parent is None:
            return op
        op = parent
    return op


def _defining_block(value: SSAValue) -> Block | None:
    owner = value.owner
    return owner if isinstance(owner, Block) else owner.parent_block()


class _Lifetimes:
    """Each LX-holding tensor's (bytes, first op, last op) over the function's ops in walk order."""

    def __init__(self, function: func.FuncOp) -> None:
        self.order = list(function.body.walk())
        self.position = {op: i for i, op in enumerate(self.order)}
        self.values: dict[SSAValue, _Value] = {}
        self.alias: dict[SSAValue, SSAValue] = {}
        for op in self.order:
            self._define(op)
            for used in op.operands:
                self._use(op, used)

    def _end(self, op: Operation) -> int:
        """The position of the last op nested in `op` (its own without regions)."""
        return max(self.position[o] for o in op.walk())

    def _define(self, op: Operation) -> None:
        # A loop's or an if's results exist once its body has run; its tensor block arguments
        # (a loop's iter_args) hold a buffer of their own across the whole body. Any other op
        # with a region (a linalg op's payload) writes its results while it reads its operands.
        start = self._end(op) + 1 if isinstance(op, _CONTROL) else self.position[op]
        for value in op.results:
            if isinstance(op, _VIEWS):
                self.alias[value] = self.alias.get(op.operands[0], op.operands[0])
            elif not isinstance(op, _FREE) and (size := _tensor_bytes(value)):
                self.values[value] = _Value(size, start, start)
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    if size := _tensor_bytes(arg):
                        self.values[arg] = _Value(size, self.position[op] + 1, self._end(op))

    def _use(self, op: Operation, used: SSAValue) -> None:
        root = self.alias.get(used, used)
        if root not in self.values:
            return
        # A use nested in a loop or a body that the value is defined outside of lasts as long
        # as the op that holds the use; a loop's own operand is read where it starts, a linalg
        # op's through its payload, to its end.
        holder = _outermost_below(op, _defining_block(root))
        last = self.position[op] if holder is op and isinstance(op, _CONTROL) else self._end(holder)
        self.values[root].end = max(self.values[root].end, last)


def check_lx_capacity(function: func.FuncOp, lx_bytes: int, placed_bytes: int) -> int:
    """
    The most LX a tile of `function` holds at any op (live tensors plus `placed_bytes` of arrays
    placed in its LX); a `KtdpError` located at the op where it first exceeds `lx_bytes`.
    """
    peak, where, live = _peak(function, placed_bytes, lx_bytes, doubled=False)
    if where is not None:
        raise KtdpError(
            f"LX overflow: {live:,} bytes live on each tile at this op ({placed_bytes:,} of them "
            f"placed arrays), the scratchpad holds {lx_bytes:,}; a tensor lives from the op that "
            "makes it to its last use",
            location_of(where),
        )
    return peak


def buffers_per_loop_tensor(function: func.FuncOp, lx_bytes: int, placed_bytes: int) -> int:
    """
    2 when every tensor made in a loop body fits twice in LX with everything else live (double
    buffering: an iteration's loads may run while the previous one computes), else 1.
    """
    _, where, _ = _peak(function, placed_bytes, lx_bytes, doubled=True)
    return 2 if where is None else 1


def _device_routine(callee: func.FuncOp) -> bool:
    """
    Whether `callee` is ktir's routine for one graph op (`ktir.routine`, not a fused payload):
    the device runs the op in its own streaming blocks (an attention's key blocks of 64), and
    the body is the op's reference values (keys and values widened to float64), not what the
    core holds, so the call holds no LX beyond its arguments and its result. A fused payload's
    ops are the kernel's intermediates, which ktir's planner keeps in LX (its scratch).
    """
    routine = callee.attributes.get(ROUTINE_ATTRIBUTE)
    return isinstance(routine, StringAttr) and routine.data != FUSED_ROUTINE


def _in_loop(op: Operation | None) -> bool:
    while op is not None and not isinstance(op, func.FuncOp):
        if isinstance(op, scf.ForOp):
            return True
        op = op.parent_op()
    return False


def _peak(
    function: func.FuncOp,
    placed_bytes: int,
    lx_bytes: int,
    doubled: bool,
    calling: tuple[func.FuncOp, ...] = (),
) -> tuple[int, Operation | None, int]:
    """
    (peak bytes, the first op where more than `lx_bytes` are live or None, the bytes live there).
    A call holds its callee's own peak while it runs (its arguments are the caller's tensors);
    with `doubled`, a tensor made in a loop, or a call in one, counts twice.
    """
    lifetimes = _Lifetimes(function)
    order = lifetimes.order
    spans = [
        (held.start, held.end, held.bytes * (2 if doubled and _in_loop(value.owner.parent_op()) else 1))
        for value, held in lifetimes.values.items()
    ]
    for i, op in enumerate(order):
        callee = SymbolTable.lookup_symbol(op, op.callee) if isinstance(op, func.CallOp) else None
        if not isinstance(callee, func.FuncOp) or callee in calling:  # recursion: the engine's error
            continue
        if _device_routine(callee):
            continue
        peak, overflow, live = _peak(callee, 0, lx_bytes, doubled, (*calling, function))
        held = live if overflow is not None else peak  # a callee that overflows alone, at its call
        spans.append((i, i, held * (2 if doubled and _in_loop(op.parent_op()) else 1)))
    live_at = placed_bytes + live_bytes(spans, len(order))
    over = np.flatnonzero(live_at > lx_bytes)
    if over.size:
        first = int(over[0])
        return int(live_at[:first].max(initial=placed_bytes)), order[first], int(live_at[first])
    return int(live_at.max(initial=placed_bytes)), None, int(live_at[-1]) if order else placed_bytes


__all__ = ["buffers_per_loop_tensor", "check_lx_capacity"]
