"""When a ktdp program's ops run (ktir/ktdp_engine/schedule.py): queues, LX buffers, memory order."""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import ktir.ktdp_engine as ktdp
from ktir.dialects.ktir import elementwise as ew
from ktir.hardware import cost_model
from ktir.hardware.target import SPYRE, Target
from ktir.tools.fuzz_ktdp import KERNELS as CORPUS
from ktir.tools.fuzz_ktdp import kernel_inputs

KERNELS = Path(__file__).resolve().parents[2] / "lit" / "Inputs" / "ktdp"
RNG = np.random.default_rng(0)
_SET = "affine_set<(d0, d1) : (d0 >= 0, -d0 + 7 >= 0, d1 >= 0, -d1 + 63 >= 0)>"
_ROW = "affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 63 >= 0)>"
_ORDER = "affine_map<(d0, d1) -> (d0, d1)>"
_T = "tensor<1x64xf16>"


def _view(name: str) -> str:
    return (
        f"%v{name} = ktdp.construct_memory_view %{name}, sizes: [8, 64], strides: [64, 1] "
        f"{{coordinate_set = {_SET}, memory_space = #ktdp.memory_space<global>}} : memref<8x64xf16>"
    )


def _tile(name: str, view: str, row: str) -> str:
    return (
        f"%{name} = ktdp.construct_access_tile %v{view}[{row}, 0] {{access_tile_set = {_ROW}, "
        f"access_tile_order = {_ORDER}}} : memref<8x64xf16> -> !ktdp.access_tile<1x64xindex>"
    )


def _loop(rows: int) -> str:
    """exp of `rows` rows of x into y, a row per iteration: load, exp, store."""
    return f"""func.func @k(%x: index, %y: index) {{
  {_view("x")}
  {_view("y")}
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant {rows} : index
  scf.for %i = %c0 to %n step %c1 {{
    {_tile("tx", "x", "%i")}
    {_tile("ty", "y", "%i")}
    %a = ktdp.load %tx : <1x64xindex> -> {_T}
    %e = math.exp %a : {_T}
    ktdp.store %e, %ty : {_T}, <1x64xindex>
  }}
  return
}}
"""


def _cycles(text: str, target: Target = SPYRE) -> float:
    x = np.linspace(-1, 1, 512, dtype=np.float16).reshape(8, 64)
    outputs, report = ktdp.run(text, "k", {"x": x, "y": np.zeros_like(x)}, target=target)
    rows = int(text.split("arith.constant ")[-1].split(" ")[0]) if "scf.for" in text else 8
    np.testing.assert_array_equal(outputs["y"][:rows], np.exp(x[:rows].astype(np.float32)).astype(np.float16))
    return report.kernels[0].cycles


def test_one_iteration_runs_op_after_op() -> None:
    one = _cycles(_loop(1))
    load = SPYRE.dma_setup_cycles  # one stick: the setup and a few cycles of traffic
    assert 2 * load < one < 2 * load + 200  # load, exp, store in turn


def test_a_loop_overlaps_the_next_load_with_this_compute_and_store() -> None:
    one, eight = _cycles(_loop(1)), _cycles(_loop(8))
    # Serial would be 8 x one; double buffering queues the loads back to back and hides each
    # store behind the next load, so eight rows take about 9 transfers, not 16.
    assert eight < 0.6 * 8 * one
    assert eight > 8 * SPYRE.dma_setup_cycles  # the eight loads still queue one after another


def test_with_one_buffer_the_next_load_waits_for_this_compute() -> None:
    tiny = replace(SPYRE, lx_bytes=2 * 128 + 64)  # a load and its exp fit once, not twice
    one, single, double = _cycles(_loop(1), tiny), _cycles(_loop(8), tiny), _cycles(_loop(8))
    # each load waits for the exp that reads the buffer before it: the exps no longer hide
    # behind the loads (the stores still do)
    exp = cost_model.sfu_cycles_of(ew.ExpOp.name, 64, 64, target=SPYRE)
    assert double + 7 * exp <= single + 1e-6 and single < 8 * one


def _named(text: str, slots: int) -> str:
    """The loop's load naming ktir's LX buffer at address 0 of `slots` slots (`ktir.buffer`)."""
    return text.replace("ktdp.load %tx :", f"ktdp.load %tx {{ktir.buffer = array<i64: 0, {slots}>}} :")


