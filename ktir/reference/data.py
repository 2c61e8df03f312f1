"""
Reference semantics of the data-dependent ops (`dialects/ktir/data.py`, `dialects/ktir/routing.py`)
on NumPy arrays.

`gather_rows` takes whole rows (exact: nothing is computed); `cumsum` accumulates floats in
fp32 (fp16, bf16) or their own type, integers in their own type, and rounds each prefix once.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import Operation

from ktir.dialects.ktir import data, routing
from ktir.ir.diagnostics import ExecutionError
from ktir.ir.interpreter import Implementations
from ktir.reference.ops import Implementation, result_element
from ktir.reference.precision import store, widen

DATA: Implementations[Implementation] = Implementations()
implements = DATA.impl


def checked_rows(indices: np.ndarray, rows: int) -> np.ndarray:
    """
    The indices as row numbers in `[0, rows)`: negative ones count from the end, as in PyTorch's
    `index`; any other index is an `ExecutionError` naming it. Example: -1 of 256 rows is 255.
    """
    wide = indices.astype(np.int64)
    outside = (wide < -rows) | (wide >= rows)
    if np.any(outside):
        bad = int(wide[outside].flat[0])
        raise ExecutionError(f"index {bad} is out of range for a table of {rows} rows")
    return np.where(wide < 0, wide + rows, wide)


@implements(data.GatherRowsOp)
def _gather_rows(op: Operation, args: list[np.ndarray]) -> list[np.ndarray]:
    table, indices = args
    return [np.take(table, checked_rows(indices, table.shape[0]), axis=0)]


@implements(data.TakeAlongOp)
def _take_along(op: data.TakeAlongOp, args: list[np.ndarray]) -> list[np.ndarray]:
    source, index = args
    rows = source[tuple(slice(0, n) for n in index.shape[:-1])]
    return [np.take_along_axis(rows, checked_rows(index, source.shape[-1]), axis=-1)]


@implements(data.CumsumOp)
def _cumsum(op: data.CumsumOp, args: list[np.ndarray]) -> list[np.ndarray]:
    source = args[0]
    if source.ndim == 0:
        return [source.copy()]
    return [store(np.cumsum(widen(source), axis=op.dim.value.data), result_element(op))]


#### Routing (dialects/ktir/routing.py) ####


def stable_order(keys: np.ndarray, descending: bool = False) -> np.ndarray:
    """Indices that sort `keys` along the last dim, equal keys in index order (NaN last)."""
    if descending:
        keys = -keys.astype(np.float64) if keys.dtype.kind == "f" else -keys.astype(np.int64)
    return np.argsort(keys, axis=-1, kind="stable")


@implements(routing.TopkOp)
def _topk(op: routing.TopkOp, args: list[np.ndarray]) -> list[np.ndarray]:
    order = stable_order(args[0], descending=True)[..., : op.k.value.data]
    return [np.take_along_axis(args[0], order, axis=-1), order.astype(np.int64)]


@implements(routing.SortOp)
def _sort(op: routing.SortOp, args: list[np.ndarray]) -> list[np.ndarray]:
    order = stable_order(args[0])
    return [np.take_along_axis(args[0], order, axis=-1), order.astype(np.int64)]


@implements(routing.HistcOp)
def _histc(op: routing.HistcOp, args: list[np.ndarray]) -> list[np.ndarray]:
    low, high, bins = op.min.value.data, op.max.value.data, op.bins.value.data
    values = args[0].astype(np.float64).ravel()
    inside = values[(values >= low) & (values <= high)]
    # PyTorch's bin: floor((x - min) * bins / (max - min)), the top edge in the last bin.
    index = np.minimum(((inside - low) * bins / (high - low)).astype(np.int64), bins - 1)
    return [store(np.bincount(index, minlength=bins), result_element(op))]


@implements(routing.ScatterRowsOp)
def _scatter_rows(op: routing.ScatterRowsOp, args: list[np.ndarray]) -> list[np.ndarray]:
    values, dest, indices = args
    dim = op.scatter_dim()
    result = dest.copy()
    wrapped = checked_rows(indices, dest.shape[dim])
    if op.contiguous is not None and not is_run(wrapped):
        shown = ", ".join(map(str, indices[:8].tolist())) + (", ..." if len(indices) > 8 else "")
        raise ExecutionError(f"scatter_rows is marked contiguous, but its indices [{shown}] are not one run")
    rows = (slice(None),) * dim + (wrapped,)
    result[rows] = values  # NumPy keeps the last of repeated rows
    return [result]


def is_run(rows: np.ndarray) -> bool:
    """Whether `rows` (non-negative) are `s, s + 1, ..., s + n - 1`. Example: `[4, 5, 6]`, not `[4, 6]`."""
    return bool(np.array_equal(rows, rows[0] + np.arange(len(rows)))) if len(rows) else True


def expert_bounds(offsets: np.ndarray, rows: int) -> list[tuple[int, int]]:
    """
    (first row, end row) of each expert from cumulative `offsets`, clipped to `rows`; an
    `ExecutionError` when they decrease. Example: `[2, 2, 5]` -> `[(0, 2), (2, 2), (2, 5)]`.
    """
    ends = np.minimum(offsets.astype(np.int64), rows)
    starts = np.concatenate([[0], ends[:-1]])
    if np.any(ends < starts) or np.any(offsets < 0):
        raise ExecutionError(f"offsets {offsets.tolist()} must be non-negative and non-decreasing")
    return list(zip(starts.tolist(), ends.tolist(), strict=True))


@implements(routing.GroupedMatmulOp)
def _grouped_matmul(op: routing.GroupedMatmulOp, args: list[np.ndarray]) -> list[np.ndarray]:
    x, weights, offsets = args
    result = np.zeros((x.shape[0], weights.shape[2]), np.float32)
    for expert, (start, end) in enumerate(expert_bounds(offsets, x.shape[0])):
        if end > start:  # one matmul per expert, not per row: fp32 products, fp32 sums
            result[start:end] = x[start:end].astype(np.float32) @ weights[expert].astype(np.float32)
    return [store(result, result_element(op))]
