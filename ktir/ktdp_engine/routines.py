"""
ktir's routines in a ktdp program: functions that compute one ktir graph op, called with
`func.call` (`ktir.ktdp_engine.calls`). A callee marked `ktir.routine = "<graph op>"`
(`dialects.ktdp.ROUTINE_ATTRIBUTE`) is that op's device routine, as `ktir-emit-ktdp` writes
RMSNorm, softmax, SiLU or attention: the body gives the values, and the call is timed as ktir's
chip model times the op on the shapes it is called with (`ktir.hardware.cost_model`), not op by
op. Example: RMSNorm of a 24 x 128 fp16 tile is one reduction over its 3,072 elements and three
SFU passes over them, whatever the body's ops.

- elementwise ops (SiLU, sigmoid, GELU): their passes over the result, in whole sticks;
- reductions, softmax and norms: their calibrated rates over the first argument, in whole
  sticks of the result's element type;
- attention (q [B, H, G, S, D], k [B, H, L, D], v [B, H, L, E], an optional mask, then with
  `ktir.causal` each tile's first query and first key as `index` arguments): its two products on
  the PE arrays and its softmax on the SFU for the key blocks the queries see, per tile.

A routine computes on its arguments only: its body may not load, store or call (but for
"ktir.fused", a fused kernel's payload: its ops, routines among them, run as one compute that
takes their PE-array time, then their SFU time, once all its arguments are ready).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, StringAttr, TensorType
from xdsl.ir import Operation

from ktir.dialects.ktdp import CAUSAL_ATTRIBUTE, ROUTINE_ATTRIBUTE
from ktir.dialects.ktir import elementwise as ew
from ktir.dialects.ktir import structured as st
from ktir.hardware import accounting, cost_model
from ktir.ir.diagnostics import location_of
from ktir.ktdp_engine.memory import KtdpError
from ktir.layout.sticks import in_sticks

if TYPE_CHECKING:
    from ktir.ktdp_engine.engine import TileProgram

GRAPH_OPS: dict[str, type[Operation]] = {op.name: op for op in [*ew.ELEMENTWISE_OPS, *st.STRUCTURED_OPS]}
"""ktir's graph ops by name: what a routine may name."""


def _check_routine(callee: func.FuncOp) -> type[Operation]:
    """The graph op a routine computes; a located error for a body that moves data or calls."""
    attribute = callee.attributes[ROUTINE_ATTRIBUTE]
    name = attribute.data if isinstance(attribute, StringAttr) else None
    kind = GRAPH_OPS.get(name or "")
    if kind is None or issubclass(kind, st.MatmulBase):
        raise KtdpError(
            f"'{ROUTINE_ATTRIBUTE}' names {attribute}, which is not a ktir graph op ktir times as a routine",
            location_of(callee),
        )
    results = callee.function_type.outputs.data
    if len(results) != 1 or not isinstance(results[0], TensorType):
        returned = ", ".join(str(t) for t in results) or "nothing"
        raise KtdpError(
            f"a routine returns one tensor; '@{callee.sym_name.data}' returns {returned}", location_of(callee)
        )
    for inner in callee.walk():
        # a fused payload calls the routines of its ops; any other routine is one op
        if inner.name.startswith("ktdp.") or (isinstance(inner, func.CallOp) and kind is not st.FusedOp):
            raise KtdpError(
                f"a routine computes on its arguments only: '{inner.name}' in its body", location_of(inner)
            )
    return kind


def run_routine(run: TileProgram, op: func.CallOp, callee: func.FuncOp, arguments: list[Any]) -> list[Any]:
    """The call `op` of the routine `callee` on `arguments`: its body's values, ktir's time of its op."""
    kind = _check_routine(callee)
    if kind is st.FusedOp:
        return _fused(run, op, callee, arguments)
    run.charges.muted += 1
    try:
        results = run.call(callee, arguments)
    finally:
        run.charges.muted -= 1
    if kind is st.AttentionOp:
        _charge_attention(run, callee, arguments)
    else:
        _charge_sfu_routine(run, kind, arguments, results)
    run.place(op)
    return results


def _fused(run: TileProgram, op: func.CallOp, callee: func.FuncOp, arguments: list[Any]) -> list[Any]:
    """
    A fused payload ("ktir.fused"): one compute, as ktir runs a fused kernel's chunk. Its ops
    are charged as they run (each routine as its op), and the call takes their PE-array time,
    then their SFU time, once all its arguments are ready.
    """
    before = len(run.charges.pending)
    run.schedule.collecting += 1
    try:
        results = run.call(callee, arguments)
    finally:
        run.schedule.collecting -= 1
    pieces = run.charges.pending[before:]
    del run.charges.pending[before:]
    if moved := sorted({queue for queue, _, _ in pieces} - {"pt", "sfu"}):
        raise KtdpError(
            f"a fused routine computes on its arguments only: its body reaches the {', '.join(moved)} queue",
            location_of(op),
        )
    for unit in ("pt", "sfu"):
        cycles = [c for queue, c, _ in pieces if queue == unit]
        if cycles:
            run.charges.pending.append((unit, np.sum(cycles, axis=0), None))
    run.place(op)
    return results


def _charge_sfu_routine(
    run: TileProgram, kind: type[Operation], arguments: list[Any], results: list[Any]
) -> None:
    """An SFU routine: ktir's cost of `kind` on the first argument's and the result's sticks."""
    result = np.asarray(results[0])
    first = next((np.asarray(a) for a in arguments if np.ndim(a) > 1), result)
    stick, itemsize = run.target.stick_bytes, result.dtype.itemsize
    in_elements = in_sticks(first.shape[1:], itemsize, stick)
    out_elements = in_sticks(result.shape[1:], itemsize, stick)
    cycles = cost_model.sfu_cycles_of(kind.name, in_elements, out_elements, run.target)
    flops = accounting.sfu_flops_of(kind.name, in_elements, out_elements)
    run.charges.charge("sfu", cycles, flops * run.tiles)


def _charge_attention(run: TileProgram, callee: func.FuncOp, arguments: list[Any]) -> None:
    """An attention routine: ktir's products and softmax for the key blocks each tile's queries see."""
    q, k, v = (np.asarray(a) for a in arguments[:3])
    causal_attribute = callee.attributes.get(CAUSAL_ATTRIBUTE)
    batch, heads, group, rows, head = q.shape[1:]
    keys = k.shape[3]
    if isinstance(causal_attribute, IntegerAttr):
        query_starts, key_starts = (run.per_tile(a) for a in arguments[-2:])
        pairs = cost_model.attention_pairs(query_starts, rows, key_starts, keys, causal_attribute.value.data)
    else:
        pairs = np.full(run.tiles, float(rows * keys))
    pt, sfu, flops, matmul_flops = cost_model.attention_cycles(
        (batch, heads, group, rows), pairs, head, v.shape[-1], q.dtype.itemsize, run.target
    )
    run.charges.charge_tiles(
        {"pt": np.asarray(pt), "sfu": np.asarray(sfu)}, np.asarray(flops), np.asarray(matmul_flops)
    )


__all__ = ["GRAPH_OPS", "run_routine"]
