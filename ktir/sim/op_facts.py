"""
What a kernel's ops need at every chunk that is the same at every chunk, worked out once per op.

The simulator runs a kernel's region once per chunk (a 4096^3 matmul: 512 chunks of two loads
and a compute). Decoding the same attributes again each time (a tile's dense arrays, an
element type's device format, the compute's tile list) cost more main-thread time than the
NumPy work of a chunk; `OpFacts` keeps them per kernel, keyed by op.

- `TileFacts`: a `#ktir.tile`'s extent, starts and chunk starts as arrays, its tensor's device
  size, and which chunks' boxes lie inside a given size (`fitting_chunks`, one NumPy call for
  every chunk instead of a bounds check per chunk).
- `DmaFacts`: a `ktir.dma_load` / `ktir.dma_store`'s operands, tile, cores and labels.
- `ComputeFacts`: a `ktir.compute`'s payload, tiles and the matmul precision facts of its charge.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Attribute, Operation, SSAValue

from ktir.dialects.ktir import core
from ktir.dialects.ktir import structured as st
from ktir.dialects.ktir.attributes import TileAttr, device_dtype_of_element
from ktir.hardware import cost_model
from ktir.ir.values import element_type_of, tensor_layout
from ktir.layout.spyre import SpyreTensorLayout


def fitting_chunks(
    starts: np.ndarray, chunk_starts: np.ndarray, extent: tuple[int, ...], size: tuple[int, ...]
) -> np.ndarray:
    """
    Per chunk, True if every core's box (`starts` (cores x rank) + the chunk's start, of
    `extent`) lies inside `size`: what `ktir.sim.memory.check_box` accepts, for all chunks at once.
    """
    first = starts[None] + chunk_starts[:, None]  # (chunks, cores, rank)
    outside = (first < 0) | (first + np.asarray(extent) > np.asarray(size))
    return np.logical_not(outside.any(axis=(1, 2)))


@dataclass
class TileFacts:
    """A kernel tile's arrays, decoded once (`TileAttr` decodes its dense arrays on every access)."""

    extent: tuple[int, ...]
    starts: np.ndarray
    """(cores, rank) box starts."""
    chunk_starts: np.ndarray
    """(chunks, rank) offsets of each chunk's box."""
    elements: int
    """Device positions in one box."""
    raw_extent: tuple[Any, ...]
    """`extent` as NumPy integers, as `HostTiles.of` has always been given it."""
    value_type: Attribute
    """The type of the kernel argument the tile is a box of."""
    _layout: tuple[SpyreTensorLayout, tuple[int, ...], np.dtype[Any]] | None = None
    _fitting: dict[tuple[bool, tuple[int, ...]], np.ndarray] = field(default_factory=dict)

    @staticmethod
    def of(tile: TileAttr, value_type: Attribute) -> TileFacts:
        """The facts of `tile`, a box of a kernel argument of type `value_type`."""
        extent = tuple(int(e) for e in tile.extent_array)
        raw = tuple(tile.extent_array)
        starts, chunk_starts = tile.starts_array, tile.chunk_starts_array
        return TileFacts(extent, starts, chunk_starts, math.prod(extent), raw, value_type)

    @property
    def layout(self) -> tuple[SpyreTensorLayout, tuple[int, ...], np.dtype[Any]]:
        """The tile's tensor's `tensor_layout` (decoded on first use: a resident buffer has none)."""
        if self._layout is None:
            self._layout = tensor_layout(self.value_type)
        return self._layout

    @property
    def device_size(self) -> tuple[int, ...]:
        """The device size of the tile's tensor."""
        return tuple(self.layout[0].device_size)

    def first(self, chunk: int) -> np.ndarray:
        """Each core's box start at chunk `chunk` (cores x rank)."""
        return self.starts + self.chunk_starts[chunk]

    def window(self, chunk: int) -> tuple[slice, ...]:
        """Chunk `chunk`'s box inside a buffer holding the core's whole slice (`TileAttr.window`)."""
        first = self.chunk_starts[chunk]
        return tuple(slice(int(s), int(s) + e) for s, e in zip(first, self.extent, strict=True))

    def fits(self, chunk: int, size: tuple[int, ...], from_zero: bool = False) -> bool:
        """
        True if every core's box at `chunk` lies inside `size` (`fitting_chunks`, computed once
        per size); with `from_zero`, boxes that start at the chunk's offset alone (a resident
        buffer holds only the core's own slice). False also sends a chunk index past the
        tile's chunks to the caller's own check.
        """
        key = (from_zero, size)
        if (fitting := self._fitting.get(key)) is None:
            starts = np.zeros_like(self.starts) if from_zero else self.starts
            fitting = self._fitting[key] = fitting_chunks(starts, self.chunk_starts, self.extent, size)
        return 0 <= chunk < len(fitting) and bool(fitting[chunk])


