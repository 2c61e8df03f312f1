"""
What a prefetch load (`ktir.dma_load ... prefetch`) may do, as one rule for the three places
that need it: `ktir-lower-to-cores` decides prefetches by it, and `ktir-check-cores` and the
simulator enforce it.

A prefetch runs in the previous kernel's time, so it may not read a tensor that kernel writes
(or a view of one: views between the two kernels keep it the previous kernel), nor fill LX
bytes that kernel uses. A `ktir.cpu_fallback` in between ends the previous kernel's reach: the
next kernel's loads wait for the host anyway. Example: `exp` then `matmul(exp, w)`: the matmul
may prefetch its tiles of `w` into LX the exp leaves free, never its tiles of the exp's result.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from ktir.dialects.ktir import core
from ktir.dialects.ktir import structured as st
from ktir.dialects.ktir.core_functions import TIMED_FUNCTION_LEVEL_OPS


@dataclass
class PreviousKernel:
    """The kernel before the next one while only views follow it: what it writes, its LX bytes."""

    written: set[SSAValue]
    lx: list[tuple[int, int]]
    """[low, high) byte ranges of LX the kernel (and resident tensors live then) uses."""

    def after(self, op: Operation) -> PreviousKernel | None:
        """Still the previous kernel after the function-level op `op`, or None after a timed one."""
        if isinstance(op, (st.CpuFallbackOp, *TIMED_FUNCTION_LEVEL_OPS)):
            return None  # a timed op runs between this kernel and the next
        if any(v in self.written for v in op.operands):
            self.written.update(op.results)  # a view of what the kernel wrote
        return self

    def conflict(self, load: core.DmaLoadOp, outer: Mapping[SSAValue, SSAValue]) -> str | None:
        """
        Why `load` may not run in this kernel's time (a phrase after "a prefetch"), or None.
        `outer` maps the next kernel's block arguments to the values they stand for.
        """
        if outer.get(load.source, load.source) in self.written:
            return "reads a tensor the previous kernel writes"
        alloc = load.target.owner
        if not isinstance(alloc, core.LxAllocOp):
            return None
        low = alloc.address.value.data
        high = low + alloc.bytes
        for used_low, used_high in self.lx:
            if low < used_high and used_low < high:
                return (
                    f"fills LX bytes [{low:,}, {high:,}), which the previous kernel uses "
                    f"([{used_low:,}, {used_high:,}))"
                )
        return None


def block_operands(kernel: core.KernelOp) -> dict[SSAValue, SSAValue]:
    """A kernel's block arguments mapped to the operands and results they stand for."""
    return dict(zip(kernel.body.block.args, [*kernel.inputs, *kernel.outputs], strict=True))


__all__ = ["PreviousKernel", "block_operands"]
