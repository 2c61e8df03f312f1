"""
Chunk loops and chunk indices of a core-level kernel as `ktdp` + `scf`.

- A chunk index is a constant, a chunk loop's induction variable, or `arith.muli` / `addi` of
  those (a K loop nested in a loop over output tiles: chunk `n * 16 + k`): `Chunk` holds its
  value in the built program and every value it takes, and `index_op` builds the arithmetic
  (folding constants) when an operand is a loop's. Other index arithmetic (the LX
  slot of a chunk, `k mod 2`) has no ktdp value: ktdp tensors need no slots.
- A chunk loop whose body adds into an accumulator made before it (`lx_fill`, then a K loop of
  accumulating matmuls) carries the accumulator: `scf.for ... iter_args(%a = %acc)`, its body
  ending in `scf.yield` of the accumulator's new value, the loop's result the accumulator
  after it (`carried`).

Example: `ktir.lx_fill %acc`, then `scf.for %k = 0 to 32 { dma_load ...; compute ... accumulate }`
becomes `%acc1 = scf.for %k0 = %lb0 to %ub0 step %step0 iter_args(%a0 = %t4) ->
(tensor<128x512xf32>) { ...; %t9 = linalg.matmul ... outs(%a0 ...); scf.yield %t9 : ... }`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType
from xdsl.ir import Operation, SSAValue

from ktir.dialects.ktir import core
from ktir.export.to_ktdp.emitter import Emitter


@dataclass(frozen=True)
class Chunk:
    """
    The chunk an op works on: `value` None for a constant, else its index in the built program,
    and its values; `base` and `shift` when it is a loop's variable plus a constant (`base` the
    variable).
    """

    value: SSAValue | None
    values: tuple[int, ...]
    base: SSAValue | None = None
    shift: int = 0


@dataclass(frozen=True)
class Parity:
    """The slot `(variable + offset) mod 2` of a loop's variable: one of two alternating buffers."""

    variable: SSAValue
    offset: int


Index = int | Chunk | Parity | None
"""An index value of the kernel: a constant, a chunk index, a slot's parity, or unknown."""

_FOLD = {arith.MuliOp: lambda a, b: a * b, arith.AddiOp: lambda a, b: a + b}
_CONSTANT_ONLY: dict[type[Operation], Callable[[int, int], int]] = {arith.RemUIOp: lambda a, b: a % b}
"""Folded when both operands are constants (an LX slot: `n mod 2` of a constant output tile)."""


def index_op(emitter: Emitter, op: Operation, operands: list[Index]) -> Index:
    """
    An index op's value: constants folded, a product or sum involving a chunk index built
    (module docstring); None for other index arithmetic.
    """
    if (slot := _CONSTANT_ONLY.get(type(op))) is not None and all(isinstance(v, int) for v in operands):
        return slot(*cast("list[int]", operands))
    if isinstance(op, arith.RemUIOp) and operands[1] == 2 and isinstance(operands[0], Chunk):
        chunk = operands[0]
        base = chunk.base or chunk.value
        return Parity(base, chunk.shift % 2) if base is not None else None
    fold = _FOLD.get(type(op))
    if fold is None or any(v is None for v in operands):
        return None
    a, b = operands
    if isinstance(a, int) and isinstance(b, int):
        return fold(a, b)
    identity = 1 if isinstance(op, arith.MuliOp) else 0
    if isinstance(op, arith.MuliOp) and 0 in (a, b):
        return 0
    if b == identity:
        return a
    if a == identity:
        return b
    if not (isinstance(a, int | Chunk) and isinstance(b, int | Chunk)):
        return None  # arithmetic on a slot's `Parity`: neither a constant nor a chunk index
    shifted = _shifted(op, a, b)
    chunks = [v if isinstance(v, Chunk) else Chunk(None, (int(v),)) for v in (a, b)]
    lhs, rhs = (c.value if c.value is not None else index_constant(emitter, c.values[0]) for c in chunks)
    op_type = arith.MuliOp if isinstance(op, arith.MuliOp) else arith.AddiOp
    result = emitter.value(op_type(lhs, rhs), "n")
    values = sorted({fold(x, y) for x in chunks[0].values for y in chunks[1].values})
    return Chunk(result, tuple(values), *shifted)


def _shifted(op: Operation, a: Index, b: Index) -> tuple[SSAValue | None, int]:
    """A sum's (base, shift) when it is a loop's variable (plus a constant) plus a constant."""
    if isinstance(op, arith.AddiOp) and isinstance(a, Chunk) and isinstance(b, int):
        return (a.base or a.value), a.shift + b
    if isinstance(op, arith.AddiOp) and isinstance(b, Chunk) and isinstance(a, int):
        return (b.base or b.value), b.shift + a
    return None, 0