def test_a_load_naming_ktirs_buffer_takes_its_slots_whatever_the_functions_rule() -> None:
    tiny = replace(SPYRE, lx_bytes=2 * 128 + 64)  # the function's rule: one buffer each
    single, double = _cycles(_loop(8), tiny), _cycles(_loop(8))
    # two slots: the next load no longer waits for this exp (the exp's result, one buffer,
    # still waits for the store reading it)
    assert _cycles(_named(_loop(8), 2), tiny) < single
    # one slot where the function's rule gives two: the next load waits for this exp
    assert _cycles(_named(_loop(8), 1)) > double


def test_a_malformed_buffer_attribute_is_located() -> None:
    x = np.zeros((8, 64), np.float16)
    text = _loop(8).replace("ktdp.load %tx :", "ktdp.load %tx {ktir.buffer = array<i64: 0>} :")
    with pytest.raises(ktdp.KtdpError, match=r"'ktir.buffer' must be array<i64: address, slots>") as caught:
        ktdp.run(text, "k", {"x": x, "y": np.zeros_like(x)})
    assert caught.value.location is not None


def test_a_load_after_a_store_to_the_same_array_waits_for_it() -> None:
    text = f"""func.func @k(%x: index, %y: index) {{
  {_view("x")}
  {_view("y")}
  {_tile("tx", "x", "0")}
  {_tile("ty", "y", "0")}
  %a = ktdp.load %tx : <1x64xindex> -> {_T}
  %e = math.exp %a : {_T}
  ktdp.store %e, %ty : {_T}, <1x64xindex>
  %b = ktdp.load %ty : <1x64xindex> -> {_T}
  ktdp.store %b, %ty : {_T}, <1x64xindex>
  return
}}
"""
    x = np.linspace(-1, 1, 512, dtype=np.float16).reshape(8, 64)
    outputs, report = ktdp.run(text, "k", {"x": x, "y": np.zeros_like(x)})
    np.testing.assert_array_equal(outputs["y"][0], np.exp(x[0].astype(np.float32)).astype(np.float16))
    # load, exp, store, then the second load (it reads what the store wrote) and its store
    assert report.kernels[0].cycles > 4 * SPYRE.dma_setup_cycles
    other = text.replace("%b = ktdp.load %ty", "%b = ktdp.load %tx")  # reads x: no wait
    assert (
        ktdp.run(other, "k", {"x": x, "y": np.zeros_like(x)})[1].kernels[0].cycles < report.kernels[0].cycles
    )


def test_a_buffer_read_through_an_insert_is_not_overwritten_while_the_insert_is_read() -> None:
    """
    Each iteration makes %d (an exp) and stores it with a loaded row inserted. With one buffer,
    the next iteration's exp must wait until this iteration's store has read %d through the
    insert: the two stores and the two exps run one after another.
    """
    rows = "affine_set<(d0, d1) : (d0 >= 0, -d0 + 63 >= 0, d1 >= 0, -d1 + 63 >= 0)>"
    view = (
        "sizes: [64, 64], strides: [64, 1] {coordinate_set = "
        + rows
        + (", memory_space = #ktdp.memory_space<global>} : memref<64x64xf16>")
    )
    big = "tensor<64x64xf16>"
    text = f"""func.func @k(%x: index, %y: index) {{
  %vx = ktdp.construct_memory_view %x, {view}
  %vy = ktdp.construct_memory_view %y, {view}
  %ty = ktdp.construct_access_tile %vy[0, 0] {{access_tile_set = {rows}, access_tile_order = {_ORDER}}}
      : memref<64x64xf16> -> !ktdp.access_tile<64x64xindex>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %cst = arith.constant dense<1.0> : {big}
  scf.for %i = %c0 to %c2 step %c1 {{
    %tx = ktdp.construct_access_tile %vx[%i, 0] {{access_tile_set = {_ROW}, access_tile_order = {_ORDER}}}
        : memref<64x64xf16> -> !ktdp.access_tile<1x64xindex>
    %d = math.exp %cst : {big}
    %a = ktdp.load %tx : <1x64xindex> -> {_T}
    %r = tensor.insert_slice %a into %d[0, 0] [1, 64] [1, 1] : {_T} into {big}
    ktdp.store %r, %ty : {big}, <64x64xindex>
  }}
  return
}}
"""
    x = np.ones((64, 64), np.float16)
    one_buffer = replace(SPYRE, lx_bytes=26000)  # %d and %a fit once, not twice
    report = ktdp.run(text, "k", {"x": x, "y": np.zeros_like(x)}, target=one_buffer)[1]
    exp = cost_model.sfu_cycles_of(ew.ExpOp.name, 64 * 64, 64 * 64, target=SPYRE)
    store = SPYRE.dma_setup_cycles  # and a few cycles of traffic
    assert report.kernels[0].cycles >= 2 * exp + 2 * store


