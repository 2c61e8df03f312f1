"""Values of the ktdp engine's compute ops (ktir/ktdp_engine/compute.py) in the corners of a program."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ktir.ktdp_engine as ktdp
from ktir.dialects.ktir import elementwise as ew
from ktir.hardware import cost_model
from ktir.hardware.target import SPYRE
from ktir.reference.precision import in_float64
from ktir.sim.timeline import UNITS

KERNELS = Path(__file__).resolve().parents[2] / "lit" / "Inputs" / "ktdp"
_SET = "affine_set<(d0, d1) : (d0 >= 0, -d0 + 1 >= 0, d1 >= 0, -d1 + 3 >= 0)>"
_ORDER = "affine_map<(d0, d1) -> (d0, d1)>"
_VIEW = (
    f"sizes: [2, 4], strides: [4, 1] {{coordinate_set = {_SET}, memory_space = "
    "#ktdp.memory_space<global>} : memref<2x4xf32>"
)
_TILE = (
    f"{{access_tile_set = {_SET}, access_tile_order = {_ORDER}}} : "
    "memref<2x4xf32> -> !ktdp.access_tile<2x4xindex>"
)


def _kernel(body: str, grid: int = 1) -> str:
    return f"""func.func @k(%x: index, %y: index) attributes {{grid = [{grid}]}} {{
  %t = ktdp.get_compute_tile_id : index
  %vx = ktdp.construct_memory_view %x, {_VIEW}
  %vy = ktdp.construct_memory_view %y, {_VIEW}
  %tx = ktdp.construct_access_tile %vx[0, 0] {_TILE}
  %ty = ktdp.construct_access_tile %vy[0, 0] {_TILE}
  %a = ktdp.load %tx : <2x4xindex> -> tensor<2x4xf32>
{body}
  return
}}
"""


def test_a_dense_constant_of_several_rows_keeps_its_elements_in_place() -> None:
    body = """  %k = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>
  %s = arith.addf %a, %k : tensor<2x4xf32>
  ktdp.store %s, %ty : tensor<2x4xf32>, <2x4xindex>"""
    x = np.full((2, 4), 10, np.float32)
    outputs, _ = ktdp.run(_kernel(body), "k", {"x": x, "y": np.zeros_like(x)})
    np.testing.assert_array_equal(outputs["y"], x + np.arange(1, 9, dtype=np.float32).reshape(2, 4))


def test_a_reduce_body_reads_a_per_tile_scalar() -> None:
    """Each tile t scales its terms by t + 1 inside the reduce's body and stores row t of y."""
    body = """  %c1 = arith.constant 1 : index
  %t1 = arith.addi %t, %c1 : index
  %ti = arith.index_cast %t1 : index to i32
  %scale = arith.sitofp %ti : i32 to f32
  %e = tensor.empty() : tensor<2xf32>
  %r = linalg.reduce ins(%a : tensor<2x4xf32>) outs(%e : tensor<2xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %p = arith.mulf %in, %scale : f32
      %q = arith.addf %p, %acc : f32
      linalg.yield %q : f32
    }
  %row = tensor.expand_shape %r [[0, 1]] output_shape [1, 2] : tensor<2xf32> into tensor<1x2xf32>
  %vs = ktdp.construct_memory_view %s, sizes: [2, 2], strides: [2, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 1 >= 0, d1 >= 0, -d1 + 1 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<2x2xf32>
  %ts = ktdp.construct_access_tile %vs[%t, 0] {access_tile_set = affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 1 >= 0)>, access_tile_order = affine_map<(d0, d1) -> (d0, d1)>} : memref<2x2xf32> -> !ktdp.access_tile<1x2xindex>
  ktdp.store %row, %ts : tensor<1x2xf32>, <1x2xindex>"""  # noqa: E501
    text = _kernel(body, grid=2).replace("%y: index)", "%y: index, %s: index)")
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    arrays = {"x": x, "y": np.zeros_like(x), "s": np.zeros((2, 2), np.float32)}
    outputs, _ = ktdp.run(text, "k", arrays)
    np.testing.assert_array_equal(outputs["s"], np.stack([x.sum(1), 2 * x.sum(1)]))


def test_a_masked_tile_does_not_divide_by_its_zero() -> None:
    """In carried.mlir's second iteration tile 1 is masked, and its n - i is 0."""
    text = (KERNELS / "carried.mlir").read_text(encoding="utf-8")
    text = text.replace(
        "%r1 = arith.addi %r, %c1 : index",
        "%d = arith.subi %n, %i : index\n    %q = arith.divui %c2, %d : index\n"
        "    %r1 = arith.addi %r, %c1 : index",
    )
    x = np.arange(3 * 64, dtype=np.float32).reshape(3, 64)
    outputs, _ = ktdp.run(text, "carried", {"x": x, "out": np.zeros((2, 64), np.float32)})
    np.testing.assert_array_equal(outputs["out"], np.stack([x[0] + x[1], x[2]]))


