"""
Reference semantics of the data-dependent ops (`dialects/ktir_data.py`) on NumPy arrays.

`gather_rows` takes whole rows (exact: nothing is computed); `cumsum` accumulates floats in
fp32 (fp16, bf16) or their own type, integers in their own type, and rounds each prefix once.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import Operation

from ktir.dialects import ktir_data as data
from ktir.reference.ops import ExecutionError, Registry, result_element, store, widen

DATA = Registry()
implements = DATA.register


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


@implements(data.CumsumOp)
def _cumsum(op: data.CumsumOp, args: list[np.ndarray]) -> list[np.ndarray]:
    source = args[0]
    if source.ndim == 0:
        return [source.copy()]
    return [store(np.cumsum(widen(source), axis=op.dim.value.data), result_element(op))]
