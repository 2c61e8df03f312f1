"""
What every layout module shares: `LayoutError` and `contiguous_strides`. It imports no other
layout module, so `ktir.layout.tiled` (the algebra) and `ktir.layout.binding` (a layout bound to
a host tensor, which `TiledLayout.bind` returns) both build on it without importing each other
in a ring; `ktir.layout.tiled` exports both names with its own.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["LayoutError", "contiguous_strides"]


class LayoutError(ValueError):
    """A layout that cannot exist, or that does not fit the host tensor it is used with."""


def contiguous_strides(size: Sequence[int]) -> tuple[int, ...]:
    """Row-major strides of `size`: `contiguous_strides((5, 100, 150)) == (15000, 150, 1)`."""
    strides = [1] * len(size)
    for i in range(len(size) - 2, -1, -1):
        strides[i] = strides[i + 1] * max(size[i + 1], 1)
    return tuple(strides)
