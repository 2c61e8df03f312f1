"""
The builder side of the ktdp conversion: where the next op goes, fresh SSA name hints, and the
host tiles the built program computes on.

`Emitter` inserts each op it is given at its insertion point (the kernel function's body, a
loop's, a `linalg.generic`'s region) and names its results `<stem><k>` (`%t3`, `%tile0`), the
names xDSL's printer then prints. A routine function the kernel calls is built by an emitter of
its own that shares the kernel's list of routines (`ktir.export.to_ktdp.routines`).

Example: `emitter.add(tensor.EmptyOp([], tensor_type((2, 64), f16)), "e")` inserts
`%e0 = tensor.empty() : tensor<2x64xf16>` and returns the op.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TypeVar, cast

from xdsl.builder import Builder
from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint

OpT = TypeVar("OpT", bound=Operation)


def tensor_type(shape: Sequence[int], element: Attribute) -> TensorType[Attribute]:
    """`tensor<2x64xf16>` (`tensor<f16>` for rank 0)."""
    return TensorType(element, list(shape))


@dataclass(frozen=True)
class HostTensor:
    """A tensor value of the built program (a host tile) and the type an op reads it in."""

    value: SSAValue
    read_as: Attribute | None = None
    """The narrower type an op reads it in (a matmul epilogue's fp32 accumulator read as fp16)."""

    @property
    def type(self) -> TensorType[Attribute]:
        """Its tensor type."""
        return cast(TensorType[Attribute], self.value.type)

    @property
    def shape(self) -> tuple[int, ...]:
        """Its host tile shape."""
        return tuple(self.type.get_shape())

    @property
    def element(self) -> Attribute:
        """Its element type."""
        return self.type.element_type


@dataclass
class Emitter:
    """
    An insertion point in the program being built, a supply of fresh name hints, and the
    routine functions the kernel calls (`ktir.export.to_ktdp.routines`), shared with their
    emitters.
    """

    builder: Builder
    function: str = "kernel"
    """The kernel function's name (routines are named after it)."""
    routines: list[func.FuncOp | None] = field(default_factory=lambda: [])
    """Every routine function the kernel calls, in the order they were started."""
    counts: dict[str, int] = field(default_factory=lambda: {})

    @classmethod
    def at_end(cls, block: Block, function: str, routines: list[func.FuncOp | None]) -> Emitter:
        """An emitter inserting at the end of `block`."""
        return cls(Builder(InsertPoint.at_end(block)), function, routines)

    def fresh(self, stem: str) -> str:
        """A new name hint `<stem><k>`."""
        k = self.counts.get(stem, 0)
        self.counts[stem] = k + 1
        return f"{stem}{k}"

    def add(self, op: OpT, stem: str | None = None) -> OpT:
        """Insert `op`; its results are named by a fresh `stem` (one name for all of them)."""
        self.builder.insert(op)
        if stem is not None:
            self.name(op.results, stem)
        return op

    def named(self, op: Operation, hint: str) -> SSAValue:
        """Insert a one-result op whose result is named `hint` (a name taken before it was built)."""
        self.builder.insert(op)
        op.results[0].name_hint = hint
        return op.results[0]

    def value(self, op: Operation, stem: str) -> SSAValue:
        """Insert a one-result op named by a fresh `stem`; its result."""
        return self.add(op, stem).results[0]

    def tensor(self, op: Operation, stem: str = "t") -> HostTensor:
        """Insert a one-result op whose result is a host tile, named by a fresh `stem`."""
        return HostTensor(self.value(op, stem))

    def name(self, values: Sequence[SSAValue], stem: str) -> None:
        """Name `values` by one fresh `stem`."""
        hint = self.fresh(stem)
        for value in values:
            value.name_hint = hint

    @contextmanager
    def inside(self, block: Block) -> Iterator[Block]:
        """Insert at the end of `block` (a region's body) until the context ends."""
        saved = self.builder.insertion_point
        self.builder.insertion_point = InsertPoint.at_end(block)
        try:
            yield block
        finally:
            self.builder.insertion_point = saved


__all__ = ["Emitter", "HostTensor", "tensor_type"]
