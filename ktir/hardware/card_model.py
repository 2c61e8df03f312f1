"""
The Spyre card as torch-spyre measured it: its device-calibrated kernel cost model.

ktir's chip model (`target.py`, `cost_model.py`) runs the card at datasheet peaks. torch-spyre
fitted an analytical model to whole-kernel device times on real cards (the torch.profiler
"Self SPYRE" kernel time, a sweep of 1,535 configurations); this module prices a kernel with
that model, so that `bench/fidelity_bench.py` can hold ktir's simulated time against what the
card takes. It is a measuring instrument: nothing in ktir's compiler or simulator uses it.

Sources (torch-spyre, github.com/torch-spyre/torch-spyre), cited by name:

- cost_model.py: `torch_spyre/_inductor/cost_model.py` at commit 92c8b3fd, the `CostParams`
  field comments and `predict_ops`. Every constant below names the field it comes from.
- cost_model.md: `docs/source/compiler/cost_model.md` at commit 9786b794: the worked examples
  (softmax 4096x2048 on 32 cores, 320.0 µs; the 8-tile row-tiled matmul 4096x2048x1024,
  423.1 µs) and the accuracy table.

The formulas are written here from those documents; ktir shares no code with torch-spyre.
Upstream prices a kernel from byte counts its extractor records per tensor; here the caller
passes the same quantities: bytes in each tensor's device layout (whole sticks, as
`SpyreTensorLayout.device_bytes` counts them), the logical rows and columns a surface is keyed
on, the cores and the coarse-tiling count. Bytes per nanosecond equal GB/s, so a time is
bytes / rate in ns; every public function returns microseconds.

The model, per kernel (cost_model.md, "How a kernel is priced"):

    T = max(compute, memory) + split-shape re-read          (no launch term: fill_ns = 0)
    memory = [(R + W) / 150 GB/s + 0.00574 ns/B x min(R, W)] / underfill / spill

R and W are the bytes read from and written to LPDDR5 ("HBM" in torch-spyre's names); traffic
that stays in LX is free. Access patterns with their own measured rate replace the bracket by
`(R + W) / rate`. `compute` is nonzero only for a matmul.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

Surface = tuple[float, float, float, float, float, float, float, float, float, float, float]
"""A broadcast rate surface: well-filled a, b, d; short quadratic a, b, c, e; valley plateau, floor,
left and right slopes (cost_model.py `broadcast_bw`)."""


def _cores_table() -> Mapping[int, float]:
    return MappingProxyType({1: 0.11, 2: 0.22, 4: 0.43, 8: 0.54, 16: 0.54, 32: 1.0})


@dataclass(frozen=True)
class CardParams:
    """
    The fitted constants of torch-spyre's cost model (cost_model.py `CostParams`, commit 92c8b3fd).

    Each field carries the upstream name it comes from and what that fit measured.
    """

    # -- LPDDR5 --------------------------------------------------------------------------
    bw_peak_gbps: float = 150.0
    """`bw_peak_gbps`: one-directional LPDDR5 bandwidth (read-only or write-only traffic);
    read-only reductions and read probes land at 145-155 GB/s. Shared by all cores and
    core-count independent from 2 cores on ("rung 5")."""
    rw_turnaround_ns_per_byte: float = 0.00574
    """`rw_turnaround_ns_per_byte`: the bus turns around between reads and writes, charged on
    the overlap min(R, W). Solved from a balanced neg (R = W) measured at 105 GB/s:
    2 / 105 - 2 / 150."""

    # -- access patterns with their own measured rate -------------------------------------
    bw_restickify_gbps: float = 116.0
    """`bw_restickify_gbps`: a transpose (restickify, the stick moves to the other dim), read
    plus write bytes over time; the turnaround is folded in."""
    bw_reduce_outer_gbps: float = 113.0
    """`bw_reduce_outer_gbps`: a reduction across rows (`x.sum(dim=0)`, "sumcol")."""
    red_read_bw_floor_gbps: float = 114.0
    """`red_read_bw_floor_gbps`: a row reduction's rate at many rows (32 cores)."""
    red_read_bw_amp_gbps: float = 61.0
    """`red_read_bw_amp_gbps`: how far above the floor a short row reduction reads."""
    red_read_bw_scale_rows: float = 3700.0
    """`red_read_bw_scale_rows`: rows over which the row-reduction rate decays to the floor.
    read/sumrow/amax/mean/sumall collapse to one curve min(150, 114 + 61 exp(-rows/3700))."""
    red_bw_cores_g: Mapping[int, float] = field(default_factory=_cores_table)
    """`red_bw_cores_g`: a row reduction's rate on `cores` cores over its rate on 32,
    piecewise linear in log2(cores). Sub-linear: one core drives 11% of the bus. The 8 and
    16 core values are single-shot measurements."""

    # -- broadcast-operand ops (x + 1.0, x + b[1,C], x * b[1,C], x + b[R,1]) --------------
    bcast_bw_min_rows: float = 1024.0
    """`bcast_bw_min_rows`: rows from which a broadcast kernel is "well filled"."""
    bcast_v_cols_split: float = 4096.0
    """`bcast_v_cols_split`: below `bcast_bw_min_rows` rows, columns up to this follow the
    quadratic branch, wider ones the V-valley (minimum at rows = cols / 64)."""
    row_bcast_surface: Surface = (183.5, 2.8, 2.6, -350.0, 105.0, -5.5, -2.0, 128.0, 92.0, 32.0, 10.0)
    """`bcast_bw_a, _b, _d, bcast_q_a, _q_b, _q_c, _q_e, bcast_v_plateau, _floor, _bl, _br`:
    the effective-rate surface of the row-broadcast ops (bcast, mulbcast: operand b[1, C]).
    Well filled: a - b log2(cols) - d log2(rows), clamped to [100, 135] GB/s (1.3% RMS)."""
    col_bcast_surface: Surface = (162.0, 1.8, 2.2, -270.0, 70.0, -3.5, 3.0, 120.0, 98.0, 15.0, 8.0)
    """`cbc_bw_a ... cbc_v_br`: the same surface for the scalar and column broadcasts (copy
    x + 1.0, bcastcol b[R, 1]), clamped to [95, 130] GB/s (5.1% RMS); 118 GB/s at 2048x2048."""

    # -- coarse tiling (a fused kernel looped over row tiles) ------------------------------
    coarse_underfill_rfull: float = 7.9
    """`coarse_underfill_rfull`: rows per core per tile at full fill, at `col_ref` columns."""
    coarse_underfill_exp: float = 0.50
    """`coarse_underfill_exp`: exponent on the tile height."""
    coarse_underfill_col_ref: float = 2048.0
    """`coarse_underfill_col_ref`: the width `rfull` is quoted at."""
    coarse_underfill_col_exp: float = 0.38
    """`coarse_underfill_col_exp`: exponent on the tensor width. Fitted with the two above on
    48 tiled softmax rows at 32 cores (rows per core per tile 2-256, cols 128-4096)."""
    coarse_underfill_cap: float = 1.08
    """`coarse_underfill_cap`: the plateau. A tiled softmax with a large per-core tile runs 8%
    faster than the memory term; weakly identified (1.06-1.11 span 0.1 point of RMS)."""
    coarse_underfill_eff0: float = 0.248
    """`coarse_underfill_eff0`: the smallest surface value fitted; below it the curve continues
    with exponent `coarse_underfill_gamma` instead of extrapolating the power law."""
    coarse_underfill_gamma: float = 0.1
    """`coarse_underfill_gamma`: a form choice, not fitted."""
    matmul_underfill_rfull: float = 13.0
    """`coarse_underfill_rfull_matmul`: the pre-refit rows-only curve kept, frozen, for tiled
    matmul: min(0.95, (rows/13) ** 0.68), anchored at 2 rows."""
    matmul_underfill_exp: float = 0.68
    """`coarse_underfill_exp_matmul`."""
    matmul_underfill_cap: float = 0.95
    """`coarse_underfill_cap_matmul`."""
    matmul_underfill_h0: float = 2.0
    """`coarse_underfill_h0_matmul`: the smallest tile height the matmul curve was fitted at."""
    lx_spill_cap_bytes: float = 524288.0
    """`lx_spill_cap_bytes`: per-core working set (two live tiles) above which a tiled softmax
    spills and its traffic slows as (cap / ws) ** 0.06. Fitted, not the documented LX size."""
    lx_spill_exp: float = 0.06
    """`lx_spill_exp`."""
    mm_spill_ws_cap_bytes: float = 2097152.0
    """`mm_spill_ws_cap_bytes`: the same for a tiled matmul: the whole 2 MiB LX."""
    mm_spill_ws_exp: float = 0.15
    """`mm_spill_ws_exp`."""

    # -- matmul ---------------------------------------------------------------------------
    mac_peak_per_core_ns: float = 1140.0
    """`mac_peak_per_core_ns`: sustained MAC/ns per core, fitted on compute-dominant runs at
    4-8 cores (the 1536 datasheet rate is 33% optimistic)."""
    pt_full_rows: float = 64.0
    """`underfill_pass_rows` x `underfill_target_passes_matmul` = 8 x 8: rows of M per core at
    which the PE array is full."""
    pt_underfill_exp: float = 0.35
    """`underfill_exponent`: below `pt_full_rows` the rate falls as (rows / 64) ** 0.35."""
    loop_reread_scale: float = 0.85
    """`loop_reread_scale`: a row-tiled matmul re-reads its loop-invariant operand once per
    extra tile, charged at 0.85 of a full pass at `bw_peak_gbps` (0.90-1.24x measured)."""
    mm_spill_area0: float = 65536.0
    """`mm_spill_area0`: per-core output tile (elements) above which operands are re-read."""
    mm_spill_slope: float = 0.45
    """`mm_spill_slope`: re-read fraction min(1.5, 0.45 log2(area / 65536)) of |A| + |B|."""
    mm_spill_cap: float = 1.50
    """`mm_spill_cap`."""
    mm_split_area0: float = 131072.0
    """`mm_split_area0`: per-core tile (elements) from which a lopsided split re-reads more."""
    mm_split_long_us_per_elem: float = 2.62e-3
    """`mm_split_reread_us_per_elem`: µs per element over `mm_split_area0` per doubling of the
    split of the longer output dim beyond 8 cores (`mm_split_long_knee`)."""
    mm_split_short_us_per_elem: float = 2.88e-3
    """`mm_split_short_us_per_elem`: the same for the shorter dim beyond 16 cores."""
    mm_split_long_knee: float = 8.0
    """`mm_split_long_knee`."""
    mm_split_short_knee: float = 16.0
    """`mm_split_short_knee`."""


