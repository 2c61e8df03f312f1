"""Tests of the index arithmetic `ktir.export.ktdp_loops.index_op` folds or writes."""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType
from xdsl.utils.test_value import create_ssa_value

from ktir.export.ktdp_loops import Chunk, Parity, index_op
from ktir.export.ktdp_payload import Writer


def _op(
    op_class: type[arith.AddiOp | arith.MuliOp | arith.RemUIOp],
) -> arith.AddiOp | arith.MuliOp | arith.RemUIOp:
    index = IndexType()
    return op_class(create_ssa_value(index), create_ssa_value(index))


def test_constants_fold_and_a_chunk_plus_a_constant_is_written() -> None:
    writer = Writer()
    assert index_op(writer, _op(arith.MuliOp), [3, 4]) == 12
    assert index_op(writer, _op(arith.RemUIOp), [5, 2]) == 1
    k = Chunk("%k0", (0, 1, 2), "%k0")
    shifted = index_op(writer, _op(arith.AddiOp), [k, 16])
    assert shifted == Chunk("%n0", (16, 17, 18), "%k0", 16)
    assert writer.lines == ["  %c0 = arith.constant 16 : index", "  %n0 = arith.addi %k0, %c0 : index"]


def test_arithmetic_on_a_slot_parity_has_no_ktdp_value() -> None:
    """`(k mod 2) + 1`, `3 * (k mod 2)`: neither a constant nor a chunk index (module docstring): None."""
    writer = Writer()
    parity = index_op(writer, _op(arith.RemUIOp), [Chunk("%k0", (0, 1, 2, 3), "%k0"), 2])
    assert parity == Parity("%k0", 0)
    assert index_op(writer, _op(arith.AddiOp), [parity, 1]) is None
    assert index_op(writer, _op(arith.AddiOp), [1, parity]) is None
    assert index_op(writer, _op(arith.MuliOp), [3, parity]) is None
    assert index_op(writer, _op(arith.AddiOp), [parity, Chunk("%k0", (0, 1), "%k0")]) is None
    assert writer.lines == []  # nothing written for them
    # The identities still hold: `(k mod 2) * 1` is the parity, `(k mod 2) * 0` is 0.
    assert index_op(writer, _op(arith.MuliOp), [parity, 1]) == parity
    assert index_op(writer, _op(arith.MuliOp), [0, parity]) == 0
