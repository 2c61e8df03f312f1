"""
Elementwise ops of ktdp programs with ktir's numerics: an op computes in float32 (float64 for
wider types) and rounds once to its result type, as ktir's own simulator does.

Two ways to the same values, faster:
- ops that are exact in any float type (negation, absolute value, max, min) run in the
  operands' own type when it is the result's: `negf` of an f16 tensor flips sign bits;
- ops over at least `THREADED_ELEMENTS` elements split their leading (tiles) dim over a small
  thread pool. NumPy releases the GIL in casts and ufunc loops, and each element's value depends
  only on its own operands, so the result is the same for any split.

Example: on a 2-core machine, `arith.mulf` of two 32 x 512 x 128 f16 tensors converts each half
of the tiles to float32, multiplies and rounds to f16 on its own thread, and joins the halves
(up to four threads, one per core).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from xdsl.dialects.builtin import BFloat16Type
from xdsl.ir import Attribute

from ktir.layout.dtypes import numpy_dtype
from ktir.reference.precision import store

THREADED_ELEMENTS = 1 << 20
"""Elements from which an elementwise op splits over threads."""

_EXACT: set[Callable[..., np.ndarray]] = {np.negative, np.abs, np.maximum, np.minimum, np.fmax, np.fmin}
_WORKERS = max(1, min(4, os.cpu_count() or 1))
_POOL = ThreadPoolExecutor(max_workers=_WORKERS, thread_name_prefix="ktdp") if _WORKERS > 1 else None


def compute_precision(array: np.ndarray) -> np.ndarray:
    """The compute precision of a stored array: float32, or float64 for wider types."""
    return array.astype(np.float64 if array.dtype.itemsize > 4 else np.float32, copy=False)


def elementwise(fn: Callable[..., np.ndarray], operands: Sequence[object], element: Attribute) -> np.ndarray:
    """`fn` of the operands (NumPy broadcasting), rounded once to `element` (module docstring)."""
    arrays = [np.asarray(a) for a in operands]
    dtype = numpy_dtype(element)
    exact = (fn in _EXACT and dtype.kind == "f" and not isinstance(element, BFloat16Type)) and all(
        a.dtype == dtype for a in arrays
    )
    if exact:
        return fn(*arrays)
    shape = np.broadcast_shapes(*(a.shape for a in arrays))
    if _POOL is None or not shape or shape[0] < 2 or math.prod(shape) < THREADED_ELEMENTS:
        return store(fn(*(compute_precision(a) for a in arrays)), element)
    views = [np.broadcast_to(a, shape) for a in arrays]
    bounds = np.linspace(0, shape[0], min(_WORKERS, shape[0]) + 1).astype(int)

    def part(index: int) -> np.ndarray:
        rows = slice(bounds[index], bounds[index + 1])
        return store(fn(*(compute_precision(v[rows]) for v in views)), element)

    return np.concatenate(list(_POOL.map(part, range(len(bounds) - 1))), axis=0)


__all__ = ["THREADED_ELEMENTS", "compute_precision", "elementwise"]