CARD = CardParams()
"""The constants as torch-spyre ships them."""


def memory_us(read_bytes: float, write_bytes: float, params: CardParams = CARD) -> float:
    """LPDDR5 time of a kernel: (R + W) / 150 GB/s plus the read/write turnaround on min(R, W)."""
    _check_bytes(read_bytes, write_bytes)
    ns = (read_bytes + write_bytes) / params.bw_peak_gbps
    return (ns + params.rw_turnaround_ns_per_byte * min(read_bytes, write_bytes)) / 1000.0


def pointwise_us(read_bytes: float, write_bytes: float, params: CardParams = CARD) -> float:
    """
    An elementwise kernel (neg, exp, gelu, add, mul): its memory time alone. Arithmetic hides
    under memory (cost_model.py: "arithmetic-free (gelu/exp == neg)").
    """
    return memory_us(read_bytes, write_bytes, params)


def broadcast_gbps(rows: int, cols: int, row_operand: bool, params: CardParams = CARD) -> float:
    """
    Effective rate of a kernel streaming a full input with a broadcast operand loaded once
    (`broadcast_bw`): `row_operand` for b[1, C] (bcast, mulbcast), else a scalar or b[R, 1].
    `rows`, `cols` are the output's last two logical dims.
    """
    _check_positive(rows=rows, cols=cols)
    surface = params.row_bcast_surface if row_operand else params.col_bcast_surface
    low, high, quad_high = (100.0, 135.0, 140.0) if row_operand else (95.0, 130.0, 120.0)
    a, b, d, qa, qb, qc, qe, plateau, floor, left, right = surface
    log_rows, log_cols = math.log2(rows), math.log2(cols)
    if rows >= params.bcast_bw_min_rows:
        return max(low, min(high, a - b * log_cols - d * log_rows))
    if cols <= params.bcast_v_cols_split:
        return max(45.0, min(quad_high, qa + qb * log_rows + qc * log_rows**2 + qe * log_cols))
    dip = log_cols - 6.0  # the valley's minimum sits at rows = cols / 64
    valley = floor + left * max(0.0, dip - log_rows) + right * max(0.0, log_rows - dip)
    return max(40.0, min(plateau, valley))


