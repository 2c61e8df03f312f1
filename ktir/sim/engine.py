"""
The simulator's kernel engine: numerics of every core plus its timeline.

`SimKernel` runs a `ktir.kernel` region once for all cores in lockstep, like the functional
executor it extends, and at every op

- moves or computes the data with NumPy for all cores at once where the tiles allow it
  (`ktir.sim.host_tiles`): elementwise ops on same-layout tiles run on the device tiles directly,
  matmul is one batched fp32 matmul over cores, other ops map device tiles to host tiles with
  one transpose and run the reference implementation per core; anything else goes through the
  executor's per-core placement;
- checks it (`ktir.sim.memory`): LX capacity and overlap, DMA bounds, reads of unwritten LX,
  two cores writing the same device bytes;
- charges it on the core's units (`ktir.sim.timeline`) with `ktir.hardware.cost_model`.
"""

from __future__ import annotations

import math
from typing import Any, cast

import numpy as np
from xdsl.dialects.builtin import IntegerAttr, MemRefType, TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from ktir.cores.prefetch import block_operands
from ktir.dialects.ktir import core
from ktir.dialects.ktir import elementwise as ew
from ktir.dialects.ktir import structured as st
from ktir.dialects.ktir.attributes import device_dtype_of_element
from ktir.hardware import accounting, cost_model
from ktir.hardware.target import Target
from ktir.ir.diagnostics import ExecutionError, location_of
from ktir.ir.interpreter import impl
from ktir.ir.values import element_type_of, layout_of_type, tensor_layout
from ktir.layout.dtypes import numpy_dtype
from ktir.reference.executor import IMPLEMENTATIONS
from ktir.reference.precision import store
from ktir.sim.compute import (
    ELEMENTWISE,
    attention_at_once,
    fused_at_once,
    fused_cost,
    fused_rows_at_once,
    rows_at_once,
)
from ktir.sim.executor import KernelInterpreter, attention_tile, tile_result
from ktir.sim.fused_execution import Trace, fp32_matmul, run_fused
from ktir.sim.gemm import drop_gemms, finish_gemms, matmul_f32
from ktir.sim.host_tiles import HostTiles
from ktir.sim.memory import (
    LxBuffer,
    Scratchpad,
    SimulationError,
    WriteOwners,
    check_box,
    check_written,
)
from ktir.sim.op_facts import ComputeFacts, DmaFacts, TileFacts
from ktir.sim.patterns import access_pattern
from ktir.sim.report import KernelReport
from ktir.sim.timeline import PrefetchWindow, Timeline


def shaped_matmul(op: st.MatmulBase, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """A matmul's result shape (zeros): what a timing-only run needs of a fused matmul."""
    batch = np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
    return np.zeros((*batch, x.shape[-2], y.shape[-1]), np.float32)


class DeviceShape:
    """A device tensor without its data (timing-only runs): its device shape and dtype."""

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype) -> None:
        self.shape = shape
        self.dtype = dtype

    @staticmethod
    def of(value_type: Attribute) -> DeviceShape:
        """The device tensor of a tensor type, in its layout."""
        layout, _, dtype = tensor_layout(value_type)
        return DeviceShape(tuple(layout.device_size), np.dtype(dtype))


CONVERTED_BYTES = 16 * 1024 * 1024
"""Budget of fp32 matmul operand tiles a kernel keeps for the chunks that read them again."""


