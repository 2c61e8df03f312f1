"""
The one cost model shared by the passes and the simulator: the time of what an op is charged.

Every rate comes from a `Target` (`ktir/hardware/target.py`, where each constant names its source);
this module only turns work into time. What the work is (the bytes a DMA moves with its
broadcast cohorts, compulsory bytes, SFU passes, FLOPs) is `ktir.hardware.accounting`'s. Two consumers:

- `ktir-divide-work{policy=cost}` ranks matmul splits with `matmul_cost_us`, the reference
  stack's fitted formula;
- `ktir.sim` charges every core-level op: `dma_cycles` for LPDDR5 transfers shared by all
  cores, `pt_cycles` for matmul on the PE arrays (after `conversion_cycles` on the SFU for
  fp32 operands, `converts_to_fp16`), `sfu_cycles` for everything else, and `ring_cycles` for a
  K-split partial-sum reduction.

```python
from ktir.hardware.cost_model import pt_cycles
pt_cycles(macs=128 * 512 * 512, rows=128)      # 44150.6 cycles: 29.4 µs at the sustained rate
```
"""

from __future__ import annotations

import math
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
from xdsl.ir import Operation

from ktir.hardware import accounting
from ktir.hardware.target import Target
from ktir.layout.dtypes import ELEMENT_TYPE_TO_DEVICE_DTYPE, DeviceDType

Numbers = TypeVar("Numbers", float, npt.NDArray[np.float64], float | npt.NDArray[np.float64])
"""A number, or an array of them for functions that work elementwise (`ktir.cores.dataflow`
ranks many tilings at once): the result is of the same kind (either, for an argument that may
be either)."""


def pt_efficiency(rows: Any, target: Target) -> Any:
    """
    Fraction of the PE arrays' sustained rate a matmul with `rows` output rows per core reaches
    (a number, or elementwise for an array: `ktir.cores.dataflow` ranks many tilings at once).

    The PT streams M in passes of `pe_rows` rows and needs `pt_target_passes` of them (64 rows)
    to fill its pipeline; below that it reaches (rows / 64) ** `pt_underfill_exponent`, a pass
    costing at least `pt_min_rows` rows (the card's fit). Example: 64 rows -> 1.0, 16 rows ->
    0.616, 2 rows -> 0.297; on `spyre-datasheet` (exponent 0.5, one 8-row pass at least) 16 rows
    -> 0.5, 1 row -> 0.354.
    """
    full = target.pe_rows * target.pt_target_passes
    rows = np.maximum(target.pt_min_rows, np.asarray(rows, dtype=float))
    return np.minimum(1.0, (rows / full) ** target.pt_underfill_exponent)[()]


def accumulator_reread_fraction(area: Any, target: Target) -> Any:
    """
    Fraction of a matmul tile's operand bytes that stream from LPDDR5 a second time because the
    tile's `area` output elements per core (rows x columns of one product) overflow the PE
    arrays' resident accumulator, `Target.accumulator_elements` (a number, or elementwise for
    an array): min(cap, slope x log2(area / 65,536)), 0 up to 65,536 (the card's fit,
    torch-spyre `mm_spill_*`). Example: 131,072 outputs -> 0.45, 262,144 -> 0.9, 2^20 -> 1.5.
    """
    over = np.maximum(np.asarray(area, dtype=float) / target.accumulator_elements, 1.0)
    return np.minimum(target.accumulator_reread_cap, target.accumulator_reread_slope * np.log2(over))[()]


def reference_pt_efficiency(rows: float, target: Target) -> float:
    """
    The PE fill of the reference's work-division model (`matmul_cost_us`): at least one pass of
    `pe_rows` rows, below `pt_target_passes` passes a square root. 16 rows -> 0.5.
    """
    passes = max(1.0, rows / target.pe_rows)
    return min(1.0, math.sqrt(passes / target.pt_target_passes))


