"""
Core-level ktir as RFC 0682 `ktdp` + `linalg`, in torch-spyre's emitter form, built op by op.

Each `ktir.kernel` becomes one function `@k<i>_<op>` with `{grid = [cores]}` and one `index`
argument per kernel tensor (its inputs `%in<j>`, then its results `%out<j>`): the element offset
of the tensor's device buffer. Inside:
- a `#ktdp.memory_space<global>` view per tensor over its device buffer, `sizes` its device
  size, row-major strides, the coordinate set the whole box (`access`);
- a `ktir.dma_load` of tile t is a direct access tile at the core's box start (subscripts from
  `get_compute_tile_id`: `a * %id + b` when the starts are affine in the core, else a
  `tensor.extract` from a constant table of starts), its `access_tile_order` the device dims
  in host order, then a `ktdp.load`, and `collapse_shape` / `expand_shape` to the host tile;
- a `ktir.compute` is its payload in `linalg` (`compute`) on those tiles;
- a `ktir.dma_store` reshapes the host tile back and stores it through its access tile.

Chunk loops are `scf.for` loops over the chunks, carrying the accumulators their bodies add
into (`loops`); a whole-slice load is one access tile over the core's slice, each chunk's
compute reading its window (`buffers`). A K-split kernel's accumulator zero, its accumulating
matmul, its ring reduction and its store by some cores are built by `accumulate`. A resident
LX tensor (a matmul's result handed off to the matmul reading it, `ktir.cores.handoff`) is a
`ktdp.construct_distributed_memory_view` of one `#ktdp.memory_space<ct_local, ct_id = c>`
view per core (`access`). What is not written yet is a located error at the ktir op:
alternating accumulators and accumulating computes other than a matmul, a resident tensor of
several slots, tiles whose device box is not one host box (`ktir.sim.host_tiles.HostTiles`),
and payload ops without a `linalg` form (`compute.emit_payload`).
"""

from __future__ import annotations

import math
from typing import cast

import numpy as np
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import (
    ArrayAttr,
    Float16Type,
    FunctionType,
    IndexType,
    IntegerAttr,
    ModuleOp,
    TensorType,
    i64,
)
from xdsl.ir import Block, Operation, Region, SSAValue

from ktir.dialects.ktdp.ops import GetComputeTileIdOp, LoadOp, StoreOp
from ktir.dialects.ktir import core
from ktir.dialects.ktir import structured as st
from ktir.export.to_ktdp.access import GLOBAL, AccessTiles, KernelTensor, memory_view
from ktir.export.to_ktdp.accumulate import writers_condition
from ktir.export.to_ktdp.buffers import BufferWriting, WholeSlice, name_buffer
from ktir.export.to_ktdp.compute import RELAYOUTS, emit_compute_payload
from ktir.export.to_ktdp.emitter import Emitter, HostTensor
from ktir.export.to_ktdp.loops import (
    Chunk,
    Index,
    Key,
    after,
    alternating,
    following,
    index_constant,
    index_op,
    inside,
    writes_accumulator,
)
from ktir.export.to_ktdp.tensors import (
    copied,
    extract_slice,
    permutes_elements,
    reshaped,
    transpose,
    zero_padded,
)
from ktir.ir.diagnostics import op_error
from ktir.ir.values import tensor_layout
from ktir.sim.host_tiles import HostTiles


