"""ktir/hardware/accounting.py: what an op is charged, the rules both engines share."""

from __future__ import annotations

import numpy as np
import pytest

from ktir.hardware import accounting
from ktir.hardware.target import SPYRE


def test_cores_loading_one_box_share_a_read_per_cohort() -> None:
    assert SPYRE.broadcast_cohort == 8
    assert accounting.broadcast_reads(32, SPYRE) == 4.0
    assert accounting.broadcast_reads(3, SPYRE) == 1.0
    assert accounting.broadcast_reads(np.array([1, 8, 9, 17]), SPYRE).tolist() == [1.0, 1.0, 2.0, 3.0]


def test_a_load_reads_each_box_once_per_cohort_and_a_store_writes_every_box() -> None:
    # 32 cores: 16 read box 0, 16 read box 64 (2 cohorts each); 8 KiB boxes
    starts = np.array([[0, 0]] * 16 + [[0, 64]] * 16)
    boxes, loaded = accounting.dma_traffic(starts, 8192, True, SPYRE)
    assert boxes.tolist() == [[0, 0], [0, 64]]
    assert loaded == 4 * 8192
    assert accounting.dma_traffic(starts, 8192, False, SPYRE)[1] == 32 * 8192


def test_compulsory_bytes_count_each_tensor_once_at_most_whole() -> None:
    assert accounting.compulsory_bytes([(4096, 65536), (4096, 4096)]) == 8192.0
    assert accounting.compulsory_bytes([(98304, 65536)]) == 65536.0
    assert accounting.compulsory_bytes([]) == 0.0


def test_a_generic_body_takes_the_passes_of_its_ops_casts_free() -> None:
    add = ["arith.extf", "arith.extf", "arith.addf", "arith.truncf", "linalg.yield"]
    assert accounting.body_passes(add) == 1
    assert accounting.body_passes(["arith.negf", "math.exp", "arith.addf", "arith.divf", "linalg.yield"]) == 6
    assert accounting.body_passes(["arith.extf", "linalg.yield"]) == 1  # a conversion is a pass
    assert accounting.sfu_passes_of("ktir.cumsum", 24) == 5


@pytest.mark.parametrize(
    ("name", "flops"),
    [
        ("ktir.exp", 2 * 4096),  # one per element and pass
        ("math.exp", 2 * 4096),
        ("ktir.sum", 8192),  # one per input element
        ("linalg.reduce", 8192),
        ("ktir.softmax", 5 * 8192),
        ("ktir.layer_norm", 7 * 8192),
        ("ktir.reshape", 0),  # data movement computes nothing
        ("linalg.copy", 0),
        ("linalg.fill", 0),
    ],
)
def test_flop_conventions(name: str, flops: float) -> None:
    assert accounting.sfu_flops_of(name, 8192, 4096) == flops


def test_matmul_flops_and_their_roofline_credit() -> None:
    assert accounting.matmul_flops(1e6) == 2e6
    assert accounting.roofline_matmul_flops(1e6, "fp16", SPYRE) == 2e6
    fp8 = 2e6 / SPYRE.pe_rate_ratio("fp8")
    assert accounting.roofline_matmul_flops(1e6, "fp8", SPYRE) == pytest.approx(fp8)


def test_a_stick_footprint_counts_each_stick_once() -> None:
    footprint = accounting.StickFootprint()
    footprint.touch(np.array([np.arange(0, 64), np.arange(32, 96)]), 2, 64)  # fp16: 32 per stick
    assert footprint.bytes(64) == 3 * 64
    footprint.touch(np.array([0, 200]), 2, 64)  # not consecutive: element by element
    assert footprint.bytes(64) == 4 * 64