def test_an_inter_tile_reduce_waits_for_the_partials_it_folds(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reduce's identity is ready early; its ring time still starts after the partial sums."""
    from ktir.ktdp_engine.engine import TileProgram

    programs: list[TileProgram] = []
    init = TileProgram.__init__

    def keep(self: TileProgram, *args: object, **kwargs: object) -> None:
        init(self, *args, **kwargs)  # type: ignore[arg-type]
        programs.append(self)

    monkeypatch.setattr(TileProgram, "__init__", keep)
    lines = (KERNELS / "rmsnorm_distributed.mlir").read_text().splitlines()
    # the reduce's identity (a fill) made first, before the partials exist
    first = next(i for i, line in enumerate(lines) if line.strip().startswith("%zero ="))
    identity = lines[first : first + 3]  # %zero, %ze, %zeros = linalg.fill
    body = lines[:first] + lines[first + 3 :]
    at = next(i for i, line in enumerate(body) if "ktdp.get_compute_tile_id" in line) + 1
    text = "\n".join([*body[:at], *identity, *body[at:]])
    x = np.random.default_rng(0).standard_normal((16, 4096)).astype(np.float16)
    ktdp.run(text, "rmsnorm", {"x": x, "y": np.zeros_like(x)})
    events = programs[0].schedule.timeline.events
    partial = next(e for e in events if e.label == "linalg.reduce")
    ring = next(e for e in events if e.queue == "ring")
    assert len(identity) == 3 and (ring.start >= partial.end).all()


@pytest.mark.parametrize("path", sorted(KERNELS.glob("*.mlir")), ids=lambda p: p.stem)
def test_no_corpus_kernel_simulates_faster_than_its_bound(path: Path) -> None:
    """Overlap hides time, never work: every small corpus kernel stays at or above its roofline."""
    made = kernel_inputs(CORPUS + path.name, path.read_text())
    if made is None:
        pytest.skip("a full-size benchmark kernel (bench/ktdp_bench.py runs it)")
    function, npz = made
    arrays = dict(np.load(io.BytesIO(npz)))
    try:
        with np.errstate(all="ignore"):  # random inputs: a division by a zero input is inf
            _, report = ktdp.run(path, function, arrays)
    except ktdp.KtdpError as error:  # inputs made for fuzzing may not fit every kernel
        pytest.skip(f"its fuzzing inputs do not run it: {error}")
    assert report.vs_bound >= 1.0 - 1e-9, (report.total_cycles, report.vs_bound)


def test_the_rfc_adds_dma_unit_is_busy_at_most_the_whole_run() -> None:
    """
    RFC 0682's add: each tile's loads and stores overlap (a store while the next iteration
    loads). The DMA unit is one unit: it works the whole run except the last add, when no
    transfer works, and no busy fraction is above 100 % (the queues added made 126 %).
    """
    a = RNG.standard_normal((96, 64)).astype(np.float16)
    _, report = ktdp.run(KERNELS / "add.mlir", "add", {"a": a, "b": a, "c": np.zeros_like(a)})
    (line,) = report.kernels
    dma, sfu = line.busy[:, 0], line.busy[:, 2]
    one_add = sfu / 3  # three iterations of one add
    np.testing.assert_allclose(dma, line.cycles - one_add, rtol=1e-12)
    assert (report.core_busy <= 1.0).all()
    np.testing.assert_allclose(report.core_busy[:32, 0], 1 - one_add / line.cycles, rtol=1e-12)
