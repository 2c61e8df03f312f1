"""
The device memory a ktdp program addresses: LPDDR5 (`global`) and each core's LX scratchpad
(`ct_local, ct_id = N`), as flat byte arrays.

A program names memory by element offsets: a view of f16 at offset 1024 starts at byte 2048.
`DeviceMemory.place` puts an array at an element offset of its own dtype (`place("x", x, 0)`),
`allocate` puts it after everything placed so far, on a 128-byte stick boundary; placements
that overlap are an error. `read` and `write` gather and scatter elements by index, checked
against the memory's size.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import numpy as np

from ktir.hardware.target import Target
from ktir.ir.diagnostics import Location
from ktir.ktdp_engine.tiles import OWN_LX, Box

if TYPE_CHECKING:
    from ktir.ktdp_engine.engine import View


class KtdpError(ValueError):
    """A ktdp program or its inputs the engine cannot run; `location` is the op, if known."""

    def __init__(self, message: str, location: Location | None = None) -> None:
        super().__init__(message)
        self.location = location


@dataclass
class Placement:
    """Where an array lives: a memory (`global` or `lx`), its core, byte range and dtype."""

    space: str
    core: int
    start: int
    end: int
    dtype: np.dtype
    shape: tuple[int, ...]

    @property
    def offset(self) -> int:
        """The element offset of its first element, in its own dtype."""
        return self.start // self.dtype.itemsize


class DeviceMemory:
    """LPDDR5 and every core's LX, with the arrays placed in them (module docstring)."""

    def __init__(self, target: Target, cores: int) -> None:
        self.target = target
        self.placements: dict[str, Placement] = {}
        self.global_bytes = np.zeros(0, np.uint8)
        self.lx = np.zeros((cores, target.lx_bytes), np.uint8)
        self._keys: dict[tuple[str, int, int], Hashable] = {}  # `key_of`, by (space, core, byte offset)
        self.written: set[str] = set()
        """The placed arrays a store has reached (`write`)."""

    def place(self, name: str, array: np.ndarray, offset: int, core: int | None = None) -> Placement:
        """Put `array` at element `offset` (of its dtype) of LPDDR5, or of core `core`'s LX."""
        dtype = array.dtype
        start = offset * dtype.itemsize
        end = start + array.nbytes
        space = "global" if core is None else "lx"
        if offset < 0:
            raise KtdpError(f"'{name}': a placement offset must be non-negative, not {offset}")
        if space == "lx" and not 0 <= (core or 0) < len(self.lx):
            raise KtdpError(f"'{name}': core {core} is not one of the {len(self.lx)} cores")
        if space == "lx" and end > self.target.lx_bytes:
            raise KtdpError(f"'{name}': {end:,} bytes of LX needed, core {core} has {self.target.lx_bytes:,}")
        for other_name, other in self.placements.items():
            if other.space == space and other.core == (core or 0) and start < other.end and other.start < end:
                raise KtdpError(f"'{name}' at {offset} overlaps '{other_name}' in {space} memory")
        placement = Placement(space, core or 0, start, end, dtype, array.shape)
        self.placements[name] = placement
        self._write_bytes(placement, np.ascontiguousarray(array).view(np.uint8).reshape(-1))
        return placement

    def key_of(self, view: View) -> Hashable:
        """
        What a view's accesses are ordered by (`ktir.ktdp_engine.schedule.Access`): the placed array
        its first tile's offset falls in, else its whole memory.
        """
        space = "lx" if view.space == "ct_local" else "global"
        core = view.core if space == "lx" else 0
        start = int(np.min(view.offset)) * view.dtype.itemsize
        key = self._keys.get((space, core, start))
        if key is None:
            names = [
                name
                for name, p in self.placements.items()
                if (p.space, p.core) == (space, core) and p.start <= start < p.end
            ]
            key = self._keys[(space, core, start)] = names[0] if names else (space, core)
        return key

    def lx_placed_bytes(self) -> int:
        """The most LX bytes any one core's placed arrays reach (their highest end)."""
        return max((p.end for p in self.placements.values() if p.space == "lx"), default=0)

    def reserve(self, size: int) -> None:
        """Make LPDDR5 hold at least `size` bytes now (arrays placed later copy nothing to grow it)."""
        if size > len(self.global_bytes):
            grown = np.zeros(-(-size // 8) * 8, np.uint8)
            grown[: len(self.global_bytes)] = self.global_bytes
            self.global_bytes = grown

    def allocate(self, name: str, array: np.ndarray) -> Placement:
        """Put `array` in LPDDR5 after every placed array, at a stick boundary."""
        used = max((p.end for p in self.placements.values() if p.space == "global"), default=0)
        stick = self.target.stick_bytes
        start = -(-used // stick) * stick
        start = -(-start // array.dtype.itemsize) * array.dtype.itemsize
        return self.place(name, array, start // array.dtype.itemsize)

    def array(self, name: str) -> np.ndarray:
        """
        A placed array as it is now, in its shape and dtype: a view of the memory, which writes
        to the memory change (`run` hands its outputs over so, once the program is done: copying
        a 40 MB array cost about 90 ms of page faults here).
        """
        p = self.placements[name]
        raw = self.global_bytes if p.space == "global" else self.lx[p.core]
        return raw[p.start : p.end].view(p.dtype).reshape(p.shape)

    def _write_bytes(self, placement: Placement, data: np.ndarray) -> None:
        if placement.space == "global":
            if placement.end > len(self.global_bytes):  # grow by doubling: placing N arrays copies O(total)
                size = max(-(-placement.end // 8) * 8, 2 * len(self.global_bytes))
                grown = np.zeros(size, np.uint8)
                grown[: len(self.global_bytes)] = self.global_bytes
                self.global_bytes = grown
            self.global_bytes[placement.start : placement.end] = data
        else:
            self.lx[placement.core, placement.start : placement.end] = data

    def _elements(self, view: View) -> np.ndarray:
        if view.space == "global":
            raw = self.global_bytes
        else:  # `OWN_LX`: every tile's scratchpad, one after another (the view's offsets count so)
            raw = self.lx.reshape(-1) if view.core == OWN_LX else self.lx[view.core]
        usable = len(raw) // view.dtype.itemsize * view.dtype.itemsize
        return raw[:usable].view(view.dtype)

    def read(self, view: View, where: np.ndarray | Box) -> np.ndarray:
        """The elements at `where` (element indices, or a strided box) of the view's memory."""
        elements = self._elements(view)
        strided = self._strided(elements, view, where)
        if strided is not None:
            return strided.copy()
        indices = cast(np.ndarray, where) if not isinstance(where, Box) else where.indices()
        self._check(indices, len(elements), view)
        return elements[indices]

    def write(self, view: View, where: np.ndarray | Box, values: np.ndarray) -> None:
        """Store `values` at `where` of the view's memory."""
        elements = self._elements(view)
        strided = self._strided(elements, view, where)
        if strided is not None:
            strided[...] = values.astype(view.dtype, copy=False)
            self._mark_written(view, *cast(Box, where).bounds())
            return
        indices = cast(np.ndarray, where) if not isinstance(where, Box) else where.indices()
        self._check(indices, len(elements), view)
        elements[indices] = values.astype(view.dtype, copy=False)
        if indices.size:
            self._mark_written(view, int(indices.min()), int(indices.max()))

    def _mark_written(self, view: View, low: int, high: int) -> None:
        """Add to `written` the placed arrays a store to elements `low..high` of the view's memory reaches."""
        itemsize = view.dtype.itemsize
        start, end = low * itemsize, (high + 1) * itemsize
        space = "global" if view.space == "global" else "lx"
        for name, p in self.placements.items():
            if p.space != space or name in self.written:
                continue
            if space == "lx" and view.core != OWN_LX and view.core != p.core:
                continue
            base = p.core * self.target.lx_bytes if space == "lx" and view.core == OWN_LX else 0
            if start < base + p.end and base + p.start < end:
                self.written.add(name)

    def _strided(self, elements: np.ndarray, view: View, where: np.ndarray | Box) -> np.ndarray | None:
        """A box's strided view of memory, its bounds checked; None for index arrays."""
        if not isinstance(where, Box):
            return None
        low, high = where.bounds()
        if low < 0 or high >= len(elements):
            self._check(np.array([low, high]), len(elements), view)
        return where.view_of(elements)

    @staticmethod
    def _check(indices: np.ndarray, size: int, view: View) -> None:
        if indices.size and (indices.min() < 0 or indices.max() >= size):
            where = (
                "LPDDR5"
                if view.space == "global"
                else "the tiles' LX"
                if view.core == OWN_LX
                else f"core {view.core}'s LX"
            )
            raise KtdpError(
                f"an access reaches element {int(indices.max())} of {where}, which holds {size} "
                f"{view.dtype} elements"
            )


__all__ = ["DeviceMemory", "KtdpError", "Placement"]
