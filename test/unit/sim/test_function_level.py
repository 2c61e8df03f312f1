"""
Function-level ops that take time (`ktir.sim.machine`): a row gather runs as an indirect DMA on
the chip and a CPU fallback costs the host round trip and its transfers; a view takes none. The
cycles are the cost model's formulas on the op's sizes, and a table read only through gathers
counts only its distinct rows as compulsory bytes.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import check_never_faster_than_physics, compiled

import ktir.sim
from ktir.hardware.cost_model import box_write_cycles, gather_rows_cycles, host_op_cycles
from ktir.hardware.target import SPYRE
from ktir.ir.diagnostics import ExecutionError
from ktir.sim.report import Report

GATHER = """
func.func @f(%table: tensor<4096x64xf16>, %ids: tensor<6xi64>) -> tensor<6x64xf16> {
  %rows = ktir.gather_rows %table[%ids] : tensor<4096x64xf16>, tensor<6xi64> -> tensor<6x64xf16>
  return %rows : tensor<6x64xf16>
}
"""


TABLE = np.random.default_rng(1).standard_normal((4096, 64)).astype(np.float16)


@pytest.fixture(scope="module")
def gather_run() -> ktir.sim.SimResult:
    table = TABLE
    ids = np.array([5, 4095, -1, 5, 0, 17])
    return ktir.sim.simulate(compiled(GATHER, cores=4), [table, ids])


def test_gather_reads_the_named_rows(gather_run: ktir.sim.SimResult) -> None:
    np.testing.assert_array_equal(gather_run.outputs[0], TABLE[[5, 4095, 4095, 5, 0, 17]])


def test_gather_costs_one_dma_per_row_and_its_traffic(gather_run: ktir.sim.SimResult) -> None:
    (line,) = gather_run.report.kernels
    # 6 rows of one 128-byte stick on 4 cores (2 on the busiest), 128 bytes of indices.
    assert line.op == "ktir.gather_rows" and line.cores == 4 and line.unit == "dma"
    assert line.cycles == pytest.approx(gather_rows_cycles(6, 128, 128, 4, target=SPYRE))
    assert line.cycles == pytest.approx((2 + 2) * 500 + (128 + 2 * 6 * 128) / SPYRE.sustained_bytes_per_cycle)
    assert line.bytes == 128 + 6 * 128 + 6 * 128


def test_a_gathered_table_counts_its_distinct_rows_only(gather_run: ktir.sim.SimResult) -> None:
    """4 distinct rows of 4096 (ids 5 twice, -1 is 4095): the bound cannot count the whole table."""
    report = gather_run.report
    assert report.compulsory_bytes == 128 + 4 * 128 + 6 * 128
    assert report.kernels[0].compulsory_bytes == report.compulsory_bytes
    check_never_faster_than_physics(report)


FALLBACK = """
func.func @f(%x: tensor<4x64xf32>, %m: tensor<4xi64>) -> tensor<4xi64> {
  %y = ktir.add %x, %x : tensor<4x64xf32>, tensor<4x64xf32> -> tensor<4x64xf32>
  %best = ktir.cpu_fallback "aten::argmax.default"(%y) {args = [#ktir.operand<0>, 1 : i64]} : (tensor<4x64xf32>) -> tensor<4xi64>
  %r = ktir.cpu_fallback "aten::bitwise_xor.Tensor"(%best, %m) {args = [#ktir.operand<0>, #ktir.operand<1>]} : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  return %r : tensor<4xi64>
}
"""  # noqa: E501


def test_a_cpu_fallback_costs_its_round_trip_and_transfers() -> None:
    x = np.random.default_rng(3).standard_normal((4, 64)).astype(np.float32)
    m = np.array([1, 0, 3, 2])
    result = ktir.sim.simulate(compiled(FALLBACK, cores=2), [x, m])
    np.testing.assert_array_equal(result.outputs[0], np.argmax(x + x, axis=1) ^ m)
    argmax, xor = (k for k in result.report.kernels if "(host)" in k.op)
    assert argmax.op == "ktir.cpu_fallback aten::argmax.default (host)"
    # argmax: the add's result (4 x 64 f32 in whole sticks: 1 KiB) to the host, 4 i64 back
    # (one 128-byte stick); xor: the argmax's result goes back up, %m came from the host.
    assert (argmax.host_bytes, xor.host_bytes) == (1024 + 128, 128 + 128)
    assert argmax.cycles == pytest.approx(host_op_cycles(1024, 128, target=SPYRE))
    assert xor.cycles == pytest.approx(host_op_cycles(128, 128, target=SPYRE))
    assert xor.cycles > SPYRE.host_op_latency_us * SPYRE.clock_mhz
    assert xor.start == pytest.approx(argmax.start + argmax.cycles)
    assert result.report.total_cycles >= sum(k.cycles for k in result.report.kernels) - 1


def test_host_bytes_survive_the_json_report() -> None:
    x = np.ones((4, 64), np.float32)
    report = ktir.sim.simulate(compiled(FALLBACK, cores=2), [x, np.zeros(4, np.int64)]).report
    again = Report.from_json(report.to_json())
    assert [k.host_bytes for k in again.kernels] == [k.host_bytes for k in report.kernels]
    assert again.total_cycles == report.total_cycles


RETURNS_VIEWS = """
func.func @f(%x: tensor<64x256xf16>, %w: tensor<256x1024xf16>)
    -> (tensor<64x1024xf16>, tensor<1024x256xf16>, tensor<64x4x256xf16>) {
  %y = ktir.matmul %x, %w : tensor<64x256xf16>, tensor<256x1024xf16> -> tensor<64x1024xf16>
  %wt = ktir.permute %w perm [1, 0] : tensor<256x1024xf16> -> tensor<1024x256xf16>
  %y3 = ktir.reshape %y : tensor<64x1024xf16> -> tensor<64x4x256xf16>
  return %y, %wt, %y3 : tensor<64x1024xf16>, tensor<1024x256xf16>, tensor<64x4x256xf16>
}
"""


@pytest.mark.parametrize("timing_only", [False, True])
def test_a_returned_view_is_the_memory_it_views(timing_only: bool) -> None:
    # What aot_autograd's training forward returns for backward: a weight transposed (a view
    # of an argument) and views of an output. They move nothing, so they are compulsory only
    # as the memory they view, each once: x, w and y (before: 1.9x that, traffic below 1).
    module = compiled(RETURNS_VIEWS, cores=8)
    ops = [op.name for op in module.body.block.first_op.body.block.ops]
    assert ops.count("ktir.kernel") == 1 and "ktir.permute" in ops and "ktir.reshape" in ops
    if timing_only:
        report = ktir.sim.estimate(module)
    else:
        rng = np.random.default_rng(2)
        x, w = rng.standard_normal((64, 256)), rng.standard_normal((256, 1024))
        report = ktir.sim.simulate(module, [x.astype(np.float16), w.astype(np.float16)]).report
    assert report.compulsory_bytes == (64 * 256 + 256 * 1024 + 64 * 1024) * 2
    check_never_faster_than_physics(report)


def cache_update(marked: bool) -> str:
    """16 new positions of 8 key heads written in place into a 64-position cache, `contiguous` or not."""
    cache, new, pos = "tensor<1x8x64x128xf16>", "tensor<1x8x16x128xf16>", "tensor<16xi64>"
    keyword = " contiguous" if marked else ""
    return (
        f"func.func @f(%cache: {cache}, %new: {new}, %pos: {pos}) -> {cache} {{\n"
        f"  %k = ktir.scatter_rows %new into %cache[%pos] dim 2 in_place{keyword}"
        f" : {new}, {cache}, {pos} -> {cache}\n"
        f"  return %k : {cache}\n}}"
    )


def test_a_contiguous_scatter_writes_one_box_a_core() -> None:
    """
    The 128 rows (8 heads x 16 positions) of 256 bytes written as one box: 2 DMA setups, and
    every row once each way (1,655 cycles), where one DMA a row on 4 cores adds 32 setups and
    reads the indices. The values are the same.
    """
    cache = np.zeros((1, 8, 64, 128), np.float16)
    new = np.random.default_rng(2).standard_normal((1, 8, 16, 128)).astype(np.float16)
    positions = np.arange(20, 36)
    box, rows = (
        ktir.sim.simulate(compiled(cache_update(m), cores=4), [cache, new, positions]) for m in (True, False)
    )
    np.testing.assert_array_equal(box.outputs[0], rows.outputs[0])
    np.testing.assert_array_equal(box.outputs[0][:, :, 20:36], new)
    scatter_box, scatter_rows = box.report.kernels[0], rows.report.kernels[0]
    assert (
        scatter_box.cycles == pytest.approx(box_write_cycles(128, 256, SPYRE)) == pytest.approx(1000 + 655.36)
    )
    assert scatter_rows.cycles == pytest.approx(
        gather_rows_cycles(128, 256, scatter_rows.bytes - 2 * 128 * 256, 4, SPYRE)
    )
    assert scatter_rows.cycles > scatter_box.cycles + 32 * SPYRE.dma_setup_cycles
    assert scatter_box.bytes == 2 * 128 * 256 < scatter_rows.bytes
    assert scatter_box.cycles >= scatter_box.sustained_bound_cycles  # its 64 KiB at 100 bytes a cycle
    assert scatter_box.bytes >= scatter_box.compulsory_bytes


def test_a_contiguous_scatter_on_indices_that_are_not_a_run_is_an_error() -> None:
    """The mark is the compiler's claim about the indices: a run on others says so, never writes wrongly."""
    cache = np.zeros((1, 8, 64, 128), np.float16)
    new = np.ones((1, 8, 16, 128), np.float16)
    positions = np.array([*range(20, 35), 50])
    with pytest.raises(ExecutionError, match=r"marked contiguous, but its indices .* are not one run"):
        ktir.sim.simulate(compiled(cache_update(True), cores=4), [cache, new, positions])
