"""The LX capacity check of ktdp functions (ktir/ktdp_engine/lx_capacity.py) and the threaded numerics."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import f16

from ktir.dialects.ktdp import FUSED_ROUTINE
from ktir.dialects.ktir.structured import FusedOp
from ktir.ktdp_engine import KtdpError, load_module, numerics
from ktir.ktdp_engine.lx_capacity import check_lx_capacity

MIB = 1 << 20
_BLOCK = "affine_set<(d0, d1) : (d0 >= 0, -d0 + 511 >= 0, d1 >= 0, -d1 + 1023 >= 0)>"
_HEAD = f"""func.func @f(%x: index, %y: index) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %vx = ktdp.construct_memory_view %x, sizes: [512, 1024], strides: [1024, 1] {{coordinate_set = {_BLOCK}, memory_space = #ktdp.memory_space<global>}} : memref<512x1024xf16>
  %tx = ktdp.construct_access_tile %vx[0, 0] {{access_tile_set = {_BLOCK}, access_tile_order = affine_map<(d0, d1) -> (d0, d1)>}} : memref<512x1024xf16> -> !ktdp.access_tile<512x1024xindex>
"""  # noqa: E501


def _peak(body: str, lx: int = 64 * MIB, placed: int = 0) -> int:
    module = load_module(_HEAD + body + "  return\n}\n")
    function = next(op for op in module.walk() if isinstance(op, func.FuncOp))
    return check_lx_capacity(function, lx, placed)


def test_a_loop_holds_its_iter_arg_its_load_and_its_sum() -> None:
    """An init loaded before the loop is copied into the iter_arg's buffer at the loop's start."""
    body = """  %init = ktdp.load %tx : <512x1024xindex> -> tensor<512x1024xf16>
  %sum = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %init) -> (tensor<512x1024xf16>) {
    %a = ktdp.load %tx : <512x1024xindex> -> tensor<512x1024xf16>
    %next = arith.addf %acc, %a : tensor<512x1024xf16>
    scf.yield %next : tensor<512x1024xf16>
  }
  ktdp.store %sum, %tx : tensor<512x1024xf16>, <512x1024xindex>
"""
    assert _peak(body) == 3 * MIB
    assert (
        _peak(
            body.replace("= %init)", "= %cst)").replace(
                "%init = ktdp.load",
                "%cst = arith.constant dense<0.0> : tensor<512x1024xf16>\n  %unused = ktdp.load",
            )
        )
        == 3 * MIB
    )


def test_a_value_read_inside_a_loop_lives_through_the_loop() -> None:
    body = """  %w = ktdp.load %tx : <512x1024xindex> -> tensor<512x1024xf16>
  scf.for %i = %c0 to %c2 step %c1 {
    %a = ktdp.load %tx : <512x1024xindex> -> tensor<512x1024xf16>
    %p = arith.mulf %a, %w : tensor<512x1024xf16>
    ktdp.store %p, %tx : tensor<512x1024xf16>, <512x1024xindex>
  }
  %b = ktdp.load %tx : <512x1024xindex> -> tensor<512x1024xf16>
  ktdp.store %b, %tx : tensor<512x1024xf16>, <512x1024xindex>
"""
    assert _peak(body) == 3 * MIB  # w, a and p inside; b alone after


def test_reshapes_are_views_and_placed_arrays_count() -> None:
    body = """  %a = ktdp.load %tx : <512x1024xindex> -> tensor<512x1024xf16>
  %r = tensor.expand_shape %a [[0], [1, 2]] output_shape [512, 16, 64] : tensor<512x1024xf16> into tensor<512x16x64xf16>
  %c = tensor.collapse_shape %r [[0], [1, 2]] : tensor<512x16x64xf16> into tensor<512x1024xf16>
  ktdp.store %c, %tx : tensor<512x1024xf16>, <512x1024xindex>
"""  # noqa: E501
    assert _peak(body) == MIB
    assert _peak(body, placed=4096) == MIB + 4096
    with pytest.raises(KtdpError, match="LX overflow: 1,052,672 bytes live"):
        _peak(body, lx=MIB, placed=4096)


def test_a_named_linalg_op_holds_its_operand_and_its_result() -> None:
    """linalg.exp has a payload region: its input and its output are both live while it runs."""
    body = """  %a = ktdp.load %tx : <512x1024xindex> -> tensor<512x1024xf16>
  %e = tensor.empty() : tensor<512x1024xf16>
  %ex = linalg.exp ins(%a : tensor<512x1024xf16>) outs(%e : tensor<512x1024xf16>) -> tensor<512x1024xf16>
  ktdp.store %ex, %tx : tensor<512x1024xf16>, <512x1024xindex>
"""
    assert _peak(body) == 2 * MIB


def _routine(name: str) -> str:
    """A routine named `name` whose body computes in float64 (4 MiB of a 512 x 1024 tile)."""
    return f"""func.func private @r(%p: tensor<512x1024xf16>) -> tensor<512x1024xf16> attributes {{ktir.routine = "{name}"}} {{
  %w = arith.extf %p : tensor<512x1024xf16> to tensor<512x1024xf64>
  %n = arith.negf %w : tensor<512x1024xf64>
  %t = arith.truncf %n : tensor<512x1024xf64> to tensor<512x1024xf16>
  return %t : tensor<512x1024xf16>
}}
"""  # noqa: E501


@pytest.mark.parametrize(("routine", "peak"), [("ktir.silu", 2 * MIB), ("ktir.fused", 2 * MIB + 8 * MIB)])
def test_a_graph_ops_routine_holds_no_lx_of_its_own_a_fused_payload_does(routine: str, peak: int) -> None:
    """
    A call of ktir's routine for a graph op holds its argument and its result (the caller's
    tensors): its float64 body is the op's reference values, not what the core holds. A fused
    payload's ops are the kernel's intermediates, held while the call runs (its two float64
    tiles, 8 MiB at the negation, beside the caller's argument and result, 2 MiB).
    """
    body = """  %a = ktdp.load %tx : <512x1024xindex> -> tensor<512x1024xf16>
  %s = func.call @r(%a) : (tensor<512x1024xf16>) -> tensor<512x1024xf16>
  ktdp.store %s, %tx : tensor<512x1024xf16>, <512x1024xindex>
  return
}
"""
    module = load_module("builtin.module {\n" + _HEAD + body + _routine(routine) + "}\n")
    function = next(op for op in module.walk() if isinstance(op, func.FuncOp) and op.sym_name.data == "f")
    assert check_lx_capacity(function, 64 * MIB, 0) == peak


def test_threads_give_the_values_one_thread_gives() -> None:
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((32, 256, 128)).astype(np.float16) for _ in range(2))
    threaded = numerics.elementwise(np.subtract, [a, b], f16)
    assert a.size >= numerics.THREADED_ELEMENTS
    serial = numerics.elementwise(np.subtract, [a[:1], b[:1]], f16)  # one tile: never threaded
    np.testing.assert_array_equal(threaded[:1], serial)
    np.testing.assert_array_equal(threaded, (a.astype(np.float32) - b).astype(np.float16))


def test_the_fused_routine_name_is_the_fused_op_s() -> None:
    assert FUSED_ROUTINE == FusedOp.name  # the engine's LX check tells a payload from a routine by it