class KernelConversion(BufferWriting, AccessTiles):
    """One kernel's function and the routines it calls (module docstring)."""

    def __init__(self, kernel: core.KernelOp, name: str) -> None:
        self.kernel = kernel
        self.name = name
        self.cores = kernel.cores.value.data
        args = list(kernel.body.block.args)
        self.body = Block(arg_types=[IndexType()] * len(args))
        self.routines: list[func.FuncOp | None] = []
        self.emitter = Emitter.at_end(self.body, name, self.routines)
        self.index: dict[SSAValue, Index] = {}
        self.buffers: dict[tuple[SSAValue, int | None], HostTensor] = {}  # by buffer and slot (`_held`)
        # LX accumulators (`lx_fill`, accumulating computes, ring reductions): each buffer's
        # tile padded to whole sticks, as ktir's LX buffer holds it, and the compute writing it
        self.accumulators: dict[Key, HostTensor] = {}  # by buffer and slot
        self.wholes: dict[SSAValue, HostTiles] = {}  # buffers holding a core's whole slice
        self.accumulating: dict[SSAValue, core.ComputeOp] = {
            op.outs[0]: op
            for op in kernel.body.walk()
            if isinstance(op, core.ComputeOp) and op.accumulate is not None
        }
        self.relayouts: set[SSAValue] = set()  # buffers a relayout kernel computes (`_relayout`)
        self.resident_views: dict[SSAValue, SSAValue] = {}  # resident LX tensors' distributed views
        self.tiles = list(kernel.tiles.data)
        inputs = len(kernel.inputs)
        for i, arg in enumerate(self.body.args):
            arg.name_hint = f"in{i}" if i < inputs else f"out{i - inputs}"
        self.tile_id = self.emitter.named(GetComputeTileIdOp(), "id")
        self.tensors: dict[SSAValue, KernelTensor] = {}
        for arg, offset in zip(args, self.body.args, strict=True):
            layout, _, _ = tensor_layout(arg.type)
            element = cast(TensorType, arg.type).element_type
            size = tuple(layout.device_size)
            view = self.emitter.named(memory_view(offset, size, element, GLOBAL), f"v{offset.name_hint}")
            self.tensors[arg] = KernelTensor(view, size, element)

    def build(self) -> list[func.FuncOp]:
        """The kernel's function, then the routines it calls."""
        for op in self.kernel.body.block.ops:
            self._op(op)
        self.emitter.add(func.ReturnOp())
        function = func.FuncOp(self.name, FunctionType.from_lists(self.body.arg_types, []), Region(self.body))
        function.attributes["grid"] = ArrayAttr([IntegerAttr(self.cores, i64)])
        return [function, *(cast(func.FuncOp, r) for r in self.routines)]

    def _op(self, op: Operation) -> None:
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
            self.index[op.result] = op.value.value.data
        elif isinstance(op, core.CoreIdOp | core.LxAllocOp | core.YieldOp):
            self._declared(op)
        elif isinstance(op, core.DmaLoadOp):
            self._load(op)
        elif isinstance(op, core.DmaStoreOp):
            self._store(op)
        elif isinstance(op, core.ComputeOp):
            self._compute(op)
        elif isinstance(op, core.FillOp):
            self._fill(op)
        elif isinstance(op, core.RingReduceOp):
            self._ring_reduce(op)
        elif isinstance(op, scf.ForOp):
            self._loop(op)
        elif op.name.startswith("arith.") and all(isinstance(r.type, IndexType) for r in op.results):
            # a chunk index (`loops.index_op`), or slot arithmetic: ktdp values need no slots
            self.index[op.results[0]] = index_op(self.emitter, op, [self.index.get(v) for v in op.operands])
        else:
            raise op_error(op, f"ktir-emit-ktdp does not write '{op.name}' in a kernel yet")

    def _loop(self, op: scf.ForOp) -> None:
        """
        A chunk loop: an `scf.for` over the same chunks, its body's tiles per chunk, carrying
        the accumulators made before it that its body adds into (`loops`).
        """
        bounds = [self.index.get(v) for v in (op.lb, op.ub, op.step)]
        if not all(isinstance(b, int) for b in bounds) or op.iter_args:
            raise op_error(op, "a chunk loop must have constant bounds and no iter_args")
        lower, upper, step = (int(b) for b in cast("list[int]", bounds))
        e = self.emitter
        limits = [
            index_constant(e, value, stem)
            for value, stem in zip((lower, upper, step), ("lb", "ub", "step"), strict=True)
        ]
        carried = [key for key in self.accumulators if writes_accumulator(op, key, self.index)]
        starts = [self.accumulators[b] for b in carried]
        body = Block(arg_types=[IndexType(), *(t.type for t in starts)])
        induction = body.args[0]
        e.name([induction], "k")
        swapping = alternating(op, self.index)
        if swapping and step != 1:
            raise op_error(op, "alternating accumulators in a loop of step other than 1 are not written yet")
        keys = [inside(key, induction, lower, swapping) for key in carried]
        results = self._carry(body, carried, keys)
        self.index[op.body.block.args[0]] = Chunk(induction, tuple(range(lower, upper, step)))
        outside, accumulators = dict(self.buffers), dict(self.accumulators)
        with e.inside(body):
            for inner in op.body.block.ops:
                if not isinstance(inner, scf.YieldOp):
                    self._op(inner)
            ends = [self.accumulators[following(key, induction)].value for key in keys]
            e.add(scf.YieldOp(*ends))
        loop = e.add(scf.ForOp(limits[0], limits[1], limits[2], [t.value for t in starts], body))
        if results is not None:
            for value in loop.results:
                value.name_hint = results
        self.buffers = outside  # a tile the body loads or computes is not seen after the loop
        self.accumulators = {b: t for b, t in accumulators.items() if b not in keys}
        for key, value in zip(keys, loop.results, strict=True):
            self.accumulators[after(key, induction, upper)] = HostTensor(value)

    def _carry(self, body: Block, carried: list[Key], keys: list[Key]) -> str | None:
        """
        The accumulators `carried` (their keys in the body `keys`) bound in the loop's `body` to
        its iteration arguments; the name of the loop's results (None when it carries nothing).
        """
        if not carried:
            return None
        results = self.emitter.fresh("acc")
        for arg in body.args[1:]:
            self.emitter.name([arg], "a")
        for key in carried:
            del self.accumulators[key]
        for key, arg in zip(keys, body.args[1:], strict=True):
            self.accumulators[key] = HostTensor(arg)
        return results

    def _chunk(self, value: SSAValue, op: Operation) -> Chunk:
        """The chunk an op works on: a constant, or a chunk loop's induction variable."""
        known = self.index.get(value)
        if isinstance(known, int):
            return Chunk(None, (known,))
        if isinstance(known, Chunk):
            return known
        raise op_error(op, "its chunk must be a constant or a chunk loop's induction variable")

    def _chunk_hosts(self, op: Operation, tile_index: int, chunk: Chunk) -> list[HostTiles]:
        """The tile's host boxes (padded) on every core in each chunk of `chunk`, in its order."""
        tile = self.tiles[tile_index]
        layout, shape, _ = tensor_layout(self.kernel.body.block.args[tile_index].type)
        extent = tuple(int(e) for e in tile.extent_array)
        hosts = []
        for k in chunk.values:
            starts = tile.starts_array + tile.chunk_starts_array[k]
            host = HostTiles.of(layout, shape, extent, starts, self.cores, padded=True)
            if host is None:
                raise op_error(
                    op,
                    f"tile {tile_index}'s device box is not one host box on every core (it cuts a stick "
                    "or a multi-dim group, or spans a broadcast dim): ktir-emit-ktdp does not write it yet",
                )
            hosts.append(host)
        return hosts

    def _host_map(self, op: Operation, tile_index: int, chunk: Chunk) -> tuple[HostTiles, tuple[int, ...]]:
        """The tile's host map (padded), the same for every chunk, and the host extent it holds."""
        _, shape, _ = tensor_layout(self.kernel.body.block.args[tile_index].type)
        hosts = self._chunk_hosts(op, tile_index, chunk)
        maps = []
        for host in hosts:
            # The host positions a box holds: its padded extent less what lies past the tensor.
            held = np.minimum(np.array(host.extent), np.array(shape) - host.lo)
            if (held != held[0]).any() or (held[0] <= 0).any():
                raise op_error(
                    op,
                    f"tile {tile_index} holds host boxes of different shapes on different cores: "
                    "not written yet",
                )
            picks = tuple(-1 if isinstance(pick, slice) else pick for pick in host.index)
            maps.append((picks, host.perm, host.extent, tuple(int(n) for n in held[0])))
        if any(m != maps[0] for m in maps):
            raise op_error(op, f"tile {tile_index} maps onto the host differently in different chunks")
        return hosts[0], maps[0][3]

    def _tile_start(self, op: Operation, tile_index: int, chunk: Chunk, dim: int) -> SSAValue:
        """
        The core's host start of a tile along `dim` in the chunk `op` works on: a table of the
        cores' starts in the first chunk, plus the chunk's shift from it, which must be the same
        on every core (linear in a chunk loop's variable, else a table's entry). Example: a
        causal attention's query chunks 0..7 of 64 rows from core c's start s_c start at
        `s_c + 64 * k` in chunk k.
        """
        self._host_map(op, tile_index, chunk)  # the same box shape in every chunk
        starts = np.array([host.lo[:, dim] for host in self._chunk_hosts(op, tile_index, chunk)])
        shifts = starts - starts[:1]  # chunks x cores
        if (shifts != shifts[:, :1]).any():
            raise op_error(
                op,
                f"tile {tile_index}'s chunks move its start by different amounts on different cores: "
                "not written yet",
            )
        first = self._table(starts[0], self.tile_id)
        shift = self._offset(shifts[:, 0], chunk)
        if isinstance(shift, int):  # one value: the first chunk's shift, 0
            return first
        return self.emitter.value(arith.AddiOp(first, shift), "s")

    def _declared(self, op: core.CoreIdOp | core.LxAllocOp | core.YieldOp) -> None:
        """
        Tile starts come from the kernel's tiles and LX slots are ktdp values: nothing to build,
        but for a resident tensor's view, made here at the kernel's top level so that every DMA
        of it, in a loop or after one, sees it.
        """
        if isinstance(op, core.LxAllocOp) and op.resident is not None:
            self._resident_view(op.result, op)

    def _load(self, op: core.DmaLoadOp) -> None:
        chunk = self._chunk(op.chunk, op)
        tile_index = op.tile.value.data
        view = self._resident_view(op.source, op)
        if op.whole is not None:  # the core's whole slice, read by each chunk's compute in windows
            original = self.tiles[tile_index]
            self.tiles[tile_index] = WholeSlice.of(original)
            try:
                tile, _, host, held = self._access_tile(op, tile_index, Chunk(None, (0,)), view=view)
            finally:
                self.tiles[tile_index] = original
            self.wholes[op.target] = host
        else:
            tile, _, host, held = self._access_tile(op, tile_index, chunk, view=view)
        element = self._tensor_of(tile_index).element
        value = self.emitter.tensor(LoadOp(tile, element))
        name_buffer(value.value.owner, op.target)
        self.buffers[self._held(op.target, op.slot)] = self._slice(
            reshaped(self.emitter, value, host.extent), held
        )

    def _slice(self, value: HostTensor, held: tuple[int, ...]) -> HostTensor:
        """The host positions of a padded host tile (its leading `held` box)."""
        if value.shape == held:
            return value
        return extract_slice(self.emitter, value, [0] * len(held), held)

    def _store(self, op: core.DmaStoreOp) -> None:
        chunk = self._chunk(op.chunk, op)
        tile_index = op.tile.value.data
        view = self._resident_view(op.target, op)
        value = self._read(op.source, op.slot, op, tile_index, chunk)
        if value is None:
            raise op_error(op, "it stores a buffer no load or compute before it wrote")
        relayout = op.source in self.relayouts
        tile, loaded, host, held = self._access_tile(op, tile_index, chunk, device_order=relayout, view=view)
        if value.shape != held:
            raise op_error(op, f"its buffer holds a {value.shape} tile, the store moves {held}")
        element = self._tensor_of(tile_index).element
        # An fp32 accumulator stored into an fp16 tensor: the DMA converts it, as ktir's does
        # (`ktdp.store` writes its data in the view's element type).
        converts = op.source in self.accumulating and isinstance(element, Float16Type)
        if value.element != element and not converts:
            raise op_error(op, f"it stores a {value.element} buffer into a {element} tensor")
        padded = zero_padded(self.emitter, value, host.extent)
        data = (
            self._relayout(op, padded, tile_index, chunk)
            if relayout
            else reshaped(self.emitter, padded, loaded)
        )
        writers = 1 if op.writers is None else op.writers.value.data
        if writers == 1:
            self.emitter.add(StoreOp(data.value, tile))
            return
        # A K-split kernel's result is on each group's first core only: it alone stores.
        condition = writers_condition(self.emitter, self.tile_id, writers)
        self.emitter.add(scf.IfOp(condition, [], [StoreOp(data.value, tile), scf.YieldOp()]))

    def _relayout(self, op: Operation, padded: HostTensor, tile_index: int, chunk: Chunk) -> HostTensor:
        """
        A relayout kernel's move (ktir: one SFU pass over the output tile in its device
        layout): the padded host tile, as device dims in host order, transposed into device
        order, or copied when the orders agree. Example: a 1 x 24 x 64 tile stored as device
        [4, 16, 1, 1, 64] (host dim 1 in the sticks) is the 1 x 1 x 64 x 4 x 16 tensor
        transposed by [3, 4, 0, 1, 2]: 4,096 elements, 64 sticks.
        """
        host, _ = self._host_map(op, tile_index, chunk)
        extent, order = self._device_dims(host, tile_index)
        in_host_order = reshaped(self.emitter, padded, tuple(extent[d] for d in order))
        perm = [order.index(d) for d in range(len(order))]
        if not permutes_elements(in_host_order.shape, perm):
            return copied(self.emitter, reshaped(self.emitter, in_host_order, extent))
        return transpose(self.emitter, in_host_order, perm)

    def _operands(self, op: core.ComputeOp, tiles: list[int], chunk: Chunk) -> list[HostTensor]:
        """The host tiles a compute reads, one per input buffer."""
        operands = []
        for value, tile_index in zip(op.ins, tiles, strict=False):
            operand = self._read(value, op.slot, op, tile_index, chunk)
            if operand is None:
                raise op_error(op, "it reads a buffer no load wrote")
            operands.append(operand)
        return operands

    def _compute(self, op: core.ComputeOp) -> None:
        payload = op.payload.block.first_op
        assert payload is not None
        chunk = self._chunk(op.chunk, op)
        tiles = [int(t) for t in op.tiles.get_values()]
        operands = self._operands(op, tiles, chunk)
        if op.accumulate is not None:
            self._accumulate(op, payload, operands, chunk)
            return
        _, held = self._host_map(op, tiles[-1], chunk)

        def start_of(operand: int, dim: int) -> SSAValue:
            return self._tile_start(op, tiles[operand], chunk, dim)

        sticks = None
        if isinstance(payload, st.MatmulOp | st.BmmOp):  # K and N of its tiles in whole sticks
            k_sticks, n_sticks = (self._host_map(op, tiles[t], chunk)[0].extent[-1] for t in (0, -1))
            sticks = (k_sticks, n_sticks)
        result = emit_compute_payload(self.emitter, payload, operands, held, start_of, sticks)
        if math.prod(result.shape) != math.prod(held):
            raise op_error(op, f"its payload gives a {result.shape} tile, its output tile holds {held}")
        name_buffer(result.value.owner, op.outs[0])
        self.buffers[self._held(op.outs[0], op.slot)] = reshaped(self.emitter, result, held)
        if isinstance(payload, RELAYOUTS):
            self.relayouts.add(op.outs[0])


def kernel_names(module: ModuleOp) -> list[tuple[str, core.KernelOp]]:
    """Every kernel of `module` in program order with the name of its function: `k<i>_<op>`."""
    kernels = [op for op in module.walk() if isinstance(op, core.KernelOp)]
    return [(f"k{i}_{k.op_name.data.removeprefix('ktir.')}", k) for i, k in enumerate(kernels)]


def convert_kernel(kernel: core.KernelOp, name: str) -> list[func.FuncOp]:
    """
    One kernel as a ktdp function and the routines it calls; a located `DiagnosticError` for
    what is not written yet.
    """
    return KernelConversion(kernel, name).build()


__all__ = ["KernelConversion", "convert_kernel", "kernel_names"]
