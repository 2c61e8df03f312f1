"""
What a kernel iterates over (`IterationSpace`) and the layout lookup every iteration-space
builder shares (`ktir.cores.iteration` for single ops, `ktir.cores.fusion` for fused groups).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from xdsl.ir import Operation, SSAValue

from ktir.cores.tiling import Access
from ktir.dialects.ktir import structured as st
from ktir.dialects.ktir.attributes import ComputeUnit
from ktir.ir.values import encoding_of, shape_of
from ktir.layout.spyre import SpyreTensorLayout


class IterationError(ValueError):
    """An op that cannot be lowered to a kernel (no layout, or no iteration space for it)."""

    def __init__(self, op: Operation, message: str) -> None:
        super().__init__(message)
        self.op = op


@dataclass(frozen=True)
class IterationSpace:
    """
    What one kernel iterates over: `sizes` (output dims first, then reduced ones),
    `reduction` (dims summed or maxed over), `whole` (dims a core must see whole), one
    `Access` per tensor operand (None for a non-tensor operand) and one for the result, and
    the compute unit: `pt` (the PE array) for matmul, `sfu` for everything else; a fused
    kernel also lists its intermediates (`scratch`).
    """

    sizes: dict[str, int]
    reduction: tuple[str, ...]
    whole: frozenset[str]
    inputs: tuple[Access | None, ...]
    output: Access
    unit: ComputeUnit
    scratch: tuple[Access, ...] = ()
    """Tensors a fused kernel keeps in LX between its ops (none for a single op)."""
    scratch_live: tuple[tuple[int, int], ...] = ()
    """For each of `scratch`: the positions of the op that makes it and of its last reader."""
    products: int = 1
    """Matmuls a matmul kernel accumulates side by side from one x (`inputs[0]`), each through
    its own y (`inputs[1 : 1 + products]`): two for SwiGLU's gate and up with their epilogue."""
    chunkable: frozenset[str] = frozenset()
    """Dims of `whole` no work division splits but a core may still walk in chunks when its
    tiles do not fit LX otherwise: attention's keys, over which it keeps an online softmax."""

    @property
    def accesses(self) -> list[Access]:
        """Every tensor access, inputs first."""
        return [a for a in (*self.inputs, self.output) if a is not None]


def layout_of(op: Operation, value: SSAValue) -> SpyreTensorLayout:
    """The `#ktir.tiled` layout of `value`; an `IterationError` if it has none."""
    layout = encoding_of(value)
    if layout is None:
        raise IterationError(
            op, f"'{op.name}' has a tensor without a layout; run ktir-propagate-layouts first"
        )
    return layout


def normalized_dims(op: st.SoftmaxOp | st.NormOp) -> list[int]:
    """The dims a softmax or a norm normalizes over (whole on a core)."""
    rank = len(shape_of(op.results[0].type))
    if isinstance(op, st.SoftmaxOp):
        return [cast(int, op.dim.value.data) % rank]
    return list(range(rank - len(st.ints(op.normalized_shape)), rank))


__all__ = ["IterationError", "IterationSpace", "layout_of", "normalized_dims"]