def index_constant(emitter: Emitter, value: int, stem: str = "c") -> SSAValue:
    """An `index` constant, named by a fresh `stem`."""
    return emitter.value(arith.ConstantOp(IntegerAttr(value, IndexType())), stem)


def offset(emitter: Emitter, values: np.ndarray, chunk: Chunk) -> int | SSAValue | None:
    """
    An `index` operand that is `values[i]` at chunk `chunk.values[i]`: a literal when it is one
    value, else `chunk * a + b` built in `arith`; None when it is not linear in the chunk.
    Example: windows at 0, 4, 8 of chunks 0, 1, 2 are `%k0 * 4`.
    """
    if len(set(values.tolist())) == 1:
        return int(values[0])
    ks = np.array(chunk.values)
    slope = int(values[1] - values[0]) // int(ks[1] - ks[0])
    start = int(values[0] - slope * ks[0])
    if not (values == slope * ks + start).all() or chunk.value is None:
        return None
    scaled_name = emitter.fresh("o")
    scaled = emitter.named(arith.MuliOp(chunk.value, index_constant(emitter, slope)), scaled_name)
    if start == 0:
        return scaled
    moved_name = emitter.fresh("o")
    return emitter.named(arith.AddiOp(scaled, index_constant(emitter, start)), moved_name)


def alternating(body: Operation, known: dict[SSAValue, Index]) -> set[SSAValue]:
    """
    The two-slot accumulators a loop's body writes at a slot it computes (`n mod 2` of the loop's
    variable), not at a constant slot known before the loop.
    """
    found = set()
    for inner in body.walk():
        if isinstance(inner, core.FillOp | core.RingReduceOp):
            buffer, slot = inner.buffer, inner.slot
        elif isinstance(inner, core.ComputeOp) and inner.into is not None:
            buffer, slot = inner.outs[0], inner.into
        else:
            continue
        if cast(MemRefType, buffer.type).get_shape()[0] == 2 and not isinstance(known.get(slot), int):
            found.add(buffer)
    return found


Key = tuple[SSAValue, "int | Parity"]
"""An accumulator: its buffer and slot (a constant, or the parity of a loop's variable)."""


def inside(key: Key, variable: SSAValue, lower: int, buffers: set[SSAValue]) -> Key:
    """
    A carried accumulator's key in the loop body: slot s of a buffer the body alternates is
    slot `(n + p) mod 2` with p = s - lower (mod 2) in the iteration of variable n.
    """
    buffer, slot = key
    if buffer not in buffers or not isinstance(slot, int):
        return key
    return buffer, Parity(variable, (slot - lower) % 2)


def following(key: Key, variable: SSAValue) -> Key:
    """
    The key whose value the body of the loop over `variable` yields for `key`: its parity p in
    the next iteration is p + 1 in this one (a parity of an outer loop's variable stays).
    """
    buffer, slot = key
    if not isinstance(slot, Parity) or slot.variable != variable:
        return key
    return buffer, Parity(variable, (slot.offset + 1) % 2)


def after(key: Key, variable: SSAValue, upper: int) -> Key:
    """
    A carried accumulator's key after the loop over `variable`: its parity p at n = upper is
    slot (upper + p) mod 2.
    """
    buffer, slot = key
    if not isinstance(slot, Parity) or slot.variable != variable:
        return key
    return buffer, (upper + slot.offset) % 2


def writes_accumulator(body: Operation, key: Key, known: dict[SSAValue, Index]) -> bool:
    """
    Whether a loop's body (at any depth) fills, adds into or reduces the accumulator `key`: its
    buffer at its slot, or at a slot the body computes (one of two alternating with the loop).
    """
    buffer, slot = key
    for inner in body.walk():
        if isinstance(inner, core.FillOp | core.RingReduceOp) and inner.buffer == buffer:
            written: SSAValue | None = inner.slot
        elif isinstance(inner, core.ComputeOp) and inner.accumulate is not None and inner.outs[0] == buffer:
            written = inner.into
        else:
            continue
        one_slot = cast(MemRefType, buffer.type).get_shape()[0] == 1
        value = 0 if written is None else known.get(written)
        if one_slot or value is None or value == slot:
            return True
    return False


__all__ = [
    "Chunk",
    "Index",
    "Key",
    "Parity",
    "after",
    "alternating",
    "following",
    "index_constant",
    "index_op",
    "inside",
    "offset",
    "writes_accumulator",
]