def broadcast_us(
    read_bytes: float, write_bytes: float, rows: int, cols: int, row_operand: bool, params: CardParams = CARD
) -> float:
    """A broadcast-operand kernel: (R + W) at `broadcast_gbps` (the turnaround is folded in)."""
    _check_bytes(read_bytes, write_bytes)
    return (read_bytes + write_bytes) / broadcast_gbps(rows, cols, row_operand, params) / 1000.0


def reduction_cores_factor(cores: int, params: CardParams = CARD) -> float:
    """`red_bw_cores_g` at `cores`: linear in log2(cores) between its anchors, 1 from 32 cores."""
    _check_positive(cores=cores)
    table = params.red_bw_cores_g
    if cores >= 32:
        return 1.0
    if cores <= 1:
        return table[1]
    anchors = sorted(table)
    low = max(a for a in anchors if a <= cores)
    high = min(a for a in anchors if a >= cores)
    if low == high:
        return table[low]
    share = (math.log2(cores) - math.log2(low)) / (math.log2(high) - math.log2(low))
    return table[low] + (table[high] - table[low]) * share


def row_reduction_gbps(rows: int, cores: int, params: CardParams = CARD) -> float:
    """Rate of a reduction along rows' last dim (sum, amax, mean, sum of all): falls with rows."""
    _check_positive(rows=rows)
    decay = math.exp(-rows / params.red_read_bw_scale_rows)
    rate = params.red_read_bw_floor_gbps + params.red_read_bw_amp_gbps * decay
    return min(params.bw_peak_gbps, rate) * reduction_cores_factor(cores, params)


