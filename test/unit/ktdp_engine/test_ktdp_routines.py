"""`func.call` and ktir's routine functions in the ktdp engine (ktir/ktdp_engine/routines.py)."""

from __future__ import annotations

import numpy as np
import pytest

import ktir.ktdp_engine as ktdp
from ktir.dialects.ktir import elementwise as ew
from ktir.hardware import cost_model
from ktir.hardware.target import SPYRE
from ktir.ir.diagnostics import DiagnosticError
from ktir.ktdp_engine.memory import KtdpError

_SET = "affine_set<(d0, d1) : (d0 >= 0, -d0 + 1 >= 0, d1 >= 0, -d1 + 63 >= 0)>"
_VIEW = (
    f"sizes: [2, 64], strides: [64, 1] {{coordinate_set = {_SET}, memory_space = "
    "#ktdp.memory_space<global>} : memref<2x64xf16>"
)
_TILE = (
    f"{{access_tile_set = {_SET}, access_tile_order = affine_map<(d0, d1) -> (d0, d1)>}} : "
    "memref<2x64xf16> -> !ktdp.access_tile<2x64xindex>"
)
_T = "tensor<2x64xf16>"
# SiLU as tensor ops: neg (1 pass), exp (2), add (1), divide (2): six passes one by one.
_SILU = f"""  %one = arith.constant dense<1.0> : {_T}
  %n = arith.negf %p : {_T}
  %e = math.exp %n : {_T}
  %d = arith.addf %e, %one : {_T}
  %s = arith.divf %p, %d : {_T}
  return %s : {_T}"""


def _program(callee_body: str, attributes: str = "") -> str:
    marks = f" attributes {{{attributes}}}" if attributes else ""
    return f"""func.func @k(%x: index, %y: index) attributes {{grid = [1]}} {{
  %vx = ktdp.construct_memory_view %x, {_VIEW}
  %vy = ktdp.construct_memory_view %y, {_VIEW}
  %tx = ktdp.construct_access_tile %vx[0, 0] {_TILE}
  %ty = ktdp.construct_access_tile %vy[0, 0] {_TILE}
  %a = ktdp.load %tx : <2x64xindex> -> {_T}
  %r = func.call @f(%a) : ({_T}) -> {_T}
  ktdp.store %r, %ty : {_T}, <2x64xindex>
  return
}}
func.func private @f(%p: {_T}) -> {_T}{marks} {{
{callee_body}
}}
"""


def _run(text: str) -> tuple[np.ndarray, float]:
    x = np.linspace(-3, 3, 128, dtype=np.float16).reshape(2, 64)
    outputs, report = ktdp.run(text, "k", {"x": x, "y": np.zeros_like(x)})
    return outputs["y"], report.kernels[0].cycles


def test_a_call_runs_its_callee_and_charges_its_ops() -> None:
    y, cycles = _run(_program(_SILU))
    x = np.linspace(-3, 3, 128, dtype=np.float16).reshape(2, 64)
    with np.errstate(all="ignore"):
        e = np.exp(-x)
        expected = x / (e + np.float16(1))  # op by op in f16, as the body rounds
    np.testing.assert_array_equal(y, expected)
    inline = _program(_SILU).replace("%r = func.call @f(%a)", "%r = func.call @g(%a)")
    assert _run(inline.replace("@f(%p", "@g(%p"))[1] == cycles


def test_a_routine_gives_its_body_values_in_ktirs_time_for_the_op() -> None:
    plain_y, plain = _run(_program(_SILU))
    routine_y, routine = _run(_program(_SILU, 'ktir.routine = "ktir.silu"'))
    np.testing.assert_array_equal(routine_y, plain_y)
    one_pass = cost_model.sfu_cycles_of(ew.AddOp.name, 128, 128, target=SPYRE)
    silu = cost_model.sfu_cycles_of(ew.SiluOp.name, 128, 128, target=SPYRE)
    assert silu == pytest.approx(5 * one_pass)  # ktir's calibration point: five passes
    assert routine == pytest.approx(plain - 6 * one_pass + silu)


