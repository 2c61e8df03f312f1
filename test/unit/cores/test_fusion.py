"""The iteration space of fused groups (`ktir.cores.fusion`)."""

from __future__ import annotations

import pytest
from xdsl.dialects import func
from xdsl.ir import Operation

import ktir
from ktir.cores.fusion import FusionError, anchors_of, fused_space, in_sticks, scratch_bytes
from ktir.ir.context import make_context
from ktir.ir.diagnostics import parse_module

RMS_NORM = """
func.func @f(%x: tensor<16x256xf16>, %w: tensor<256xf16>, %eps: tensor<1xf32>) -> tensor<16x256xf16> {
  %c = ktir.convert %x : tensor<16x256xf16> -> tensor<16x256xf32>
  %p = ktir.pow %c {exponent = 2.0 : f64} : tensor<16x256xf32> -> tensor<16x256xf32>
  %m = ktir.mean %p dims [1] keepdim : tensor<16x256xf32> -> tensor<16x1xf32>
  %a = ktir.add %m, %eps : tensor<16x1xf32>, tensor<1xf32> -> tensor<16x1xf32>
  %r = ktir.rsqrt %a : tensor<16x1xf32> -> tensor<16x1xf32>
  %n = ktir.mul %c, %r : tensor<16x256xf32>, tensor<16x1xf32> -> tensor<16x256xf32>
  %h = ktir.convert %n : tensor<16x256xf32> -> tensor<16x256xf16>
  %y = ktir.mul %w, %h : tensor<256xf16>, tensor<16x256xf16> -> tensor<16x256xf16>
  return %y : tensor<16x256xf16>
}
"""


def _ops(text: str) -> tuple[list[Operation], func.FuncOp]:
    module = parse_module(make_context(), text)
    ktir.run_pipeline(module, "ktir-propagate-layouts")
    function = next(op for op in module.ops if isinstance(op, func.FuncOp))
    return [op for op in function.body.block.ops if not isinstance(op, func.ReturnOp)], function


def test_rms_norm_is_one_space_split_by_rows_only() -> None:
    ops, function = _ops(RMS_NORM)
    x, w, eps = function.body.block.args
    fused = fused_space(ops, ops[-1].results[0], [x, eps, w])
    space = fused.space
    assert space.sizes == {"d0": 16, "d1": 256}
    assert space.whole == frozenset({"d1"})  # the mean's dim, met again by the result
    assert [a.dims for a in space.inputs if a is not None] == [("d0", "d1"), (None,), ("d1",)]
    assert space.output.dims == ("d0", "d1")
    assert len(space.scratch) == len(ops) - 1
    assert fused.dims[ops[2].results[0]] == ("d0", None)  # the mean keeps its dim as size 1


def test_scratch_bytes_shrink_with_the_cuts() -> None:
    ops, function = _ops(RMS_NORM)
    x, w, eps = function.body.block.args
    space = fused_space(ops, ops[-1].results[0], [x, eps, w]).space
    whole = scratch_bytes(space, {}, 128)
    # The most live at once is while `mul %c, %r` runs: the f32 convert %c (16 x 256, 16 KiB),
    # the rsqrt %r (16 x 1 f32, one stick per row: 2 KiB) and the product (16 KiB).
    assert whole == 16384 + 2048 + 16384
    assert scratch_bytes(space, {"d0": 4}, 128) == whole // 4


TRANSPOSE_ADD = """
func.func @f(%x: tensor<64x64xf16>) -> tensor<64x64xf16> {
  %t = ktir.permute %x perm [1, 0] : tensor<64x64xf16> -> tensor<64x64xf16>
  %y = ktir.add %x, %t : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
  return %y : tensor<64x64xf16>
}
"""
REGROUPING_RESHAPE = """
func.func @f(%x: tensor<4x64xf16>) -> tensor<256xf16> {
  %e = ktir.exp %x : tensor<4x64xf16> -> tensor<4x64xf16>
  %r = ktir.reshape %e : tensor<4x64xf16> -> tensor<256xf16>
  %y = ktir.neg %r : tensor<256xf16> -> tensor<256xf16>
  return %y : tensor<256xf16>
}
"""


@pytest.mark.parametrize(
    ("text", "reason"),
    [(TRANSPOSE_ADD, "indexed twice"), (REGROUPING_RESHAPE, "regroups dims")],
    ids=["one tensor reached by two dims", "a reshape that regroups dims"],
)
def test_groups_without_one_iteration_space_do_not_fuse(text: str, reason: str) -> None:
    ops, function = _ops(text)
    (x,) = function.body.block.args
    with pytest.raises(FusionError, match=reason):
        fused_space(ops, ops[-1].results[0], [x])


