"""
Core-level ktir as RFC 0682 `ktdp` + `linalg` text, in torch-spyre's emitter form.

Each `ktir.kernel` becomes one function `@k<i>_<op>` with `{grid = [cores]}` and one `index`
argument per kernel tensor (its inputs `%in<j>`, then its results `%out<j>`): the element offset
of the tensor's device buffer. Inside:
- a `#ktdp.memory_space<global>` view per tensor over its device buffer, `sizes` its device
  size, row-major strides, the coordinate set the whole box;
- a `ktir.dma_load` of tile t is a direct access tile at the core's box start (subscripts from
  `get_compute_tile_id`: `a * %id + b` when the starts are affine in the core, else a
  `tensor.extract` from a constant table of starts), its `access_tile_order` the device dims
  in host order, then a `ktdp.load`, and `collapse_shape` / `expand_shape` to the host tile;
- a `ktir.compute` is its payload in `linalg` (`ktir.export.ktdp_payload`) on those tiles;
- a `ktir.dma_store` reshapes the host tile back and stores it through its access tile.

Example: a 16 x 256 f16 result with device size [4, 16, 64] (column sticks outermost) whose
tile on core c is extent [1, 2, 64] at start [c // 8, 2 (c mod 8), 0] is written through
`%v[%s0, %s1, 0]` with `access_tile_order = (d0, d1, d2) -> (d1, d0, d2)`: the loaded 2 x 1 x 64
tensor collapses to the 2 x 64 host tile (rows, then the stick's 64 columns).

Chunk loops are `scf.for` loops over the chunks, carrying the accumulators their bodies add
into (`ktir.export.ktdp_loops`); a whole-slice load is one access tile over the core's slice,
each chunk's compute reading its window. A K-split kernel's accumulator zero, its accumulating
matmul, its ring reduction and its store by some cores are written by
`ktir.export.ktdp_accumulate`. A resident LX tensor (a matmul's result handed off to the
matmul reading it, `ktir.cores.handoff`) is a `ktdp.construct_distributed_memory_view` of one
`#ktdp.memory_space<ct_local, ct_id = c>` view per core at its LX address, each covering that
core's slice in the tensor's device coordinates, so its loads and stores are access tiles at
the same subscripts as a device tensor's. What is not written yet is a located error:
alternating accumulators and accumulating computes other than a matmul, a resident tensor of
several slots, tiles whose device box is not one host box (`ktir.sim.host_tiles.HostTiles`),
and payload ops without a `linalg` form (`ktdp_payload.emit_payload`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import Float16Type, IndexType, IntegerAttr, MemRefType, ModuleOp, TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from ktir.dialects.ktir import core
from ktir.dialects.ktir import structured as st
from ktir.export.ktdp_accumulate import writers_condition
from ktir.export.ktdp_buffers import BufferWriting, WholeSlice
from ktir.export.ktdp_compute import RELAYOUTS, emit_compute_payload
from ktir.export.ktdp_loops import (
    Chunk,
    Index,
    Key,
    after,
    alternating,
    following,
    index_op,
    inside,
    writes_accumulator,
)
from ktir.export.ktdp_payload import (
    HostTensor,
    Writer,
    copied,
    dims_text,
    extract_slice,
    permutes_elements,
    reshaped,
    tensor_type,
    transpose,
    zero_padded,
)
from ktir.export.ktdp_subscripts import linear_subscript, start_subscript
from ktir.ir.diagnostics import Diagnostic, DiagnosticError, Severity, location_of, op_error
from ktir.ir.values import tensor_layout
from ktir.sim.host_tiles import HostTiles


@dataclass(frozen=True)
class _Tensor:
    """A kernel tensor: its argument name, device view name, device size and element type."""

    arg: str
    view: str
    device_size: tuple[int, ...]
    element: Attribute


def _box_set(extents: Sequence[int], starts: Sequence[int] | None = None) -> str:
    """The integer set of a box of `extents` from `starts` (default: the origin)."""
    starts = starts or [0] * len(extents)
    dims = ", ".join(f"d{i}" for i in range(len(extents)))
    constraints = ", ".join(
        f"{_shifted(f'd{i}', -a)} >= 0, {_shifted(f'-d{i}', a + n - 1)} >= 0"
        for i, (a, n) in enumerate(zip(starts, extents, strict=True))
    )
    return f"affine_set<({dims}) : ({constraints})>"


def _shifted(term: str, constant: int) -> str:
    """`term + constant` as an affine expression: `d0 - 64`, `-d0 + 127`, `d0`."""
    if constant == 0:
        return term
    return f"{term} + {constant}" if constant > 0 else f"{term} - {-constant}"


def _itemsize(tensor_type: Attribute, op: Operation) -> int:
    """
    Bytes of one device element of a tensor kept in LX (f16: 2), which must be its host
    element's too: the round trip places host arrays in LX. A located error otherwise (fp8, bf16).
    """
    layout, _, dtype = tensor_layout(tensor_type)
    device = layout.device_dtype.element_bytes
    if device != dtype.itemsize:
        raise op_error(op, f"a resident {dtype} tensor of {device}-byte device elements is not written yet")
    return device


def _memref(shape: Sequence[int], element: Attribute) -> str:
    return f"memref<{dims_text(shape)}{element}>"


class _KernelWriter(BufferWriting):
    """One kernel's function (module docstring)."""

    def __init__(self, kernel: core.KernelOp, name: str) -> None:
        self.kernel = kernel
        self.name = name
        self.cores = kernel.cores.value.data
        self.writer = Writer(function=name)
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
        self.resident_views: dict[SSAValue, str] = {}  # resident LX tensors' distributed views
        self.tensors: dict[SSAValue, _Tensor] = {}
        self.tiles = list(kernel.tiles.data)
        args = list(kernel.body.block.args)
        inputs = len(kernel.inputs)
        for i, arg in enumerate(args):
            stem = f"in{i}" if i < inputs else f"out{i - inputs}"
            layout, _, _ = tensor_layout(arg.type)
            element = cast(TensorType, arg.type).element_type
            self.tensors[arg] = _Tensor(f"%{stem}", f"%v{stem}", tuple(layout.device_size), element)

    def text(self) -> str:
        """The function's text."""
        w = self.writer
        w.emit("%id = ktdp.get_compute_tile_id : index")
        for tensor in self.tensors.values():
            size = tensor.device_size
            strides = [math.prod(size[d + 1 :]) for d in range(len(size))]
            w.emit(
                f"{tensor.view} = ktdp.construct_memory_view {tensor.arg}, sizes: {list(size)}, "
                f"strides: {strides} {{coordinate_set = {_box_set(size)}, memory_space = "
                f"#ktdp.memory_space<global>}} : {_memref(size, tensor.element)}"
            )
        for op in self.kernel.body.block.ops:
            self._op(op)
        w.emit("return")
        args = ", ".join(f"{t.arg}: index" for t in self.tensors.values())
        head = f"func.func @{self.name}({args}) attributes {{grid = [{self.cores}]}} {{"
        return "\n".join([head, *w.lines, "}", *w.routines])

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
            # a chunk index (`ktdp_loops.index_op`), or slot arithmetic: ktdp values need no slots
            self.index[op.results[0]] = index_op(self.writer, op, [self.index.get(v) for v in op.operands])
        else:
            raise op_error(op, f"ktir-emit-ktdp does not write '{op.name}' in a kernel yet")

    def _loop(self, op: scf.ForOp) -> None:
        """
        A chunk loop: an `scf.for` over the same chunks, its body's tiles per chunk, carrying
        the accumulators made before it that its body adds into (`ktdp_loops`).
        """
        bounds = [self.index.get(v) for v in (op.lb, op.ub, op.step)]
        if not all(isinstance(b, int) for b in bounds) or op.iter_args:
            raise op_error(op, "a chunk loop must have constant bounds and no iter_args")
        lower, upper, step = (int(b) for b in cast("list[int]", bounds))
        w = self.writer
        names = [w.fresh(stem) for stem in ("lb", "ub", "step")]
        for name, value in zip(names, bounds, strict=True):
            w.emit(f"{name} = arith.constant {value} : index")
        induction = w.fresh("k")
        carried = [key for key in self.accumulators if writes_accumulator(op, key, self.index)]
        starts = [self.accumulators[b] for b in carried]
        swapping = alternating(op, self.index)
        if swapping and step != 1:
            raise op_error(op, "alternating accumulators in a loop of step other than 1 are not written yet")
        keys = [inside(key, induction, lower, swapping) for key in carried]
        head = f"scf.for {induction} = {names[0]} to {names[1]} step {names[2]}"
        head, results = self._carry(head, carried, keys, starts)
        w.emit(f"{head} {{")
        self.index[op.body.block.args[0]] = Chunk(induction, tuple(range(lower, upper, step)))
        outside, accumulators = dict(self.buffers), dict(self.accumulators)
        w.depth += 1
        for inner in op.body.block.ops:
            if not isinstance(inner, scf.YieldOp):
                self._op(inner)
        if carried:
            ends = [self.accumulators[following(key, induction)] for key in keys]
            w.emit(f"scf.yield {', '.join(t.name for t in ends)} : {', '.join(t.type_text for t in ends)}")
        w.depth -= 1
        w.emit("}")
        self.buffers = outside  # a tile the body loads or computes is not seen after the loop
        self.accumulators = {b: t for b, t in accumulators.items() if b not in keys}
        for k, (key, start) in enumerate(zip(keys, starts, strict=True)):
            name = results if len(carried) == 1 else f"{results}#{k}"
            self.accumulators[after(key, induction, upper)] = HostTensor(name, start.shape, start.element)

    def _carry(
        self, head: str, carried: list[Key], keys: list[Key], starts: list[HostTensor]
    ) -> tuple[str, str]:
        """
        A loop's head with `iter_args` for the accumulators `carried` (their keys in the body
        `keys`), bound in the body to its arguments; and the name of the loop's results.
        """
        if not carried:
            return head, ""
        w = self.writer
        results = w.fresh("acc")
        args = [w.fresh("a") for _ in carried]
        pairs = ", ".join(f"{a} = {t.name}" for a, t in zip(args, starts, strict=True))
        types = ", ".join(t.type_text for t in starts)
        count = f":{len(carried)}" if len(carried) > 1 else ""
        for key in carried:
            del self.accumulators[key]
        for key, arg, start in zip(keys, args, starts, strict=True):
            self.accumulators[key] = HostTensor(arg, start.shape, start.element)
        return f"{results}{count} = {head} iter_args({pairs}) -> ({types})", results

    def _chunk(self, value: SSAValue, op: Operation) -> Chunk:
        """The chunk an op works on: a constant, or a chunk loop's induction variable."""
        known = self.index.get(value)
        if isinstance(known, int):
            return Chunk(None, (known,))
        if isinstance(known, Chunk):
            return known
        raise op_error(op, "its chunk must be a constant or a chunk loop's induction variable")

    def _host_map(self, op: Operation, tile_index: int, chunk: Chunk) -> tuple[HostTiles, tuple[int, ...]]:
        """The tile's host map (padded), the same for every chunk, and the host extent it holds."""
        tile = self.tiles[tile_index]
        layout, shape, _ = tensor_layout(self.kernel.body.block.args[tile_index].type)
        extent = tuple(int(e) for e in tile.extent_array)
        maps, first = [], None
        for k in chunk.values:
            starts = tile.starts_array + tile.chunk_starts_array[k]
            host = HostTiles.of(layout, shape, extent, starts, self.cores, padded=True)
            if host is None:
                raise op_error(
                    op,
                    f"tile {tile_index}'s device box is not one host box on every core (it cuts a stick "
                    "or a multi-dim group, or spans a broadcast dim): ktir-emit-ktdp does not write it yet",
                )
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
            first = first or host
        if any(m != maps[0] for m in maps):
            raise op_error(op, f"tile {tile_index} maps onto the host differently in different chunks")
        assert first is not None
        return first, maps[0][3]

    def _start(self, cores: np.ndarray, chunks: np.ndarray, chunk: Chunk) -> str:
        """
        A subscript of a tile's start along one device dim: the core's part (`cores`, per core)
        plus the chunk's (`chunks`, per chunk index), each a literal, an affine expression of
        `%id` or the loop's induction variable (`start_subscript`), or an entry of a table.
        """
        core_part = self._part(cores, "%id")
        if chunk.name is None:
            chunk_part = str(int(chunks[chunk.values[0]]))
        else:
            values = np.array([chunks[k] for k in chunk.values])
            chunk_part = linear_subscript(values, chunk.values, chunk.name) or self._table(chunks, chunk.name)
        if chunk_part == "0":
            return core_part
        return chunk_part if core_part == "0" else f"{core_part} + {chunk_part}"

    def _part(self, column: np.ndarray, variable: str) -> str:
        if (expression := start_subscript(column)) is not None:
            return expression
        return self._table(column, variable)

    def _table(self, column: np.ndarray, variable: str) -> str:
        w = self.writer
        table, values = w.fresh("starts"), ", ".join(str(int(v)) for v in column)
        w.emit(f"{table} = arith.constant dense<[{values}]> : tensor<{len(column)}xi64>")
        entry, start = w.fresh("s"), w.fresh("s")
        w.emit(f"{entry} = tensor.extract {table}[{variable}] : tensor<{len(column)}xi64>")
        w.emit(f"{start} = arith.index_cast {entry} : i64 to index")
        return start

    def _device_dims(self, host: HostTiles, tile_index: int) -> tuple[tuple[int, ...], list[int]]:
        """
        A DMA's extent along each device dim and the device dims in host order. A device dim
        that holds no host data in the box (size 1, or synthetic: data at position 0 only) is
        moved at position 0 only (extent 1) and comes first.
        """
        kept = [d for d, pick in enumerate(host.index) if isinstance(pick, slice)]
        dropped = [d for d, pick in enumerate(host.index) if not isinstance(pick, slice)]
        extent = tuple(
            1 if d in dropped else int(e) for d, e in enumerate(self.tiles[tile_index].extent_array)
        )
        return extent, dropped + [kept[p - 1] for p in host.perm[1:]]

    def _access_tile(
        self,
        op: Operation,
        tile_index: int,
        chunk: Chunk,
        device_order: bool = False,
        view: str | None = None,
    ) -> tuple[str, tuple[int, ...], HostTiles, tuple[int, ...]]:
        """
        The access tile of a DMA (its name and the shape it moves, device dims in host order
        unless `device_order`), the tile's host map and held extent; on the tensor's device
        memory view, or on `view`, a resident LX tensor's distributed view of the same coordinates.
        """
        host, held = self._host_map(op, tile_index, chunk)
        tile = self.tiles[tile_index]
        tensor = self._tensor_of(tile_index)
        extent, order = self._device_dims(host, tile_index)
        subscripts = ", ".join(
            self._start(tile.starts_array[:, d], tile.chunk_starts_array[:, d], chunk)
            for d in range(len(extent))
        )
        dims = ", ".join(f"d{d}" for d in range(len(extent)))
        name = self.writer.fresh("tile")
        if device_order:
            order = list(range(len(extent)))
        loaded = tuple(extent[d] for d in order)
        self.writer.emit(
            f"{name} = ktdp.construct_access_tile {view or tensor.view}[{subscripts}] {{access_tile_set = "
            f"{_box_set(extent)}, access_tile_order = affine_map<({dims}) -> "
            f"({', '.join(f'd{d}' for d in order)})>}} : {_memref(tensor.device_size, tensor.element)} -> "
            f"!ktdp.access_tile<{dims_text(loaded)}index>"
        )
        return name, loaded, host, held

    def _reshaped(self, value: HostTensor, shape: tuple[int, ...]) -> HostTensor:
        return reshaped(self.writer, value, shape)

    def _tensor_of(self, tile_index: int) -> _Tensor:
        """The kernel tensor a tile index names."""
        return self.tensors[self.kernel.body.block.args[tile_index]]

    def _declared(self, op: core.CoreIdOp | core.LxAllocOp | core.YieldOp) -> None:
        """
        Tile starts come from the kernel's tiles and LX slots are ktdp values: nothing to write,
        but for a resident tensor's view, made here at the kernel's top level so that every DMA
        of it, in a loop or after one, sees it.
        """
        if isinstance(op, core.LxAllocOp) and op.resident is not None:
            self._resident_view(op.result, op)

    def _resident_view(self, buffer: SSAValue, op: Operation) -> str | None:
        """
        The distributed view (`ktdp.construct_distributed_memory_view`) of a resident LX tensor
        a DMA moves `buffer` to or from, None for a device tensor: one `ct_local` member per
        core at the buffer's LX address, holding the core's slice of the tensor (the buffer's
        extent, row-major, from the core's start of tile `tile_index`), so that an access tile
        addresses it by the tensor's device coordinates as it would its device memory view.
        Example: a 256 x 2048 fp16 result kept at address 0 as each core's [8, 32, 64] slice:
        core 1's member covers device coordinates [8..15, 0..31, 0..63] of [32, 256, 64].
        """
        if not isinstance(buffer.type, MemRefType):
            return None
        if (known := self.resident_views.get(buffer)) is not None:
            return known
        alloc = buffer.owner
        if not isinstance(alloc, core.LxAllocOp) or alloc.resident is None:
            raise op_error(op, "it moves an LX buffer that is not a resident tensor's")
        moves = [
            u.operation for u in buffer.uses if isinstance(u.operation, core.DmaLoadOp | core.DmaStoreOp)
        ]
        if not moves:
            raise op_error(alloc, "a resident tensor no DMA moves is not written")
        tile_index = moves[0].tile.value.data
        tensor = self._tensor_of(tile_index)
        slots, *extent = (int(n) for n in buffer.type.get_shape())
        itemsize = _itemsize(self.kernel.body.block.args[tile_index].type, alloc)
        if slots != 1 or alloc.address.value.data % itemsize:
            raise op_error(
                op, "resident tensors of several slots or at unaligned addresses are not written yet"
            )
        w = self.writer
        offset = w.fresh("lx")
        w.emit(f"{offset} = arith.constant {alloc.address.value.data // itemsize} : index")
        strides = [math.prod(extent[d + 1 :]) for d in range(len(extent))]
        members = []
        for core_index, start in enumerate(self.tiles[tile_index].starts_array):
            member = w.fresh("m")
            w.emit(
                f"{member} = ktdp.construct_memory_view {offset}, sizes: {extent}, strides: {strides} "
                f"{{coordinate_set = {_box_set(extent, [int(x) for x in start])}, memory_space = "
                f"#ktdp.memory_space<ct_local, ct_id = {core_index}>}} : {_memref(extent, tensor.element)}"
            )
            members.append(member)
        view = w.fresh("resident")
        member_type = _memref(extent, tensor.element)
        w.emit(
            f"{view} = ktdp.construct_distributed_memory_view({', '.join(members)} : "
            f"{', '.join([member_type] * len(members))}) : {_memref(tensor.device_size, tensor.element)}"
        )
        self.resident_views[buffer] = view
        return view

    def _load(self, op: core.DmaLoadOp) -> None:
        chunk = self._chunk(op.chunk, op)
        tile_index = op.tile.value.data
        view = self._resident_view(op.source, op)
        if op.whole is not None:  # the core's whole slice, read by each chunk's compute in windows
            original = self.tiles[tile_index]
            self.tiles[tile_index] = WholeSlice.of(original)
            try:
                tile, loaded, host, held = self._access_tile(op, tile_index, Chunk(None, (0,)), view=view)
            finally:
                self.tiles[tile_index] = original
            self.wholes[op.target] = host
        else:
            tile, loaded, host, held = self._access_tile(op, tile_index, chunk, view=view)
        element = self._tensor_of(tile_index).element
        value = HostTensor(self.writer.fresh("t"), loaded, element)
        self.writer.emit(f"{value.name} = ktdp.load {tile} : <{dims_text(loaded)}index> -> {value.type_text}")
        self.buffers[self._held(op.target, op.slot)] = self._slice(self._reshaped(value, host.extent), held)

    def _slice(self, value: HostTensor, held: tuple[int, ...]) -> HostTensor:
        """The host positions of a padded host tile (its leading `held` box)."""
        if value.shape == held:
            return value
        return extract_slice(self.writer, value, [0] * len(held), held)

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
        padded = zero_padded(self.writer, value, host.extent)
        data = self._relayout(op, padded, tile_index, chunk) if relayout else self._reshaped(padded, loaded)
        store = f"ktdp.store {data.name}, {tile} : {data.type_text}, <{dims_text(loaded)}index>"
        writers = 1 if op.writers is None else op.writers.value.data
        if writers == 1:
            self.writer.emit(store)
            return
        # A K-split kernel's result is on each group's first core only: it alone stores.
        self.writer.emit(f"scf.if {writers_condition(self.writer, writers)} {{")
        self.writer.emit(store, 2)
        self.writer.emit("}")

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
        in_host_order = self._reshaped(padded, tuple(extent[d] for d in order))
        perm = [order.index(d) for d in range(len(order))]
        if not permutes_elements(in_host_order.shape, perm):
            return copied(self.writer, self._reshaped(in_host_order, extent))
        return transpose(self.writer, in_host_order, perm)

    def _compute(self, op: core.ComputeOp) -> None:
        payload = op.payload.block.first_op
        assert payload is not None
        chunk = self._chunk(op.chunk, op)
        tiles = [int(t) for t in op.tiles.get_values()]
        operands = []
        for value, tile_index in zip(op.ins, tiles, strict=False):
            operand = self._read(value, op.slot, op, tile_index, chunk)
            if operand is None:
                raise op_error(op, "it reads a buffer no load wrote")
            operands.append(operand)
        if op.accumulate is not None:
            self._accumulate(op, payload, operands, chunk)
            return
        out_tile = tiles[-1]
        _, held = self._host_map(op, out_tile, chunk)

        def start_of(operand: int, dim: int) -> str:
            host, _ = self._host_map(op, tiles[operand], chunk)
            return self._table(host.lo[:, dim], "%id")

        sticks = None
        if isinstance(payload, st.MatmulOp | st.BmmOp):  # K and N of its tiles in whole sticks
            k_sticks, n_sticks = (self._host_map(op, tiles[t], chunk)[0].extent[-1] for t in (0, -1))
            sticks = (k_sticks, n_sticks)
        result = emit_compute_payload(self.writer, payload, operands, held, start_of, sticks)
        if math.prod(result.shape) != math.prod(held):
            raise op_error(op, f"its payload gives a {result.shape} tile, its output tile holds {held}")
        self.buffers[self._held(op.outs[0], op.slot)] = self._reshaped(result, held)
        if isinstance(payload, RELAYOUTS):
            self.relayouts.add(op.outs[0])