def matmul_cost_us(
    sizes: dict[str, int], splits: dict[str, int], element_bytes: int, target: Target
) -> float:
    """
    The reference's matmul split cost in microseconds (torch-spyre's `_matmul_split_cost` in
    `torch_spyre/_inductor/work_division.py`; docs/hardware.md):
    `(compute + hbm + psum + m_tiebreak) * b ** 1.4`, every constant from `target`.

    Example: M = 256, N = K = 4096 fp16 over {m: 4, n: 8, k: 1} costs 271.7 µs: compute
    87.4 µs (64 rows per core fill the PE array) and HBM traffic 184.3 µs.
    """
    batch = math.prod(v for d, v in sizes.items() if d.startswith("b"))
    b = math.prod(v for d, v in splits.items() if d.startswith("b"))
    m_size, n_size, k_size = sizes["m"], sizes["n"], sizes["k"]
    m, n, k = splits.get("m", 1), splits.get("n", 1), splits.get("k", 1)
    used = math.prod(splits.values())
    if used == 0 or used > target.cores:
        return math.inf
    passes = max(1.0, (m_size / m) / target.pe_rows)
    macs = batch * m_size * n_size * k_size
    compute = (macs / used) / (target.peak_macs_per_us_per_core * reference_pt_efficiency(m_size / m, target))
    traffic = (batch * m_size * k_size + batch * k_size * n_size + batch * m_size * n_size) * element_bytes
    hbm = traffic / (target.device_memory_bandwidth / 1e6) * max(1.0, max(m, n) / target.broadcast_cohort)
    psum = max(0, k - 1) * batch * m_size * n_size * target.psum_us_per_element
    tiebreak = (
        math.log2(target.pt_target_passes / passes) * target.pt_underfill_penalty_us
        if passes < target.pt_target_passes
        else 0.0
    )
    return (compute + hbm + psum + tiebreak) * b**target.batch_split_exponent


def pt_cycles(
    macs: Numbers, rows: float | npt.NDArray[np.float64], target: Target, precision: str = "fp16"
) -> Numbers:
    """
    Cycles one core's PE arrays take for `macs` multiply-accumulates with `rows` output rows, at
    the sustained rate (`sustained_macs_per_us_per_core`) times `pt_efficiency`, in `precision`
    (both operands fp8: `Target.pe_rate_ratio("fp8")` times the fp16 rate).

    Example: a 128 x 512 x 512 tile is 33.5 M MACs at full efficiency: 29.4 µs, 44,151 cycles at
    1.14e6 MAC/µs (21.8 µs, 32,768 cycles at the datasheet's 1.536e6).
    """
    rate = target.sustained_macs_per_us_per_core * target.pe_rate_ratio(precision)
    us = macs / (rate * pt_efficiency(rows, target))
    return us * target.clock_mhz


def converts_to_fp16(element_type: object) -> bool:
    """
    Whether a matmul operand of `element_type` (an MLIR element type, or a device format) is
    converted to fp16 before the PE arrays read it: fp32 (IEEE_FP32 on the device). The arrays
    multiply fp16, fp8, int8 and int4, and the reference stack has no fp32 matmul
    (docs/hardware.md), so ktir runs one as an fp16 matmul of its operands rounded to fp16 on the
    SFU (`conversion_cycles`), accumulated in fp32 and stored in fp32. bf16 is fp16 on the
    device already (`SEN169_FP16`): not converted.
    """
    device = (
        element_type
        if isinstance(element_type, DeviceDType)
        else ELEMENT_TYPE_TO_DEVICE_DTYPE.get(str(element_type))
    )
    return device is DeviceDType.IEEE_FP32


def pe_precision(element_type: object) -> str:
    """
    The PE arrays' precision for a matmul whose operands are `element_type` (an MLIR element
    type, or a device format; a matmul's operands share it): `fp8` for f8E4M3FN (SEN143_FP8),
    run at `Target.pe_rate_ratio("fp8")` times the fp16 rate; `fp16` otherwise.
    """
    device = (
        element_type
        if isinstance(element_type, DeviceDType)
        else ELEMENT_TYPE_TO_DEVICE_DTYPE.get(str(element_type))
    )
    return "fp8" if device is DeviceDType.SEN143_FP8 else "fp16"


