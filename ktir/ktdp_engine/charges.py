"""
What a ktdp program is charged as it runs on every tile at once: the cycles per tile and unit
(pieces the engine places on the run's timeline), the bytes moved, the FLOPs, and the sticks it
touches (its compulsory bytes).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ktir.hardware import accounting, cost_model
from ktir.hardware.target import Target
from ktir.ktdp_engine.schedule import Piece, Transfer
from ktir.layout.dtypes import HOST_TO_DEVICE_DTYPE


def device_itemsize(dtype: np.dtype) -> int:
    """
    Bytes an element of `dtype` takes in the device's sticks, by which its DMAs and SFU passes
    are charged, as ktir charges its own tensors (`ktir.layout.dtypes`): the NumPy storage's
    itemsize but for an int64, which the device holds as int32 (4 bytes, 32 a stick), and a
    bool, held as fp16 (2 bytes). A memory view's layout (its strides) counts sticks so too.
    """
    device = HOST_TO_DEVICE_DTYPE.get(dtype.name)
    return device.element_bytes if device is not None and dtype.kind in "ib" else dtype.itemsize


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
        self.muted = 0  # > 0 inside a routine's body: its ops are not charged (`ktir.ktdp_engine.routines`)
        self.pattern: float | None = None  # a transport kernel's LPDDR5 rate (`ktir.ktdp_engine.engine`)

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


__all__ = ["Charges", "device_itemsize"]
