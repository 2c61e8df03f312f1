"""
Subscripts of the emitted access tiles: each core's (or chunk's) start along a device dim as an
affine expression of `%id` (or of a chunk loop's induction variable), when it has one.

Example: 32 cores whose starts along rows are [0, 2, 4, ..., 14] repeated four times (8 row
tiles of 2, for 4 column tiles) give `%id mod 8 * 2`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def linear_subscript(values: np.ndarray, chunks: Sequence[int], variable: str) -> str | None:
    """`variable * a + b` when `values[i] == a * chunks[i] + b` for every i; None otherwise."""
    ks = np.array(chunks)
    slope = int(values[1] - values[0]) // (ks[1] - ks[0]) if len(ks) > 1 else 0
    offset = int(values[0] - slope * ks[0])
    if not (values == slope * ks + offset).all():
        return None
    text = variable if slope == 1 else f"{variable} * {slope}" if slope else ""
    if not text:
        return str(offset)
    return text if offset == 0 else f"{text} + {offset}" if offset > 0 else f"{text} - {-offset}"


def start_subscript(column: np.ndarray) -> str | None:
    """
    Each core's start along one device dim as an affine subscript of `%id`, when it has the
    form `((id floordiv q) mod r) * a + b` (a work division's mixed-radix core coordinate times
    the tile extent, plus an offset); None otherwise.

    Example: starts [0, 2, 4, 6, 0, 2, 4, 6] (4 row tiles of 2, repeated for 2 column tiles)
    are `%id mod 4 * 2`; [0, 0, 0, 0, 64, 64, 64, 64] are `%id floordiv 4 * 64`.
    """
    cores, first = len(column), int(column[0])
    if (column == first).all():
        return str(first)
    ids = np.arange(cores)
    for q in range(1, cores):
        for r in range(2, cores // q + 1):
            digit = (ids // q) % r
            scale = int(column[q] - first)
            if scale and (column == first + scale * digit).all():
                return _affine_text(q, r, scale, first, cores)
    return None


def _affine_text(q: int, r: int, scale: int, offset: int, cores: int) -> str:
    text = "%id" if q == 1 else f"%id floordiv {q}"
    if q * r < cores:  # the digit wraps
        text = f"{text} mod {r}" if q == 1 else f"({text}) mod {r}"
    if scale != 1:
        text = f"({text}) * {scale}" if " " in text else f"{text} * {scale}"
    if offset:
        text = f"{text} + {offset}" if offset > 0 else f"{text} - {-offset}"
    return text


__all__ = ["linear_subscript", "start_subscript"]