def _generic_cycles(result: str) -> float:
    """The SFU's busy cycles in a kernel with one generic adding 1 to the f32 tile, its result `result`."""
    wide = "" if result == "f32" else f"\n      %w = arith.truncf %s : f32 to {result}"
    body = f"""  %e = tensor.empty() : tensor<2x4x{result}>
  %g = linalg.generic {{indexing_maps = [{_ORDER}, {_ORDER}], iterator_types = ["parallel", "parallel"]}}
      ins(%a : tensor<2x4xf32>) outs(%e : tensor<2x4x{result}>) {{
    ^bb0(%in: f32, %out: {result}):
      %one = arith.constant 1.0 : f32
      %s = arith.addf %in, %one : f32{wide}
      linalg.yield {"%s" if result == "f32" else "%w"} : {result}
  }} -> tensor<2x4x{result}>
  ktdp.store %a, %ty : tensor<2x4xf32>, <2x4xindex>"""
    x = np.zeros((2, 4), np.float32)
    return float(
        ktdp.run(_kernel(body), "k", {"x": x, "y": x.copy()})[1].kernels[0].busy[0, UNITS.index("sfu")]
    )


def test_a_generic_is_counted_in_sticks_of_its_result_type() -> None:
    """An fp16 result row is one 64-element stick, an f32 row a 32-element one: twice the pass."""
    one_f32_pass = cost_model.sfu_cycles_of(ew.AddOp.name, 0, 2 * 32, target=SPYRE)
    assert _generic_cycles("f32") == pytest.approx(one_f32_pass)
    assert _generic_cycles("f16") == pytest.approx(2 * one_f32_pass)


def test_a_slice_bound_that_differs_between_tiles_is_an_error_at_its_loop(tmp_path: Path) -> None:
    """A loop variable as a slice offset, each tile starting its loop at its own id: not supported."""
    body = """  %c2 = arith.constant 2 : index
  scf.for %i = %t to %c2 step %c2 {
    %s = tensor.extract_slice %a[%i, 0] [1, 4] [1, 1] : tensor<2x4xf32> to tensor<1x4xf32>
  }"""
    path = tmp_path / "k.mlir"
    path.write_text(_kernel(body, grid=2))
    x = np.ones((2, 4), np.float32)
    with pytest.raises(
        ktdp.KtdpError, match="a slice bound differs between compute tiles: not supported"
    ) as error:
        ktdp.run(str(path), "k", {"x": x, "y": np.zeros_like(x)})
    # The loop variable is a block argument: the error points at the loop that defines it.
    assert error.value.location is not None
    assert (
        error.value.location.line
        == path.read_text().splitlines().index("  scf.for %i = %t to %c2 step %c2 {") + 1
    )


def test_index_tensors_cast_to_integers_and_floats() -> None:
    # A tensor of index elements (an arith.constant, arith.addi on it), cast to i32 and then f32;
    # and the unsigned casts reading an i8's bits as unsigned (-1 is 255).
    body = """  %k = arith.constant dense<[[0, 1, 2, 3], [4, 5, 6, 7]]> : tensor<2x4xindex>
  %one = arith.constant dense<1> : tensor<2x4xindex>
  %k1 = arith.addi %k, %one : tensor<2x4xindex>
  %ki = arith.index_cast %k1 : tensor<2x4xindex> to tensor<2x4xi32>
  %kf = arith.sitofp %ki : tensor<2x4xi32> to tensor<2x4xf32>
  %minus = arith.constant dense<-1> : tensor<2x4xi8>
  %mu = arith.uitofp %minus : tensor<2x4xi8> to tensor<2x4xf32>
  %sum = arith.addf %kf, %mu : tensor<2x4xf32>
  %out = arith.addf %a, %sum : tensor<2x4xf32>
  ktdp.store %out, %ty : tensor<2x4xf32>, <2x4xindex>"""
    x = np.ones((2, 4), np.float32)
    outputs, _ = ktdp.run(_kernel(body), "k", {"x": x, "y": np.zeros_like(x)})
    assert np.array_equal(outputs["y"], 1 + np.arange(1, 9, dtype=np.float32).reshape(2, 4) + 255)


