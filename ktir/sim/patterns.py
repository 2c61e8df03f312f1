"""
Access patterns the card runs at measured rates of their own: which one a kernel's graph op
follows (`access_pattern`). The rates are the cost model's (`ktir.hardware.cost_model.
pattern_bandwidth`); recognising the op needs the dialect, which the cost model does not import.
"""

from __future__ import annotations

from typing import cast

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Operation

from ktir.dialects.ktir import elementwise as ew
from ktir.dialects.ktir import structured as st
from ktir.hardware.cost_model import BROADCAST, COLUMN_REDUCTION, RESTICKIFY, ROW_REDUCTION


def access_pattern(op: Operation) -> str | None:
    """
    The access pattern of a kernel that runs the graph op `op` alone, or None (ordinary traffic):

    - a restickify (a transpose made contiguous): `RESTICKIFY`;
    - an elementwise binary op with a broadcast operand (an operand of another shape than the
      result, a scalar included), loaded once: `BROADCAST`;
    - a reduction whose dims include the last: `ROW_REDUCTION` (it writes one stick per row);
    - a reduction across rows (the last dim kept): `COLUMN_REDUCTION`.
    """
    if isinstance(op, st.RestickifyOp):
        return RESTICKIFY
    if isinstance(op, st.ReductionOp):
        rank = len(cast(TensorType[Attribute], op.input.type).get_shape())
        return ROW_REDUCTION if rank - 1 in op.dims.get_values() else COLUMN_REDUCTION
    if isinstance(op, ew.BinaryOp):
        result = cast(TensorType[Attribute], op.results[0].type).get_shape()
        if any(cast(TensorType[Attribute], v.type).get_shape() != result for v in op.operands):
            return BROADCAST
    return None
