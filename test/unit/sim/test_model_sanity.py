"""
`ktir.sim` model sanity: simulated cycles against what the Spyre `Target` constants predict.

Hand-derived rates (see `ktir/hardware/target.py`): 1500 cycles per µs, LPDDR5 at the card's
sustained 150e9 / 1.5e9 = 100 bytes per cycle for the whole chip, 500 cycles of setup per DMA,
one SFU pass at 8.8e3 elements per µs per core (silu is 5 passes, exp 2), 1.14e6 MACs per µs
per core on the PE arrays (the card's sustained rate), a ring step of 32 cycles plus 1.4e-4 µs per element.
"""

from __future__ import annotations

import math
from typing import cast

import numpy as np
import pytest
from helpers import compiled, matmul, t, unary
from xdsl.dialects.builtin import IntegerAttr, ModuleOp

import ktir
import ktir.sim
from ktir.dialects.ktir import core
from ktir.hardware.target import SPYRE, load_target
from ktir.ir.context import make_context
from ktir.ir.diagnostics import parse_module
from ktir.sim import KernelReport, Report, SimResult
from ktir.sim.timeline import UNITS

CLOCK_MHZ = 1500.0
BYTES_PER_CYCLE = 150e9 / 1.5e9
MACS_PER_US = 1.14e6  # the card's sustained 1140 MAC/ns per core
TURNAROUND = 0.00574 * 1.5  # cycles per byte of read/write overlap (0.00574 ns at 1.5 GHz)
SETUP = 500.0
DMA, PT, SFU, RING = (UNITS.index(u) for u in ("dma", "pt", "sfu", "ring"))
BIG = (8192, 4096)
BIG_BYTES = 8192 * 4096 * 2  # 64 MiB of fp16


def only_kernel(result: SimResult | Report) -> KernelReport:
    """The report line of the run's single kernel."""
    report = result.report if isinstance(result, SimResult) else result
    (kernel,) = [k for k in report.kernels if k.cores]
    return kernel


def work_division(module: ModuleOp) -> dict[str, int]:
    """The work division of the module's single kernel."""
    (kernel,) = [op for op in module.walk() if isinstance(op, core.KernelOp)]
    return {name: cast(IntegerAttr, v).value.data for name, v in kernel.work_division.data.items()}


def simulate_matmul(m: int, k: int, n: int, cores: int, hint: str = "") -> tuple[ModuleOp, SimResult]:
    """Compile and run a matmul on inputs of ones."""
    module = compiled(matmul(m, k, n, hint), cores)
    inputs = [np.ones((m, k), np.float16), np.ones((k, n), np.float16)]
    return module, ktir.sim.simulate(module, inputs)


@pytest.fixture(scope="module")
def big_add() -> Report:
    """
    8192 x 4096 fp16 add on 32 cores: 3 x 64 MiB of LPDDR5 traffic, 1 SFU pass. Timed without
    values (`ktir.sim.estimate`: the same cycles as a run, no 64 MiB tensors computed).
    """
    x = t(f"{BIG[0]}x{BIG[1]}")
    text = (
        f"func.func @f(%a: {x}, %b: {x}) -> {x} {{\n"
        f"  %y = ktir.add %a, %b : {x}, {x} -> {x}\n  return %y : {x}\n}}"
    )
    return ktir.sim.estimate(compiled(text, 32))


@pytest.fixture(scope="module")
def big_silu() -> dict[int, KernelReport]:
    """8192 x 4096 fp16 silu on 32 cores and on 1 core, timed without values."""
    return {
        cores: only_kernel(ktir.sim.estimate(compiled(unary("ktir.silu", "8192x4096"), cores)))
        for cores in (32, 1)
    }


@pytest.fixture(scope="module")
def big_matmul() -> KernelReport:
    """1024 x 1024 x 1024 fp16 matmul on 4 cores (256 rows per core, K chunked)."""
    return only_kernel(simulate_matmul(1024, 1024, 1024, 4)[1])


def test_a_memory_bound_kernel_moves_exactly_its_tensors(big_add: Report) -> None:
    """
    The add reads two 64 MiB tensors and writes one; its DMA unit works for that traffic, plus
    the read/write turnaround on the written bytes that share the channel with the next chunk's
    loads (all but the last chunk's store: 31 of 32 chunks), and the setups no other transfer of
    the core overlaps: a store's setup runs while the next chunk's loads hold the channel, so the
    DMA unit is busy less than the sum of its queues, and never longer than the kernel runs (the
    load and store queues are one unit).
    """
    kernel = only_kernel(big_add)
    assert kernel.cores == 32 and kernel.chunks > 1
    assert kernel.bytes == 3 * BIG_BYTES
    dma_busy = kernel.busy[kernel.critical_core, DMA]
    overlapped = BIG_BYTES * (kernel.chunks - 1) / kernel.chunks
    traffic = 3 * BIG_BYTES / BYTES_PER_CYCLE + TURNAROUND * overlapped  # the channel's time
    queues = traffic + 3 * kernel.chunks * SETUP  # the load and store queues' time, added
    assert traffic + SETUP <= dma_busy < queues
    assert dma_busy <= kernel.cycles < queues
    assert (big_add.core_busy <= 1.0).all()
    assert kernel.cycles >= kernel.bytes / SPYRE.device_bytes_per_cycle