def test_a_loop_result_type_reads_with_or_without_parentheses() -> None:
    # `-> tensor<...>` (upstream MLIR's arrow type list) is the same loop as `-> (tensor<...>)`.
    body = """  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %s = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %a) -> RESULTS {
    %next = arith.addf %acc, %a : tensor<2x4xf32>
    scf.yield %next : tensor<2x4xf32>
  }
  ktdp.store %s, %ty : tensor<2x4xf32>, <2x4xindex>"""
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    runs = [
        ktdp.run(_kernel(body.replace("RESULTS", results)), "k", {"x": x, "y": np.zeros_like(x)})
        for results in ("tensor<2x4xf32>", "(tensor<2x4xf32>)")
    ]
    for outputs, _ in runs:
        assert np.array_equal(outputs["y"], 4 * x)
    assert runs[0][1].total_cycles == runs[1][1].total_cycles


def test_a_reduce_by_compare_and_select_folds_its_region() -> None:
    # A row maximum written as cmpf ogt + select, folded from an output filled with -inf: a NaN
    # input loses every comparison, so the region skips it (np.max would give NaN, np.fmax the same 7).
    body = """  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<2xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  %r = linalg.reduce ins(%a : tensor<2x4xf32>) outs(%init : tensor<2xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %gt = arith.cmpf ogt, %in, %acc : f32
      %m = arith.select %gt, %in, %acc : f32
      linalg.yield %m : f32
    }
  %b = linalg.broadcast ins(%r : tensor<2xf32>) outs(%a : tensor<2x4xf32>) dimensions = [1]
  ktdp.store %b, %ty : tensor<2x4xf32>, <2x4xindex>"""
    x = np.array([[1, 5, -2, 3], [np.nan, -1, 7, 2]], np.float32)
    outputs, _ = ktdp.run(_kernel(body), "k", {"x": x, "y": np.zeros_like(x)})
    assert np.array_equal(outputs["y"], np.array([[5] * 4, [7] * 4], np.float32))


def test_a_bitcast_reads_the_same_bits_as_the_other_type() -> None:
    # f32 read as i32, plus one, read back as f32: the bits are the input's plus one (the next float up).
    body = """  %bits = arith.bitcast %a : tensor<2x4xf32> to tensor<2x4xi32>
  %one = arith.constant dense<1> : tensor<2x4xi32>
  %next = arith.addi %bits, %one : tensor<2x4xi32>
  %b = arith.bitcast %next : tensor<2x4xi32> to tensor<2x4xf32>
  ktdp.store %b, %ty : tensor<2x4xf32>, <2x4xindex>"""
    x = np.array([[1, -0.0, 3.5, 1e-30], [2, 4, 8, 16]], np.float32)
    outputs, _ = ktdp.run(_kernel(body), "k", {"x": x, "y": np.zeros_like(x)})
    assert np.array_equal(outputs["y"].view(np.int32), x.view(np.int32) + 1)


def test_a_matmul_reads_an_operand_transposed_by_its_indexing_map() -> None:
    # B given as (n, k) with the map (m, n, k) -> (n, k): the product is x @ x.T, as upstream reads it.
    body = """  %e = arith.constant dense<0.0> : tensor<2x2xf32>
  %p = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%a, %a : tensor<2x4xf32>, tensor<2x4xf32>) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  %wide = tensor.insert_slice %p into %a[0, 0] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<2x4xf32>
  ktdp.store %wide, %ty : tensor<2x4xf32>, <2x4xindex>"""  # noqa: E501
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    outputs, _ = ktdp.run(_kernel(body), "k", {"x": x, "y": np.zeros_like(x)})
    assert np.array_equal(outputs["y"][:, :2], x @ x.T)
    assert np.array_equal(outputs["y"][:, 2:], x[:, 2:])


def _cos_sin_program() -> str:
    generic = """  %e{n} = tensor.empty() : tensor<2x4xf32>
  %{name} = linalg.generic {{indexing_maps = [{order}, {order}], iterator_types = ["parallel", "parallel"]}}
      ins(%a : tensor<2x4xf32>) outs(%e{n} : tensor<2x4xf32>) {{
    ^bb0(%in: f32, %out: f32):
      %v = math.{name} %in : f32
      linalg.yield %v : f32
  }} -> tensor<2x4xf32>"""
    body = "\n".join(generic.format(n=n, name=name, order=_ORDER) for n, name in enumerate(["cos", "sin"]))
    store = (
        "  %s = arith.addf %cos, %sin : tensor<2x4xf32>\n  ktdp.store %s, %ty : tensor<2x4xf32>, <2x4xindex>"
    )
    return _kernel(f"{body}\n{store}")