@dataclass(frozen=True)
class DmaFacts:
    """A DMA op's facts that do not change between chunks."""

    tile: int
    load: bool
    memory: SSAValue
    """The device tensor or resident buffer side."""
    lx: SSAValue
    """The LX staging buffer side."""
    resident: bool
    whole: bool
    """A load of the core's whole slice at once (`ktir.dma_load ... whole`)."""
    element: Attribute
    itemsize: int
    """Device bytes per element."""
    writers: int
    """Every `writers`-th core stores (1: all)."""
    where: str
    label: str
    """The timeline label: `load tile 0`, `store tile 2`."""

    @staticmethod
    def of(op: core.DmaLoadOp | core.DmaStoreOp, located: str) -> DmaFacts:
        """The facts of `op`; `located` names the kernel and op for errors."""
        load = isinstance(op, core.DmaLoadOp)
        memory, lx = (op.source, op.target) if load else (op.target, op.source)
        element = element_type_of(memory)
        tile = op.tile.value.data
        writers = op.writers.value.data if isinstance(op, core.DmaStoreOp) and op.writers is not None else 1
        return DmaFacts(
            tile=tile,
            load=load,
            memory=memory,
            lx=lx,
            resident=isinstance(memory.type, MemRefType),
            whole=load and op.whole is not None,
            element=element,
            itemsize=device_dtype_of_element(element).element_bytes,
            writers=writers,
            where=f"{located} tile {tile}",
            label=f"{'load' if load else 'store'} tile {tile}",
        )


@dataclass(frozen=True)
class ComputeFacts:
    """A compute op's facts that do not change between chunks."""

    payload: Operation
    tiles: tuple[int, ...]
    ins: tuple[SSAValue, ...]
    outs: tuple[SSAValue, ...]
    into: SSAValue | None
    """The accumulator's slot index (`ComputeOp.into`), if any."""
    chunk: SSAValue
    slot: SSAValue
    unit: str
    converts_to_fp16: bool
    """A matmul whose operands the SFU converts to fp16 first (`cost_model.converts_to_fp16`)."""
    precision: str
    """A matmul's PE-array precision (`cost_model.pe_precision`); "" for other payloads."""

    @staticmethod
    def of(op: core.ComputeOp) -> ComputeFacts:
        """The facts of `op`."""
        payload = op.payload.block.first_op
        assert payload is not None
        matmul = isinstance(payload, st.MatmulBase)
        element = element_type_of(payload.x) if isinstance(payload, st.MatmulBase) else None
        return ComputeFacts(
            payload=payload,
            tiles=tuple(int(t) for t in op.tiles.get_values()),
            ins=tuple(op.ins),
            outs=tuple(op.outs),
            into=op.into,
            chunk=op.chunk,
            slot=op.slot,
            unit=op.unit.data,
            converts_to_fp16=matmul and cost_model.converts_to_fp16(element),
            precision=cost_model.pe_precision(element) if matmul else "",
        )

    def accumulator_slot(self, env: Mapping[SSAValue, Any]) -> int:
        """The output slot an accumulating compute adds into (`ComputeOp.accumulator_slot`)."""
        return 0 if self.into is None else int(env[self.into])
