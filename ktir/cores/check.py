"""
Static checks of core-level ktir: every core's scratchpad and every DMA stays in bounds.

`check_function(function, target)` walks the kernels in program order. A resident LX buffer (a
planned scratchpad tensor) is live from the first kernel that allocates it to the last; at
every kernel, its own buffers and the live resident ones must lie inside the usable LX
(`Target.lx_usable_bytes`) without overlapping, and every `ktir.dma_load` / `ktir.dma_store`
must stay inside its tensor's device box (or its resident buffer) on every core and chunk.
A violation raises `CoreCheckError` naming the op, the core and the byte counts, e.g.

    'ktir.lx_alloc' at 1,572,864 + 262,144 bytes overruns the 1,677,721 usable bytes of LX
    on every core (core 0: live 1,835,008 bytes)
"""

from __future__ import annotations

import itertools
from typing import cast

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, TensorType
from xdsl.ir import Operation

from ktir.cores.prefetch import PreviousKernel, block_operands
from ktir.dialects.ktir import core
from ktir.dialects.ktir.attributes import TiledLayoutAttr
from ktir.hardware.target import Target
from ktir.ir.liveness import live_sets


class CoreCheckError(ValueError):
    """A core-level program that overflows LX or moves data out of bounds; `op` is the culprit."""

    def __init__(self, op: Operation, message: str) -> None:
        super().__init__(message)
        self.op = op


def _allocs(kernel: core.KernelOp) -> list[core.LxAllocOp]:
    return [op for op in kernel.body.walk() if isinstance(op, core.LxAllocOp)]


def check_function(function: func.FuncOp, target: Target) -> None:
    """Check every kernel of `function` (see the module docstring)."""
    kernels = [op for op in function.body.block.ops if isinstance(op, core.KernelOp)]
    # A resident buffer starts at the kernel that stores to it and lasts to its last reader;
    # the planner may reuse an address once a buffer is dead, so the address alone is no key.
    lifetime: dict[tuple[int, int, int], tuple[int, int]] = {}
    current: dict[int, tuple[int, int, int]] = {}
    for position, kernel in enumerate(kernels):
        stored = {op.target for op in kernel.body.walk() if isinstance(op, core.DmaStoreOp)}
        for alloc in _allocs(kernel):
            if alloc.resident is None:
                continue
            address = alloc.address.value.data
            if alloc.result in stored or address not in current:
                current[address] = (address, alloc.bytes, position)
            key = current[address]
            lifetime[key] = (lifetime.get(key, (position, position))[0], position)
    resident_at = list(
        live_sets([(first, last, key) for key, (first, last) in lifetime.items()], len(kernels))
    )
    for kernel, resident in zip(kernels, resident_at, strict=True):
        _check_lx(kernel, resident, target)
        for op in kernel.body.walk():
            if isinstance(op, (core.DmaLoadOp, core.DmaStoreOp)):
                _check_dma(kernel, op)
    _check_prefetches(function, resident_at, kernels)


def _check_prefetches(
    function: func.FuncOp, resident_at: list[list[tuple[int, int, int]]], kernels: list[core.KernelOp]
) -> None:
    """
    A prefetch load (`ktir.dma_load ... prefetch`) runs in the previous kernel's time: it may
    not read what that kernel writes (or a view of it), nor fill LX that kernel or a resident
    buffer live then uses (`ktir.cores.prefetch`). With no kernel before it, or a host op in
    between, it is an ordinary load.
    """
    position = {kernel: i for i, kernel in enumerate(kernels)}
    previous: PreviousKernel | None = None
    for op in function.body.block.ops:
        if not isinstance(op, core.KernelOp):
            previous = previous.after(op) if previous is not None else None
            continue
        if previous is not None:
            outer = block_operands(op)
            for load in op.body.walk():
                if isinstance(load, core.DmaLoadOp) and load.prefetch is not None:
                    if (reason := previous.conflict(load, outer)) is not None:
                        raise CoreCheckError(load, f"a prefetch load {reason}")
        used = [(a.address.value.data, a.address.value.data + a.bytes) for a in _allocs(op)]
        used += [(lo, lo + size) for lo, size, _ in resident_at[position[op]]]
        previous = PreviousKernel(set(op.results), used)