def test_cos_and_sin_are_ktirs_in_float64_and_take_its_two_passes() -> None:
    """`math.cos` / `math.sin`: in float64, rounded once to f32 (ktir's reference); 2 SFU passes each."""
    x = np.array([[0.5, 1e4, -3.0, 1e-8], [100.25, 7.0, -0.0, 2.5e6]], np.float32)
    outputs, report = ktdp.run(_cos_sin_program(), "k", {"x": x, "y": np.zeros_like(x)})
    cos, sin = (ktir_op(x) for ktir_op in (lambda v: in_float64(np.cos, v), lambda v: in_float64(np.sin, v)))
    np.testing.assert_array_equal(outputs["y"], cos + sin)
    sticks = 2 * 32  # two f32 rows, one stick each
    expected = 2 * cost_model.sfu_cycles_of(ew.CosOp.name, 0, sticks, SPYRE) + cost_model.sfu_cycles_of(
        ew.AddOp.name, 0, sticks, SPYRE
    )
    assert report.kernels[0].busy[0, UNITS.index("sfu")] == pytest.approx(expected)


_ROWS_SET = "affine_set<(d0, d1) : (d0 >= 0, -d0 + 1 >= 0, d1 >= 0, -d1 + 31 >= 0)>"
_ROWS_VIEW = (
    f"sizes: [2, 32], strides: [32, 1] {{coordinate_set = {_ROWS_SET}, memory_space = "
    "#ktdp.memory_space<global>} : memref<2x32xELEMENT>"
)
_ROWS_TILE = (
    f"{{access_tile_set = {_ROWS_SET}, access_tile_order = {_ORDER}}} : "
    "memref<2x32xELEMENT> -> !ktdp.access_tile<2x32xindex>"
)
_INTEGER_GENERIC = """  %e{n} = tensor.empty() : tensor<2x32x{out}>
  %{n} = linalg.generic {{indexing_maps = [{order}, {order}, {order}],
      iterator_types = ["parallel", "parallel"]}}
      ins(%x, %y : tensor<2x32xi64>, tensor<2x32xi64>) outs(%e{n} : tensor<2x32x{out}>) {{
    ^bb0(%a: i64, %b: i64, %o: {out}):
      %v = {op} %a, %b : i64
      linalg.yield %v : {out}
  }} -> tensor<2x32x{out}>"""


def test_integer_generics_keep_their_integers_and_are_charged_in_the_devices_format() -> None:
    """
    i64 positions added (`addi`) and compared (`cmpi sle`, an i1) in generics: exact past
    2^53, where a float64 would round. The device holds an i64 as int32 and an i1 as fp16
    (`ktir.layout.dtypes`), so a 32-element row of i64 is one 128-byte stick (not two), which
    the DMAs move and the SFU passes count, as ktir charges its own tensors.
    """
    views = "\n".join(
        f"  %v{n} = ktdp.construct_memory_view %{n}, {_ROWS_VIEW.replace('ELEMENT', e)}\n"
        f"  %t{n} = ktdp.construct_access_tile %v{n}[0, 0] {_ROWS_TILE.replace('ELEMENT', e)}"
        for n, e in [("p", "i64"), ("s", "i64"), ("m", "i1")]
    )
    text = f"""func.func @k(%p: index, %s: index, %m: index) {{
{views}
  %x = ktdp.load %tp : <2x32xindex> -> tensor<2x32xi64>
  %y = ktdp.load %ts : <2x32xindex> -> tensor<2x32xi64>
{_INTEGER_GENERIC.format(n="sum", out="i64", op="arith.addi", order=_ORDER)}
{_INTEGER_GENERIC.format(n="le", out="i1", op="arith.cmpi sle,", order=_ORDER)}
  ktdp.store %sum, %ts : tensor<2x32xi64>, <2x32xindex>
  ktdp.store %le, %tm : tensor<2x32xi1>, <2x32xindex>
  return
}}
"""
    rng = np.random.default_rng(0)
    p = rng.integers(-(2**62), 2**62, (2, 32), np.int64)
    s = p + rng.integers(-2, 3, (2, 32), np.int64)
    outputs, report = ktdp.run(text, "k", {"p": p, "s": s, "m": np.zeros((2, 32), np.bool_)})
    np.testing.assert_array_equal(outputs["s"], p + s)
    np.testing.assert_array_equal(outputs["m"], p <= s)
    line = report.kernels[0]
    assert line.bytes == 3 * 2 * 128 + 128  # 2 i64 loads and an i64 store of 2 sticks, an i1 store of 1
    add = cost_model.sfu_cycles_of(ew.AddOp.name, 0, 2 * 32, SPYRE)  # two int32 sticks
    compare = cost_model.sfu_cycles_of(ew.LeOp.name, 0, 2 * 64, SPYRE)  # two fp16 sticks
    assert line.busy[0, UNITS.index("sfu")] == pytest.approx(add + compare)
