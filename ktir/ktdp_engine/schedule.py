"""
When a ktdp program's ops run: every tile issues its ops in program order onto its units, as
ktir's own kernels run (`ktir.sim.timeline.Timeline`, one core per tile).

- Queues: `ktdp.load` on the DMA unit's load queue and `ktdp.store` on its store queue, both
  sharing the chip's LPDDR5 channel (a DMA setup per tile, then the chip-wide traffic);
  `linalg.matmul` on the PE arrays; other compute on the SFU; an inter-tile reduction on the
  ring, each group of tiles starting together (consecutive groups of g tiles, as ktir's
  `ring_reduce`, when the producers form them; else every tile). An op starts when its queue is free and its
  operands are ready.
- Tensors live in LX buffers. Each time a tensor value is made (a loop's iterations) it takes
  the next of its buffers in turn: the next slot of ktir's LX buffer its op names
  (`ktir.buffer`: a chunk loop's loads and computes as `ktir-emit-ktdp` writes them, every
  tensor made into that buffer taking its slots in turn), else the next of its own `buffers`
  (2: double buffering, when the loops' tensors fit twice in LX;
  `ktir.ktdp_engine.lx_capacity.buffers_per_loop_tensor`), as ktir's planner gives a chunk loop;
  an op waits for the op that writes each tensor it reads, and a write waits until the buffer's
  earlier readers are done. An accumulating matmul's result stays in its accumulator's buffer
  (`outs`, destination passing), as ktir's PE arrays add each chunk into the output tile's
  slot: two accumulators alternating over a loop's output tiles keep their two buffers. Ops
  that move no data (reshapes, slices, inserts) cost nothing:
  their result is a view of the buffers of its operands, ready when they all are, and reading
  it reads them all.
- Device memory orders a load after an earlier store to the same placed array, and a store
  after earlier loads and stores of it (`Access`).

So a chunk loop's next loads run while the previous chunk computes and stores, and a program
without loops runs op after op. Example: two chunks, each loading for 560 cycles, computing
for 214 and storing for 560: the second chunk's loads start when the first chunk's end, not
after its store, and the function ends 560 cycles after its second compute.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from xdsl.dialects.builtin import DenseArrayBase, TensorType
from xdsl.ir import Operation, SSAValue

from ktir.dialects.ktdp import BUFFER_ATTRIBUTE
from ktir.sim.timeline import Slot, Timeline


class Transfer(NamedTuple):
    """
    A DMA's chip-wide traffic: its cycles on the LPDDR5 channel, its bytes, and whether they pay
    the read/write turnaround (False: a pattern's rate with it folded in, `ktir.ktdp_engine.patterns`).
    """

    cycles: float
    bytes: float
    turnaround: bool = True


Piece = tuple[str, np.ndarray, Transfer | int | None]
"""
Part of an op's time: (queue, cycles per tile or a DMA's setup per tile, a DMA's traffic or a
ring collective's group size).
"""


ACCUMULATING = frozenset({"linalg.matmul", "linalg.batch_matmul"})
"""Ops whose result is their last operand (`outs`) with their product added: it stays in its buffer."""


@dataclass(frozen=True)
class Access:
    """A load's or store's use of device memory: the placed array (or memory) it reaches."""

    key: Hashable
    write: bool


@dataclass
class Schedule:
    """The timeline of a run and the LX buffer of each tensor value (module docstring)."""

    tiles: int
    buffers: int = 1
    turnaround_cycles_per_byte: float = 0.0
    """The LPDDR5 channel's read/write turnaround (`ktir.sim.timeline.Channel`)."""
    timeline: Timeline = field(init=False)
    slots: dict[SSAValue, Slot] = field(default_factory=dict)
    covers: dict[Slot, tuple[Slot, ...]] = field(default_factory=dict)
    """The buffers a view's data lives in (an `insert_slice`: its source's and its dest's)."""
    definitions: dict[Hashable, int] = field(default_factory=dict)
    """How often each tensor value (or ktir buffer, `_buffer`) was made: its next slot is the next in turn."""
    accesses: list[Access] = field(default_factory=list)
    """The device memory the running op reaches."""
    collecting: int = 0
    """> 0 inside a fused payload (or a reduce's combiner), whose ops' time is the op's."""

    def __post_init__(self) -> None:
        self.timeline = Timeline(self.tiles, 0.0, None, self.turnaround_cycles_per_byte)

    def alias(self, values: Sequence[SSAValue], to: Sequence[SSAValue]) -> None:
        """`values` (block arguments, loop results) are the tensors `to`: the same buffers."""
        for value, other in zip(values, to, strict=True):
            if other in self.slots:
                self.slots[value] = self.slots[other]

    def issue(self, op: Operation, pieces: list[Piece]) -> None:
        """Place an op that ran on the timeline: its pieces in order, or a free view."""
        reads = self._covered([self.slots[v] for v in op.operands if v in self.slots])
        if not pieces and not self.accesses and not reads:
            return  # index arithmetic, constants, views and tiles: nothing to wait for
        accesses, self.accesses = self.accesses, []
        reads += [("memory", a.key) for a in accesses if not a.write]
        if not pieces:  # its results (an element `tensor.extract` reads too) wait for its operands
            self._view(reads, list(op.results))
            return
        tensors = [r for r in op.results if isinstance(r.type, TensorType)]
        buffer = self._buffer(op)
        writes = [self._in_place(op, r) or self._define(r, buffer) for r in tensors]
        writes += [("memory", a.key) for a in accesses if a.write]
        line = self.timeline
        for k, (queue, cycles, chip) in enumerate(pieces):
            after = reads if k == 0 else [*reads, *writes]  # a later piece uses the earlier's result
            if queue == "ring":
                group = chip if isinstance(chip, int) else self.tiles
                line.issue_group(queue, [*after, *writes], cycles, group, op.name)
            elif chip is None or isinstance(chip, int):
                line.issue(queue, after, writes, cycles, op.name)
            else:
                line.transfer(queue, after, writes, cycles, chip.cycles, op.name, chip.bytes, chip.turnaround)

    def _in_place(self, op: Operation, value: SSAValue) -> Slot | None:
        """
        The buffer of an accumulating matmul's result: its accumulator's (`outs`, destination
        passing), as ktir's PE arrays add a chunk into the output tile's LX slot; None for
        other ops, or an accumulator without a buffer (a `tensor.empty`, a constant).
        """
        if op.name not in ACCUMULATING:
            return None
        slot = self.slots.get(op.operands[-1])
        if slot is not None:
            self.slots[value] = slot
        return slot

    def _buffer(self, op: Operation) -> tuple[Hashable, int]:
        """
        The buffer `op`'s tensors land in and its slots: ktir's LX buffer the op names
        (`ktir.buffer`: its address and slots), else the tensor's own of the function's `buffers`.
        """
        named = op.attributes.get(BUFFER_ATTRIBUTE)
        if named is None:
            return None, self.buffers
        values = named.get_values() if isinstance(named, DenseArrayBase) else ()
        if len(values) != 2 or not isinstance(values[1], int) or values[1] < 1:
            raise ValueError(f"'{BUFFER_ATTRIBUTE}' must be array<i64: address, slots> with slots >= 1")
        return ("lx", values[0]), values[1]

    def _define(self, value: SSAValue, buffer: tuple[Hashable, int]) -> Slot:
        """
        A new buffer for `value`: each time it is made (a loop's iterations), the next slot in
        turn, of its own or of the named buffer it lands in (`_buffer`, the key not None).
        """
        key, slots = buffer
        key = value if key is None else key
        count = self.definitions.get(key, 0)
        self.definitions[key] = count + 1
        slot = (key, count % slots)
        self.slots[value] = slot
        return slot

    def _covered(self, slots: list[Slot]) -> list[Slot]:
        """`slots` and the buffers of the views among them."""
        return [*slots, *(c for s in slots for c in self.covers.get(s, ()))]

    def _view(self, reads: list[Slot], tensors: list[SSAValue]) -> None:
        """
        Results that move no data: a view of the buffers it reads (reading it reads them all,
        so none is overwritten while it is read), ready when all of them are written.
        """
        if not reads:
            return
        ready = self.timeline.written
        when = [ready[s] for s in reads if s in ready]
        for result in tensors:
            slot = self._define(result, (None, self.buffers))
            self.covers[slot] = tuple(dict.fromkeys(reads))
            if when:
                ready[slot] = np.maximum.reduce(when)

    @property
    def end(self) -> float:
        """The cycle the last tile finishes."""
        return self.timeline.end


__all__ = ["Access", "Piece", "Schedule", "Transfer"]