def row_reduction_us(
    read_bytes: float, write_bytes: float, rows: int, cores: int, params: CardParams = CARD
) -> float:
    """A standalone reduction over the last dim (or over everything) of a [rows, cols] input."""
    _check_bytes(read_bytes, write_bytes)
    return (read_bytes + write_bytes) / row_reduction_gbps(rows, cores, params) / 1000.0


def column_reduction_us(read_bytes: float, write_bytes: float, params: CardParams = CARD) -> float:
    """A reduction across rows (`x.sum(dim=0)`): flat `bw_reduce_outer_gbps`."""
    _check_bytes(read_bytes, write_bytes)
    return (read_bytes + write_bytes) / params.bw_reduce_outer_gbps / 1000.0


def transpose_us(read_bytes: float, write_bytes: float, params: CardParams = CARD) -> float:
    """A 2-D transpose made contiguous (a restickify): flat `bw_restickify_gbps`."""
    _check_bytes(read_bytes, write_bytes)
    return (read_bytes + write_bytes) / params.bw_restickify_gbps / 1000.0


def coarse_underfill(rows_per_core: float, cols: int, params: CardParams = CARD) -> float:
    """
    Pipeline fill of a coarse-tiled fused kernel whose per-core tile is `rows_per_core` rows of
    `cols` columns: min(1.08, (h / 7.9) ** 0.5 x (cols / 2048) ** 0.38), anchored below 0.248.
    """
    _check_positive(rows_per_core=rows_per_core, cols=cols)
    raw = (rows_per_core / params.coarse_underfill_rfull) ** params.coarse_underfill_exp * (
        cols / params.coarse_underfill_col_ref
    ) ** params.coarse_underfill_col_exp
    cap, anchor = params.coarse_underfill_cap, params.coarse_underfill_eff0
    if raw >= anchor:
        return min(cap, raw)
    return min(cap, anchor) * (raw / anchor) ** params.coarse_underfill_gamma