def _check_lx(kernel: core.KernelOp, resident: list[tuple[int, int, int]], target: Target) -> None:
    usable = target.lx_usable_bytes
    ranges: list[tuple[int, int, Operation]] = []
    own = set()
    for alloc in _allocs(kernel):
        lo = alloc.address.value.data
        hi = lo + alloc.bytes
        if alloc.resident is not None:
            if (lo, alloc.bytes) in own:
                continue  # an in-place result over the input it replaces
            own.add((lo, alloc.bytes))
        ranges.append((lo, hi, alloc))
    for lo, size, _ in resident:
        if (lo, size) not in own:
            ranges.append((lo, lo + size, kernel))
    live = sum(hi - lo for lo, hi, _ in ranges)
    for lo, hi, op in ranges:
        if hi > usable:
            raise CoreCheckError(
                op,
                f"'{op.name}' at {lo:,} + {hi - lo:,} bytes overruns the {usable:,} usable bytes of LX "
                f"on every core (core 0: live {live:,} bytes)",
            )
    ordered = sorted(ranges, key=lambda r: (r[0], r[1]))
    for (lo_a, hi_a, op_a), (lo_b, hi_b, _) in itertools.pairwise(ordered):
        if lo_b < hi_a:
            raise CoreCheckError(
                op_a,
                f"LX buffers [{lo_a:,}, {hi_a:,}) and [{lo_b:,}, {hi_b:,}) overlap while both are live "
                f"(core 0: live {live:,} of {usable:,} usable bytes)",
            )


def _check_dma(kernel: core.KernelOp, op: core.DmaLoadOp | core.DmaStoreOp) -> None:
    index = op.tile.value.data
    tiles = kernel.tiles.data
    if not 0 <= index < len(tiles):
        raise CoreCheckError(op, f"'{op.name}' names tile {index}; the kernel has {len(tiles)}")
    tile = tiles[index]
    lx_side = op.target if isinstance(op, core.DmaLoadOp) else op.source
    memory_side = op.source if isinstance(op, core.DmaLoadOp) else op.target
    lx_type = lx_side.type
    assert isinstance(lx_type, MemRefType)
    whole = isinstance(op, core.DmaLoadOp) and op.whole is not None
    expected = tile.whole_extent if whole else tile.extent
    if tuple(lx_type.get_shape()[1:]) != expected:
        raise CoreCheckError(
            op,
            f"'{op.name}': LX buffer {list(lx_type.get_shape()[1:])} does not hold "
            f"tile {'whole slice' if whole else 'extent'} {list(expected)}",
        )
    memory_type = memory_side.type
    starts = tile.starts_array
    if isinstance(memory_type, TensorType):
        bounds = np.array(cast(TiledLayoutAttr, memory_type.encoding).tiled.device_size)
    else:
        assert isinstance(memory_type, MemRefType)
        bounds = np.array(memory_type.get_shape()[1:])
        starts = np.zeros_like(starts)  # a resident buffer holds the core's own slice
    # ends[core, chunk, dim]: one past the last position each (core, chunk) DMA touches
    ends = starts[:, None, :] + tile.chunk_starts_array[None, :, :] + tile.extent_array
    outside = np.argwhere((ends > bounds).any(axis=2))
    if outside.size:
        core_index, chunk_index = (int(i) for i in outside[0])
        tile_bytes = int(np.prod(tile.extent_array)) * _element_bytes(lx_type)
        raise CoreCheckError(
            op,
            f"'{op.name}' of {tile_bytes:,} bytes on core {core_index}, chunk {chunk_index} ends at "
            f"device position {[int(v) for v in ends[core_index, chunk_index]]}, "
            f"outside the tensor's device size {[int(v) for v in bounds]}",
        )


def _element_bytes(memref: MemRefType) -> int:
    from ktir.dialects.ktir.attributes import device_dtype_of_element

    return device_dtype_of_element(memref.element_type).element_bytes