class SimKernel(KernelInterpreter):
    """One kernel on the simulated chip: numerics, checks and timing for all its cores."""

    def __init__(
        self,
        op: core.KernelOp,
        index: int,
        name: str,
        scratchpad: Scratchpad,
        start: float,
        target: Target,
        window: PrefetchWindow | None = None,
        values: bool = True,
    ) -> None:
        super().__init__(op, {})
        # False: timing only (`ktir.sim.estimate`): every check and charge, no NumPy data.
        self.values = values
        self.index = index
        self.name = name
        self.scratchpad = scratchpad
        self.target = target
        self.timeline = Timeline(self.cores, start, window, cost_model.turnaround_cycles_per_byte(target))
        self.lx_ranges: list[tuple[int, int]] = []  # [address, end) of every LX buffer it allocates
        self.lx_bytes = np.zeros(target.cores)  # LX allocated per core while it runs (at its end)
        self.prefetched: dict[int, LxBuffer] = {}  # the buffers its prefetches fill, by address
        self.where = f"kernel {index} ({name} = {op.op_name.data})"
        self.buffers: dict[SSAValue, LxBuffer] = {}
        self.owners: dict[SSAValue, WriteOwners] = {}
        self.host_tiles: dict[tuple[int, bytes], HostTiles | None] = {}  # by tile and chunk start
        self.host_boxes: dict[tuple[int, tuple[tuple[int, int], ...]], tuple[tuple, tuple]] = {}
        self.converted: dict[tuple[int, bytes, tuple[int, ...]], np.ndarray] = {}
        self.converted_bytes = 0
        self.windows: dict[tuple[int, bytes, tuple[int, ...]], np.ndarray] = {}
        self.op_facts: dict[Operation, DmaFacts | ComputeFacts] = {}  # by op: what every chunk repeats
        self.tile_facts: dict[int, TileFacts] = {}
        self.matmul_charges: dict[tuple[float, int, str], tuple[Any, Any, Any]] = {}  # by tile size
        self.reread_fractions: dict[float, float] = {}  # by a matmul tile's outputs per core
        self.box_patterns: dict[tuple[tuple[int, ...], bytes], tuple[np.ndarray, np.ndarray]] = {}
        self.traffic_patterns: dict[tuple[tuple[int, ...], bytes, int, bool], tuple[np.ndarray, float]] = {}
        self.all_cores = np.arange(self.cores)
        self.bytes = 0.0
        self.early_bytes = 0.0  # moved by prefetches before the kernel's start
        self.touched: dict[SSAValue, set[tuple[bytes, tuple[int, ...]]]] = {}
        # The kernel's operand or result behind each block argument (x * x reads one tensor).
        self.outer = block_operands(op)
        self.flops = 0.0
        self.matmul_flops = 0.0
        self.fused_trace: Trace = []
        self.fused_shapes: dict[tuple[Operation, tuple[tuple[int, ...], ...]], Trace] = {}
        self.pattern = self._pattern_bandwidth()

    # -- the run ------------------------------------------------------------------------------

    def run(self, inputs: list[Any]) -> list[Any]:
        """
        Run the region; returns the output device buffers (without values: `DeviceShape`s,
        and `inputs` may be `DeviceShape`s too).
        """
        for result, arg in zip(self.op.outputs, self.args[len(inputs) :], strict=True):
            self.owners[arg] = WriteOwners(tuple(tensor_layout(result.type)[0].device_size))
        try:
            if self.values:
                outputs = super().run(inputs)
                finish_gemms()  # no GEMM runs on past its kernel
                return outputs
            outputs = [DeviceShape.of(t) for t in self.op.outputs.types]
            for arg, buffer in zip(self.args, [*inputs, *outputs], strict=True):
                self.env[arg] = buffer
            self.run_block(self.op.body.block.ops)
            return outputs
        finally:
            drop_gemms()  # after an error: the GEMMs still running are waited for, not read
            self.lx_bytes = self.scratchpad.live_bytes(self.target.cores)
            self.scratchpad.end_kernel()

    def run_op(self, op: Operation) -> None:
        """Run one op; an error it raises is located at the op (else at the kernel)."""
        try:
            super().run_op(op)
        except SimulationError as error:
            if error.location is None:
                error.location = location_of(op) or location_of(self.op)
            raise
        except ExecutionError as error:  # e.g. a compute whose tiles disagree: locate it too
            raise SimulationError(str(error), location_of(op) or location_of(self.op)) from error

    def report(self) -> KernelReport:
        """The kernel's line of the report (call after `run`)."""
        line = self.timeline
        busy = line.busy_table()
        return KernelReport(
            index=self.index,
            name=self.name,
            op=self._label(),
            unit=self._unit(),
            cores=self.cores,
            chunks=self.op.chunks.value.data,
            start=line.start,
            cycles=line.end - line.start,
            bytes=self.bytes,
            flops=self.flops,
            compulsory_bytes=self._compulsory_bytes(),
            matmul_flops=self.matmul_flops,
            busy=busy,
            finish=line.end_per_core - line.start,
            events=line.events,
            target=self.target,
            # The lowering writes each dim's slice count as an integer attribute.
            division={d: cast(IntegerAttr, n).value.data for d, n in self.op.work_division.data.items()},
            early_bytes=self.early_bytes,
            lx_bytes=self.lx_bytes,
            prefetch_lx_bytes=Scratchpad.sum_bytes(self.prefetched.values(), self.target.cores),
        )

    def _label(self) -> str:
        """
        The kernel's op: the graph op, or for a fused kernel `ktir.fused[...]` with the ops it
        runs in order (its matmul first for an epilogue), views left out.
        """
        name = self.op.op_name.data
        if name != "ktir.fused":
            return name
        ops: list[str] = []
        seen: set[str] = set()  # a software-pipelined loop holds a compute twice (first tile, loop)
        for compute in self.op.walk():
            payload = compute.payload.block.first_op if isinstance(compute, core.ComputeOp) else None
            if payload is None or (text := str(payload)) in seen:
                continue
            seen.add(text)
            if isinstance(payload, st.FusedOp):
                ops.extend(payload.label.split("+"))
            else:
                ops.append(payload.name.removeprefix("ktir."))
        return f"{name}[{'+'.join(ops)}]"

    def _compulsory_bytes(self) -> float:
        """
        Bytes the kernel must move at least: each distinct device-memory tensor it reads or
        writes, once, as far as its tiles reach (the whole tensor, except for a slice-like
        kernel that touches part of its input), at device-layout size.
        """
        return accounting.compulsory_bytes(
            (
                sum(math.prod(extent) for _, extent in boxes)
                * device_dtype_of_element(element_type_of(value)).element_bytes,
                tensor_layout(value.type)[0].device_bytes,
            )
            for value, boxes in self.touched.items()
        )

    def _pattern_bandwidth(self) -> float | None:
        """
        The LPDDR5 rate of the kernel's transfers when its graph op runs alone and is an access
        pattern with a measured rate of its own (`ktir.sim.patterns.access_pattern`: a restickify, a
        broadcast operand, a reduction); None for a fused kernel and for ordinary traffic.
        """
        payloads = [c.payload.block.first_op for c in self.op.walk() if isinstance(c, core.ComputeOp)]
        first = payloads[0] if payloads else None
        if first is None or any(type(p) is not type(first) for p in payloads):
            return None
        if (pattern := access_pattern(first)) is None:
            return None
        rows = math.prod(tensor_layout(first.results[0].type)[0].device_size[:-1])  # its sticks
        return cost_model.pattern_bandwidth(pattern, self.cores, rows, self.target)

    def _unit(self) -> str:
        for op in self.op.body.walk():
            if isinstance(op, core.ComputeOp):
                return op.unit.data
        return "sfu"

    def _located(self, op: Operation) -> str:
        return f"{self.where}, {op.name}"

    # -- memory -------------------------------------------------------------------------------

    def _alloc(self, op: core.LxAllocOp) -> LxBuffer:
        memref = cast(MemRefType[Attribute], op.result.type)
        shape = (self.cores, *memref.get_shape())
        self.lx_ranges.append((op.address.value.data, op.address.value.data + op.bytes))
        buffer = self.scratchpad.allocate(
            op.address.value.data,
            op.bytes,
            shape,
            numpy_dtype(memref.element_type),
            op.resident is not None,
            self._located(op),
        )
        self.buffers[op.result] = buffer
        return buffer  # the LX buffer, not an array: the sim reads LX through `self.buffers`

    @impl(core.FillOp)
    def _fill(self, op: core.FillOp) -> None:
        slot = int(self.env[op.slot])
        buffer = self.buffers[op.buffer]
        buffer.pending.pop(slot, None)
        if self.values:
            buffer.zero(slot)
        buffer.written[:, slot] = True
        self._restart_online(op.buffer, slot)
        elements = math.prod(buffer.shape[2:])
        cycles = np.full(self.cores, cost_model.fill_cycles(elements * buffer.dtype.itemsize, self.target))
        self.timeline.issue("sfu", [], [(op.buffer, slot)], cycles, "fill")

    @impl(core.DmaLoadOp, core.DmaStoreOp)
    def _dma(self, op: core.DmaLoadOp | core.DmaStoreOp) -> None:
        facts = self._dma_facts(op)
        tile = self._tile(facts.tile)
        chunk, slot = int(self.env[op.chunk]), int(self.env[op.slot])
        load, resident = facts.load, facts.resident
        memory = self.buffers[facts.memory].data if resident else self.env[facts.memory]
        staging = self.buffers[facts.lx]
        where = facts.where
        size = tuple(memory.shape[2:] if resident else memory.shape)
        if facts.whole:
            extent, first = self.tiles[facts.tile].whole_extent, tile.starts * (not resident)
            check_box(first, extent, size, "the resident buffer" if resident else "the tensor", where)
        else:
            extent = tile.extent
            first = (np.zeros_like(tile.starts) if resident else tile.starts) + tile.chunk_starts[chunk]
            if not tile.fits(chunk, size, resident):  # raises the located error
                check_box(first, extent, size, "the resident buffer" if resident else "the tensor", where)
        active = self._writers(facts.writers)
        if load and resident:
            check_written(self.buffers[facts.memory], 0, active, where)
        if not load:
            check_written(staging, slot, active, where)
        if not self.values:  # the write check still runs: two cores storing the same bytes
            for c in () if load or resident else active:
                box = tuple(slice(int(s), int(s) + e) for s, e in zip(first[c], extent, strict=True))
                self.owners[facts.memory].stamp(int(c), box, where)
        elif load and not resident:
            staging.defer(slot, memory, first, extent)
        else:
            self._move(op, memory, staging, slot, first, extent, active, where)
        if load:
            staging.written[active, slot] = True
        elif resident:
            self.buffers[facts.memory].written[active, 0] = True
        self._charge_dma(op, facts, first, extent, active, (facts.lx, slot))

    def _dma_facts(self, op: core.DmaLoadOp | core.DmaStoreOp) -> DmaFacts:
        """The DMA's facts that are the same at every chunk (`ktir.sim.op_facts`), made once."""
        if (facts := self.op_facts.get(op)) is None:
            facts = self.op_facts[op] = DmaFacts.of(op, self._located(op))
        return cast(DmaFacts, facts)

    def _tile(self, index: int) -> TileFacts:
        """Tile `index`'s decoded arrays (`ktir.sim.op_facts.TileFacts`), made once."""
        if (facts := self.tile_facts.get(index)) is None:
            facts = self.tile_facts[index] = TileFacts.of(self.tiles[index], self.args[index].type)
        return facts

    def _writers(self, writers: int) -> np.ndarray:
        """The cores that take part in a DMA stored by every `writers`-th core (all cores for 1)."""
        if writers == 1:
            return self.all_cores
        return self.all_cores[self.all_cores % writers == 0]

    def _move(
        self,
        op: core.DmaLoadOp | core.DmaStoreOp,
        memory: np.ndarray,
        staging: LxBuffer,
        slot: int,
        first: np.ndarray,
        extent: tuple[int, ...],
        active: np.ndarray,
        where: str,
    ) -> None:
        """The bytes of a store, or of a load from a resident buffer, copied for every core."""
        load = isinstance(op, core.DmaLoadOp)
        memory_value = op.source if load else op.target
        resident = isinstance(memory_value.type, MemRefType)
        element = element_type_of(memory_value)
        held = staging.slot(slot)  # only this slot: another one may be held as host tiles
        for c in active:
            box = tuple(slice(int(s), int(s) + e) for s, e in zip(first[c], extent, strict=True))
            if load:
                held[c] = memory[c, 0][box]
            elif resident:
                memory[c, 0][box] = store(held[c], element)
            else:
                self.owners[memory_value].stamp(int(c), box, where)
                memory[box] = store(held[c], element)

    def _charge_dma(
        self,
        op: core.DmaLoadOp | core.DmaStoreOp,
        facts: DmaFacts,
        first: np.ndarray,
        extent: tuple[int, ...],
        active: np.ndarray,
        slot: tuple[SSAValue, int],
    ) -> None:
        load = facts.load
        tile_bytes = math.prod(extent) * facts.itemsize
        queue = "load" if load else "store"
        label = facts.label
        reads, writes = ([], [slot]) if load else ([slot], [])
        cycles = np.zeros(self.cores)
        if facts.resident:
            cycles[active] = cost_model.lx_copy_cycles(tile_bytes, self.target)
            self.timeline.issue(queue, reads, writes, cycles, label)
            return
        boxes, traffic = self._chip_traffic(first[active], tile_bytes, load)
        memory_value = facts.memory
        touched = self.touched.setdefault(self.outer.get(memory_value, memory_value), set())
        touched.update((box.tobytes(), extent) for box in boxes)
        self.bytes += traffic
        cycles[active] = self.target.dma_setup_cycles
        chip_cycles = cost_model.transfer_cycles(traffic, self.target)
        ordinary = self.pattern is None  # its bytes pay the turnaround where they meet the other direction
        if not ordinary:  # the pattern's measured rate has the turnaround folded in
            chip_cycles = traffic / cast(float, self.pattern) * self.target.clock_hz
        if load and cast(core.DmaLoadOp, op).prefetch is not None:
            self._check_prefetch(cast(core.DmaLoadOp, op))
            self.prefetched[self.buffers[slot[0]].address] = self.buffers[slot[0]]
            label += " (prefetch)"
            early = self.timeline.prefetch(writes, cycles, chip_cycles, label, traffic, ordinary)
            self.early_bytes += early * len(boxes) * tile_bytes  # distinct bytes, as compulsory ones count
            return
        self.timeline.transfer(queue, reads, writes, cycles, chip_cycles, label, traffic, ordinary)

    def _chip_traffic(self, first: np.ndarray, tile_bytes: int, load: bool) -> tuple[np.ndarray, float]:
        """
        The distinct boxes of a DMA whose cores start at `first`, its bytes (`accounting.dma_traffic`).
        Both follow from the boxes' offsets from the first core's (shifting every start alike keeps
        which boxes are equal and their sorted order), which a chunk loop repeats: computed once
        per pattern.
        """
        key = (first.shape, (first - first[0]).tobytes(), tile_bytes, load)
        if (known := self.traffic_patterns.get(key)) is None:
            boxes, traffic = accounting.dma_traffic(first - first[0], tile_bytes, load, self.target)
            known = self.traffic_patterns[key] = (boxes, traffic)
        return known[0] + first[0], known[1]

    def _restream(self, op: core.ComputeOp, tiles: list[int], chunk: int, slot: int, area: float) -> None:
        """
        A matmul tile whose `area` outputs per core overflow the PE arrays' resident accumulator
        (`cost_model.accumulator_reread_fraction`) streams that fraction of its operand tiles
        from LPDDR5 again, as their loads moved them: one more DMA on the load queue, alongside
        the PE arrays' passes. Moved bytes, not compulsory ones; an operand read from a resident
        LX buffer streams from LX (free).
        """
        if (fraction := self.reread_fractions.get(area)) is None:
            fraction = self.reread_fractions[area] = float(
                cost_model.accumulator_reread_fraction(area, self.target)
            )
        if fraction <= 0.0:
            return
        facts = self._compute_facts(op)
        traffic = 0.0
        for t in tiles[:2]:
            if isinstance(self.args[t].type, MemRefType):
                continue
            tile = self._tile(t)
            itemsize = device_dtype_of_element(element_type_of(self.args[t])).element_bytes
            traffic += self._chip_traffic(tile.first(chunk), tile.elements * itemsize, True)[1]
        traffic *= fraction
        if traffic <= 0.0:
            return
        self.bytes += traffic
        setup = np.full(self.cores, float(self.target.dma_setup_cycles))
        operands = [(v, self._slot_of(v, slot)) for v in facts.ins[:2]]
        label = f"re-stream operands ({fraction:.2f}: {area:,.0f} outputs per core)"
        chip_cycles = cost_model.transfer_cycles(traffic, self.target)
        self.timeline.transfer("load", operands, [], setup, chip_cycles, label, traffic)

    def _check_prefetch(self, op: core.DmaLoadOp) -> None:
        """A prefetch reads no tensor the previous kernel writes and fills no LX it uses."""
        window = self.timeline.window
        if window is None or window.previous is None:
            return
        where = self._located(op)
        if not isinstance(op.target.owner, core.LxAllocOp):
            raise SimulationError(f"{where}: a prefetch loads into a buffer that is not a 'ktir.lx_alloc'")
        if (reason := window.previous.conflict(op, self.outer)) is not None:
            raise SimulationError(f"{where}: a prefetch {reason}")

    # -- compute ------------------------------------------------------------------------------

    def _tiles_of(self, tile_index: int, chunk: int) -> HostTiles | None:
        """
        The host map of a tile's boxes at `chunk`, made once per chunk start (the chunks of a K
        loop place their output tile at the same start).
        """
        tile = self._tile(tile_index)
        key = (tile_index, tile.chunk_starts[chunk].tobytes())
        if key not in self.host_tiles:
            layout, shape, _ = tile.layout
            self.host_tiles[key] = HostTiles.of(layout, shape, tile.raw_extent, tile.first(chunk), self.cores)
        return self.host_tiles[key]

    def _compute_facts(self, op: core.ComputeOp) -> ComputeFacts:
        """The compute's facts that are the same at every chunk (`ktir.sim.op_facts`), made once."""
        if (facts := self.op_facts.get(op)) is None:
            facts = self.op_facts[op] = ComputeFacts.of(op)
        return cast(ComputeFacts, facts)

    def _slot_of(self, value: SSAValue, slot: int) -> int:
        """The slot a compute reads: 0 in a one-slot buffer (a tile loaded once for all chunks)."""
        return core.compute_read_slot(slot, self.buffers[value].shape[1])

    def _window(self, value: SSAValue, tile_index: int, chunk: int) -> tuple[slice, ...] | None:
        """The chunk's window of a buffer holding the core's whole slice (None: the tile itself)."""
        tile = self._tile(tile_index)
        return None if tuple(self.buffers[value].shape[2:]) == tile.extent else tile.window(chunk)

    @impl(core.ComputeOp)
    def _compute(self, op: core.ComputeOp) -> None:
        facts = self._compute_facts(op)
        payload, tiles = facts.payload, list(facts.tiles)
        chunk, slot = int(self.env[facts.chunk]), int(self.env[facts.slot])
        accumulate = op.accumulate is not None
        out_slot = facts.accumulator_slot(self.env) if accumulate else slot
        where = self._located(op)
        for t in tiles:  # the compute places its tiles in their tensors as the DMAs do
            tile = self._tile(t)
            if not tile.fits(chunk, tile.device_size):  # raises the located error
                check_box(tile.first(chunk), tile.extent, tile.device_size, f"the tensor of tile {t}", where)
        for value in facts.ins:
            check_written(self.buffers[value], self._slot_of(value, slot), self.all_cores, where)
        if accumulate:
            check_written(self.buffers[facts.outs[0]], out_slot, self.all_cores, where)
        maps = [self._tiles_of(t, chunk) for t in tiles]
        self.buffers[facts.outs[0]].pending.pop(out_slot, None)  # the compute overwrites the slot
        if not self.values:
            if isinstance(payload, st.FusedOp):
                self.fused_trace = self._fused_shapes(payload, op, tiles, maps, chunk)
        elif not self._compute_fast(payload, op, tiles, maps, chunk, slot, out_slot, accumulate):
            for value in facts.ins:  # the executor's per-core path reads the LX arrays
                self.buffers[value].slot(self._slot_of(value, slot))
            for value in [*facts.ins, *facts.outs]:
                self.env[value] = self.buffers[value].data
            super()._compute(op)
        self.buffers[facts.outs[0]].written[:, out_slot] = True
        self._charge_compute(op, payload, tiles, maps, slot, out_slot, accumulate)

    def _compute_fast(
        self,
        payload: Operation,
        op: core.ComputeOp,
        tiles: list[int],
        maps: list[HostTiles | None],
        chunk: int,
        slot: int,
        out_slot: int,
        accumulate: bool,
    ) -> bool:
        facts = self._compute_facts(op)
        if any(m is None for m in maps):
            return False
        host_maps = [cast(HostTiles, m) for m in maps]
        if isinstance(payload, st.MatmulBase):  # reads deferred loads straight from the tensors
            self._matmul_fast(payload, op, tiles, host_maps, chunk, slot, out_slot, accumulate)
            return True
        if any(self._window(v, t, chunk) is not None for v, t in zip(facts.ins, tiles, strict=False)):
            return False  # the executor's per-core path reads windows
        if all(m.dense for m in host_maps) and self._same_layout_elementwise(payload, tiles):
            ins = [self.buffers[v].slot(self._slot_of(v, slot)) for v in facts.ins]
            self.buffers[facts.outs[0]].slot(out_slot)[...] = self._implementation(payload, ins)
            return True
        # attention computes in float64: its q, k and v are read (and kept) as float64 tiles
        wide = [
            np.dtype(np.float64) if isinstance(payload, st.AttentionOp) and i < 3 else None
            for i in range(len(facts.ins))
        ]
        hosts = [
            self._host_operand(v, m, slot, w) for v, m, w in zip(facts.ins, host_maps, wide, strict=False)
        ]
        if isinstance(payload, st.FusedOp):
            stacked = self._fused_tiles(payload, op, tiles, host_maps, hosts, chunk)
        elif isinstance(payload, st.AttentionOp):
            stacked = self._attention_tiles(payload, op, host_maps, hosts, out_slot, accumulate)
        else:
            stacked = rows_at_once(payload, host_maps, hosts)
            if stacked is None:
                extent = host_maps[-1].extent
                results = [
                    tile_result(payload, [h[c] for h in hosts], extent, False) for c in range(self.cores)
                ]
                stacked = np.stack([np.asarray(r) for r in results])
        host_maps[-1].to_device(stacked, self.buffers[facts.outs[0]].slot(out_slot))
        return True

    def _fused_tiles(
        self,
        payload: st.FusedOp,
        op: core.ComputeOp,
        tiles: list[int],
        maps: list[HostTiles],
        hosts: list[np.ndarray],
        chunk: int,
    ) -> np.ndarray:
        """
        A fused kernel's result tiles (cores, *tile): from one run for all cores where its body
        allows it (charged on the tile shapes one core sees), else per core.
        """
        stacked = fused_at_once(payload, maps, hosts)
        if stacked is None:
            stacked = fused_rows_at_once(payload, maps, hosts)
        if stacked is not None:
            self.fused_trace = self._fused_shapes(payload, op, tiles, list(maps), chunk)
            return stacked
        extent = maps[-1].extent
        return np.stack(
            [self._tile_result(payload, [h[c] for h in hosts], extent, False) for c in range(self.cores)]
        )

    def _attention_tiles(
        self,
        payload: st.AttentionOp,
        op: core.ComputeOp,
        maps: list[HostTiles],
        hosts: list[np.ndarray],
        out_slot: int,
        accumulate: bool,
    ) -> np.ndarray:
        """
        An attention's result tiles (cores, *tile): from one call for all cores where their causal
        limits agree, else per core (causal limits are measured from each core's start); a key
        chunk of an online softmax per core, with its state.
        """
        facts = self._compute_facts(op)
        if not accumulate and (stacked := attention_at_once(payload, maps, hosts)) is not None:
            return stacked
        starts = [[m.lo[c] for m in maps] for c in range(self.cores)]
        return np.stack(
            [
                self._attention_chunk(payload, [h[c] for h in hosts], starts[c], (facts.outs[0], out_slot, c))
                if accumulate
                else attention_tile(payload, [h[c] for h in hosts], starts[c])
                for c in range(self.cores)
            ]
        )

    def _host_operand(
        self, value: SSAValue, tiles: HostTiles, slot: int, dtype: np.dtype | None = None
    ) -> np.ndarray:
        """
        A compute operand's host tiles (`LxBuffer.read_host`): a matmul's accumulator read by its
        epilogue, or a tile every chunk reads, is not converted again.
        """
        return self.buffers[value].read_host(self._slot_of(value, slot), tiles, dtype)

    def _matmul_fast(
        self,
        payload: st.MatmulBase,
        op: core.ComputeOp,
        tiles: list[int],
        maps: list[HostTiles],
        chunk: int,
        slot: int,
        out_slot: int,
        accumulate: bool,
    ) -> None:
        """
        A matmul tile on all cores from the distinct operand tiles. An fp32 accumulator is held
        as host tiles across the chunks that add to it (`LxBuffer.host_slot`): each chunk adds
        its products in place, and the device layout is written once, when the sum is read.
        """
        facts = self._compute_facts(op)
        x, y, o = maps
        hx, x_index, x_owned = self._distinct(x, facts.ins[0], slot, tiles[0], chunk)
        hy, y_index, y_owned = self._distinct(y, facts.ins[1], slot, tiles[1], chunk)
        element = element_type_of(payload.x)
        buffer = self.buffers[facts.outs[0]]
        if accumulate and buffer.dtype == np.float32:
            # The GEMMs run on while the next chunk's DMAs are simulated, when nothing can change
            # their operands: tiles converted from the tensors, not views of LX buffers.
            into = buffer.host_slot(out_slot, o)
            matmul_f32(hx, x_index, hy, y_index, element, into, background=x_owned and y_owned)
            return
        out = buffer.slot(out_slot)
        product = matmul_f32(hx, x_index, hy, y_index, element)
        if accumulate:
            product += o.to_host(out)
        o.to_device(store(product, element_type_of(facts.outs[0])), out)

    def _fused_shapes(
        self,
        payload: st.FusedOp,
        op: core.ComputeOp,
        tiles: list[int],
        maps: list[HostTiles | None],
        chunk: int,
    ) -> Trace:
        """
        The tile shapes the first core's fused ops see, as running them would record: the
        same host boxes as the fast path (the tiles' maps) or the per-core path (placements),
        zeros for values, and the matmuls only shaped. Cached by the tiles' shapes.
        """
        facts = self._compute_facts(op)
        fast = all(m is not None for m in maps) and not any(
            self._window(v, t, chunk) is not None for v, t in zip(facts.ins, tiles, strict=False)
        )
        extents = [
            tuple(cast(HostTiles, m).extent) if fast else self._host_box(t, 0, chunk)[1]
            for m, t in zip(maps, tiles, strict=True)
        ]
        key = (payload, tuple(extents))
        if (trace := self.fused_shapes.get(key)) is not None:
            return list(trace)
        hosts = [
            np.zeros(extent, numpy_dtype(element_type_of(arg)))
            for extent, arg in zip(extents, payload.body.block.args, strict=False)
        ]
        trace = []
        run_fused(payload, hosts, shaped_matmul, trace)
        self.fused_shapes[key] = trace
        return list(trace)

    def _distinct(
        self, tiles: HostTiles, value: SSAValue, slot: int, tile_index: int, chunk: int
    ) -> tuple[np.ndarray, np.ndarray, bool]:
        """
        Host tiles of the distinct boxes the cores loaded (the chunk's window of a buffer
        holding a whole slice), each core's index into them, and whether the tiles are the
        simulator's own conversion (else a view of the LX buffer, which later DMAs may write).

        Cores that loaded the same box of a tensor (a matmul's weights shared by the cores
        that split M) hold the same bytes, so the compute converts that tile once; a deferred
        load is read from the tensor once per distinct box.
        """
        buffer = self.buffers[value]
        slot = self._slot_of(value, slot)
        window = self._window(value, tile_index, chunk)
        if (load := buffer.pending.get(slot)) is not None:
            memory, first, extent = load
            if window is not None:  # the chunk's box inside the whole slice the DMA named
                first = first + np.array([w.start for w in window])
                extent = tuple(w.stop - w.start for w in window)
            firsts, inverse = self._unique_boxes(first)
            # fp32 host tiles are kept per kernel, keyed by tensor and boxes: every window of a
            # whole slice (x's K chunks, read again for every N chunk), and up to CONVERTED_BYTES
            # of the tiles a chunk loop loads again.
            starts = first[firsts]
            key = (id(memory), starts.tobytes(), extent)
            cache = self.converted if window is None else self.windows
            if (host := cache.get(key)) is not None:
                return host, inverse, True
            ends = (starts + np.asarray(extent, dtype=starts.dtype)).tolist()
            boxes = [memory[tuple(map(slice, lo, hi))] for lo, hi in zip(starts.tolist(), ends, strict=True)]
            host = cache[key] = tiles.boxes_to_host(boxes, np.float32)
            if window is None:
                self.converted_bytes += host.nbytes
            while self.converted_bytes > CONVERTED_BYTES and len(self.converted) > 1:
                oldest = next(iter(self.converted))
                self.converted_bytes -= self.converted.pop(oldest).nbytes
            return host, inverse, True
        firsts, inverse = self._unique_boxes(self.tiles[tile_index].starts_array)
        data = buffer.slot(slot)[firsts]
        if window is not None:
            data = data[(slice(None), *window)]
        return tiles.to_host(data), inverse, False

    def _unique_boxes(self, first: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """
        The first core holding each distinct box of `first` (cores x rank starts) and each core's
        index into them. They depend only on the boxes' offsets from the first core's, which a
        chunk loop repeats: computed once per pattern.
        """
        key = (first.shape, (first - first[0]).tobytes())
        if (known := self.box_patterns.get(key)) is None:
            _, firsts, inverse = np.unique(first, axis=0, return_index=True, return_inverse=True)
            known = self.box_patterns[key] = (firsts, inverse.reshape(-1))
        return known

    def _same_layout_elementwise(self, payload: Operation, tiles: list[int]) -> bool:
        """True if the payload maps position i of each input to position i of the output."""
        if not isinstance(payload, ELEMENTWISE) or not payload.operands:
            return False
        types = [v.type for v in payload.operands] + [payload.results[0].type]
        shapes = {tuple(cast(TensorType[Attribute], t).get_shape()) for t in types}
        layouts = {layout_of_type(cast(TensorType[Attribute], t)) for t in types}
        boxes = {
            (
                self.tiles[t].extent_array.tobytes(),
                self.tiles[t].starts_array.tobytes(),
                self.tiles[t].chunk_starts_array.tobytes(),
            )
            for t in tiles
        }
        return len(shapes) == 1 and len(layouts) == 1 and len(boxes) == 1

    @staticmethod
    def _implementation(payload: Operation, ins: list[np.ndarray]) -> np.ndarray:
        return IMPLEMENTATIONS[type(payload)](payload, ins)[0]

    def _tile_result(
        self, payload: Operation, hosts: list[np.ndarray], extent: tuple[int, ...], accumulate: bool
    ) -> np.ndarray:
        """The per-core fallback; matmul accumulates in fp32 like the PE arrays."""
        if isinstance(payload, st.FusedOp):  # the first core's tile shapes are charged
            trace: Trace | None = [] if not self.fused_trace else None
            result = run_fused(payload, hosts, fp32_matmul, trace)
            if trace is not None:
                self.fused_trace = trace
            return result
        if not isinstance(payload, st.MatmulBase):
            return tile_result(payload, hosts, extent, accumulate)
        product = fp32_matmul(payload, *hosts)
        return product if accumulate else store(product, element_type_of(payload.results[0]))

    def _charge_compute(
        self,
        op: core.ComputeOp,
        payload: Operation,
        tiles: list[int],
        maps: list[HostTiles | None],
        slot: int,
        out_slot: int,
        accumulate: bool,
    ) -> None:
        facts = self._compute_facts(op)
        reads = [(v, self._slot_of(v, slot)) for v in facts.ins]
        if accumulate:
            reads.append((facts.outs[0], out_slot))
        if isinstance(payload, st.FusedOp):
            self._charge_fused(op, reads, out_slot)
            return
        if isinstance(payload, st.AttentionOp):
            self._charge_attention(op, payload, tiles, maps, reads, out_slot)
            return
        in_elements = self._tile(tiles[0]).elements if len(tiles) > 1 else 0
        out_elements = self._tile(tiles[-1]).elements
        if isinstance(payload, st.MatmulBase):
            rows, macs, area = self._matmul_size(tiles, maps, out_elements, in_elements)
            cycles, flops, roofline = self._matmul_charge(macs, rows, facts.precision)
            self._restream(op, tiles, int(self.env[facts.chunk]), slot, area)
            self.matmul_flops += roofline * self.cores
            if facts.converts_to_fp16:
                self._convert_operands(op, tiles, slot)
        else:
            cycles = cost_model.sfu_cycles(payload, in_elements, out_elements, self.target)
            passes = cost_model.sfu_passes(payload)
            flops = accounting.sfu_flops_of(payload.name, in_elements, out_elements, passes)
        self.flops += flops * self.cores
        label = payload.name + (" (accumulate)" if accumulate else "")
        self.timeline.issue(
            facts.unit, reads, [(facts.outs[0], out_slot)], np.full(self.cores, cycles), label
        )

    def _matmul_charge(self, macs: float, rows: int, precision: str) -> tuple[Any, Any, Any]:
        """
        (PE-array cycles, FLOPs, roofline FLOPs) of one core's matmul tile, computed once per
        tile size (every chunk of a K loop charges the same).
        """
        key = (macs, rows, precision)
        if (charge := self.matmul_charges.get(key)) is None:
            charge = self.matmul_charges[key] = (
                cost_model.pt_cycles(macs, rows, self.target, precision),
                accounting.matmul_flops(macs),
                accounting.roofline_matmul_flops(macs, precision, self.target),
            )
        return charge

    def _convert_operands(self, op: core.ComputeOp, tiles: list[int], slot: int) -> None:
        """
        An f32 matmul's operand tiles converted to fp16 in LX on the SFU before the PE arrays read
        them (`cost_model.converts_to_fp16`): one pass over each tile's elements, every chunk.
        """
        facts = self._compute_facts(op)
        elements = sum(self._tile(t).elements for t in tiles[:2])
        operands = [(v, self._slot_of(v, slot)) for v in facts.ins]
        self.flops += accounting.sfu_flops_of(ew.ConvertOp.name, 0, elements) * self.cores
        cycles = np.full(self.cores, cost_model.conversion_cycles(elements, self.target))
        self.timeline.issue("sfu", operands, operands, cycles, "convert to fp16")

    def _charge_fused(self, op: core.ComputeOp, reads: list[tuple[SSAValue, int]], out_slot: int) -> None:
        """
        A fused kernel's chunk: its matmuls on the PE arrays, then its other ops on the SFU,
        each costed like the op alone on the tile it saw (views that move no data are free).
        """
        pt, sfu, flops, matmul_flops = fused_cost(self.fused_trace, self.target)
        self.fused_trace = []
        self._issue_pt_then_sfu(op, reads, out_slot, pt, sfu, flops, matmul_flops)

    def _charge_attention(
        self,
        op: core.ComputeOp,
        payload: st.AttentionOp,
        tiles: list[int],
        maps: list[HostTiles | None],
        reads: list[tuple[SSAValue, int]],
        out_slot: int,
    ) -> None:
        """
        An attention tile: its two matmuls on the PE arrays, then its softmax on the SFU; under
        a causal limit each core computes only the key blocks its queries see.
        """
        q, k, v = (self._host_extent(t, m) for t, m in zip(tiles[:3], maps[:3], strict=True))
        chunk = int(self.env[self._compute_facts(op).chunk])
        query_starts = self._host_starts(tiles[0], maps[0], chunk)[:, 3]
        key_starts = self._host_starts(tiles[1], maps[1], chunk)[:, 2]
        causal = None if payload.causal is None else payload.causal.value.data
        pairs = cost_model.attention_pairs(query_starts, q[3], key_starts, k[2], causal)
        itemsize = numpy_dtype(element_type_of(payload.q)).itemsize
        pt, sfu, flops, matmul_flops = cost_model.attention_cycles(
            q[:4], pairs, q[4], v[3], itemsize, self.target
        )
        if op.accumulate is not None:  # a key chunk of an online softmax rescales its accumulator
            sfu = sfu + cost_model.online_rescale_cycles(math.prod(q[:4]) * v[3], self.target)
        self._issue_pt_then_sfu(op, reads, out_slot, pt, sfu, flops, matmul_flops)

    def _host_extent(self, tile: int, host: HostTiles | None) -> tuple[int, ...]:
        return tuple(host.extent) if host is not None else self._host_box(tile, 0, 0)[1]

    def _host_starts(self, tile: int, host: HostTiles | None, chunk: int) -> np.ndarray:
        """Each core's host box start of a tile (cores x rank)."""
        if host is not None:
            return np.asarray(host.lo)
        return np.array([self._host_box(tile, c, chunk)[0] for c in range(self.cores)])

    def _host_box(self, tile: int, core_index: int, chunk: int) -> tuple[tuple, tuple]:
        """
        (start, extent) of the host box a core's chunk of a tile covers (`_placement`'s), kept
        by device box: the tiles without a host map (a box over padding, such as a key cache
        of 5,121 positions) repeat few boxes (every core of a key head loads the same keys in
        every chunk), and each placement walks the whole box.
        """
        box = self._box(self.tiles[tile], core_index, chunk, False)
        key = (tile, tuple((b.start, b.stop) for b in box))
        if (found := self.host_boxes.get(key)) is None:
            _, _, start, extent = self._placement(tile, core_index, chunk)
            found = self.host_boxes[key] = (start, extent)
        return found

    def _issue_pt_then_sfu(
        self,
        op: core.ComputeOp,
        reads: list[tuple[SSAValue, int]],
        out_slot: int,
        pt: Any,
        sfu: Any,
        flops: Any,
        matmul_flops: Any,
    ) -> None:
        """PE-array work, then SFU work that waits for it (per core: numbers or arrays)."""
        facts = self._compute_facts(op)
        per_core = (self.cores,)
        pt, sfu = (np.broadcast_to(np.asarray(x, dtype=float), per_core) for x in (pt, sfu))
        self.flops += float(np.sum(np.broadcast_to(flops, per_core)))
        self.matmul_flops += float(np.sum(np.broadcast_to(matmul_flops, per_core)))
        written = [(facts.outs[0], out_slot)]
        if pt.any():
            self.timeline.issue("pt", reads, written, pt.copy(), "fused matmuls")
        if sfu.any() or not pt.any():
            self.timeline.issue(
                "sfu", [*reads, *written] if pt.any() else reads, written, sfu.copy(), "fused"
            )

    def _matmul_size(
        self, tiles: list[int], maps: list[HostTiles | None], out_elements: int, x_elements: int
    ) -> tuple[int, float, float]:
        """
        Output rows per core, MACs and outputs per product (rows x N) of one matmul tile (K and N
        in whole sticks).
        """
        out_map = maps[-1]
        if out_map is not None:
            extent = out_map.extent
        else:
            extent = self._host_box(tiles[-1], 0, 0)[1]
        rows_total = math.prod(extent[:-1]) or 1
        n_padded = out_elements / rows_total
        rows = int(extent[-2]) if len(extent) >= 2 else 1
        return rows, x_elements * n_padded, rows * n_padded

    # -- ring ---------------------------------------------------------------------------------

    @impl(core.RingReduceOp)
    def _ring_reduce(self, op: core.RingReduceOp) -> None:
        slot, group = int(self.env[op.slot]), op.group.value.data
        buffer = self.buffers[op.buffer]
        check_written(buffer, slot, self.all_cores, self._located(op))
        combine = {"add": np.add, "max": np.maximum, "min": np.minimum}[op.combine.data]
        if self.values:
            parts = buffer.data[:, slot].reshape(self.cores // group, group, *buffer.data.shape[2:])
            root = parts[:, 0]
            for partner in range(1, group):  # in ring order, as the hops deliver them
                combine(root, parts[:, partner], out=root)
        elements = math.prod(buffer.shape[2:])
        cycles = np.full(
            self.cores, cost_model.ring_cycles(elements, buffer.dtype.itemsize, group, self.target)
        )
        self.timeline.issue_group("ring", [(op.buffer, slot)], cycles, group, f"ring reduce x{group}")
