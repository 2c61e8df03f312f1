"""
What a core-level kernel's LX buffers hold in its built `ktdp` program (`ktir.export.to_ktdp`):
the host tile a load or compute last wrote, a core's whole slice that each chunk's compute
reads a window of, and accumulators (an `lx_fill`, the matmul chunks added into it, its ring
reduction: `ktir.export.to_ktdp.accumulate`).

Example: a whole slice of 32 x 4096 loaded once, read by the matmul of K chunk `k` as
`tensor.extract_slice %t2[0, %s] [32, 1024] [1, 1]`, `%s` the chunk's entry of a table of
window offsets (0, 1024, 2048, 3072).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from xdsl.dialects import tensor
from xdsl.dialects.builtin import DenseArrayBase, FloatAttr, IntegerAttr, MemRefType, i64
from xdsl.ir import Block, Operation, SSAValue

from ktir.dialects.ktdp import BUFFER_ATTRIBUTE
from ktir.dialects.ktir import core
from ktir.dialects.ktir import structured as st
from ktir.export.to_ktdp.accumulate import accumulated_matmul, ring_reduced
from ktir.export.to_ktdp.emitter import Emitter, HostTensor
from ktir.export.to_ktdp.loops import Chunk, Key, Parity, offset
from ktir.export.to_ktdp.structured import filled
from ktir.export.to_ktdp.tensors import extract_slice
from ktir.ir.diagnostics import op_error
from ktir.sim.host_tiles import HostTiles


@dataclass(frozen=True)
class WholeSlice:
    """A tile as a whole-slice load moves it: one box from the core's start over every chunk's."""

    extent_array: np.ndarray
    starts_array: np.ndarray
    chunk_starts_array: np.ndarray

    @classmethod
    def of(cls, tile: Any) -> WholeSlice:
        """The whole slice of a kernel tile (`TileAttr.whole_extent`)."""
        starts = tile.starts_array
        return cls(np.array(tile.whole_extent), starts, np.zeros((1, starts.shape[1]), dtype=starts.dtype))


_VIEWS = (tensor.CollapseShapeOp, tensor.ExpandShapeOp, tensor.ExtractSliceOp, tensor.InsertSliceOp)
"""Ops that move no data: their result lives in their operands' buffers, not one of its own."""


def name_buffer(made: Operation | Block, buffer: SSAValue, accumulator: bool = False) -> None:
    """
    Name ktir's LX buffer on the op that makes the tensor ktir writes into it (`ktir.buffer`:
    its address and slots), so that the engine gives the tensor the slots ktir gives it: a
    load's or a compute's buffer of several slots (the next chunk loads, or computes, into the
    other slot while this one's is read), whatever else the loop holds, and an accumulator's
    of any (its zero and its ring reduction write it in place: the next output tile's zero
    waits for this one's store). A view, or another buffer of one slot, is left as it is.
    """
    slots = cast(MemRefType, buffer.type).get_shape()[0]
    allocation = buffer.owner
    if (slots < 2 and not accumulator) or not isinstance(made, Operation) or isinstance(made, _VIEWS):
        return
    if isinstance(allocation, core.LxAllocOp):
        address = allocation.address.value.data
        made.attributes[BUFFER_ATTRIBUTE] = DenseArrayBase.from_list(i64, [address, slots])


