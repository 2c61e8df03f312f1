"""
Running a `ktir.fused` kernel's body on one core's tiles.

Each op of the body runs on tiles as it would run alone: its reference implementation, computed
in fp32 and rounded to the op's result type (so a fused kernel gives the bits of the ops run one
by one). Only the ops whose meaning depends on the whole shape change: a permute transposes the
tile, a reshape that adds or drops size-1 dims reshapes it, and a matmul multiplies the tiles
with the caller's `matmul` (the simulator's `fp32_matmul` multiplies as the PE arrays do).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import cast

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation

from ktir.dialects.ktir import elementwise as ew
from ktir.dialects.ktir import structured as st
from ktir.ir.diagnostics import ExecutionError
from ktir.ir.values import shape_of
from ktir.layout.dtypes import numpy_dtype
from ktir.reference.executor import IMPLEMENTATIONS, run_body
from ktir.reference.ops import full_value
from ktir.reference.precision import store
from ktir.sim.gemm import pe_operand

Matmul = Callable[[st.MatmulBase, np.ndarray, np.ndarray], np.ndarray]
"""A matmul op's product of an x tile (..., M, K) and a y tile (..., K', N), K' >= K."""


def exact_matmul(op: st.MatmulBase, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The reference's matmul: exact products and sums (float64), rounded once by the caller."""
    return np.matmul(x.astype(np.float64), y[..., : x.shape[-1], :].astype(np.float64))


def _reshaped(op: st.ReshapeOp, tile: np.ndarray) -> np.ndarray:
    """A reshape that adds or drops size-1 dims, on a tile: the other dims keep their extents."""
    extents = iter(e for e, n in zip(tile.shape, shape_of(op.input.type), strict=True) if n != 1)
    return tile.reshape(tuple(next(extents) if n != 1 else 1 for n in shape_of(op.result.type)))


def _run(op: Operation, ins: list[np.ndarray], matmul: Matmul) -> np.ndarray:
    if isinstance(op, st.PermuteOp):
        return np.transpose(ins[0], st.ints(op.perm))
    if isinstance(op, st.ReshapeOp):
        return _reshaped(op, ins[0])
    if isinstance(op, ew.FullOp):  # one value, broadcast by its (elementwise) consumers
        return full_value(op)
    if isinstance(op, st.MatmulBase):
        return np.asarray(store(matmul(op, ins[0], ins[1]), op.result.type.element_type))
    implementation = IMPLEMENTATIONS.lookup(op)
    if implementation is None:
        raise ExecutionError(f"no implementation of '{op.name}' inside a fused kernel")
    return np.asarray(implementation(op, ins)[0])


def fp32_matmul(op: st.MatmulBase, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The PE arrays' matmul: the products of the operands as read (`pe_operand`), summed in fp32."""
    element_type = cast(TensorType, op.x.type).element_type
    x, y = pe_operand(x, element_type), pe_operand(y, element_type)
    return np.matmul(x.astype(np.float32), y[..., : x.shape[-1], :].astype(np.float32))


Trace = list[tuple[Operation, list[tuple[int, ...]], tuple[int, ...]]]
"""Each op a fused kernel ran on a tile: the op, its operands' tile shapes and its result's."""


def run_fused(
    op: st.FusedOp,
    tiles: Sequence[np.ndarray],
    matmul: Matmul = exact_matmul,
    trace: Trace | None = None,
) -> np.ndarray:
    """
    The fused kernel's result tile from its input tiles (host tiles, one core); with `trace`,
    the tile shapes each op saw are appended to it (what the cost model charges).
    """
    # An input in another type than its argument is a matmul epilogue's fp32 accumulator:
    # rounded once to the matmul's result type, as the unfused matmul stores it.
    inputs = [
        store(tile, cast(TensorType, arg.type).element_type)
        if tile.dtype != numpy_dtype(cast(TensorType, arg.type).element_type)
        else tile
        for arg, tile in zip(op.body.block.args, tiles, strict=True)
    ]

    def run(member: Operation, ins: list[np.ndarray]) -> np.ndarray:
        result = _run(member, ins, matmul)
        if trace is not None:
            trace.append((member, [i.shape for i in ins], result.shape))
        return result

    return run_body(op, inputs, run)


__all__ = ["Matmul", "Trace", "exact_matmul", "fp32_matmul", "run_fused"]