def test_a_result_missing_a_split_dim_does_not_fuse() -> None:
    """A sum's producers fuse, but a group whose result lacks a cuttable dim would be written twice."""
    ops, function = _ops(
        """
func.func @f(%x: tensor<8x64xf16>, %y: tensor<8x64xf16>) -> tensor<8x1xf16> {
  %a = ktir.add %x, %y : tensor<8x64xf16>, tensor<8x64xf16> -> tensor<8x64xf16>
  %s = ktir.sum %a dims [1] keepdim : tensor<8x64xf16> -> tensor<8x1xf16>
  return %s : tensor<8x1xf16>
}
"""
    )
    x, y = function.body.block.args
    space = fused_space(ops, ops[-1].results[0], [x, y]).space
    assert space.whole == frozenset({"r0"}) and space.output.dims == ("d0", None)


SWIGLU = """
func.func @f(%x: tensor<64x256xf16>, %wg: tensor<256x512xf16>, %wu: tensor<256x512xf16>,
             %v: tensor<64x256xf16>) -> tensor<64x512xf16> {
  %g = ktir.matmul %x, %wg : tensor<64x256xf16>, tensor<256x512xf16> -> tensor<64x512xf16>
  %s = ktir.silu %g : tensor<64x512xf16> -> tensor<64x512xf16>
  %u = ktir.matmul %INPUT, %wu : tensor<64x256xf16>, tensor<256x512xf16> -> tensor<64x512xf16>
  %m = ktir.mul %s, %u : tensor<64x512xf16>, tensor<64x512xf16> -> tensor<64x512xf16>
  return %m : tensor<64x512xf16>
}
"""


def test_matmuls_of_one_x_are_products_of_one_epilogue_space() -> None:
    """SwiGLU: gate and up accumulate side by side over one K; x is one input, then each y."""
    ops, function = _ops(SWIGLU.replace("%INPUT", "%x"))
    x, wg, wu, _ = function.body.block.args
    assert anchors_of(ops) == (ops[0], ops[2])
    space = fused_space(ops, ops[-1].results[0], [x, wg, wu]).space
    assert space.products == 2
    assert space.sizes == {"m": 64, "n": 512, "k": 256}
    assert space.reduction == ("k",)
    assert [a.dims for a in space.inputs if a is not None] == [("m", "k"), ("k", "n"), ("k", "n")]


def test_matmuls_of_two_x_share_no_epilogue() -> None:
    ops, _ = _ops(SWIGLU.replace("%INPUT", "%v"))
    assert anchors_of(ops) == ()
    assert anchors_of(ops[1:]) == (ops[2],)  # the up projection alone is an epilogue's matmul


def test_an_epilogue_with_its_weights_out_of_order_is_refused() -> None:
    """Product p reads operand p: a hand-written `ktir.fused` listing up's weight first is an error."""
    from ktir.cores.fusion import op_space
    from ktir.cores.space import IterationError
    from ktir.dialects.ktir import structured as st

    module = parse_module(make_context(), SWIGLU.replace("%INPUT", "%x"))
    ktir.run_pipeline(module, "ktir-propagate-layouts,ktir-fuse")
    function = next(op for op in module.ops if isinstance(op, func.FuncOp))
    (fused,) = [op for op in function.body.block.ops if isinstance(op, st.FusedOp)]
    assert op_space(fused).space.products == 2
    body = fused.body.block
    wg, wu = body.args[1], body.args[2]
    gate, up = (op for op in body.ops if isinstance(op, st.MatmulOp))
    gate.operands[1], up.operands[1] = wu, wg  # the same program, its weights listed the other way
    with pytest.raises(IterationError, match="takes x, then the y of each matmul in program order"):
        op_space(fused)


def test_tiles_are_counted_in_sticks_of_the_targets_size() -> None:
    """`in_sticks`: a (16, 1) fp32 tile is 16 rows of one stick: 32 lanes in 128 bytes, 64 in 256."""
    assert in_sticks((16, 1), 4, 128) == 16 * 32
    assert in_sticks((16, 1), 4, 256) == 16 * 64
    assert in_sticks((3, 33), 2, 64) == 3 * 64  # 33 fp16 lanes take two 32-lane sticks
    assert in_sticks((), 2, 128) == 1
