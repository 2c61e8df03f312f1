"""
The state of a ktdp program running on every tile at once: memory views, access tiles, and the
cycles and work charged per tile and unit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, SSAValue

from ktir.hardware import accounting, cost_model
from ktir.hardware.target import Target
from ktir.ktdp.schedule import Piece, Transfer
from ktir.ktdp.tiles import (
    Box,
)

UNITS = ("dma", "pt", "sfu", "ring")
"""The units a ktdp op is charged on (the report's busy columns, `ktir.sim.timeline.UNITS`)."""


@dataclass
class View:
    """A memory view: its memory (`global`, or core `core`'s LX), offset, sizes and strides."""

    space: str
    core: int
    offset: np.ndarray
    sizes: list[np.ndarray]
    strides: list[np.ndarray]
    dtype: np.dtype
    covers: tuple[np.ndarray, np.ndarray] | None = None
    """Its `coordinate_set` as a box: (lower, upper) per tile and dim (None: not a box)."""


@dataclass
class Tile:
    """
    An access tile: its view and the element index of each point (tiles x shape), or the
    strided `Box` they form (a direct tile on a view with the same strides on every tile).
    """

    view: View
    points: np.ndarray | None = None
    box: Box | None = None

    @property
    def indices(self) -> np.ndarray:
        """Every point's element index (tiles x shape)."""
        if self.points is None:
            self.points = cast(Box, self.box).indices()
        return self.points

    def only(self, active: np.ndarray | None) -> Tile:
        """The tile of the `active` compute tiles only (all of them for None)."""
        if active is None:
            return self
        if self.box is not None:
            box = self.box
            return Tile(self.view, box=Box(box.start[active], box.strides, box.extents, box.perm))
        return Tile(self.view, points=self.indices[active])

    @property
    def shape(self) -> tuple[int, ...]:
        """(tiles, *tile shape)."""
        if self.points is not None:
            return self.points.shape
        box = cast(Box, self.box)
        return (len(box.start), *(box.extents[p] for p in box.perm))


@dataclass
class Charges:
    """
    Cycles and work charged per tile and unit. Each op's charges are pieces of its time
    (`pending`), which the engine places on the run's timeline after the op (`Schedule`);
    the units' busy time is the timeline's.
    """

    tiles: int
    bytes: float = 0.0
    flops: float = 0.0
    matmul_flops: float = 0.0

    def __post_init__(self) -> None:
        self.footprint = accounting.StickFootprint()  # the sticks it touches: its compulsory bytes
        self.active: np.ndarray | None = None  # the tiles an op runs on (None: all of them)
        self.pending: list[Piece] = []
        self.muted = 0  # > 0 inside a routine's body: its ops are not charged (`ktir.ktdp.routines`)
        self.pattern: float | None = None  # a transport kernel's LPDDR5 rate (`ktir.ktdp.engine`)

    def _live(self) -> np.ndarray:
        return np.ones(self.tiles, dtype=bool) if self.active is None else self.active

    def take(self) -> list[Piece]:
        """The pieces charged since the last call."""
        pieces, self.pending = self.pending, []
        return pieces

    def charge(
        self,
        unit: str,
        cycles: float | np.ndarray,
        flops: float = 0.0,
        queue: str | None = None,
        matmul_flops: float = 0.0,
    ) -> None:
        """
        An op the active tiles run for `cycles` (one number, or one per tile) on `unit` (its
        `queue`: a DMA's "load" or "store"); `flops` and `matmul_flops` are all tiles' work, of
        which the active tiles' share counts.
        """
        if self.muted:
            return
        live = self._live()
        share = np.count_nonzero(live) / self.tiles
        self.flops += flops * share
        self.matmul_flops += matmul_flops * share
        self.pending.append((queue or unit, np.where(live, np.asarray(cycles, dtype=float), 0.0), None))

    def charge_ring(self, cycles: float, group: int) -> None:
        """A ring collective of the active tiles, started together by consecutive groups of `group` tiles."""
        if self.muted:
            return
        self.pending.append(("ring", np.where(self._live(), float(cycles), 0.0), group))

    def charge_transfer(self, queue: str, moved_bytes: float, target: Target) -> None:
        """
        A DMA of `moved_bytes` in all by the active tiles: a setup each, then the chip-wide
        traffic, at the sustained rate (its bytes pay the channel's read/write turnaround), or at
        the kernel's `pattern` rate, which has the turnaround folded in.
        """
        if self.muted:
            return
        live = self._live()
        self.bytes += moved_bytes
        if self.pattern is None:
            traffic = Transfer(cost_model.transfer_cycles(moved_bytes, target), moved_bytes)
        else:
            traffic = Transfer(moved_bytes / self.pattern * target.clock_hz, moved_bytes, False)
        setup = np.where(live, float(target.dma_setup_cycles), 0.0)
        self.pending.append((queue, setup, traffic))

    def charge_tiles(
        self, cycles: dict[str, np.ndarray], flops: np.ndarray, matmul_flops: np.ndarray
    ) -> None:
        """
        An op whose tiles take different cycles per unit, the units one after the other on a
        tile (PE arrays, then SFU); `flops` and `matmul_flops` per tile, the active tiles' count.
        """
        if self.muted:
            return
        live = self._live()
        for unit, per_tile in cycles.items():
            per_tile = np.broadcast_to(per_tile, (self.tiles,)).astype(float)
            self.pending.append((unit, np.where(live, per_tile, 0.0), None))
        self.flops += float(np.broadcast_to(flops, (self.tiles,))[live].sum())
        self.matmul_flops += float(np.broadcast_to(matmul_flops, (self.tiles,))[live].sum())


def sticks(shape: Sequence[int], itemsize: int, stick_bytes: int) -> int:
    """Elements of a tile shape counted in whole sticks along its last dim."""
    if not shape:
        return 1
    per = stick_bytes // itemsize
    return math.prod(shape[:-1]) * math.ceil(shape[-1] / per) * per


def element_of(value: SSAValue) -> Attribute:
    """A tensor's element type, or a scalar's type."""
    value_type = value.type
    return value_type.element_type if isinstance(value_type, TensorType) else value_type


__all__ = ["UNITS", "Charges", "Tile", "View", "element_of", "sticks"]