class BufferWriting:
    """
    The buffer-reading and accumulator methods of a kernel's conversion (module docstring);
    the conversion (`ktir.export.to_ktdp.kernels.KernelConversion`) gives the state below and
    `_host_map`, `_chunk_hosts`, `_slice` and `_table`.
    """

    kernel: core.KernelOp
    cores: int
    emitter: Emitter
    tiles: list[Any]
    buffers: dict[tuple[SSAValue, int | None], HostTensor]
    accumulators: dict[Key, HostTensor]
    index: dict[SSAValue, Any]
    accumulating: dict[SSAValue, core.ComputeOp]
    wholes: dict[SSAValue, HostTiles]

    if TYPE_CHECKING:  # the conversion's methods this class calls

        def _host_map(
            self, op: Operation, tile_index: int, chunk: Chunk
        ) -> tuple[HostTiles, tuple[int, ...]]: ...
        def _chunk_hosts(self, op: Operation, tile_index: int, chunk: Chunk) -> list[HostTiles]: ...
        def _slice(self, value: HostTensor, held: tuple[int, ...]) -> HostTensor: ...
        def _table(self, column: np.ndarray, variable: SSAValue) -> SSAValue: ...

    def _slot(self, buffer: SSAValue, slot: SSAValue | None, op: Operation) -> Key:
        """
        An accumulator's key: its buffer and slot (0 of a one-slot buffer; of two, alternating
        between output tiles, the slot must be a constant: one written per output tile).
        """
        if cast(MemRefType, buffer.type).get_shape()[0] == 1 or slot is None:
            return buffer, 0
        known = self.index.get(slot)
        if not isinstance(known, int | Parity):
            raise op_error(
                op, "an accumulator slot that is not a constant or a loop's parity is not written yet"
            )
        return buffer, known

    def _read(
        self, buffer: SSAValue, slot: SSAValue, op: Operation, tile_index: int, chunk: Chunk
    ) -> HostTensor | None:
        """
        The host tile a buffer holds: what a load or compute last wrote to it, or an
        accumulator's tile less its padding (the host box of `tile_index`); None if nothing did.
        """
        if buffer in self.accumulating:
            key = self._slot(buffer, slot, op)
            if key not in self.accumulators:
                return None
            return self._slice(self.accumulators[key], self._host_map(op, tile_index, chunk)[1])
        held = self.buffers.get(self._held(buffer, slot)) or self.buffers.get((buffer, None))
        if buffer in self.wholes and held is not None:
            return self._window(held, self.wholes[buffer], op, tile_index, chunk)
        return held

    def _held(self, buffer: SSAValue, slot: SSAValue) -> tuple[SSAValue, int | None]:
        """
        Where the tile a buffer's slot holds is kept: by the slot when it is a constant (two
        prefetched tiles live in the two slots at once), else (a slot that changes in a loop,
        loaded and read in the same iteration) by the buffer; a one-slot buffer's is slot 0.
        """
        if cast(MemRefType, buffer.type).get_shape()[0] == 1:
            return buffer, 0
        known = self.index.get(slot)
        return buffer, known if isinstance(known, int) else None

    def _window(
        self, whole: HostTensor, slice_map: HostTiles, op: Operation, tile_index: int, chunk: Chunk
    ) -> HostTensor:
        """
        Chunk `chunk`'s window of a core's whole slice (`ktir.dma_load ... whole`): a
        `tensor.extract_slice` at the chunk's host start less the slice's, the same on every
        core, an offset linear in the chunk loop's variable (`loops.offset`).
        """
        host, held = self._host_map(op, tile_index, chunk)
        columns = []
        for at in self._chunk_hosts(op, tile_index, chunk):
            moved = at.lo - slice_map.lo
            if (moved != moved[0]).any() or host.perm != slice_map.perm:
                raise op_error(
                    op, f"tile {tile_index}'s chunks are not one window of the whole slice on every core"
                )
            columns.append(moved[0])
        offsets = [self._offset(np.array([c[d] for c in columns]), chunk) for d in range(len(held))]
        return extract_slice(self.emitter, whole, offsets, held)

    def _offset(self, values: np.ndarray, chunk: Chunk) -> int | SSAValue:
        """An index that is `values[i]` at chunk `chunk.values[i]`: linear in it, else a table's entry."""
        linear = offset(self.emitter, values, chunk)
        if linear is not None:
            return linear
        column = np.zeros(max(chunk.values) + 1, dtype=np.int64)
        column[list(chunk.values)] = values
        return self._table(column, cast(SSAValue, chunk.value))

    def _fill(self, op: core.FillOp) -> None:
        """An accumulator's zero: a fill of its output tile's host box in whole sticks."""
        compute = self.accumulating.get(op.buffer)
        if compute is None:
            raise op_error(op, "it fills a buffer no accumulating compute adds into: not written yet")
        host, _ = self._host_map(compute, int(compute.tiles.get_values()[-1]), Chunk(None, (0,)))
        element = cast(MemRefType, op.buffer.type).element_type
        value = float(cast(IntegerAttr | FloatAttr, op.value).value.data)  # an integer or float attribute
        zero = filled(self.emitter, tuple(host.extent), element, value)
        name_buffer(zero.value.owner, op.buffer, accumulator=True)
        self.accumulators[self._slot(op.buffer, op.slot, op)] = zero

    def _ring_reduce(self, op: core.RingReduceOp) -> None:
        """The K partners' partial sums combined on the ring into each group's first core."""
        key = self._slot(op.buffer, op.slot, op)
        acc = self.accumulators.get(key)
        if acc is None:
            raise op_error(op, "it reduces a buffer no accumulating compute wrote")
        group, combine = op.group.value.data, op.combine.data
        reduced = ring_reduced(self.emitter, op, acc, group, self.cores, combine)
        name_buffer(reduced.value.owner, op.buffer, accumulator=True)
        self.accumulators[key] = reduced

    def _accumulate(
        self, op: core.ComputeOp, payload: Operation, operands: list[HostTensor], chunk: Chunk
    ) -> None:
        """A matmul chunk added to its accumulator (`accumulate.accumulated_matmul`)."""
        if not isinstance(payload, st.MatmulOp | st.BmmOp) or len(operands) != 2:
            raise op_error(op, "accumulating computes other than a matmul chunk are not written yet")
        key = self._slot(op.outs[0], op.into, op)
        acc = self.accumulators.get(key)
        if acc is None:
            raise op_error(op, "it accumulates into a buffer no lx_fill zeroed")
        k_sticks = self._host_map(op, int(op.tiles.get_values()[0]), chunk)[0].extent[-1]
        x, y = operands
        self.accumulators[key] = accumulated_matmul(self.emitter, payload, x, y, acc, k_sticks)


__all__ = ["BufferWriting", "WholeSlice", "name_buffer"]
