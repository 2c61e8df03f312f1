"""
The payload of a `ktir.compute` as `linalg` on host tiles: which conversion each graph op gets.

- elementwise ops, the structured ops and matmuls in place (`payload`, `structured`);
- the ops ktir times as routines (reductions, softmax, norms, attention, SiLU, sigmoid, GELU,
  pads) and a fused payload as routine calls (`routines`);
- data movement as ktir moves it: a relayout kernel's tile reshaped for its store (which builds
  the move), a slice or a concatenation copied when ktir moves its data through the SFU, a view
  that moves no data left a view.

Example: a fused kernel of a matmul, a bias add and GELU is one `ktir.fused` routine whose body
is a `linalg.matmul`, an add `linalg.generic` and a call of a `ktir.gelu` routine.
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerAttr, i64
from xdsl.ir import Operation, SSAValue

from ktir.cores.iteration import iteration_space
from ktir.dialects.ktdp import CAUSAL_ATTRIBUTE
from ktir.dialects.ktir import elementwise as ew
from ktir.dialects.ktir import structured as st
from ktir.export.to_ktdp.attention import StartOf, attention
from ktir.export.to_ktdp.emitter import Emitter, HostTensor
from ktir.export.to_ktdp.formulas import FORMULAS, GELU
from ktir.export.to_ktdp.payload import elementwise, generic, matmul, size_one_reshape
from ktir.export.to_ktdp.routines import ROUTINE_OPS, outlined
from ktir.export.to_ktdp.structured import STRUCTURED
from ktir.export.to_ktdp.tensors import copied, reshaped, transpose
from ktir.ir.diagnostics import op_error
from ktir.layout.dtypes import numpy_dtype

RELAYOUTS = (st.RestickifyOp, st.CopyOp, st.ReshapeOp)
"""Kernel payloads that move a tile into another device layout."""


def emit_payload(
    emitter: Emitter,
    op: Operation,
    operands: list[HostTensor],
    extent: tuple[int, ...] | None = None,
    start_of: StartOf | None = None,
) -> HostTensor:
    """
    One graph op of a payload on host tiles (`payload`, `structured`), a routine call for the
    ops ktir times as routines (`routines`). `extent` is the output tile's host shape when the
    op is a kernel's whole payload (a reshape of a tile needs it); `start_of` gives the core's
    tile starts (attention needs them). A located `DiagnosticError` for an op without a
    conversion.
    """
    if not isinstance(op, ROUTINE_OPS):
        return _inline(emitter, op, operands, extent)
    if not isinstance(op, st.AttentionOp):
        return outlined(emitter, op, operands, lambda e, params, _: _inline(e, op, params))
    if start_of is None:
        raise op_error(op, "ktir-emit-ktdp writes attention as a kernel's whole payload only")
    if op.causal is None:
        return outlined(emitter, op, operands, lambda e, params, _: attention(e, op, params, None))
    starts = [start_of(0, 3), start_of(1, 2)]  # the core's first query and first key
    return outlined(
        emitter,
        op,
        operands,
        lambda e, params, indices: attention(e, op, params, (indices[0], indices[1])),
        starts,
        {CAUSAL_ATTRIBUTE: IntegerAttr(op.causal.value.data, i64)},
    )


def _inline(
    emitter: Emitter, op: Operation, operands: list[HostTensor], extent: tuple[int, ...] | None = None
) -> HostTensor:
    """A graph op other than attention as `linalg` ops in place (`emit_payload`)."""
    if type(op) in FORMULAS:
        return elementwise(emitter, op, operands)
    if (structured := STRUCTURED.get(type(op))) is not None:
        result = structured(emitter, op, operands)
        return copied(emitter, result) if _copies_a_view(op, extent) else result
    if isinstance(op, ew.GeluOp):
        tanh = op.approximate is not None and op.approximate.data == "tanh"
        return generic(emitter, op, operands, op.result.type.element_type, GELU[tanh])
    if isinstance(op, st.MatmulOp | st.BmmOp):
        return matmul(emitter, op, operands)
    if (moved := _moved(emitter, op, operands[0] if operands else None, extent)) is not None:
        return copied(emitter, moved) if _copies_a_view(op, extent) else moved
    raise op_error(op, f"ktir-emit-ktdp does not write '{op.name}' payloads yet")


def _copies_a_view(op: Operation, extent: tuple[int, ...] | None) -> bool:
    """
    Whether a data-movement op built as tensor views (`extract_slice`, `insert_slice`, a
    reshape, or nothing) needs a `linalg.copy`: ktir moves its tile through the SFU (one pass)
    when it is a kernel's whole payload, or a fused op that is a kernel of its own
    (`iteration_space`); a fused view that moves no data stays a view. A relayout kernel is
    copied by `_moved` itself.
    """
    if isinstance(op, st.SliceOp | st.CatOp):
        return extent is not None or iteration_space(op) is not None
    return isinstance(op, RELAYOUTS) and extent is None and iteration_space(op) is not None


def _moved(
    emitter: Emitter, op: Operation, value: HostTensor | None, extent: tuple[int, ...] | None
) -> HostTensor | None:
    """A payload that moves a tile's values (permute, relayout, reshape); None for other ops."""
    if value is None:
        return None
    if isinstance(op, st.PermuteOp):
        return transpose(emitter, value, st.ints(op.perm))
    if isinstance(op, RELAYOUTS) and extent is not None:
        # A relayout kernel moves its tile through the SFU into the output's device layout;
        # the store builds that move (`kernels.KernelConversion._relayout`).
        return reshaped(emitter, value, extent)
    if isinstance(op, st.RestickifyOp | st.CopyOp):  # the same host values in another device layout
        return value
    if isinstance(op, st.ReshapeOp):
        if (shape := size_one_reshape(op, value)) is not None:
            return reshaped(emitter, value, shape)
    return None


