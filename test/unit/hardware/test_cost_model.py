"""
`ktir.hardware.cost_model`: every rule against numbers worked out by hand from the Spyre `Target`.

The constants used below (all from `ktir/hardware/target.py`): 1.5 GHz clock (1500 cycles per µs),
fp16 peak 98.304e12 FLOP/s over 32 cores (1.536e6 MACs per µs per core), 8-row PE passes and 8
target passes, one SFU pass at 8.8e3 elements per µs, reductions at 1.2e4 and softmax at 1.4e3
input elements per µs, 500 cycles of DMA setup, LPDDR5 sustained at 150e9 B/s (100 bytes per cycle),
LX copies at 128 bytes per cycle, 32-cycle ring hops at 128 bytes per cycle, and
1.4e-4 µs per element per partial-sum hop.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type
from xdsl.ir import Operation
from xdsl.parser import Parser

from ktir.hardware import accounting, cost_model
from ktir.hardware.target import SPYRE, SPYRE_DATASHEET
from ktir.ir.context import make_context
from ktir.layout.dtypes import DeviceDType

CLOCK_MHZ = 1500.0
DEVICE_BYTES_PER_CYCLE = 204.8e9 / 1.5e9
SUSTAINED_BYTES_PER_CYCLE = 150e9 / 1.5e9

_OPS = """
func.func @ops(%x: tensor<64x64xf16>, %w: tensor<64xf16>) -> tensor<64x64xf16> {
  %add = ktir.add %x, %x : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
  %exp = ktir.exp %x : tensor<64x64xf16> -> tensor<64x64xf16>
  %silu = ktir.silu %x : tensor<64x64xf16> -> tensor<64x64xf16>
  %sum = ktir.sum %x dims [1] : tensor<64x64xf16> -> tensor<64xf16>
  %softmax = ktir.softmax %x dim 1 : tensor<64x64xf16> -> tensor<64x64xf16>
  %rms = ktir.rms_norm %x weight %w : tensor<64xf16> normalized_shape [64] {eps = 1.0e-06 : f64} : tensor<64x64xf16> -> tensor<64x64xf16>
  %ln = ktir.layer_norm %x normalized_shape [64] {eps = 1.0e-05 : f64} : tensor<64x64xf16> -> tensor<64x64xf16>
  return %add : tensor<64x64xf16>
}
"""  # noqa: E501


def graph_op(name: str) -> Operation:
    """The first op called `name` (e.g. "ktir.exp") of a parsed graph-level module."""
    module = Parser(make_context(), _OPS).parse_module()
    return next(op for op in module.walk() if op.name == name)


def test_the_target_constants_used_here() -> None:
    """The derived rates the hand computations below rely on."""
    assert SPYRE.clock_mhz == CLOCK_MHZ
    assert SPYRE.peak_macs_per_us_per_core == pytest.approx(1.536e6, rel=1e-15)
    assert SPYRE.device_bytes_per_cycle == pytest.approx(136.533333333, rel=1e-9)
    assert SPYRE.sustained_bytes_per_cycle == pytest.approx(100.0, rel=1e-15)


@pytest.mark.parametrize(
    ("rows", "expected"),
    [(64, 1.0), (128, 1.0), (16, 0.25**0.35), (8, 0.125**0.35), (2, (2 / 64) ** 0.35), (1, (1 / 64) ** 0.35)],
)
def test_pt_efficiency(rows: int, expected: float) -> None:
    """8 passes of 8 rows fill the PE pipeline; fewer reach (rows / 64) ** 0.35 (the card's fit)."""
    assert cost_model.pt_efficiency(rows, target=SPYRE) == pytest.approx(expected, rel=1e-15)


@pytest.mark.parametrize(
    ("rows", "expected"),
    [(64, 1.0), (128, 1.0), (16, 0.5), (8, math.sqrt(1 / 8)), (1, math.sqrt(1 / 8)), (32, math.sqrt(0.5))],
)
def test_pt_efficiency_on_the_datasheet(rows: int, expected: float) -> None:
    """`spyre-datasheet` keeps the reference's fit: a square root, one 8-row pass at least."""
    assert cost_model.pt_efficiency(rows, SPYRE_DATASHEET) == pytest.approx(expected, rel=1e-15)
    assert cost_model.reference_pt_efficiency(rows, target=SPYRE) == pytest.approx(expected, rel=1e-15)


def test_pt_cycles() -> None:
    """
    MACs at the sustained 1.14e6 per µs per core (the card's 1140 MAC/ns), divided by the
    efficiency, in 1500-cycle µs; the datasheet target multiplies at 1.536e6.
    """
    macs = 128 * 512 * 512
    assert cost_model.pt_cycles(macs, rows=128, target=SPYRE) == pytest.approx(
        macs / 1.14e6 * 1500, rel=1e-12
    )
    assert cost_model.pt_cycles(macs, rows=128, target=SPYRE) == pytest.approx(44150.57, rel=1e-7)
    assert cost_model.pt_cycles(1.14e6, rows=64, target=SPYRE) == pytest.approx(1500.0, rel=1e-12)  # one µs
    datasheet = cost_model.pt_cycles(macs, rows=128, target=SPYRE_DATASHEET)
    assert datasheet == pytest.approx(32768.0, rel=1e-12)
    half = cost_model.pt_cycles(macs, rows=16, target=SPYRE_DATASHEET)
    assert half == pytest.approx(65536.0, rel=1e-12)  # half efficiency


def test_sfu_cycles_of_a_simple_op() -> None:
    """ktir.add is one pass: out elements / 8.8e3 per µs; the input count does not matter."""
    add = graph_op("ktir.add")
    assert cost_model.sfu_passes(add) == 1.0
    assert cost_model.sfu_cycles(add, 0, 8800, target=SPYRE) == pytest.approx(1500.0, rel=1e-12)
    assert cost_model.sfu_cycles(add, 123456, 4096, target=SPYRE) == pytest.approx(
        4096 * 1500 / 8800, rel=1e-12
    )


def test_a_transcendental_op_costs_exactly_twice_a_simple_one() -> None:
    """ktir.exp is 2 passes: the docstring's 64 x 64 example is 1396 cycles."""
    exp, add = graph_op("ktir.exp"), graph_op("ktir.add")
    assert cost_model.sfu_cycles(exp, 4096, 4096, target=SPYRE) == pytest.approx(
        4096 * 2 / 8.8e3 * 1500, rel=1e-12
    )
    assert round(cost_model.sfu_cycles(exp, 4096, 4096, target=SPYRE)) == 1396
    assert cost_model.sfu_cycles(exp, 4096, 4096, target=SPYRE) == pytest.approx(
        2 * cost_model.sfu_cycles(add, 4096, 4096, target=SPYRE), rel=1e-15
    )


def test_silu_is_the_calibration_point() -> None:
    """silu = 5 passes reproduces torch-spyre's 1.76e3 elements per µs per core."""
    silu = graph_op("ktir.silu")
    assert cost_model.sfu_passes(silu) == 5
    # 17,600 elements at 1.76e3 per µs: exactly 10 µs.
    assert cost_model.sfu_cycles(silu, 17600, 17600, target=SPYRE) == pytest.approx(10 * CLOCK_MHZ, rel=1e-12)


def test_a_reduction_is_charged_on_input_elements() -> None:
    """ktir.sum: input elements at 1.2e4 per µs per core, whatever its output."""
    total = graph_op("ktir.sum")
    assert cost_model.sfu_cycles(total, 12000, 1, target=SPYRE) == pytest.approx(1500.0, rel=1e-12)
    assert cost_model.sfu_cycles(total, 12000, 64, target=SPYRE) == pytest.approx(1500.0, rel=1e-12)
    assert accounting.sfu_flops_of(total.name, 12000, 64) == 12000.0


def test_softmax() -> None:
    """ktir.softmax: input elements at 1.4e3 per µs per core."""
    softmax = graph_op("ktir.softmax")
    assert cost_model.sfu_cycles(softmax, 1400, 1400, target=SPYRE) == pytest.approx(1500.0, rel=1e-12)
    assert cost_model.sfu_cycles(softmax, 4096, 4096, target=SPYRE) == pytest.approx(
        4096 / 1.4e3 * 1500, rel=1e-12
    )


def test_rms_norm_and_layer_norm() -> None:
    """A norm is its statistics reduction plus 3 (rms_norm) or 5 (layer_norm) simple passes."""
    elements = 52800  # 4.4 µs of reduction; one pass is 6 µs
    rms, layer = graph_op("ktir.rms_norm"), graph_op("ktir.layer_norm")
    assert cost_model.sfu_cycles(rms, elements, elements, target=SPYRE) == pytest.approx(
        (4.4 + 18) * 1500, rel=1e-12
    )
    assert cost_model.sfu_cycles(layer, elements, elements, target=SPYRE) == pytest.approx(
        (4.4 + 30) * 1500, rel=1e-12
    )


def test_dma_cycles() -> None:
    """
    Setup plus chip-wide bytes at the sustained 150e9 / 1.5e9 bytes per cycle (the docstring's
    example); the datasheet target moves them at 204.8e9 / 1.5e9.
    """
    assert cost_model.dma_cycles(4 * 1024 * 1024, target=SPYRE) == pytest.approx(500 + 41943.04, rel=1e-12)
    assert cost_model.dma_cycles(0, target=SPYRE) == 500.0
    assert cost_model.dma_cycles(25600, target=SPYRE) == pytest.approx(
        500 + 25600 / SUSTAINED_BYTES_PER_CYCLE, rel=1e-12
    )
    datasheet = cost_model.dma_cycles(4 * 1024 * 1024, SPYRE_DATASHEET)
    assert datasheet == pytest.approx(500 + 4 * 1024 * 1024 / DEVICE_BYTES_PER_CYCLE, rel=1e-12)
    assert datasheet == pytest.approx(500 + 30720, rel=1e-12)


def test_lx_copy_cycles() -> None:
    """Setup plus one 128-byte stick per cycle, no LPDDR5 traffic."""
    assert cost_model.lx_copy_cycles(12800, target=SPYRE) == pytest.approx(600.0, rel=1e-12)
    assert cost_model.lx_copy_cycles(0, target=SPYRE) == 500.0


def test_ring_cycles_of_one_core_is_zero() -> None:
    """A group of one has no partner to reduce with."""
    assert cost_model.ring_cycles(4096, 4, 1, target=SPYRE) == 0.0


def test_ring_cycles_are_psum_dominated() -> None:
    """64 x 64 fp32: a step is 32 + max(16384 / 128 = 128, 4096 x 1.4e-4 µs = 860.16) cycles."""
    step = 32 + 4096 * 1.4e-4 * 1500
    assert cost_model.ring_cycles(4096, 4, 2, target=SPYRE) == pytest.approx(step, rel=1e-12)
    assert cost_model.ring_cycles(4096, 4, 2, target=SPYRE) == pytest.approx(892.16, rel=1e-12)
    assert cost_model.ring_cycles(4096, 4, 4, target=SPYRE) == pytest.approx(3 * step, rel=1e-12)


def test_ring_cycles_grow_with_the_group() -> None:
    """Each extra member adds one step."""
    costs = [cost_model.ring_cycles(4096, 4, g, target=SPYRE) for g in (1, 2, 4, 8, 16)]
    assert costs == sorted(costs) and len(set(costs)) == len(costs)
    assert costs[-1] == pytest.approx(15 * 892.16, rel=1e-12)


def test_fill_cycles() -> None:
    """Zeroing an accumulator writes LX at one stick (128 bytes) per cycle."""
    assert cost_model.fill_cycles(128, target=SPYRE) == pytest.approx(1.0, rel=1e-12)
    assert cost_model.fill_cycles(128 * 1024 * 4, target=SPYRE) == pytest.approx(4096.0, rel=1e-12)


def test_matmul_cost_us_docstring_example() -> None:
    """M = 256, N = K = 4096 fp16 over {m: 4, n: 8, k: 1}: 87.4 µs compute + 184.3 µs HBM."""
    sizes = {"m": 256, "n": 4096, "k": 4096}
    compute = 256 * 4096 * 4096 / 32 / 1.536e6  # 64 rows per core: full efficiency
    hbm = (256 * 4096 + 4096 * 4096 + 256 * 4096) * 2 / 204800  # bytes per µs
    cost = cost_model.matmul_cost_us(sizes, {"m": 4, "n": 8, "k": 1}, 2, target=SPYRE)
    assert cost == pytest.approx(compute + hbm, rel=1e-12)
    assert round(cost, 1) == 271.7


def test_matmul_cost_us_psum_and_limits() -> None:
    """A K split adds (k - 1) psum hops per output element; more than 32 cores is infinite."""
    sizes = {"m": 256, "n": 4096, "k": 4096}
    base = cost_model.matmul_cost_us(sizes, {"m": 4, "n": 8, "k": 1}, 2, target=SPYRE)
    split = cost_model.matmul_cost_us(sizes, {"m": 4, "n": 4, "k": 2}, 2, target=SPYRE)
    assert split - base == pytest.approx(256 * 4096 * 1.4e-4, rel=1e-9)
    assert cost_model.matmul_cost_us(sizes, {"m": 8, "n": 8, "k": 1}, 2, target=SPYRE) == math.inf


def test_attention_pairs_skip_the_key_blocks_a_causal_query_block_cannot_see() -> None:
    """The docstring example, a core further down the rows, a cache offset and no limit."""
    pairs = cost_model.attention_pairs(np.array([0, 128]), 128, np.array([0, 0]), 256, 0)
    # rows 0-63 see one key block, 64-127 two; rows 128-191 three, 192-255 four.
    assert pairs.tolist() == [64 * 64 + 64 * 128, 64 * 192 + 64 * 256]
    # 2 queries after a cache of 510 keys: every key is visible, nothing is skipped.
    assert cost_model.attention_pairs(np.array([0]), 2, np.array([0]), 512, 510).tolist() == [1024]
    assert cost_model.attention_pairs(np.array([0, 5]), 3, np.array([0, 0]), 7, None).tolist() == [21, 21]
    # A key tile that starts after the last visible key: nothing to compute.
    assert cost_model.attention_pairs(np.array([0]), 64, np.array([64]), 64, 0).tolist() == [0]


def test_attention_cycles_docstring_example() -> None:
    """One head, 512 x 512 scores, D = E = 128: 58.9 µs on the PE array, 217 µs on the SFU."""
    pt, sfu, flops, matmul_flops = cost_model.attention_cycles(
        (1, 1, 1, 512), 512 * 512, 128, 128, 2, target=SPYRE
    )
    assert pt == pytest.approx(2 * 512 * 512 * 128 / 1.14e6 * 1500, rel=1e-12)
    assert pt == pytest.approx(58.87 * 1500, rel=1e-3)
    assert sfu == pytest.approx((262144 / 8.8e3 + 262144 / 1.4e3) * 1500, rel=1e-12)
    assert matmul_flops == 2 * 512 * 512 * 256
    assert flops == matmul_flops + 6 * 262144
    # Per core: arrays of pairs give arrays of cycles, in proportion.
    pt2, sfu2, _, _ = cost_model.attention_cycles(
        (1, 1, 4, 64), np.array([64.0, 128.0]), 64, 64, 2, target=SPYRE
    )
    assert sfu2[1] == pytest.approx(2 * sfu2[0]) and pt2[1] == pytest.approx(2 * pt2[0])


def test_gather_rows_cycles_docstring_example() -> None:
    """512 rows of 8 KiB over 32 cores: 18 DMA setups on the busiest core plus 8 MiB of traffic."""
    cycles = cost_model.gather_rows_cycles(512, 8192, 4096, 32, target=SPYRE)
    assert cycles == pytest.approx(18 * 500 + (4096 + 2 * 512 * 8192) / (150e9 / 1.5e9), rel=1e-12)
    assert cycles == pytest.approx(92927.04, rel=1e-12) and cycles / 1500 == pytest.approx(62.0, abs=0.05)
    # A row shorter than a stick still moves a whole stick; fewer cores pay more setups each.
    assert cost_model.gather_rows_cycles(4, 2, 128, 4, target=SPYRE) == cost_model.gather_rows_cycles(
        4, 128, 128, 4, target=SPYRE
    )
    assert cost_model.gather_rows_cycles(64, 128, 128, 1, target=SPYRE) > cost_model.gather_rows_cycles(
        64, 128, 128, 32, target=SPYRE
    )


def test_host_op_cycles_docstring_example() -> None:
    """4 KiB each way: 10 µs round trip + the PCIe transfers + the host's reads and writes."""
    cycles = cost_model.host_op_cycles(4096, 4096, target=SPYRE)
    assert cycles == pytest.approx((10 + 8192 / 63e9 * 1e6 + 8192 / 10e9 * 1e6) * 1500, rel=1e-12)
    assert cost_model.host_op_cycles(0, 0, target=SPYRE) == pytest.approx(10 * 1500)


def test_a_cumsum_costs_a_log_depth_scan() -> None:
    """ceil(log2(n)) add passes per element: 5 along 24 positions, 1 along one or two."""

    def passes(n: int) -> float:
        value = f"tensor<3x{n}xi64>"
        text = f"%x = ktir.full 1 : {value}\n%c = ktir.cumsum %x dim 1 : {value} -> {value}"
        module = Parser(make_context(), text).parse_module()
        return cost_model.sfu_passes(next(op for op in module.walk() if op.name == "ktir.cumsum"))

    assert [passes(n) for n in (1, 2, 3, 24, 64)] == [1, 1, 2, 5, 6]


def test_only_fp32_matmul_operands_are_converted_to_fp16() -> None:
    """The PE arrays multiply fp16: f32 (IEEE_FP32 on the device) is converted; bf16 is fp16 there."""
    assert cost_model.converts_to_fp16(Float32Type()) and cost_model.converts_to_fp16(DeviceDType.IEEE_FP32)
    assert not any(map(cost_model.converts_to_fp16, [Float16Type(), BFloat16Type(), DeviceDType.SEN169_FP16]))


def test_conversion_cycles_docstring_example() -> None:
    """One SFU pass per element, as a ktir.convert: 262,144 elements / 8.8e3 per µs = 29.8 µs."""
    assert cost_model.conversion_cycles(256 * 512 + 512 * 256, target=SPYRE) == pytest.approx(
        262144 / 8800 * 1500, rel=1e-15
    )
    assert cost_model.conversion_cycles(8800, target=SPYRE) == pytest.approx(1500.0, rel=1e-15)


# -- collectives between cards (tensor parallelism): a ring over `card_link_bandwidth` ---------------


def test_the_card_link_is_pcie_gen5_x16_peer_to_peer() -> None:
    assert SPYRE.card_link_bandwidth == SPYRE.host_link_bandwidth == 63.0e9
    assert SPYRE.card_link_latency_us == 2.0


@pytest.mark.parametrize(
    ("name", "cards", "steps", "link_bytes"),
    [
        ("ktir.all_reduce", 1, 0, 0.0),
        ("ktir.all_reduce", 2, 2, 8192.0),  # 2 steps of 4096 B
        ("ktir.all_reduce", 4, 6, 12288.0),  # 6 steps of 2048 B
        ("ktir.all_reduce", 8, 14, 14336.0),  # 14 steps of 1024 B
        ("ktir.all_gather", 4, 3, 6144.0),  # 3 steps of 2048 B
    ],
)
def test_a_ring_collective_moves_its_steps_of_one_nth(
    name: str, cards: int, steps: int, link_bytes: float
) -> None:
    assert accounting.collective_steps(name, cards) == steps
    assert accounting.collective_link_bytes(name, 8192.0, cards) == link_bytes


def test_collective_cycles_is_the_ring_formula() -> None:
    # The docstring's example: a 512 x 4096 fp16 hidden state all-reduced over 4 cards.
    tensor = 512 * 4096 * 2
    expected_us = 2 * 3 / 4 * tensor / 63e9 * 1e6 + 2 * 3 * 2.0
    assert expected_us == pytest.approx(111.864, abs=1e-3)
    assert cost_model.collective_cycles("ktir.all_reduce", tensor, 4, target=SPYRE) == pytest.approx(
        expected_us * CLOCK_MHZ
    )
    # An all-gather has half the steps; one card moves nothing.
    gather_us = 3 / 4 * tensor / 63e9 * 1e6 + 3 * 2.0
    assert cost_model.collective_cycles("ktir.all_gather", tensor, 4, target=SPYRE) == pytest.approx(
        gather_us * CLOCK_MHZ
    )
    assert cost_model.collective_cycles("ktir.all_reduce", tensor, 1, target=SPYRE) == 0.0
