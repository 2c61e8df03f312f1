"""
What an op is charged, the one set of rules both engines share: ktir's simulator (`ktir.sim`) for
core-level ktir, the `ktdp` engine (`ktir.ktdp_engine`) for RFC 0682 programs, and the planners that
predict them (`ktir.cores.dataflow`, `ktir.cores.chunking`, `ktir-divide-work`). Ops are known
by name (`"ktir.exp"`, `"math.exp"`, `"linalg.copy"`), so `ktir.hardware` imports no dialect
(`test/unit/test_layers.py`). What the charges cost in time (the LPDDR5 channel, the PE arrays,
the SFU rates, the ring) is `ktir.hardware.cost_model`'s.

- **DMA bytes.** Cores loading the same box share one broadcast read per cohort of
  `Target.broadcast_cohort` cores (`broadcast_reads`); a store writes every core's box
  (`dma_traffic`).
- **Compulsory bytes.** What a kernel must move at least: each tensor it reads or writes, once,
  as far as it reaches, never more than the tensor (`compulsory_bytes`); for programs that
  address memory by element, the sticks they touch (`StickFootprint`).
- **SFU passes.** Passes per element of an op (`sfu_passes_of`), of a `linalg.generic` body
  (`body_passes`); a reduction, softmax and norm run at calibrated rates of their own.
- **FLOPs.** One per element and SFU pass (`sfu_flops_of`): data movement computes nothing, a
  reduction one per input element; a matmul two per MAC (`matmul_flops`), credited to the
  roofline in fp16-equivalent FLOPs (`roofline_matmul_flops`).

```python
from ktir.hardware.accounting import body_passes, broadcast_reads
broadcast_reads(32, SPYRE)                                     # 4.0: 32 cores, cohorts of 8
body_passes(["arith.extf", "arith.divf", "arith.truncf", "linalg.yield"])   # 2.0: a division
```
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from ktir.hardware.target import Target

SFU_PASSES: dict[str, float] = {
    "ktir.exp": 2,
    "ktir.log": 2,
    "ktir.sqrt": 2,
    "ktir.rsqrt": 2,
    "ktir.reciprocal": 2,
    "ktir.div": 2,
    "ktir.tanh": 2,
    "ktir.pow": 2,
    "ktir.powf": 2,
    "ktir.log1p": 2,
    "ktir.cos": 2,
    "ktir.sin": 2,
    "ktir.erf": 2,
    "ktir.expm1": 2,
    "ktir.sign": 2,  # two comparisons, their difference as one select-subtract
    "ktir.sigmoid": 4,  # neg, exp, add, reciprocal
    "ktir.silu": 5,  # the calibration point
    "ktir.softplus": 5,  # scale, exp, log1p, select
    "ktir.gelu": 8,  # erf (or tanh) plus five multiply/add passes
    "ktir.clamp": 2,
    "ktir.where": 1,
    # the same functions as ktdp programs write them (`arith`, `math`, named `linalg` ops)
    "math.exp": 2,
    "math.log": 2,
    "math.sqrt": 2,
    "math.rsqrt": 2,
    "math.tanh": 2,
    "math.erf": 2,
    "math.cos": 2,
    "math.sin": 2,
    "arith.divf": 2,
    "linalg.exp": 2,
    "linalg.log": 2,
    "linalg.sqrt": 2,
    "linalg.div": 2,
    # and as `spyreop` intrinsics (upstream KTIR's SFU ops): the same functions, the same passes
    "spyreop.exp": 2,
    "spyreop.sqrt": 2,
    "spyreop.rsqrt": 2,
    "spyreop.reciprocal": 2,
    "spyreop.realdiv": 2,
    "spyreop.sigmoid": 4,
    "spyreop.silu": 5,
    "spyreop.softplus": 5,
    "spyreop.gelu": 8,
}
"""
SFU passes per element of an op; any other op takes 1. One pass is `Target.sfu_pass_elems_per_us`;
the calibration point is silu = 5 passes (x / (1 + exp(-x)): neg, exp, add, reciprocal, mul),
which reproduces torch-spyre's fitted 1.76e3 elem/µs/core exactly. Transcendental functions
take 2 passes (the exp of silu's count), division and reciprocal 2 (a reciprocal then a
multiply); other counts follow the op's formula in `ktir.reference.ops`.
"""

REDUCTIONS = frozenset({"ktir.sum", "ktir.mean", "ktir.max", "ktir.min", "linalg.reduce"})
"""Reductions: timed at `Target.reduce_elems_per_us` over their input, one FLOP per input element."""

NORM_EXTRA_PASSES = {"ktir.rms_norm": 3.0, "ktir.layer_norm": 5.0}
"""Passes a norm adds to its statistics reduction: rms_norm squares, scales and applies the
weight; layer_norm also subtracts the mean and adds the bias (a reduction for each moment)."""

DATA_MOVEMENT = frozenset(
    {
        "ktir.permute",
        "ktir.reshape",
        "ktir.expand",
        "ktir.slice",
        "ktir.pad",
        "ktir.copy",
        "ktir.restickify",
        "ktir.cat",
        # what ktdp programs write for them: a transpose, a broadcast, a copy, a pad's fill
        "linalg.transpose",
        "linalg.broadcast",
        "linalg.copy",
        "linalg.fill",
    }
)
"""Views and copies: the SFU moves their data (one pass) and computes nothing (no FLOPs)."""

BODY_FREE = frozenset(
    {"linalg.yield", "arith.constant", "arith.extf", "arith.truncf", "arith.sitofp", "arith.uitofp"}
)
"""Ops of a `linalg.generic` body that take no pass: the SFU widens its operands to fp32 and
rounds its result as part of an op's pass (an fp16 add is one pass), and a constant is an operand."""


