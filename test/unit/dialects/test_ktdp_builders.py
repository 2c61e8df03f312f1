"""The typed builders of the ktdp ops (dialects/ktdp/ops.py, comm.py): what they build verifies and parses."""

from __future__ import annotations

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    AffineMapAttr,
    AffineSetAttr,
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    Float32Type,
    FunctionType,
    IndexType,
    IntAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    TensorType,
    f16,
)
from xdsl.ir import Block, Region
from xdsl.ir.affine import AffineConstraintExpr, AffineConstraintKind, AffineExpr, AffineMap, AffineSet

from ktir.dialects.ktdp.attributes import AccessTileType, MemorySpaceAttr, TileFutureType
from ktir.dialects.ktdp.comm import InterTileProduceOp, InterTileReduceOp, YieldPartialOp, YieldReducedOp
from ktir.dialects.ktdp.ops import (
    ConstructAccessTileOp,
    ConstructDistributedMemoryViewOp,
    ConstructMemoryViewOp,
    GetComputeTileIdOp,
    LoadOp,
    StoreOp,
)
from ktir.ir.context import make_context
from ktir.ir.diagnostics import module_text, parse_module, verify_module


def _box(*extents: int) -> AffineSetAttr:
    constraints = []
    for i, n in enumerate(extents):
        d = AffineExpr.dimension(i)
        constraints += [
            AffineConstraintExpr(AffineConstraintKind.ge, d, AffineExpr.constant(0)),
            AffineConstraintExpr(AffineConstraintKind.ge, -d + (n - 1), AffineExpr.constant(0)),
        ]
    return AffineSetAttr(AffineSet(len(extents), 0, tuple(constraints)))


def test_a_function_built_with_the_builders_verifies_and_prints_what_parses_back() -> None:
    block = Block(arg_types=[IndexType()])
    tile_id = GetComputeTileIdOp()
    space = MemorySpaceAttr(StringAttr("global"), IntAttr(-1))
    view = ConstructMemoryViewOp(
        block.args[0], [8, 64], [64, 1], _box(8, 64), space, MemRefType(f16, [8, 64])
    )
    local = MemorySpaceAttr(StringAttr("ct_local"), IntAttr(0))
    member = ConstructMemoryViewOp(
        block.args[0], [8, 64], [64, 1], _box(8, 64), local, MemRefType(f16, [8, 64])
    )
    distributed = ConstructDistributedMemoryViewOp([member.result], MemRefType(f16, [8, 64]))
    d0, d1 = AffineExpr.dimension(0), AffineExpr.dimension(1)
    base_map = AffineMapAttr(AffineMap(1, 0, (d0 * 2, AffineExpr.constant(0))))
    order = AffineMapAttr(AffineMap(2, 0, (d0, d1)))
    tile = ConstructAccessTileOp(view.result, [tile_id.ids[0]], base_map, _box(2, 64), order, (2, 64))
    assert tile.result.type == AccessTileType(ArrayAttr([IntAttr(2), IntAttr(64)]), IndexType())
    load = LoadOp(tile.result, f16)
    assert load.result.type == TensorType(f16, [2, 64])
    store = StoreOp(load.result, tile.result)
    block.add_ops([tile_id, view, member, distributed, tile, load, store, func.ReturnOp()])
    function = func.FuncOp("k", FunctionType.from_lists([IndexType()], []), Region(block))
    module = ModuleOp([function])
    assert verify_module(module) == []
    text = module_text(module)
    assert "ktdp.construct_access_tile %2[%1 * 2, 0]" in text
    assert module_text(parse_module(make_context(), text)) == text


def test_an_inter_tile_reduction_built_with_the_builders_verifies() -> None:
    f32, partial_type = Float32Type(), TensorType(Float32Type(), [4])
    block = Block()
    zeros = arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(partial_type, [0.0] * 4))
    groups = AffineSetAttr(
        AffineSet(
            1,
            0,
            (AffineConstraintExpr(AffineConstraintKind.eq, AffineExpr.dimension(0), AffineExpr.constant(0)),),
        )
    )
    producers = AffineSetAttr(
        AffineSet(
            1,
            1,
            (AffineConstraintExpr(AffineConstraintKind.ge, AffineExpr.dimension(0), AffineExpr.constant(0)),),
        )
    )
    body = Block(arg_types=[IndexType()])
    body.add_op(YieldPartialOp(zeros.result))
    future_type = TileFutureType(ArrayAttr([partial_type]), groups)
    produce = InterTileProduceOp(producers, future_type, Region(body))
    combiner = Block(arg_types=[partial_type, partial_type])
    added = arith.AddfOp(combiner.args[0], combiner.args[1])
    combiner.add_ops([added, YieldReducedOp(added.result)])
    reduce = InterTileReduceOp(produce.future, producers, zeros.result, Region(combiner))
    assert reduce.result.type == partial_type and f32 == partial_type.element_type
    block.add_ops([zeros, produce, reduce, func.ReturnOp()])
    module = ModuleOp([func.FuncOp("k", FunctionType.from_lists([], []), Region(block))])
    assert verify_module(module) == []
    text = module_text(module)
    assert module_text(parse_module(make_context(), text)) == text
