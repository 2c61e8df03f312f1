"""
The simulator's vectorized numerics: one NumPy call for all cores where the tiles allow it.

- `matmul_f32`: fp32 GEMMs over the cores' distinct operand tiles (one GEMM per shared weight
  tile), on the operands as the PE arrays read them (fp32 ones rounded to fp16), accumulating
  in fp32 like the PE arrays;
- `rows_at_once`: a row-wise op (elementwise, softmax, norms) on all cores' tiles at once,
  concatenated along the one host dim the cores split.

Both take and return host tiles with a leading cores axis (`ktir.cores.host_tiles.HostTiles`).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from xdsl.ir import Attribute, Operation

from ktir.cores.fused_execution import Trace, pe_operand
from ktir.cores.fusion import in_sticks
from ktir.cores.host_tiles import HostTiles
from ktir.cores.iteration import iteration_space
from ktir.dialects.ktir import elementwise as ew
from ktir.dialects.ktir import structured as st
from ktir.hardware import accounting, cost_model
from ktir.hardware.target import Target
from ktir.reference.executor import IMPLEMENTATIONS
from ktir.reference.ops import numpy_dtype

ELEMENTWISE = ew.POINTWISE
"""Graph ops that map each element position (after broadcasting) to the same output position."""

_ROW_WISE = (*ELEMENTWISE, st.SoftmaxOp, st.NormOp)
"""Ops whose result along a dim they do not normalize is computed row by row."""


def rows_at_once(payload: Operation, maps: list[HostTiles], hosts: list[np.ndarray]) -> np.ndarray | None:
    """
    All cores' results from one call of the op, or None.

    When the cores' output boxes differ along one host dim d only, and the op treats d row by
    row (an elementwise op, or a softmax / norm that does not normalize d), the cores' input
    tiles concatenated along d are one valid input: each input either follows the output along
    d, or is the same on every core (broadcast along d, e.g. a norm's weight). Returns the
    results as (cores, *output tile).
    """
    out = maps[-1]
    rank, cores = len(out.extent), out.lo.shape[0]
    if not isinstance(payload, _ROW_WISE) or cores == 1 or not payload.operands:
        return None
    varying = np.flatnonzero(np.any(out.lo != out.lo[0], axis=0))
    if len(varying) != 1:
        return None
    d = int(varying[0])
    if isinstance(payload, st.SoftmaxOp) and d == payload.dim.value.data % rank:
        return None
    if isinstance(payload, st.NormOp) and d >= rank - len(st.ints(payload.normalized_shape)):
        return None
    inputs = []
    for m, h in zip(maps, hosts, strict=False):
        dim = d - (rank - len(m.extent))
        if dim >= 0 and m.extent[dim] == out.extent[d] and np.array_equal(m.lo[:, dim], out.lo[:, d]):
            others = np.delete(m.lo, dim, axis=1)
            if np.any(others != others[0]):
                return None
            merged = np.moveaxis(h, 0, dim)  # (..., cores, rows, ...) -> (..., cores * rows, ...)
            inputs.append(merged.reshape(*m.extent[:dim], -1, *m.extent[dim + 1 :]))
        elif (dim < 0 or m.extent[dim] == 1) and not np.any(m.lo != m.lo[0]):
            inputs.append(h[0])
        else:
            return None
    result = np.asarray(IMPLEMENTATIONS[type(payload)](payload, inputs)[0])
    split = result.reshape(*out.extent[:d], cores, out.extent[d], *out.extent[d + 1 :])
    return np.moveaxis(split, d, 0)


def matmul_f32(
    x: np.ndarray, x_index: np.ndarray, y: np.ndarray, y_index: np.ndarray, element_type: Attribute
) -> np.ndarray:
    """
    fp32 products of host tiles of `element_type`: core c multiplies x[x_index[c]] (..., M, K) by
    y[y_index[c]] (..., K', N), K' >= K (y may carry matmul padding rows), the operands as the
    PE arrays read them (`pe_operand`: f32 rounded to fp16), accumulating in fp32 in BLAS.
    Returns (cores, ..., M, N). Cores sharing a y tile go through one GEMM.
    """
    x, y = pe_operand(x, element_type), pe_operand(y, element_type)
    k = x.shape[-1]
    # A batched x with a 2-D y (or the reverse) broadcasts batch dims, which sit after the
    # leading tile axis: line the ranks up so NumPy does not broadcast tiles against batch.
    x = x.reshape(x.shape[0], *(1,) * (y.ndim - x.ndim), *x.shape[1:])
    y = y.reshape(y.shape[0], *(1,) * (x.ndim - y.ndim), *y.shape[1:])
    # C order: NumPy's matmul uses BLAS only for contiguous operands (astype keeps strides).
    xf = np.ascontiguousarray(x, dtype=np.float32)
    yf = np.ascontiguousarray(y[..., :k, :], dtype=np.float32)
    batch = np.broadcast_shapes(xf.shape[1:-2], yf.shape[1:-2])
    product = np.empty((len(x_index), *batch, xf.shape[-2], yf.shape[-1]), dtype=np.float32)
    for j in range(yf.shape[0]):
        members = np.flatnonzero(y_index == j)
        rows = xf if len(members) == len(x_index) and xf.shape[0] == len(x_index) else xf[x_index[members]]
        if rows.ndim == 3:  # one GEMM for the group's rows
            product[members] = (rows.reshape(-1, k) @ yf[j]).reshape(len(members), rows.shape[1], -1)
        else:
            product[members] = np.matmul(rows, yf[j])
    return product


@functools.lru_cache(maxsize=4096)
def _moves_no_data(op: Operation) -> bool:
    """A view inside a fused kernel that only re-reads its input's bytes (decided once per op)."""
    return isinstance(op, st.ShapeChangeOp) and iteration_space(op) is None


def fused_cost(trace: Trace, target: Target) -> tuple[float, float, float, float]:
    """
    (PE-array cycles, SFU cycles, FLOPs, matmul FLOPs) of one chunk of a fused kernel from the tile shapes
    each of its ops saw (`ktir.cores.fused_execution.run_fused`): each op costs what it would
    alone on that tile (`ktir.hardware.cost_model`), an f32 matmul's operand conversion to fp16
    included; a view that moves no data costs nothing.
    """
    pt = sfu = flops = matmul_flops = 0.0
    for op, ins, out in trace:
        if isinstance(op, st.MatmulBase):
            element = op.x.type.element_type  # type: ignore[attr-defined]
            itemsize = numpy_dtype(element).itemsize
            converted = in_sticks(ins[0], itemsize) + in_sticks(ins[1], itemsize)
            rows = ins[0][-2] if len(ins[0]) > 1 else 1
            charge = cost_model.matmul_charge(math.prod(out) * ins[0][-1], rows, element, converted, target)
            pt, sfu = pt + charge[0], sfu + charge[1]
            flops, matmul_flops = flops + charge[2], matmul_flops + charge[3]
            continue
        if _moves_no_data(op):
            continue
        element_bytes = numpy_dtype(op.results[0].type.element_type).itemsize  # type: ignore[attr-defined]
        out_elements = in_sticks(out, element_bytes)
        in_elements = in_sticks(ins[0], element_bytes) if ins else 0
        sfu += cost_model.sfu_cycles(op, in_elements, out_elements, target)
        flops += accounting.sfu_flops_of(op.name, in_elements, out_elements, cost_model.sfu_passes(op))
    return pt, sfu, flops, matmul_flops