def matmul_charge(
    macs: float, rows: float, element_type: object, converted: float, target: Target
) -> tuple[float, float, float, float]:
    """
    (PE-array cycles, SFU cycles, FLOPs, roofline matmul FLOPs) of one matmul tile of `macs`
    MACs over `rows` output rows, its operands of `element_type`: the PE arrays at the
    operands' precision (`pe_precision`), and for fp32 operands the conversion of their
    `converted` elements (in whole sticks) to fp16 on the SFU first (`converts_to_fp16`).
    Example: an fp16 64 x 64 x 64 tile: 262,144 MACs, 344.9 cycles, 524,288 FLOPs, no SFU.
    """
    precision = pe_precision(element_type)
    pt = pt_cycles(macs, rows, target, precision)
    flops = accounting.matmul_flops(macs)
    roofline = accounting.roofline_matmul_flops(macs, precision, target)
    if not converts_to_fp16(element_type):
        return pt, 0.0, flops, roofline
    sfu = conversion_cycles(converted, target)
    return pt, sfu, flops + accounting.sfu_flops_of("ktir.convert", 0, converted), roofline


def conversion_cycles(elements: Any, target: Target) -> Any:
    """
    SFU cycles one core takes to convert `elements` fp32 matmul operand elements (in whole
    sticks) to fp16 for the PE arrays: one pass each, as a `ktir.convert` (torch-spyre's
    `fp32todl16`). Example: a 256 x 512 x tile and a 512 x 256 y tile are 262,144 elements:
    29.8 µs = 44,683.6 cycles.
    """
    return sfu_cycles_of("ktir.convert", 0, elements, target)


def sfu_passes(op: Operation) -> float:
    """SFU passes per element of a graph op (`accounting.sfu_passes_of`; a cumsum's by its scan)."""
    scan = getattr(op, "scan_length", None) if op.name == "ktir.cumsum" else None
    return accounting.sfu_passes_of(op.name, scan)


def sfu_cycles(op: Operation, in_elements: int, out_elements: int, target: Target) -> float:
    """
    Cycles one core's SFU takes for `op` on a tile (elements counted in whole sticks).

    - reductions: `in_elements / reduce_elems_per_us` (calibrated);
    - softmax: `in_elements / softmax_elems_per_us` (calibrated);
    - rms_norm / layer_norm: the statistics reduction plus 3 / 5 elementwise passes;
    - everything else, data movement included: `out_elements * passes / sfu_pass_elems_per_us`.

    Example: exp on 64 x 64 fp16 = 4096 elements x 2 passes / 8.8e3 per µs = 0.93 µs = 1396 cycles.
    """
    return sfu_cycles_of(op.name, in_elements, out_elements, target, sfu_passes(op))


def sfu_cycles_of(
    name: str,
    in_elements: int,
    out_elements: int,
    target: Target,
    passes: float | None = None,
) -> float:
    """
    `sfu_cycles` of a graph op given by its name, `"ktir.exp"` (`passes`: the elementwise passes
    per element, by default `accounting.sfu_passes_of`): how a ktdp program's routine for that op is timed.
    The cost model knows ops by name only, so it imports no dialect (`test/unit/test_layers.py`).
    """
    if name in accounting.REDUCTIONS:
        us = in_elements / target.reduce_elems_per_us
    elif name == "ktir.softmax":
        us = in_elements / target.softmax_elems_per_us
    elif name in accounting.NORM_EXTRA_PASSES:
        extra = accounting.NORM_EXTRA_PASSES[name]
        us = in_elements / target.reduce_elems_per_us + in_elements * extra / target.sfu_pass_elems_per_us
    else:
        per = passes if passes is not None else accounting.sfu_passes_of(name)
        us = out_elements * per / target.sfu_pass_elems_per_us
    return us * target.clock_mhz


ATTENTION_BLOCK = 64
"""Queries, and keys, an attention kernel takes at a time: one fp16 stick of each. Under a
causal limit it skips every key block that no query of the query block may see."""