def _emit_fused(emitter: Emitter, op: Operation, operands: list[HostTensor]) -> HostTensor:
    """A `ktir.fused` region, op by op; its yielded tile."""
    block = op.regions[0].block
    env: dict[SSAValue, HostTensor] = {
        arg: _read_as_declared(arg, operand) for arg, operand in zip(block.args, operands, strict=True)
    }
    for inner in block.ops:
        if inner.name == "ktir.yield":
            return env[inner.operands[0]]
        env[inner.results[0]] = emit_payload(emitter, inner, [env[v] for v in inner.operands])
    raise op_error(op, "its region has no ktir.yield")


def _read_as_declared(arg: SSAValue, operand: HostTensor) -> HostTensor:
    """
    A fused region's argument as its ops read it: a matmul epilogue's fp32 accumulator whose
    argument is fp16 is read rounded to fp16 (`HostTensor.read_as`), which the elementwise ops
    build in their bodies; another op reading it is not written yet.
    """
    declared = getattr(arg.type, "element_type", operand.element)
    if declared == operand.element or numpy_dtype(declared).itemsize >= numpy_dtype(operand.element).itemsize:
        return operand
    for use in arg.uses:
        if type(use.operation) not in FORMULAS and not isinstance(use.operation, ew.GeluOp):
            raise op_error(
                use.operation, f"it reads a {operand.element} accumulator as {declared}: not written yet"
            )
    return HostTensor(operand.value, declared)


def emit_compute_payload(
    emitter: Emitter,
    payload: Operation,
    operands: list[HostTensor],
    extent: tuple[int, ...],
    start_of: StartOf,
    sticks: tuple[int, int] | None,
) -> HostTensor:
    """
    The payload of a `ktir.compute` (one graph op, or a fused region); `extent`: its output
    tile; `start_of`: the core's host start of an input tile along a dim; `sticks`: K and N of
    a matmul kernel's tiles in whole sticks (ktir's PE arrays run a matmul kernel on them; a
    fused matmul on its host tile).
    """
    if isinstance(payload, st.FusedOp):  # one compute: a routine whose ops run as one (`routines`)
        return outlined(emitter, payload, operands, lambda e, params, _: _emit_fused(e, payload, params))
    if isinstance(payload, st.MatmulOp | st.BmmOp):
        return matmul(emitter, payload, operands, sticks)
    return emit_payload(emitter, payload, operands, extent, start_of)


__all__ = ["RELAYOUTS", "emit_compute_payload", "emit_payload"]
