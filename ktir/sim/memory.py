"""
The simulated memories and their run-time checks: every core's LX, and device-memory writes.

- `Scratchpad` holds every core's LX as buffers keyed by address (shape (cores, slots, *tile)),
  shared by the kernels so that a resident tensor one kernel stores is there for the next. An
  allocation past the usable LX or over a live buffer, and a read of a slot nothing wrote, are
  `SimulationError`s naming the kernel, the op, the core and the byte counts.
- `WriteOwners` stamps, per kernel output, which core wrote each stick: two cores writing the
  same device bytes in one kernel is an error (one int16 per 128-byte stick, not per element).
- `check_box` rejects a DMA box outside its tensor on any core.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from ktir.ir.diagnostics import ExecutionError, Location
from ktir.sim.gemm import finish_gemms
from ktir.sim.host_tiles import HostTiles


class SimulationError(ExecutionError):
    """
    The program does something the chip cannot: the message names kernel, op, core and sizes;
    `location` is the offending op's source location when the IR came from a file.
    """

    def __init__(self, message: str, location: Location | None = None) -> None:
        super().__init__(message)
        self.location = location


@dataclass
class LxBuffer:
    """
    One LX allocation on every core: data (cores, slots, *tile) and which slots hold data.

    The array is allocated on first use: a buffer whose loads are all read straight from the
    tensor (`defer`) never needs its 32 copies.
    """

    address: int
    bytes: int
    shape: tuple[int, ...]
    dtype: np.dtype
    written: np.ndarray
    resident: bool
    owner: object = None
    """The function-level value a resident buffer holds (in-place reuse passes it on)."""
    pending: dict[int, tuple[np.ndarray, np.ndarray, tuple[int, ...]]] = field(default_factory=dict)
    """Loads not copied yet, per slot: (device tensor, each core's box start, box extent)."""
    hosts: dict[int, tuple[HostTiles, np.ndarray]] = field(default_factory=dict)
    """
    Slots held as host tiles instead of in `data`, per slot: (their map, the host tiles). A
    matmul's fp32 accumulator stays in the form its GEMMs add to while the chunks of its K loop
    run, and goes back to the device layout once, when anything else reads the buffer.
    """
    seen: dict[int, tuple[HostTiles, str, np.ndarray]] = field(default_factory=dict)
    """
    Host tiles of a slot as last read (`read_host`), per slot: their map, the type asked for
    (its `dtype.str`, "" for the buffer's own) and the tiles. A tile loaded once and read by
    every chunk (attention's keys) is converted once. Dropped whenever the slot may change:
    every write goes through `data`, `slot`, `zero`, `defer` or `host_slot`.
    """
    _data: np.ndarray | None = None

    @property
    def data(self) -> np.ndarray:
        """Every core's bytes of the buffer, (cores, slots, *tile), host-held slots written back."""
        self._settle()
        for slot in list(self.hosts):
            self._write_back(slot)
        self.seen.clear()
        return self._array()

    def _settle(self) -> None:
        """Wait for a matmul's GEMMs still adding to a host-held slot (`gemm.matmul_f32`'s background)."""
        if self.hosts:
            finish_gemms()

    def _array(self) -> np.ndarray:
        """The buffer's array as it is (host-held slots not written back), allocated on first use."""
        if self._data is None:
            self._data = np.zeros(self.shape, self.dtype)
        return self._data

    def _write_back(self, slot: int) -> None:
        """A host-held slot written to the device layout (and no longer held)."""
        if (held := self.hosts.pop(slot, None)) is not None:
            tiles, host = held
            tiles.to_device(host, self._array()[:, slot])

    def host_slot(self, slot: int, tiles: HostTiles) -> np.ndarray:
        """
        The slot's data as host tiles of `tiles` (cores, *host box), in the buffer's type, to
        update in place: it stays in that form, instead of in `data`, until the slot is read
        another way (`slot`, `data`).

        The held tiles are returned while matmul GEMMs may still be adding to them: the caller
        adds in place too, after those (`ktir.sim.gemm.matmul_f32`'s background calls queue
        behind the running ones). Any other form of the slot waits for them first.
        """
        held = self.hosts.get(slot)
        if held is not None and held[0].same_positions(tiles):
            return held[1]
        self._settle()
        host = tiles.to_host(self.slot(slot), self.dtype)
        self.hosts[slot] = (tiles, host)
        return host

    def read_host(self, slot: int, tiles: HostTiles, dtype: np.dtype | None = None) -> np.ndarray:
        """
        The slot's data as host tiles of `tiles` (cores, *host box), to read only, in `dtype`
        (default: the buffer's): the host-held form if the slot has one for these boxes, else
        the tiles of the last read of the same boxes in the same type if nothing wrote the slot
        since, else converted now.
        """
        self._settle()
        held = self.hosts.get(slot)
        if held is not None and held[0].same_positions(tiles):
            return held[1] if dtype is None else held[1].astype(dtype)
        # The type as text: NumPy's == reads None as float64 when it compares it with a dtype.
        kind = "" if dtype is None else np.dtype(dtype).str
        seen = self.seen.get(slot)
        if seen is not None and seen[1] == kind and seen[0].same_positions(tiles):
            return seen[2]
        host = tiles.to_host(self.slot(slot), dtype)
        self.seen[slot] = (tiles, kind, host)
        return host

    def zero(self, slot: int) -> None:
        """Zero the slot on every core (a fill): a host-held copy of it is dropped, not written back."""
        self._settle()
        self.hosts.pop(slot, None)
        self.pending.pop(slot, None)
        self.seen.pop(slot, None)
        self._array()[:, slot] = 0

    def defer(self, slot: int, memory: np.ndarray, first: np.ndarray, extent: tuple[int, ...]) -> None:
        """
        Record a load of each core's box of `memory` into `slot` without copying it yet: a
        matmul reads shared weight tiles straight from the tensor, once per distinct box,
        instead of from 32 copies. Device tensors do not change while a kernel runs.
        """
        self._settle()
        self.hosts.pop(slot, None)  # the load replaces the slot's bytes
        self.seen.pop(slot, None)
        self.pending[slot] = (memory, first, extent)

    def slot(self, slot: int) -> np.ndarray:
        """The slot's data on every core (cores, *tile), copying a deferred load in first."""
        self._settle()
        self._write_back(slot)
        self.seen.pop(slot, None)  # the caller may write it
        array = self._array()
        if (load := self.pending.pop(slot, None)) is not None:
            memory, first, extent = load
            for c, start in enumerate(first):
                box = tuple(slice(int(s), int(s) + e) for s, e in zip(start, extent, strict=True))
                array[c, slot] = memory[box]
        return array[:, slot]

    @property
    def end(self) -> int:
        """First byte past the allocation."""
        return self.address + self.bytes


class Scratchpad:
    """The LX of all cores: resident tensors live across kernels, staging buffers per kernel."""

    def __init__(self, usable_bytes: int) -> None:
        self.usable = usable_bytes
        self.buffers: dict[int, LxBuffer] = {}

    def allocate(
        self, address: int, size: int, shape: tuple[int, ...], dtype: np.dtype, resident: bool, where: str
    ) -> LxBuffer:
        """
        The buffer of `size` device bytes per core at `address`, held as (cores, slots, *tile)
        elements of `dtype` (the host type: an i64 tensor lives as int32 on the device); a
        resident buffer that is live is reused. `where` locates errors.
        """
        existing = self.buffers.get(address)
        if resident and existing is not None and existing.shape == shape:
            return existing
        cores = shape[0]
        if address + size > self.usable:
            raise SimulationError(
                f"{where}: LX capacity exceeded on cores 0-{cores - 1}: {size} bytes at address "
                f"{address} end at {address + size} > {self.usable} usable bytes"
            )
        for other in self.buffers.values():
            if other.address != address and other.address < address + size and address < other.end:
                raise SimulationError(
                    f"{where}: LX bytes [{address}, {address + size}) overlap the live buffer "
                    f"[{other.address}, {other.end}) on cores 0-{cores - 1}"
                )
        buffer = LxBuffer(address, size, shape, dtype, np.zeros(shape[:2], bool), resident)
        self.buffers[address] = buffer
        return buffer

    def live_bytes(self, cores: int) -> np.ndarray:
        """The LX bytes allocated on each of `cores` cores now."""
        return self.sum_bytes(self.buffers.values(), cores)

    @staticmethod
    def sum_bytes(buffers: Iterable[LxBuffer], cores: int) -> np.ndarray:
        """The bytes `buffers` take on each of `cores` cores (a buffer lives on its first cores)."""
        total = np.zeros(cores)
        for buffer in buffers:
            total[: buffer.shape[0]] += buffer.bytes
        return total

    def end_kernel(self) -> None:
        """Drop the kernel's staging buffers; resident tensors stay (without their read tiles)."""
        self.buffers = {a: b for a, b in self.buffers.items() if b.resident}
        for buffer in self.buffers.values():
            buffer.seen.clear()

    def hold(self, address: int, value: object) -> None:
        """Record that the resident buffer at `address` now holds `value`."""
        if (buffer := self.buffers.get(address)) is not None:
            buffer.owner = value

    def release(self, address: int, value: object) -> None:
        """Free the resident buffer at `address` after the last use of `value`, if it still holds it."""
        if (buffer := self.buffers.get(address)) is not None and buffer.owner is value:
            del self.buffers[address]


def check_written(buffer: LxBuffer, slot: int, cores: np.ndarray, where: str) -> None:
    """Raise unless every core in `cores` has data in `slot` of `buffer`."""
    missing = cores[~buffer.written[cores, slot]]
    if missing.size:
        raise SimulationError(
            f"{where}: core {int(missing[0])} reads LX bytes [{buffer.address}, {buffer.end}) "
            f"slot {slot}, which nothing has written"
        )


def check_box(
    first: np.ndarray, extent: tuple[int, ...], size: tuple[int, ...], what: str, where: str
) -> None:
    """Raise unless every core's box `first` (cores x rank) + `extent` lies inside `size`."""
    last = first + np.asarray(extent)
    bad = np.flatnonzero(np.any((first < 0) | (last > np.asarray(size)), axis=1))
    if bad.size:
        core = int(bad[0])
        raise SimulationError(
            f"{where}: DMA out of bounds on core {core}: box {first[core].tolist()} + {list(extent)} "
            f"does not fit {what} of size {list(size)}"
        )


class WriteOwners:
    """Which core wrote each stick of one kernel output (-1: none yet)."""

    def __init__(self, device_size: tuple[int, ...]) -> None:
        self.owner = np.full(device_size[:-1] or (1,), -1, dtype=np.int16)

    def stamp(self, core: int, box: tuple[slice, ...], where: str) -> None:
        """Record `core` writing the sticks of `box`; raise if another core wrote one already."""
        sticks = self.owner[box[:-1]] if len(box) > 1 else self.owner
        others = sticks[(sticks >= 0) & (sticks != core)]
        if others.size:
            raise SimulationError(
                f"{where}: cores {int(others[0])} and {core} both write device bytes of the output "
                f"box {[(s.start, s.stop) for s in box]} in one kernel"
            )
        sticks[...] = core
