"""
Chunk loops and chunk indices of a core-level kernel as `ktdp` + `scf`.

- A chunk index is a constant, a chunk loop's induction variable, or `arith.muli` / `addi` of
  those (a K loop nested in a loop over output tiles: chunk `n * 16 + k`): `Chunk` holds its
  SSA name in the emitted program and every value it takes, and `index_op` writes the
  arithmetic (folding constants) when an operand is a loop's. Other index arithmetic (the LX
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

from dataclasses import dataclass

import numpy as np
from xdsl.dialects import arith
from xdsl.ir import Operation, SSAValue

from ktir.dialects.ktir import core
from ktir.export.ktdp_payload import Writer


@dataclass(frozen=True)
class Chunk:
    """The chunk an op works on: `name` None for a constant, else its SSA name, and its values."""

    name: str | None
    values: tuple[int, ...]


Index = int | Chunk | None
"""An index value of the kernel: a constant, a chunk index, or unknown (slot arithmetic)."""

_FOLD = {arith.MuliOp: lambda a, b: a * b, arith.AddiOp: lambda a, b: a + b}
_CONSTANT_ONLY = {arith.RemUIOp: lambda a, b: a % b}
"""Folded when both operands are constants (an LX slot: `n mod 2` of a constant output tile)."""


def index_op(writer: Writer, op: Operation, operands: list[Index]) -> Index:
    """
    An index op's value: constants folded, a product or sum involving a chunk index written
    (module docstring); None for other index arithmetic.
    """
    if (slot := _CONSTANT_ONLY.get(type(op))) is not None and all(isinstance(v, int) for v in operands):
        return slot(*operands)
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
    chunks = [v if isinstance(v, Chunk) else Chunk(None, (int(v),)) for v in (a, b)]  # type: ignore[arg-type]
    names = [c.name if c.name is not None else _constant(writer, c.values[0]) for c in chunks]
    result = writer.fresh("n")
    writer.emit(f"{result} = {op.name} {names[0]}, {names[1]} : index")
    values = sorted({fold(x, y) for x in chunks[0].values for y in chunks[1].values})
    return Chunk(result, tuple(values))


def _constant(writer: Writer, value: int) -> str:
    name = writer.fresh("c")
    writer.emit(f"{name} = arith.constant {value} : index")
    return name


def offset(writer: Writer, values: np.ndarray, chunk: Chunk) -> str | None:
    """
    An `index` operand that is `values[i]` at chunk `chunk.values[i]`: a literal when it is one
    value, else `chunk * a + b` written in `arith`; None when it is not linear in the chunk.
    Example: windows at 0, 4, 8 of chunks 0, 1, 2 are `%k0 * 4`.
    """
    if len(set(values.tolist())) == 1:
        return str(int(values[0]))
    ks = np.array(chunk.values)
    slope = int(values[1] - values[0]) // int(ks[1] - ks[0])
    start = int(values[0] - slope * ks[0])
    if not (values == slope * ks + start).all() or chunk.name is None:
        return None
    scaled = writer.fresh("o")
    writer.emit(f"{scaled} = arith.muli {chunk.name}, {_constant(writer, slope)} : index")
    if start == 0:
        return scaled
    moved = writer.fresh("o")
    writer.emit(f"{moved} = arith.addi {scaled}, {_constant(writer, start)} : index")
    return moved


def writes_accumulator(body: Operation, buffer: SSAValue) -> bool:
    """Whether a loop's body (at any depth) fills, adds into or reduces `buffer`."""
    for inner in body.walk():
        if isinstance(inner, core.FillOp | core.RingReduceOp) and inner.buffer == buffer:
            return True
        if isinstance(inner, core.ComputeOp) and inner.accumulate is not None and inner.outs[0] == buffer:
            return True
    return False


__all__ = ["Chunk", "Index", "index_op", "offset", "writes_accumulator"]