def attention_pairs(
    query_starts: np.ndarray, rows: int, key_starts: np.ndarray, keys: int, causal: int | None
) -> np.ndarray:
    """
    Per core: the (query, key) scores one head of an attention tile computes, for `rows`
    queries from `query_starts` over `keys` keys from `key_starts` (positions in the whole op),
    in `ATTENTION_BLOCK` x `ATTENTION_BLOCK` blocks. With `causal` c, key l is hidden from query
    s when l > s + c, and a key block hidden from every query of a block is skipped.

    Example: 128 queries from 0 over 128 keys, c = 0: the first query block sees keys 0-63 (one
    block), the second all 128: 64 x 64 + 64 x 128 = 12,288 scores of 16,384.
    """
    query_starts, key_starts = np.asarray(query_starts), np.asarray(key_starts)
    if causal is None:
        return np.full(query_starts.shape, float(rows * keys))
    offsets = np.arange(0, rows, ATTENTION_BLOCK)
    sizes = np.minimum(ATTENTION_BLOCK, rows - offsets)
    last = query_starts[:, None] + offsets[None, :] + sizes[None, :] - 1
    visible = np.clip(last + causal - key_starts[:, None] + 1, 0, keys)
    computed = np.minimum(keys, -(-visible // ATTENTION_BLOCK) * ATTENTION_BLOCK)
    return (sizes[None, :] * computed).sum(axis=1).astype(float)


def attention_cycles(
    tile: tuple[int, ...], pairs: Any, head: int, out_head: int, element_bytes: int, target: Target
) -> tuple[Any, Any, Any, Any]:
    """
    (PE-array cycles, SFU cycles, FLOPs, matmul FLOPs) of one core's `ktir.attention` tile
    (numbers, or per core for arrays of `pairs`): `tile` = (B, H, G, S) of its queries,
    `pairs` = the scores one query head computes (`attention_pairs`), `head` = D, `out_head` = E.

    Per head: q @ kT for the G * S rows of the group (one matmul, as the group shares k), and
    the weights @ v; then on the SFU, per score: the scale and mask (one pass) and the softmax
    (`softmax_elems_per_us`: max, exp, sum and the normalization), as an unfused `add` and
    `softmax` are charged (and credited the same FLOPs). Head sizes count in whole sticks.

    Example: one head, G * S = 512 rows over 512 keys, D = E = 128, fp16: 2 x 33.5 M MACs on
    the PE array (58.9 µs at 1.14e6 MAC/µs) and 262,144 scores on the SFU: 29.8 µs + 187.2 µs.
    """
    heads = tile[0] * tile[1] * tile[2]
    per_stick = max(target.stick_bytes // element_bytes, 1)
    d, e = (-(-n // per_stick) * per_stick for n in (head, out_head))
    macs = heads * np.asarray(pairs) * (d + e)
    pt = pt_cycles(macs, tile[2] * tile[3], target)
    scores = heads * np.asarray(pairs)
    return pt, attention_sfu_cycles(scores, target), 2.0 * macs + 6.0 * scores, 2.0 * macs


def attention_sfu_cycles(scores: Any, target: Target) -> Any:
    """SFU cycles of `scores` attention scores: one pass for scale and mask, then the softmax rate."""
    return (scores / target.sfu_pass_elems_per_us + scores / target.softmax_elems_per_us) * target.clock_mhz


def online_rescale_cycles(out_elements: Any, target: Target) -> Any:
    """
    SFU cycles an attention key chunk adds when it walks its keys in chunks (an online
    softmax): one pass rescaling the running output by the change of the row's max, and one
    adding the chunk's weighted values. Example: 512 rows x 128 = 65,536 elements: 22,342 cycles.
    """
    return 2 * np.asarray(out_elements) / target.sfu_pass_elems_per_us * target.clock_mhz


def transfer_cycles(chip_bytes: Numbers, target: Target) -> Numbers:
    """
    Cycles the LPDDR5 channel is busy moving `chip_bytes` (all cores' share of one DMA op) at
    the sustained rate (`Target.sustained_memory_bandwidth`: 150 GB/s, 100 bytes per cycle).
    """
    return chip_bytes / target.sustained_bytes_per_cycle


def turnaround_cycles_per_byte(target: Target) -> float:
    """
    Cycles the LPDDR5 channel loses per byte of read/write overlap (`Target.rw_turnaround_ns_per_byte`,
    charged by `ktir.sim.timeline.Channel`): 0.00574 ns = 0.00861 cycles at 1.5 GHz.
    """
    return target.rw_turnaround_ns_per_byte * target.clock_hz / 1e9


RESTICKIFY = "restickify"
BROADCAST = "broadcast"
ROW_REDUCTION = "row reduction"
COLUMN_REDUCTION = "column reduction"
"""The access patterns the card runs at a measured rate of their own (`pattern_bandwidth`)."""


def pattern_bandwidth(pattern: str, cores: int, rows: int, target: Target) -> float:
    """
    LPDDR5 bytes per second (read plus write, the whole chip, the turnaround folded in) of a
    kernel on `cores` cores whose transfers follow `pattern` (`access_pattern`); `rows` is what
    a row reduction writes, one stick per row:

    - `RESTICKIFY`: `restickify_bandwidth`, 116 GB/s; `BROADCAST`: `broadcast_bandwidth`, 118;
    - `ROW_REDUCTION`: `row_reduction_bandwidth`; `COLUMN_REDUCTION`: `column_reduction_bandwidth`, 113.

    Example: a row reduction of 8192 rows on 16 cores: (114 + 61 exp(-8192 / 3700)) x 0.54 = 65.2 GB/s.
    """
    if pattern == ROW_REDUCTION:
        return row_reduction_bandwidth(rows, cores, target)
    rates = {
        RESTICKIFY: target.restickify_bandwidth,
        BROADCAST: target.broadcast_bandwidth,
        COLUMN_REDUCTION: target.column_reduction_bandwidth,
    }
    return rates[pattern]


def row_reduction_bandwidth(rows: int, cores: int, target: Target) -> float:
    """
    Bytes per second of a reduction along the last dim of an input with `rows` rows (the sticks
    it writes, one per row) on `cores` cores: min(sustained, floor + extra exp(-rows / decay)) times the
    share of it the cores drive, `reduction_core_share` each, at most
    `reduction_half_chip_share` for up to half the chip's cores (torch-spyre's curve and
    `red_bw_cores_g`). Example: 2048 rows on 32 cores: 114 + 61 exp(-2048 / 3700) = 149.1 GB/s.
    """
    curve = target.row_reduction_floor_bandwidth + target.row_reduction_extra_bandwidth * math.exp(
        -rows / target.row_reduction_decay_rows
    )
    share = 1.0
    if cores <= target.cores // 2:
        share = min(cores * target.reduction_core_share, target.reduction_half_chip_share)
    return min(target.sustained_memory_bandwidth, curve) * share


def dma_cycles(chip_bytes: Numbers, target: Target) -> Numbers:
    """
    Cycles a DMA issued by all cores in lockstep takes on an idle channel: setup plus the
    chip-wide traffic at the shared sustained LPDDR5 rate (every core's transfer finishes when the
    slowest share does). The simulator schedules the two parts separately (`Timeline.transfer`).

    Example: 32 cores loading 128 KiB each = 4 MiB -> 500 + 4194304 / 100 = 42,443 cycles.
    """
    return target.dma_setup_cycles + transfer_cycles(chip_bytes, target)


def lx_copy_cycles(core_bytes: Numbers, target: Target) -> Numbers:
    """Cycles one core takes to copy `core_bytes` inside its LX (no LPDDR5 traffic)."""
    return target.dma_setup_cycles + core_bytes / target.lx_copy_bytes_per_cycle


def ring_cycles(elements: Any, element_bytes: int, group: Any, target: Target) -> Any:
    """
    Cycles a K-split partial-sum reduction over `group` ring-adjacent cores takes (elementwise
    for arrays of `elements` and `group`).

    `group - 1` steps (the reference's fit: each step brings one partner's partial to the root
    and adds it); a step costs the hop latency plus the larger of the transfer at ring bandwidth
    and the calibrated `psum_us_per_element`. Example: 64 x 64 fp32 over 2 cores: 32 + max(128,
    4096 x 1.4e-4 µs = 860 cycles) = 892 cycles.
    """
    transfer = np.asarray(elements) * element_bytes / target.ring_bytes_per_cycle
    psum = np.asarray(elements) * target.psum_us_per_element * target.clock_mhz
    steps = np.maximum(np.asarray(group) - 1, 0)  # a group of one core has no ring step
    return (steps * (target.ring_hop_cycles + np.maximum(transfer, psum)))[()]


def fill_cycles(core_bytes: Numbers, target: Target) -> Numbers:
    """Cycles one core takes to zero `core_bytes` of an accumulator: a write at LX copy speed."""
    return core_bytes / target.lx_copy_bytes_per_cycle


def gather_rows_cycles(rows: int, row_bytes: float, index_bytes: float, cores: int, target: Target) -> float:
    """
    Cycles of an indirect row gather (`ktir.gather_rows`) on `cores` cores: each core loads its
    share of the indices (one DMA), then reads one row per index (one DMA each, `row_bytes`
    rounded up to whole sticks) and stores its block of the result (one DMA). The busiest core's
    DMA setups and the chip-wide traffic (the indices, and every row read and written once) are
    added, not overlapped: with a few rows per core this overstates rather than understates.

    Example: 512 rows of 8 KiB (a 4096-wide fp16 embedding) over 32 cores, 4 KiB of indices:
    (1 + 16 + 1) x 500 + (4096 + 2 x 512 x 8192) / 100 = 9,000 + 83,927 = 92,927 cycles (62 µs).
    """
    stick_rows = math.ceil(row_bytes / target.stick_bytes) * target.stick_bytes
    per_core = math.ceil(rows / max(cores, 1))
    setups = (2 + per_core) * target.dma_setup_cycles
    return setups + transfer_cycles(index_bytes + 2 * rows * stick_rows, target)


def box_write_cycles(rows: int, row_bytes: float, target: Target) -> float:
    """
    Cycles of a scatter whose rows are one run (`ktir.scatter_rows ... contiguous`): they form
    one box of the destination, so each core reads its share of the values and writes its box
    with one strided DMA each (2 setups on every core, at once), and the chip moves every row
    once each way. Example: a prefill chunk of 1,024 positions of 8 key heads x 128 fp16 into a
    16-sequence cache (131,072 rows of 256 bytes): 2 x 500 + 2 x 131,072 x 256 / 100 = 672,089
    cycles (448 µs), where one DMA per row on 32 cores adds 4,096 x 500 setups (1.37 ms).
    """
    stick_rows = math.ceil(row_bytes / target.stick_bytes) * target.stick_bytes
    return 2 * target.dma_setup_cycles + transfer_cycles(2 * rows * stick_rows, target)


def host_op_cycles(to_host_bytes: float, to_device_bytes: float, target: Target) -> float:
    """
    Cycles a CPU fallback costs the program: the fixed host round trip, its operands sent to
    the host and its results sent back over the host link (one direction each), and the host
    reading and writing them once. The card waits for all of it.

    Example: an int64 cumsum over 512 ids (4 KiB each way) on Spyre: 10 µs + 2 x 4096 / 63e9 s
    + 8192 / 10e9 s = 10.95 µs = 16,424 cycles.
    """
    link_us = (to_host_bytes + to_device_bytes) / target.host_link_bandwidth * 1e6
    host_us = (to_host_bytes + to_device_bytes) / target.host_bytes_per_second * 1e6
    return (target.host_op_latency_us + link_us + host_us) * target.clock_mhz


def collective_cycles(name: str, tensor_bytes: float, cards: int, target: Target) -> float:
    """
    Cycles of the ring collective `name` (`"ktir.all_reduce"`, `"ktir.all_gather"`) of a
    `tensor_bytes` tensor over `cards` cards that talk peer to peer (docs/hardware.md "Between
    cards"): each of its `accounting.collective_steps` steps sends one N-th of the tensor over
    every card's link at once, so an all-reduce takes
    `2 (N - 1) / N x bytes / card_link_bandwidth + 2 (N - 1) x card_link_latency_us`, an
    all-gather half the steps. The adds of the reduce-scatter are not charged: each card adds
    a chunk while the next one crosses the link, and LPDDR5 (150 GB/s) outruns the link (63).

    Example: a Llama-3-8B prefill of 512 tokens all-reduces its hidden state (512 x 4096 fp16,
    4 MiB) over 4 cards: 6 steps, 6/4 x 4,194,304 B / 63e9 B/s = 99.86 µs plus 6 x 2 µs =
    111.86 µs = 167,797 cycles at 1.5 GHz. One decode token (8192 B): 0.20 + 12 = 12.20 µs,
    all latency.
    """
    link_bytes = accounting.collective_link_bytes(name, tensor_bytes, cards)
    steps = accounting.collective_steps(name, cards)
    link_us = link_bytes / target.card_link_bandwidth * 1e6
    return (link_us + steps * target.card_link_latency_us) * target.clock_mhz


def sfu_op_cycles(elements: float, passes: float, io_bytes: float, cores: int, target: Target) -> float:
    """
    Cycles of a small data-dependent SFU op (top-k, sort, histc) whose rows `cores` cores share:
    one load and one store DMA setup, its inputs and outputs once at LPDDR5 bandwidth, and
    `passes` SFU passes over each core's share of `elements`, added, not overlapped.

    Example: a top-2 of 16 x 8 router probabilities (k = 2: 4 passes) on 16 cores: 2 x 500 +
    640 / 100 + 8 x 4 / 8.8e3 µs = 1,000 + 6.4 + 5.5 = 1,012 cycles.
    """
    sfu_us = elements / max(cores, 1) * passes / target.sfu_pass_elems_per_us
    return 2 * target.dma_setup_cycles + transfer_cycles(io_bytes, target) + sfu_us * target.clock_mhz


def sort_passes(length: int) -> float:
    """
    SFU passes per element of a sort of `length` elements: a bitonic network over the next power
    of two has log2(n) (log2(n) + 1) / 2 stages, each a compare-exchange of the values and of the
    indices (2 passes). Example: 32 elements: 15 stages, 30 passes.
    """
    depth = max(1, math.ceil(math.log2(max(length, 2))))
    return depth * (depth + 1) / 2 * 2


def grouped_matmul_cycles(rows: Any, k: int, n: int, element_bytes: int, cores: int, target: Target) -> float:
    """
    Cycles of per-expert matmuls (`ktir.grouped_matmul`) with `rows[e]` rows for expert e: the
    experts run one after another, each split over `cores` cores along N, so each core reads its
    slice of that expert's weights once and every core the expert's rows (shared by cohorts of
    `broadcast_cohort` cores). An expert costs one DMA setup plus the larger of its PE-array time
    and its LPDDR5 time (loads overlap compute); an expert with no rows reads nothing.

    Example: 16 rows of 4096 x 14336 for one expert on 32 cores (fp16): PE 16 x 4096 x 448 MACs
    at rows 16 (efficiency (16 / 64) ** 0.35 = 0.616) at 1.14e6 MAC/µs: 41.8 µs; LPDDR5: 117.4 MB
    + 4 x 131 KB + 459 KB at 150 GB/s: 789.5 µs. 500 + 789.49 x 1500 = 1,184,736 cycles: the
    weights bound it.
    """
    total = 0.0
    cohorts = accounting.broadcast_reads(cores, target)
    for count in np.asarray(rows, dtype=float):
        if count <= 0:
            continue
        pe = pt_cycles(count * k * n / cores, count, target)
        moved = (k * n + count * k * cohorts + count * n) * element_bytes
        total += target.dma_setup_cycles + max(pe, transfer_cycles(moved, target))
    return total
