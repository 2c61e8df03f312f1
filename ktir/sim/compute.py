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
from ktir.hardware import cost_model
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
    x: np.ndarray,
    x_index: np.ndarray,
    y: np.ndarray,
    y_index: np.ndarray,
    element_type: Attribute,
    into: np.ndarray | None = None,
) -> np.ndarray:
    """
    fp32 products of host tiles of `element_type`: core c multiplies x[x_index[c]] (..., M, K) by
    y[y_index[c]] (..., K', N), K' >= K (y may carry matmul padding rows), the operands as the
    PE arrays read them (`pe_operand`: f32 rounded to fp16), accumulating in fp32 in BLAS.
    Returns (cores, ..., M, N). Cores sharing a y tile go through one GEMM.

    With `into` (cores, ..., M, N) fp32, an accumulator: each product is added to it in place
    (product + accumulator, rounded once to fp32, as `product += accumulator` would) and `into`
    is returned. The GEMMs are the same either way: which rows go into one BLAS call decides its
    bits (a row's result depends on where it falls in the BLAS kernel's blocking), so every
    call has the rows of one y tile's cores in core order, whether or not it accumulates.
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
    tile = (*batch, xf.shape[-2], yf.shape[-1])
    product = np.empty((len(x_index), *tile), dtype=np.float32) if into is None else into
    groups = [np.flatnonzero(y_index == j) for j in range(yf.shape[0])]
    # One buffer for every group's GEMM result, C-contiguous as BLAS writes it.
    scratch = np.empty(max(len(g) for g in groups) * math.prod(tile), dtype=np.float32)
    for j, members in enumerate(groups):
        picked = x_index[members]
        # The group's x tiles in core order: all of xf as it is when that is the order (no copy).
        rows = xf if np.array_equal(picked, np.arange(len(xf))) else xf[picked]
        part = scratch[: len(members) * math.prod(tile)].reshape(len(members), *tile)
        if rows.ndim == 3:  # one GEMM for the group's rows
            np.matmul(rows.reshape(-1, k), yf[j], out=part.reshape(-1, tile[-1]))
        else:
            np.matmul(rows, yf[j], out=part)
        _place(product, members, part, into is not None)
    return product


def _place(product: np.ndarray, members: np.ndarray, part: np.ndarray, add: bool) -> None:
    """Write (or with `add`, add) one group's products into the cores `members` of `product`."""
    if len(members) and members[-1] - members[0] == len(members) - 1:
        view = product[members[0] : members[-1] + 1]  # consecutive cores: a view, no gather
        if add:
            np.add(part, view, out=view)
        else:
            view[...] = part
        return
    product[members] = part + product[members] if add else part


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
            macs = math.prod(out) * ins[0][-1]
            pt += cost_model.pt_cycles(macs, ins[0][-2] if len(ins[0]) > 1 else 1, target)
            flops += 2.0 * macs
            matmul_flops += 2.0 * macs
            if cost_model.converts_to_fp16(op.x.type.element_type):  # type: ignore[attr-defined]
                itemsize = numpy_dtype(op.x.type.element_type).itemsize  # type: ignore[attr-defined]
                converted = in_sticks(ins[0], itemsize) + in_sticks(ins[1], itemsize)
                sfu += cost_model.conversion_cycles(converted, target)
                flops += cost_model.sfu_flops_of(ew.ConvertOp.name, 0, converted)
            continue
        if _moves_no_data(op):
            continue
        element_bytes = numpy_dtype(op.results[0].type.element_type).itemsize  # type: ignore[attr-defined]
        out_elements = in_sticks(out, element_bytes)
        in_elements = in_sticks(ins[0], element_bytes) if ins else 0
        sfu += cost_model.sfu_cycles(op, in_elements, out_elements, target)
        flops += cost_model.sfu_flops(op, in_elements, out_elements)
    return pt, sfu, flops, matmul_flops
