"""
A `linalg.reduce` whose body is not one combining op (`compute._reduce` handles those with one
NumPy reduction): its region folded over the reduced elements in index order, all other
elements and every tile at once. Upstream kernels write a maximum as `arith.cmpf ogt` and
`arith.select`, an argmax-free row maximum; its NaN behaviour is the region's, which no NumPy
reduction reproduces.

The fold starts from the output's value when the output is initialised, else from the first
reduced element (a `tensor.empty` output has no value, and a general region no identity), and
visits the reduced dims' elements row-major: `acc = body(x[..., k], acc)` for each `k`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ktir.ktdp_engine.engine import TileProgram


def fold_reduce(run: TileProgram, op: Any, source: np.ndarray, initial: np.ndarray | None) -> np.ndarray:
    """
    `op`'s region folded over `source` (tiles, ...) along `op.dimensions`, from `initial`
    (tiles, kept dims) or the first reduced element (module docstring).
    """
    dims = [d + 1 for d in op.dimensions.get_values()]
    kept = [d for d in range(source.ndim) if d not in dims]
    lines = np.transpose(source, [*kept, *dims]).reshape(*(source.shape[d] for d in kept), -1)
    block = op.region.block
    accumulator = lines[..., 0] if initial is None else initial
    for k in range(0 if initial is not None else 1, lines.shape[-1]):
        run.env[block.args[0]], run.env[block.args[1]] = lines[..., k], accumulator
        accumulator = np.asarray(run.run_block(block.ops)[0])
    return accumulator


__all__ = ["fold_reduce"]
