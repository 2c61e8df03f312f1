"""
The LX capacity check of a ktdp function: every tensor a tile computes lives in its core's LX
scratchpad from the op that makes it to its last use, and at no op may the live tensors, with
the arrays placed in that core's LX, exceed the target's LX.

Lifetimes are static, over the function's ops in order: a use inside a loop or a generic's body
keeps a value defined outside it alive to the end of that op (every iteration reads it). What
takes no LX: constants (literals), `tensor.empty` (a destination the op writing it fills) and
reshapes (`expand_shape`, `collapse_shape`: views of their source, which they keep alive).
Tensors of a dynamic shape count at their static dims only.

Example: a tile that loads a 512 x 1024 fp16 row block (1 MiB), takes its exp (1 MiB) and
stores it holds 2 MiB while the exp runs, and overflows a 2 MiB LX once anything else is live.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.dialects import arith, func, tensor
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from ktir.ir.diagnostics import location_of
from ktir.ktdp.memory import KtdpError
from ktir.reference.ops import numpy_dtype

_FREE = (arith.ConstantOp, tensor.EmptyOp)
_VIEWS = (tensor.ExpandShapeOp, tensor.CollapseShapeOp)


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
    return math.prod(static) * numpy_dtype(value_type.element_type).itemsize


def _outermost_below(op: Operation, block: object) -> Operation:
    """The ancestor of `op` (or `op`) whose parent block is `block`."""
    while op.parent_block() is not block:
        parent = op.parent_op()
        if parent is None:
            return op
        op = parent
    return op


def _lifetimes(function: func.FuncOp) -> tuple[list[Operation], dict[SSAValue, _Value]]:
    """Every op in walk order and each LX-holding tensor's (bytes, first op, last op)."""
    order = list(function.body.walk())
    position = {op: i for i, op in enumerate(order)}
    values: dict[SSAValue, _Value] = {}
    alias: dict[SSAValue, SSAValue] = {}
    for i, op in enumerate(order):
        for value in op.results:
            if isinstance(op, _VIEWS):
                alias[value] = alias.get(op.operands[0], op.operands[0])
            elif not isinstance(op, _FREE) and (size := _tensor_bytes(value)):
                values[value] = _Value(size, i, i)
        for used in op.operands:
            root = alias.get(used, used)
            if root not in values or not isinstance(root.owner, Operation):
                continue
            # A use nested in a loop or a body that the value is defined outside of lasts as
            # long as the op that holds the use in the value's own block.
            holder = _outermost_below(op, root.owner.parent_block())
            last = max(position[o] for o in holder.walk())
            values[root].end = max(values[root].end, last)
    return order, values


def check_scratchpad(function: func.FuncOp, lx_bytes: int, placed_bytes: int) -> int:
    """
    The most LX a tile of `function` holds at any op (live tensors plus `placed_bytes` of arrays
    placed in its LX); a `KtdpError` located at the op where it first exceeds `lx_bytes`.
    """
    order, values = _lifetimes(function)
    if not values:
        return placed_bytes
    change = [0] * (len(order) + 1)
    for value in values.values():
        change[value.start] += value.bytes
        change[value.end + 1] -= value.bytes
    live, peak = placed_bytes, placed_bytes
    for i, op in enumerate(order):
        live += change[i]
        if live > lx_bytes:
            raise KtdpError(
                f"LX overflow: {live:,} bytes live on each tile at this op ({placed_bytes:,} of them "
                f"placed arrays), the scratchpad holds {lx_bytes:,}; a tensor lives from the op that "
                "makes it to its last use",
                location_of(op),
            )
        peak = max(peak, live)
    return peak


__all__ = ["check_scratchpad"]