@pytest.mark.parametrize(
    ("body", "attributes", "message"),
    [
        (_SILU, 'ktir.routine = "ktir.frobnicate"', "not a ktir graph op ktir times as a routine"),
        (_SILU, 'ktir.routine = "ktir.matmul"', "not a ktir graph op ktir times as a routine"),
        (_SILU, "ktir.routine = 3 : i64", "not a ktir graph op"),
        (
            f"  %c = func.call @f(%p) : ({_T}) -> {_T}\n  return %c : {_T}",
            'ktir.routine = "ktir.silu"',
            "a routine computes on its arguments only: 'func.call' in its body",
        ),
        (
            f"  %c = func.call @f(%p) : ({_T}) -> {_T}\n  return %c : {_T}",
            "",
            r"'@f' is called while it runs \(recursion\): not supported",
        ),
    ],
)
def test_a_bad_routine_or_call_is_a_located_error(body: str, attributes: str, message: str) -> None:
    with pytest.raises(KtdpError, match=message) as caught:
        _run(_program(body, attributes))
    assert caught.value.location is not None


def test_a_call_of_a_missing_function_is_a_located_verifier_error() -> None:
    text = _program(_SILU).replace("func.call @f(%a)", "func.call @missing(%a)")
    with pytest.raises(DiagnosticError) as caught:
        _run(text)
    (diagnostic,) = caught.value.diagnostics
    assert "'@missing' could not be found in symbol table" in diagnostic.message
    assert diagnostic.location is not None and diagnostic.location.line == 7


def test_a_routine_without_a_tensor_result_is_a_located_error() -> None:
    text = (
        _program(_SILU, 'ktir.routine = "ktir.silu"')
        .replace(f"%r = func.call @f(%a) : ({_T}) -> {_T}", f"func.call @f(%a) : ({_T}) -> ()")
        .replace("ktdp.store %r,", "ktdp.store %a,")
        .replace(f"-> {_T} attributes", "attributes")
        .replace(f"return %s : {_T}", "return")
    )
    with pytest.raises(KtdpError, match="a routine returns one tensor; '@f' returns nothing") as caught:
        _run(text)
    assert caught.value.location is not None


def test_a_fused_routine_that_reaches_memory_is_a_located_error() -> None:
    """A fused payload is one compute: a load under it (through a plain call) would go untimed."""
    text = (
        _program("", "")
        .replace(f"func.call @f(%a) : ({_T})", f"func.call @f(%a, %x) : ({_T}, index)")
        .split("func.func private")[0]
    )
    fused = 'attributes {ktir.routine = "ktir.fused"}'
    text += f"""func.func private @f(%p: {_T}, %at: index) -> {_T} {fused} {{
  %c = func.call @g(%at) : (index) -> {_T}
  return %c : {_T}
}}
func.func private @g(%at: index) -> {_T} {{
  %v = ktdp.construct_memory_view %at, {_VIEW}
  %t = ktdp.construct_access_tile %v[0, 0] {_TILE}
  %a = ktdp.load %t : <2x64xindex> -> {_T}
  return %a : {_T}
}}
"""
    with pytest.raises(
        KtdpError, match="a fused routine computes on its arguments only: its body reaches the load queue"
    ):
        _run(text)


def test_a_callee_holds_its_own_tensors_in_lx_at_its_call() -> None:
    """An 8 MiB tensor made inside a callee overflows LX at the call, as it would inline."""
    big = "tensor<4096x1024xf16>"
    body = f"""  %one = arith.constant 1.0 : f16
  %e = tensor.empty() : {big}
  %f = linalg.fill ins(%one : f16) outs(%e : {big}) -> {big}
  %s = tensor.extract_slice %f[0, 0] [2, 64] [1, 1] : {big} to {_T}
  %q = arith.addf %p, %s : {_T}
  return %q : {_T}"""
    with pytest.raises(KtdpError, match="LX overflow: 8,389,120 bytes live on each tile") as caught:
        _run(_program(body))
    assert caught.value.location is not None and caught.value.location.line == 7  # the call