def sfu_passes_of(name: str, scan_length: int | None = None) -> float:
    """
    SFU passes per element of the op named `name` (`SFU_PASSES`, 1 by default). A cumsum is a
    parallel (Hillis-Steele) scan: ceil(log2(n)) add passes for running sums of `scan_length`
    elements, e.g. 5 passes along 24 positions.
    """
    if name == "ktir.cumsum":
        return float(max(1, math.ceil(math.log2(max(scan_length or 1, 1)))))
    return float(SFU_PASSES.get(name, 1.0))


def body_passes(names: Iterable[str]) -> float:
    """
    SFU passes per element of a `linalg.generic` whose body runs the ops `names`: theirs
    summed, casts, constants and the yield free (`BODY_FREE`), at least one. Example:
    `extf, extf, addf, truncf, yield` is 1 pass; `negf, exp, addf, divf` 6.
    """
    return max(sum(sfu_passes_of(n) for n in names if n not in BODY_FREE), 1.0)


def sfu_flops_of(name: str, in_elements: float, out_elements: float, passes: float | None = None) -> float:
    """
    FLOPs credited to an SFU op named `name` on a tile (elements counted in whole sticks): one
    per input element for a reduction, five for a softmax (max, subtract, exp, sum, divide),
    2 plus its extra passes for a norm, none for data movement, else one per output element
    and pass (`passes`, by default `sfu_passes_of`). Example: exp of 4,096 elements: 8,192.
    """
    if name in REDUCTIONS:
        return float(in_elements)
    if name == "ktir.softmax":
        return 5.0 * in_elements
    if name in NORM_EXTRA_PASSES:
        return in_elements * (2.0 + NORM_EXTRA_PASSES[name])
    if name in DATA_MOVEMENT:
        return 0.0
    return out_elements * (passes if passes is not None else sfu_passes_of(name))


def matmul_flops(macs: Any) -> Any:
    """FLOPs of `macs` multiply-accumulates: two each, whatever the precision."""
    return 2.0 * macs


def roofline_matmul_flops(macs: Any, precision: str, target: Target) -> Any:
    """
    The matmul FLOPs a report credits to the roofline (`matmul_flops`), which it divides by the
    fp16 peak: 2 per MAC in fp16, and 2 / `pe_rate_ratio` per fp8 MAC (fp16-equivalent FLOPs,
    so the bound of an fp8 matmul is its FLOPs at the fp8 peak). Example: 1e6 fp8 MACs credit
    2e6 / 1.597 = 1.252e6.
    """
    return matmul_flops(macs) / target.pe_rate_ratio(precision)


COLLECTIVE_STEPS = {"ktir.all_reduce": 2, "ktir.all_gather": 1}
"""Ring phases of each collective between cards, of N - 1 steps each: an all-reduce is a
reduce-scatter then an all-gather (2), an all-gather one."""


def collective_steps(name: str, cards: int) -> int:
    """
    Ring steps of the collective `name` over `cards` cards: `2 (N - 1)` for an all-reduce,
    `N - 1` for an all-gather, 0 on one card. Example: an all-reduce over 4 cards takes 6.
    """
    return COLLECTIVE_STEPS[name] * (cards - 1)


