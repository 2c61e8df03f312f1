"""
A functional executor of core-level ktir: it runs every core's program and gives the numbers
the chip would, without timing (the cycle simulator is `ktir.sim`).

Device memory holds each tensor as its device buffer (`device_size` positions, padding zero),
in the tensor's own NumPy type; each core's LX is a map from address to buffer, shared by the
kernels so that a resident tensor written by one kernel is read by the next. A kernel runs
its region once for all its cores in lockstep (`ktir.core_id` is the vector 0..cores-1), so a
`ktir.ring_reduce` sees every partner's partial sum. DMAs copy device boxes; `ktir.compute`
maps its LX tiles to host coordinates through the tensors' layouts (padding lanes are not
computed) and runs its payload with the reference implementation of the op, so the results
match `ktir.reference.run` bit for bit, except that a matmul whose K is chunked or split adds
its fp32 partial sums in another order. Free views reuse their input's device buffer as is:
a view the layout plan wrongly calls free gives wrong numbers here.

```python
outputs = ktir.sim.executor.run(module, [x, w])      # after ktir-lower-to-cores
```
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache
from typing import Any, cast

import numpy as np
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import MemRefType, ModuleOp, TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from ktir.dialects.ktir import core
from ktir.dialects.ktir import elementwise as ew
from ktir.dialects.ktir import structured as st
from ktir.dialects.ktir.attributes import TileAttr
from ktir.ir.diagnostics import ExecutionError
from ktir.ir.interpreter import impl
from ktir.ir.lockstep import Lockstep
from ktir.ir.values import tensor_layout
from ktir.layout.dtypes import numpy_dtype
from ktir.layout.spyre import SpyreTensorLayout
from ktir.planning.plan import copying_view
from ktir.planning.rules import rule_of
from ktir.reference.executor import IMPLEMENTATIONS, entry_function
from ktir.reference.ops import full_value
from ktir.reference.precision import store, to_numpy
from ktir.reference.structured import AttentionState, attention, attention_partial, combine_online, normalized
from ktir.sim.fused_execution import run_fused


@cache
def _host_index(layout: SpyreTensorLayout, shape: tuple[int, ...]) -> np.ndarray:
    """Device-shaped array: the flat host index each device position holds, -1 for padding."""
    count = int(np.prod(shape, dtype=np.int64))
    host = np.arange(1, count + 1, dtype=np.int64).reshape(shape)
    packed = layout.bind(shape).pack(host, np.dtype(np.int64))
    return packed.reshape(layout.device_size) - 1


def device_buffer(host: np.ndarray, value_type: Attribute) -> np.ndarray:
    """A host array packed into its device buffer (device-shaped, the host's NumPy type)."""
    layout, shape, dtype = tensor_layout(value_type)
    packed = layout.bind(shape).pack(np.asarray(host, dtype=dtype), dtype)
    return packed.reshape(layout.device_size)


def host_array(device: np.ndarray, value_type: Attribute) -> np.ndarray:
    """A device buffer unpacked to its host array (a new array: `unpack` copies once)."""
    layout, shape, _ = tensor_layout(value_type)
    return layout.bind(shape).unpack(device.reshape(-1))


def run(module: ModuleOp, inputs: Sequence[Any], func_name: str | None = None) -> list[np.ndarray]:
    """Execute the lowered module's function on host `inputs`; returns host NumPy arrays."""
    function = entry_function(module, func_name)
    block = function.body.block
    if len(inputs) != len(block.args):
        raise ExecutionError(f"@{function.sym_name.data} takes {len(block.args)} input(s), got {len(inputs)}")
    memory: dict[SSAValue, np.ndarray] = {}
    for arg, value in zip(block.args, inputs, strict=True):
        memory[arg] = device_buffer(to_numpy(value), arg.type)
    lx: dict[int, np.ndarray] = {}
    with np.errstate(all="ignore"):
        for op in block.ops:
            if isinstance(op, func.ReturnOp):
                return [host_array(memory[v], v.type) for v in op.operands]
            args = [memory[v] for v in op.operands]
            if isinstance(op, core.KernelOp):
                results = KernelInterpreter(op, lx).run(args)
            else:
                results = host_op(op, args)
            memory.update(zip(op.results, results, strict=True))
    raise ExecutionError(f"@{function.sym_name.data} has no func.return")


def host_op(op: Operation, args: list[np.ndarray]) -> list[np.ndarray]:
    """Run a function-level op that is not a kernel (a free view or a CPU fallback) on device buffers."""
    if isinstance(op, st.ShapeChangeOp) and not isinstance(op, (st.CopyOp, st.RestickifyOp)):
        source, result = tensor_layout(op.operands[0].type), tensor_layout(op.results[0].type)
        if (
            source[0].device_size == result[0].device_size
            and source[0].stride_map[-1] == result[0].stride_map[-1]
        ):
            return [args[0]]  # the plan says these are the same device bytes: reuse them
        if _seen_through(op, source[0], result[0]):
            return [args[0].reshape(result[0].device_size)]
    hosts = [host_array(a, v.type) for a, v in zip(args, op.operands, strict=True)]
    implementation = IMPLEMENTATIONS.lookup(op)
    if implementation is None:
        raise ExecutionError(f"the core executor cannot run '{op.name}' at function level")
    return [device_buffer(r, v.type) for r, v in zip(implementation(op, hosts), op.results, strict=True)]


def _seen_through(op: Operation, source: SpyreTensorLayout, result: SpyreTensorLayout) -> bool:
    """
    True if a permute's or reshape's result layout is its input's device bytes seen another
    way (`ktir.planning.plan.copying_view`), as a weight's transpose is: the same buffer.
    """
    if not isinstance(op, (st.PermuteOp, st.ReshapeOp)):
        return False
    return math.prod(source.device_size) == math.prod(result.device_size) and not copying_view(
        op, rule_of(op), source, result
    )


class KernelInterpreter(Lockstep):
    """
    One kernel's execution: the region run once, in lockstep, for all its cores.

    Its ops' implementations are its `@impl` methods (`ktir.ir.interpreter`); index arithmetic,
    constants and `scf.for` are the lock-step core's (`ktir.ir.lockstep`). The simulator
    (`ktir.sim`) subclasses it, marks its own `_dma`, `_fill`, `_compute` and `_ring_reduce`,
    and overrides the hooks `_alloc` and `_tile_result`.
    """

    TERMINATORS = (core.YieldOp, scf.YieldOp)

    def __init__(self, op: core.KernelOp, lx: dict[int, np.ndarray]) -> None:
        super().__init__(op.cores.value.data)
        self.op = op
        self.lx = lx
        self.cores = self.units
        self.tiles = list(op.tiles.data)
        self.args = list(op.body.block.args)
        # Online-softmax state of accumulating attention computes, per (buffer, slot, core):
        # a kernel that walks its keys in chunks (`IterationSpace.chunkable`).
        self.online: dict[tuple[SSAValue, int, int], AttentionState] = {}

    def run(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        """Run the region on the kernel's input device buffers; returns its output buffers."""
        outputs = [
            np.zeros(tensor_layout(t)[0].device_size, dtype=tensor_layout(t)[2])
            for t in self.op.outputs.types
        ]
        for arg, buffer in zip(self.args, [*inputs, *outputs], strict=True):
            self.env[arg] = buffer
        self.run_block(self.op.body.block.ops)
        return outputs

    def unsupported(self, op: Operation) -> Exception:
        """The error for an op no kernel body may hold."""
        return ExecutionError(f"the core executor cannot run '{op.name}' inside a kernel")

    @impl(core.CoreIdOp)
    def _core_id(self, op: core.CoreIdOp) -> list[np.ndarray]:
        return [np.arange(self.cores)]

    @impl(core.LxAllocOp)
    def _lx_alloc(self, op: core.LxAllocOp) -> list[np.ndarray]:
        return [self._alloc(op)]

    @impl(core.FillOp)
    def _fill(self, op: core.FillOp) -> None:
        self.env[op.buffer][:, self.env[op.slot]] = 0
        self._restart_online(op.buffer, int(self.env[op.slot]))

    def _restart_online(self, buffer: SSAValue, slot: int) -> None:
        """A zeroed accumulator starts a new online softmax (its next key chunk is the first)."""
        for key in [k for k in self.online if k[0] == buffer and k[1] == slot]:
            del self.online[key]

    def _attention_chunk(
        self,
        payload: st.AttentionOp,
        hosts: list[np.ndarray],
        starts: Sequence[Sequence[int]],
        key: tuple[SSAValue, int, int],
    ) -> np.ndarray:
        """
        One key chunk of an accumulating attention on one core's tiles: its online state
        combined with the chunks before (`combine_online`, in float64), and the attention over
        every key seen so far (what the fp32 accumulator holds; the last chunk's is the result).
        """
        partial = attention_partial(
            payload, hosts, query_start=int(starts[0][3]), key_start=int(starts[1][2])
        )
        state = combine_online(self.online[key], partial) if key in self.online else partial
        self.online[key] = state
        return normalized(state)

    def _alloc(self, op: core.LxAllocOp) -> np.ndarray:
        memref = cast(MemRefType[Attribute], op.result.type)
        shape = (self.cores, *memref.get_shape())
        dtype = numpy_dtype(memref.element_type)
        address = op.address.value.data
        existing = self.lx.get(address)
        if op.resident is not None and existing is not None and existing.shape == shape:
            return existing
        self.lx[address] = np.zeros(shape, dtype=dtype)
        return self.lx[address]

    def _box(self, tile: TileAttr, core_index: int, chunk: int, resident: bool) -> tuple[slice, ...]:
        extent = tile.extent_array
        first = tile.chunk_starts_array[chunk] + (0 if resident else tile.starts_array[core_index])
        return tuple(slice(int(s), int(s) + int(e)) for s, e in zip(first, extent, strict=True))

    @staticmethod
    def _whole_box(tile: TileAttr, core_index: int, resident: bool) -> tuple[slice, ...]:
        """The core's whole slice of a tile (`ktir.dma_load ... whole`)."""
        first = np.zeros_like(tile.extent_array) if resident else tile.starts_array[core_index]
        return tuple(slice(int(s), int(s) + e) for s, e in zip(first, tile.whole_extent, strict=True))

    @impl(core.DmaLoadOp, core.DmaStoreOp)
    def _dma(self, op: core.DmaLoadOp | core.DmaStoreOp) -> None:
        tile = self.tiles[op.tile.value.data]
        chunk, slot = int(self.env[op.chunk]), int(self.env[op.slot])
        source, target = self.env[op.source], self.env[op.target]
        load = isinstance(op, core.DmaLoadOp)
        memory_value = op.source if load else op.target
        resident = isinstance(memory_value.type, MemRefType)
        writers = op.writers.value.data if isinstance(op, core.DmaStoreOp) and op.writers is not None else 1
        whole = load and op.whole is not None
        for c in range(self.cores):
            box = self._whole_box(tile, c, resident) if whole else self._box(tile, c, chunk, resident)
            if load:
                target[c, slot] = (source[c, 0] if resident else source)[box]
            elif c % writers == 0:
                tile_data = source[c, slot]
                element = cast(MemRefType[Attribute] | TensorType[Attribute], memory_value.type).element_type
                (target[c, 0] if resident else target)[box] = store(tile_data, element)

    def _placement(
        self, tile_index: int, core_index: int, chunk: int
    ) -> tuple[np.ndarray, tuple, tuple[int, ...], tuple[int, ...]]:
        """Valid-lane mask, host coordinates (relative), host box start and shape of a tile."""
        layout, shape, _ = tensor_layout(self.args[tile_index].type)
        box = self._box(self.tiles[tile_index], core_index, chunk, False)
        index = _host_index(layout, shape)[box]
        valid = index >= 0
        if not shape:  # a 0-d tensor: one element
            return valid, (), (), ()
        coords = np.unravel_index(index[valid], shape)
        lo = tuple(int(c.min()) if c.size else 0 for c in coords)
        hi = tuple(int(c.max()) + 1 if c.size else 0 for c in coords)
        local = tuple(c - low for c, low in zip(coords, lo, strict=True))
        return valid, local, lo, tuple(h - low for h, low in zip(hi, lo, strict=True))

    @impl(core.ComputeOp)
    def _compute(self, op: core.ComputeOp) -> None:
        payload = op.payload.block.first_op
        assert payload is not None
        tiles = [int(t) for t in op.tiles.get_values()]
        chunk, slot = int(self.env[op.chunk]), int(self.env[op.slot])
        buffers = [self.env[v] for v in op.ins]
        out = self.env[op.outs[0]]
        accumulate = op.accumulate is not None
        for c in range(self.cores):
            hosts, starts = [], []
            for buffer, tile_index in zip(buffers, tiles, strict=False):
                valid, local, start, extent = self._placement(tile_index, c, chunk)
                host = np.zeros(extent, dtype=buffer.dtype)
                read = core.compute_read_slot(slot, buffer.shape[1])  # one slot: loaded once for all chunks
                held = buffer[c, read]
                window = core.compute_window(self.tiles[tile_index], held.shape, chunk)
                held = held if window is None else held[window]
                host[local] = held[valid].reshape(host[local].shape)
                hosts.append(host)
                starts.append(start)
            valid, local, _, extent = self._placement(tiles[-1], c, chunk)
            if isinstance(payload, st.AttentionOp) and accumulate:
                key = (op.outs[0], op.accumulator_slot(self.env), c)
                values = _tile_values(
                    payload, c, self._attention_chunk(payload, hosts, starts, key), local, extent
                )
                out[c, op.accumulator_slot(self.env)][valid] = values
                continue
            if isinstance(payload, st.AttentionOp):
                result = attention_tile(payload, hosts, starts)
            else:
                result = self._tile_result(payload, hosts, extent, accumulate)
            values = _tile_values(payload, c, result, local, extent)
            if accumulate:
                out[c, op.accumulator_slot(self.env)][valid] += values
            else:
                out[c, slot][valid] = values

    def _tile_result(
        self, payload: Operation, hosts: list[np.ndarray], extent: tuple[int, ...], accumulate: bool
    ) -> np.ndarray:
        return tile_result(payload, hosts, extent, accumulate)

    @impl(core.RingReduceOp)
    def _ring_reduce(self, op: core.RingReduceOp) -> None:
        buffer, slot, group = self.env[op.buffer], int(self.env[op.slot]), op.group.value.data
        combine = {"add": np.add, "max": np.maximum, "min": np.minimum}[op.combine.data]
        for first in range(0, self.cores, group):
            for partner in range(first + 1, first + group):
                buffer[first, slot] = combine(buffer[first, slot], buffer[partner, slot])


def _tile_values(
    payload: Operation, core_index: int, result: np.ndarray, local: tuple, extent: tuple[int, ...]
) -> np.ndarray:
    """The output tile's valid lanes of one core's result, or an error when the tiles disagree."""
    try:
        return np.asarray(result)[local].reshape(-1)
    except (IndexError, ValueError):
        raise ExecutionError(
            f"'{payload.name}' on core {core_index}: its operand tiles give a result of host shape "
            f"{list(np.shape(result))}, but its output tile covers {list(extent)}: the tiles of one "
            "compute must cover matching host boxes"
        ) from None


def attention_tile(
    payload: st.AttentionOp, hosts: list[np.ndarray], starts: Sequence[Sequence[int]]
) -> np.ndarray:
    """`ktir.attention` on one core's tiles; `starts` are their host box starts (q's row, k's key)."""
    return attention(payload, hosts, query_start=int(starts[0][3]), key_start=int(starts[1][2]))


def tile_result(
    payload: Operation, hosts: list[np.ndarray], extent: tuple[int, ...], accumulate: bool
) -> np.ndarray:
    """The payload op on host tiles; `extent` is the output tile's host shape."""
    if accumulate:
        x, y = hosts
        return np.matmul(x.astype(np.float64), y[..., : x.shape[-1], :].astype(np.float64))
    if isinstance(payload, st.FusedOp):
        return run_fused(payload, hosts)
    if isinstance(payload, st.ReshapeOp):
        return hosts[0].reshape(extent)
    if isinstance(payload, st.ExpandOp):
        return np.broadcast_to(hosts[0], extent)
    if isinstance(payload, ew.FullOp):  # only the tile, not the whole tensor, on each core
        return np.broadcast_to(full_value(payload), extent)
    implementation = IMPLEMENTATIONS.lookup(payload)
    if implementation is None:
        raise ExecutionError(f"the core executor has no implementation of '{payload.name}'")
    return implementation(payload, hosts)[0]
