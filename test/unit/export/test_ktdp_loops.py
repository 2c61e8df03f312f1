"""Tests of the index arithmetic `ktir.export.to_ktdp.loops.index_op` folds or builds."""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Block
from xdsl.utils.test_value import create_ssa_value

from ktir.export.to_ktdp.emitter import Emitter
from ktir.export.to_ktdp.loops import Chunk, Parity, index_op


def _op(
    op_class: type[arith.AddiOp | arith.MuliOp | arith.RemUIOp],
) -> arith.AddiOp | arith.MuliOp | arith.RemUIOp:
    index = IndexType()
    return op_class(create_ssa_value(index), create_ssa_value(index))


def _emitter() -> tuple[Emitter, Block]:
    block = Block(arg_types=[IndexType()])
    return Emitter.at_end(block, "kernel", []), block


def test_constants_fold_and_a_chunk_plus_a_constant_is_built() -> None:
    emitter, block = _emitter()
    assert index_op(emitter, _op(arith.MuliOp), [3, 4]) == 12
    assert index_op(emitter, _op(arith.RemUIOp), [5, 2]) == 1
    k0 = block.args[0]
    k = Chunk(k0, (0, 1, 2), k0)
    shifted = index_op(emitter, _op(arith.AddiOp), [k, 16])
    constant, add = block.ops
    assert isinstance(constant, arith.ConstantOp) and constant.value == IntegerAttr(16, IndexType())
    assert isinstance(add, arith.AddiOp) and tuple(add.operands) == (k0, constant.result)
    assert shifted == Chunk(add.result, (16, 17, 18), k0, 16)
    assert (constant.result.name_hint, add.result.name_hint) == ("c0", "n0")


def test_arithmetic_on_a_slot_parity_has_no_ktdp_value() -> None:
    """`(k mod 2) + 1`, `3 * (k mod 2)`: neither a constant nor a chunk index (module docstring): None."""
    emitter, block = _emitter()
    k0 = block.args[0]
    parity = index_op(emitter, _op(arith.RemUIOp), [Chunk(k0, (0, 1, 2, 3), k0), 2])
    assert parity == Parity(k0, 0)
    assert index_op(emitter, _op(arith.AddiOp), [parity, 1]) is None
    assert index_op(emitter, _op(arith.AddiOp), [1, parity]) is None
    assert index_op(emitter, _op(arith.MuliOp), [3, parity]) is None
    assert index_op(emitter, _op(arith.AddiOp), [parity, Chunk(k0, (0, 1), k0)]) is None
    assert list(block.ops) == []  # nothing built for them
    # The identities still hold: `(k mod 2) * 1` is the parity, `(k mod 2) * 0` is 0.
    assert index_op(emitter, _op(arith.MuliOp), [parity, 1]) == parity
    assert index_op(emitter, _op(arith.MuliOp), [0, parity]) == 0