def test_a_memory_bound_kernel_runs_at_bandwidth(big_add: Report) -> None:
    """
    The add takes what the card's memory term gives, within 3%: its bytes at the sustained
    LPDDR5 rate plus the turnaround on min(read, write) = the 64 MiB it writes (117 GB/s).
    """
    kernel = only_kernel(big_add)
    card = kernel.bytes / SPYRE.sustained_bytes_per_cycle + TURNAROUND * BIG_BYTES
    assert abs(kernel.cycles / card - 1) <= 0.03


@pytest.mark.slow
def test_pointwise_work_divides_over_the_cores(big_silu: dict[int, KernelReport]) -> None:
    """silu's SFU time is 5 passes over 32 M elements, split evenly over 32 cores."""
    one, many = big_silu[1], big_silu[32]
    total = BIG[0] * BIG[1] * 5 / 8.8e3 * CLOCK_MHZ
    assert one.cores == 1 and many.cores == 32
    assert one.busy[0, SFU] == pytest.approx(total, rel=1e-9)
    assert np.allclose(many.busy[:, SFU], total / 32, rtol=1e-9)
    assert one.bottleneck == "sfu" and one.cycles >= total
    assert many.cycles >= max(many.busy[many.critical_core])


def test_a_large_pointwise_op_on_32_cores_runs_at_memory_speed(big_silu: dict[int, KernelReport]) -> None:
    """
    8192 x 4096 silu: one core is SFU-bound; 32 cores split the SFU work (1/32 each, 595 µs) and
    the kernel runs at the LPDDR5's pace: at least its 128 MiB at 100 bytes per cycle (895 µs),
    at most that plus the turnaround on the 64 MiB written, within 10% (1,280 µs, a balanced
    copy's 105 GB/s): the card's elementwise arithmetic hides under memory.
    """
    one, many = big_silu[1], big_silu[32]
    assert one.bottleneck == "sfu" and many.bottleneck == "dma"
    memory = many.bytes / BYTES_PER_CYCLE
    balanced = memory + TURNAROUND * many.bytes / 2
    assert many.busy[many.critical_core, SFU] < memory <= many.cycles <= 1.1 * balanced


def test_splitting_k_adds_ring_time() -> None:
    """
    256 x 512 x 1024 on 4 cores: with {m: 2, k: 2} every core sums its 16 x 128 x 64 fp32
    partial sums over the ring, one step per output chunk: a 32-cycle hop each plus 131072 x
    1.4e-4 µs in all (27,557.12 cycles for one chunk); without a K split the ring is idle. The
    split kernel takes longer than its pure compute plus the ring.
    """
    plain_module, plain = simulate_matmul(256, 512, 1024, 4)
    split_module, split = simulate_matmul(256, 512, 1024, 4, "m = 2 : i64, k = 2 : i64")
    assert work_division(plain_module)["k"] == 1
    assert work_division(split_module) == {"m": 2, "n": 1, "k": 2}
    plain_kernel, split_kernel = only_kernel(plain), only_kernel(split)
    assert np.all(plain_kernel.busy[:, RING] == 0)
    steps = sum(1 for event in split_kernel.events if event.unit == "ring")
    step = 32 * steps + 16 * 128 * 64 * 1.4e-4 * CLOCK_MHZ
    assert steps >= 1 and np.allclose(split_kernel.busy[:, RING], step, rtol=1e-12)
    compute = 256 * 512 * 1024 / 4 / MACS_PER_US * CLOCK_MHZ  # 128 rows per core: full PE efficiency
    assert np.allclose(split_kernel.busy[:, PT], compute, rtol=1e-12)
    assert split_kernel.cycles > compute + step
    assert split_kernel.cycles > plain_kernel.cycles