def collective_link_bytes(name: str, tensor_bytes: float, cards: int) -> float:
    """
    Bytes each card sends (and receives) over its link in the ring collective `name` of a
    `tensor_bytes` tensor over `cards` cards: every step moves one N-th of the tensor, so an
    all-reduce moves `2 (N - 1) / N x bytes` and an all-gather (of a result of `bytes`)
    `(N - 1) / N x bytes`. Example: all-reducing a Llama-3-8B hidden state of one token (4096
    fp16, 8192 B) over 4 cards: 6 steps of 2048 B, 12,288 B per card.
    """
    return collective_steps(name, cards) * tensor_bytes / cards


def broadcast_reads(readers: Any, target: Target) -> Any:
    """
    LPDDR5 reads of one box that `readers` cores load (a number, or elementwise for an array):
    one broadcast read per cohort of `Target.broadcast_cohort` cores. Example: 32 readers in
    cohorts of 8: 4 reads; 3 readers: 1.
    """
    return np.ceil(np.asarray(readers) / target.broadcast_cohort)[()]


def dma_traffic(starts: np.ndarray, box_bytes: float, load: bool, target: Target) -> tuple[np.ndarray, float]:
    """
    The distinct boxes of a DMA whose cores' boxes (of `box_bytes` each) start at `starts`
    (cores x dims), and the LPDDR5 bytes it moves: a load reads each distinct box once per
    broadcast cohort of its readers (`broadcast_reads`), a store writes every core's box.
    Example: 32 cores loading one 8 KiB weight box: 4 x 8 KiB; storing their own: 32 x 8 KiB.
    """
    boxes, readers = np.unique(starts, axis=0, return_counts=True)
    copies = broadcast_reads(readers, target) if load else readers
    return boxes, float(np.sum(copies)) * box_bytes


def compulsory_bytes(tensors: Iterable[tuple[float, float]]) -> float:
    """
    Bytes a kernel must move at least, from (bytes its boxes reach, the tensor's device bytes)
    per distinct tensor it reads or writes: each tensor once, as far as its tiles reach, never
    more than the whole tensor. Example: a slice reaching 4 KiB of a 64 KiB input and writing a
    4 KiB output: 8 KiB; boxes reaching 96 KiB of a 64 KiB tensor: 64 KiB.
    """
    return float(sum(min(reached, whole) for reached, whole in tensors))


class StickFootprint:
    """
    The device-memory sticks a program touches, for compulsory bytes where memory is addressed by
    element (a ktdp program): each stick once, however often it is read or written. Example:
    rows of elements [0, 63] and [32, 95] of fp16 in 64-byte sticks (32 each) touch sticks 0-2: 192 bytes.
    """

    def __init__(self) -> None:
        self.touched = np.zeros(0, dtype=bool)

    def _grow(self, top: int) -> None:
        if top > len(self.touched):
            grown = np.zeros(top, dtype=bool)
            grown[: len(self.touched)] = self.touched
            self.touched = grown

    def touch(self, indices: np.ndarray, itemsize: int, stick_bytes: int) -> None:
        """
        Note the sticks of the elements `indices` (their last dim a row): rows of consecutive
        elements as stick ranges (`touch_rows`), anything else element by element.
        """
        if indices.size == 0:
            return
        per = stick_bytes // itemsize
        rows = indices.reshape(-1, indices.shape[-1]) if indices.ndim > 1 else indices.reshape(1, -1)
        first, last = rows[:, 0] // per, rows[:, -1] // per
        self._grow(int(max(first.max(), last.max())) + 2)
        if rows.shape[1] > 1 and not (rows[:, -1] - rows[:, 0] == rows.shape[1] - 1).all():
            self.touched[(rows // per).reshape(-1)] = True
            return
        self.touch_rows(first, last)

    def touch_rows(self, first: np.ndarray, last: np.ndarray) -> None:
        """Note the stick ranges [first, last] of every row (a difference array over their span)."""
        low, top = int(first.min()), int(last.max()) + 2
        self._grow(top)
        edges = np.zeros(top - low + 1, dtype=np.int64)
        np.add.at(edges, first.reshape(-1) - low, 1)
        np.add.at(edges, last.reshape(-1) + 1 - low, -1)
        self.touched[low:top] |= np.cumsum(edges)[:-1] > 0

    def bytes(self, stick_bytes: int) -> float:
        """The compulsory bytes: every stick touched, once."""
        return float(self.touched.sum()) * stick_bytes


__all__ = [
    "BODY_FREE",
    "DATA_MOVEMENT",
    "NORM_EXTRA_PASSES",
    "REDUCTIONS",
    "SFU_PASSES",
    "StickFootprint",
    "body_passes",
    "broadcast_reads",
    "compulsory_bytes",
    "dma_traffic",
    "matmul_flops",
    "roofline_matmul_flops",
    "sfu_flops_of",
    "sfu_passes_of",
]