def matmul_underfill(rows_per_core: float, params: CardParams = CARD) -> float:
    """The frozen tiled-matmul curve: min(0.95, (rows / 13) ** 0.68), anchored at 2 rows."""
    _check_positive(rows_per_core=rows_per_core)
    h0, cap = params.matmul_underfill_h0, params.matmul_underfill_cap
    rfull, exponent = params.matmul_underfill_rfull, params.matmul_underfill_exp
    if rows_per_core >= h0:
        return min(cap, (rows_per_core / rfull) ** exponent)
    return min(cap, (h0 / rfull) ** exponent) * (rows_per_core / h0) ** params.coarse_underfill_gamma


def spill_derate(working_set_bytes: float, cap_bytes: float, exponent: float) -> float:
    """Rate factor when a tile's per-core working set overflows `cap_bytes`: (cap / ws) ** exponent."""
    if working_set_bytes <= cap_bytes:
        return 1.0
    return (cap_bytes / working_set_bytes) ** exponent


def softmax_us(
    read_bytes: float,
    write_bytes: float,
    rows: int,
    cols: int,
    cores: int,
    tiles: int = 1,
    elem_bytes: int = 2,
    params: CardParams = CARD,
) -> float:
    """
    A softmax over the last dim of [rows, cols], fused into one kernel (amax, sub, exp, sum,
    div) that reads its input once and writes its output once. With `tiles` >= 2 it loops
    over row tiles, each core streaming `rows / (cores x tiles)` rows per tile: the memory
    term is divided by `coarse_underfill` and by the LX spill derate of two live tiles.
    The card model has no core-count term here (cost_model.py: coarse-tiled softmax at 8 and
    16 cores is under-predicted by 30-50%).
    """
    _check_positive(rows=rows, cols=cols, cores=cores, tiles=tiles)
    memory = memory_us(read_bytes, write_bytes, params)
    if tiles < 2:
        return memory
    rows_per_core = rows / (cores * tiles)
    working_set = 2.0 * rows_per_core * cols * elem_bytes
    derate = spill_derate(working_set, params.lx_spill_cap_bytes, params.lx_spill_exp)
    return memory / coarse_underfill(rows_per_core, cols, params) / derate


@dataclass(frozen=True)
class Matmul:
    """
    `[m, k] @ [k, n]` on `cores` cores, output split `m_split` x `n_split` ways, and coarse
    tiled into `tiles` row tiles of M (1: untiled). Byte counts are in device layout.
    """

    m: int
    k: int
    n: int
    a_bytes: float
    b_bytes: float
    c_bytes: float
    cores: int
    m_split: int
    n_split: int
    tiles: int = 1
    elem_bytes: int = 2

    def __post_init__(self) -> None:
        _check_positive(m=self.m, k=self.k, n=self.n, cores=self.cores, tiles=self.tiles)
        _check_positive(m_split=self.m_split, n_split=self.n_split)
        _check_bytes(self.a_bytes, self.b_bytes, self.c_bytes)
        if self.m_split * self.n_split > self.cores:
            raise ValueError(f"a {self.m_split} x {self.n_split} split needs more than {self.cores} cores")

    @property
    def rows_per_core(self) -> float:
        """M rows one core holds in one tile."""
        return self.m / self.tiles / self.m_split

    @property
    def cols_per_core(self) -> float:
        """N columns one core holds."""
        return self.n / self.n_split

    @property
    def reread_bytes(self) -> float:
        """B bytes read again because every row tile needs all of B (the `re-fetch` column)."""
        return (self.tiles - 1) * self.b_bytes

    @property
    def hbm_bytes(self) -> float:
        """All LPDDR5 traffic of the kernel, re-reads included (cost_model.md's HBM column)."""
        return self.a_bytes + self.b_bytes + self.c_bytes + self.reread_bytes


