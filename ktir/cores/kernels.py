"""
The kernels of a divided graph: each op with a `work_division`, its iteration space, and the
tile of every tensor on every core.

`kernel_of(op)` reads what `ktir-divide-work` decided and answers the questions the later
passes ask: how many cores run the op, which slice each core gets (mixed radix, first dim
fastest, except that a split K goes first so K partners are ring neighbours, or in the order the
op records, `ktir.core_order`), and the device
box of a tensor on a core (`ktir.cores.tiling.device_box`). Example: `abs` on (4, 64) fp16 with
`{d0: 2, d1: 1}` runs on 2 cores; core 1 holds rows 2-3, device box start (0, 2, 0), extent
(1, 2, 64).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

from xdsl.ir import Operation

from ktir.cores.iteration import IterationSpace, iteration_space
from ktir.cores.tiling import Access, device_box
from ktir.cores.work_division import core_slices
from ktir.ir.diagnostics import op_error
from ktir.ir.state import read_core_order


@dataclass(frozen=True)
class Kernel:
    """One divided op: its iteration space and `splits` (dim -> slices, every dim)."""

    op: Operation
    space: IterationSpace
    splits: dict[str, int]
    order: tuple[str, ...] = ()
    """The recorded core order (`ktir.core_order`), fastest first; () for the default order."""

    @property
    def cores(self) -> int:
        """Cores the kernel runs on: the product of the splits."""
        return math.prod(self.splits.values())

    @property
    def k_split(self) -> int:
        """Cores that share one output tile and add up their partial sums (1: none)."""
        return math.prod(self.splits[d] for d in self.space.reduction)

    @cached_property
    def slices(self) -> list[dict[str, int]]:
        """
        Each core's slice index per dim: in the recorded core order, else the division's order
        with a split reduction dim fastest.
        """
        fastest = self.order or [d for d in self.space.reduction if self.splits[d] > 1][:1]
        return core_slices(self.splits, fastest)

    def boxes(self, access: Access) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
        """(start, extent) of `access`'s device box on each core."""
        return [device_box(access, self.splits, piece) for piece in self.slices]

    def tile_bytes(self, access: Access) -> int:
        """Bytes of one core's tile of `access` (every core's tile has the same extents)."""
        _, extent = device_box(access, self.splits, self.slices[0])
        return math.prod(extent) * access.layout.device_dtype.element_bytes


def kernel_of(op: Operation, splits: dict[str, int] | None, cores: int | None = None) -> Kernel | None:
    """
    The kernel of a graph-level op with its split (and the core order it records,
    `ktir.core_order`), or None if the op is not a kernel. A located error for a split that
    cuts a dim into fewer than 1 or more slices than it has positions, or, given the target's
    `cores`, one that needs more cores.
    """
    space = iteration_space(op)
    if space is None or splits is None:
        return None
    order = read_core_order(op) if splits else ()
    kernel = Kernel(op, space, {d: splits.get(d, 1) for d in space.sizes}, order)
    _check_splits(kernel, cores)
    split_reduction = [d for d in space.reduction if kernel.splits[d] > 1]
    if order and split_reduction and order[0] != split_reduction[0]:
        # K partners add their partial sums over the ring as consecutive cores
        raise op_error(op, f"'ktir.core_order' must put the split reduction dim '{split_reduction[0]}' first")
    return kernel


def _check_splits(kernel: Kernel, cores: int | None) -> None:
    """`kernel_of`'s checks of a division read from the IR (a hand-written one may be anything)."""
    for dim, count in kernel.splits.items():
        size = kernel.space.sizes[dim]
        if not 1 <= count <= size:
            raise op_error(
                kernel.op,
                f"'ktir.work_division' cuts '{dim}' into {count} slices; a dim of {size} takes 1 to {size}",
            )
    if cores is not None and kernel.cores > cores:
        raise op_error(
            kernel.op, f"'ktir.work_division' needs {kernel.cores:,} cores, more than the target's {cores}"
        )