def kernel_names(module: ModuleOp) -> list[tuple[str, core.KernelOp]]:
    """Every kernel of `module` in program order with the name of its function: `k<i>_<op>`."""
    kernels = [op for op in module.walk() if isinstance(op, core.KernelOp)]
    return [(f"k{i}_{k.op_name.data.removeprefix('ktir.')}", k) for i, k in enumerate(kernels)]


def emit_kernel(kernel: core.KernelOp, name: str) -> str:
    """One kernel as a ktdp function's text; a located `DiagnosticError` for what is not written yet."""
    return _KernelWriter(kernel, name).text()


def emit_module(module: ModuleOp) -> str:
    """
    Every kernel of a core-level module as one ktdp module's text (function-level views and
    host ops are not kernels: they are left out). Raises one `DiagnosticError` listing every
    kernel that cannot be written.
    """
    functions, errors = [], []
    for name, kernel in kernel_names(module):
        try:
            functions.append(emit_kernel(kernel, name))
        except DiagnosticError as error:
            errors.extend(error.diagnostics)
    if errors:
        raise DiagnosticError(errors)
    if not functions:
        message = "the module has no ktir.kernel: run ktir-lower-to-cores (or ktir-compile) first"
        first = module.body.block.first_op
        raise DiagnosticError([Diagnostic(Severity.ERROR, message, location_of(first) if first else None)])
    return "builtin.module {\n" + "\n".join(functions) + "\n}\n"


__all__ = ["emit_kernel", "emit_module", "kernel_names", "tensor_type"]