def matmul_compute_us(mm: Matmul, params: CardParams = CARD) -> float:
    """MACs / cores / (1140 MAC/ns x PE fill); an untiled matmul fills the PE array from 64 rows per core."""
    fill = 1.0
    if mm.tiles < 2:
        fill = min(1.0, (mm.rows_per_core / params.pt_full_rows) ** params.pt_underfill_exp)
    return mm.m * mm.k * mm.n / mm.cores / (params.mac_peak_per_core_ns * fill) / 1000.0


def matmul_spill_fraction(tile_area: float, params: CardParams = CARD) -> float:
    """Fraction of |A| + |B| re-read once a core's output tile exceeds 64K elements."""
    if tile_area <= params.mm_spill_area0:
        return 0.0
    return min(params.mm_spill_cap, params.mm_spill_slope * math.log2(tile_area / params.mm_spill_area0))


def matmul_split_us(mm: Matmul, params: CardParams = CARD) -> float:
    """Extra re-read of a large per-core tile whose output dims are split too many ways."""
    excess = max(0.0, mm.rows_per_core * mm.cols_per_core - params.mm_split_area0)
    m_longer = mm.rows_per_core * mm.m_split >= mm.cols_per_core * mm.n_split
    long_fan, short_fan = (mm.m_split, mm.n_split) if m_longer else (mm.n_split, mm.m_split)
    long_steps = max(0.0, math.log2(long_fan / params.mm_split_long_knee))
    short_steps = max(0.0, math.log2(short_fan / params.mm_split_short_knee))
    long_us = params.mm_split_long_us_per_elem * long_steps
    return excess * (long_us + params.mm_split_short_us_per_elem * short_steps)


def matmul_memory_us(mm: Matmul, params: CardParams = CARD) -> float:
    """
    A matmul's LPDDR5 time: A, B and C once with the turnaround, plus the operand re-read of a
    tile past 64K elements; for a row-tiled one divided by the matmul fill curve and the LX
    spill derate, then the (tiles - 1) re-reads of B at 0.85 of a pass, undivided.
    """
    tile_a_bytes = mm.a_bytes / mm.tiles  # upstream records A per tile and B whole
    spill = (tile_a_bytes + mm.b_bytes) * matmul_spill_fraction(mm.rows_per_core * mm.cols_per_core, params)
    read = mm.a_bytes + mm.b_bytes
    turnaround = params.rw_turnaround_ns_per_byte * min(read, mm.c_bytes)
    ns = (read + mm.c_bytes + spill) / params.bw_peak_gbps + turnaround
    if mm.tiles >= 2:
        working_set = 2.0 * mm.rows_per_core * max(mm.k, mm.n) * mm.elem_bytes
        derate = spill_derate(working_set, params.mm_spill_ws_cap_bytes, params.mm_spill_ws_exp)
        ns = ns / matmul_underfill(mm.rows_per_core, params) / derate
    ns += params.loop_reread_scale * mm.reread_bytes / params.bw_peak_gbps
    return ns / 1000.0


def matmul_us(mm: Matmul, params: CardParams = CARD) -> float:
    """
    A 2-D matmul: the longer of compute and memory (they overlap; the card model under-predicts
    matmul by 22-31% because part of the shorter stream does not hide), plus the split re-read.
    """
    return max(matmul_compute_us(mm, params), matmul_memory_us(mm, params)) + matmul_split_us(mm, params)


def _check_bytes(*counts: float) -> None:
    """`ValueError` if a byte count is negative."""
    if bad := [c for c in counts if c < 0]:
        raise ValueError(f"byte counts must not be negative, got {bad[0]}")


def _check_positive(**values: float) -> None:
    """`ValueError` naming the first of `values` that is not positive."""
    for name, value in values.items():
        if not value > 0:
            raise ValueError(f"{name} must be positive, not {value}")