def test_a_single_chunk_kernel_is_serial_with_no_overhead() -> None:
    """
    100 x 70 exp on 4 cores (chunks 1): load 4 x 6400 bytes, exp on 2 x 25 x 64 elements at 2
    passes, store 4 x 6400 bytes, back to back: nothing else is charged.
    """
    result = ktir.sim.simulate(compiled(unary("ktir.exp", "100x70"), 4), [np.ones((100, 70), np.float16)])
    kernel = only_kernel(result)
    assert kernel.chunks == 1 and kernel.cores == 4
    dma = SETUP + 4 * 6400 / BYTES_PER_CYCLE
    exp = 2 * 25 * 64 * 2 / 8.8e3 * CLOCK_MHZ
    assert kernel.cycles == pytest.approx(dma + exp + dma, rel=1e-12)
    assert kernel.bytes == 2 * 4 * 6400


def test_a_single_chunk_matmul_is_serial_with_no_overhead() -> None:
    """
    64 x 256 x 256 split {n: 4} (one chunk): x (32 KiB) broadcast to the 4 cores in one read,
    w's four 32 KiB column tiles, a 64-row matmul per core, then the 32 KiB store: serial.
    """
    _, result = simulate_matmul(64, 256, 256, 4, "n = 4 : i64")
    kernel = only_kernel(result)
    assert kernel.chunks == 1
    loads = (SETUP + 64 * 256 * 2 / BYTES_PER_CYCLE) + (SETUP + 256 * 256 * 2 / BYTES_PER_CYCLE)
    compute = 64 * 256 * 256 / 4 / MACS_PER_US * CLOCK_MHZ
    store = SETUP + 64 * 256 * 2 / BYTES_PER_CYCLE
    assert kernel.cycles == pytest.approx(loads + compute + store, rel=1e-12)
    assert kernel.cycles == pytest.approx(4845.785, rel=1e-7)


def test_the_datasheet_target_keeps_the_datasheet_rates() -> None:
    """
    128 x 256 x 256 split {n: 4} compiled for and run on `spyre-datasheet` (one chunk): LPDDR5
    at 204.8e9 / 1.5e9 bytes per cycle and the PE arrays at 1.536e6 MAC/µs, 5468.0 cycles, what
    ktir simulated before it followed the card.
    """
    module = parse_module(make_context(), matmul(128, 256, 256, "n = 4 : i64"))
    ktir.run_pipeline(module, "ktir-compile{cores=4}", target="spyre-datasheet")
    inputs = [np.ones((128, 256), np.float16), np.ones((256, 256), np.float16)]
    kernel = only_kernel(ktir.sim.simulate(module, inputs, target=load_target("spyre-datasheet")))
    assert kernel.chunks == 1
    datasheet = 204.8e9 / 1.5e9
    loads = (SETUP + 128 * 256 * 2 / datasheet) + (SETUP + 256 * 256 * 2 / datasheet)
    compute = 128 * 256 * 256 / 4 / 1.536e6 * CLOCK_MHZ
    assert kernel.cycles == pytest.approx(loads + compute + SETUP + 128 * 256 * 2 / datasheet, rel=1e-12)
    assert kernel.cycles == pytest.approx(5468.0, rel=1e-12)


def test_a_double_buffered_matmul_overlaps(big_matmul: KernelReport) -> None:
    """The K-chunked matmul loads chunk i+1 while the PE arrays work on chunk i."""
    kernel = big_matmul
    assert kernel.chunks > 1
    busy = kernel.busy[kernel.critical_core]
    assert kernel.cycles < busy.sum()
    assert kernel.cycles >= busy.max()


def test_a_double_buffered_elementwise_kernel_overlaps() -> None:
    """
    1024 x 1024 exp on one core (8 chunks, two slots): loading chunk i+1 and storing chunk i-1
    overlap computing chunk i, hiding at least half of the smaller unit's time.
    """
    result = ktir.sim.simulate(
        compiled(unary("ktir.exp", "1024x1024"), 1), [np.ones((1024, 1024), np.float16)]
    )
    kernel = only_kernel(result)
    assert kernel.chunks > 1
    busy = kernel.busy[kernel.critical_core]
    assert kernel.cycles <= busy.sum() - 0.5 * min(busy[DMA], busy[SFU])


def test_report_time_bottleneck_and_bound(big_add: Report, big_matmul: KernelReport) -> None:
    """time_us is cycles / 1500; a big add is DMA-bound, a big matmul PT-bound; neither beats its bound."""
    report = big_add
    assert report.total_cycles == math.ceil(sum(k.cycles for k in report.kernels))
    assert report.time_us == report.total_cycles / 1500
    add = only_kernel(big_add)
    assert add.bottleneck == "dma"
    assert big_matmul.bottleneck == "pt" and big_matmul.unit == "pt"
    for kernel in (add, big_matmul):
        assert 0 < kernel.bound_cycles <= kernel.cycles
        assert kernel.vs_bound >= 1 and kernel.bytes >= kernel.compulsory_bytes
