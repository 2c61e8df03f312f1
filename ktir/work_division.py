"""
Static work division of one op's iteration space over the cores (the reference's
`work_division.py`, shared/reference/spyre-compiler-algorithms.md §4).

An op iterates over named dims (`m`, `n`, `k`, `b0`... for matmul; `d0`, `d1`... otherwise)
and touches tensors (`Access`: a layout, a host shape, and the iteration dim behind each host
dim). `divide` returns how many slices each dim is cut into:

1. *Equal sticks per core*: a dim that is some tensor's stick dim is counted in sticks
   (`ceil(size / elems_per_stick)`), so every split gives each core whole sticks.
2. *Span reduction*: a core addresses at most 256 MiB (`Target.core_address_span`). For each
   tensor (inputs first) whose per-core span exceeds it, walk its device dims outer to inner
   and split the dim behind each: the fewest slices that fit (the largest fitting span), else
   the most; stop once it fits or a dim still spans more than one position.
3. *Default distribution*: output dims (those behind the output's device dims other than the
   stick lanes, with more than one position), by decreasing stick-adjusted size, each take the
   largest divisor of their size not above the cores left; then the one reduction dim that can
   take the most gets the rest. A reduction dim already split by step 2 is the only one.

Example: an fp16 matmul with M = 8192, K = 32768, N = 4096 has x's span 512 MiB (512 stick
tiles of K x 8192 rows x 128 B), so K is split in 2; then M takes the 16 cores left:
`{m: 16, n: 1, k: 2}`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ktir import sticks
from ktir.layout import SpyreTensorLayout
from ktir.target import SPYRE


@dataclass(frozen=True)
class Access:
    """A tensor an op touches: its layout and shape, and the iteration dim of each host dim."""

    layout: SpyreTensorLayout
    shape: tuple[int, ...]
    dims: tuple[str | None, ...]  # None: a broadcast (size-1) host dim


def divisors(n: int) -> list[int]:
    """The divisors of `n`, increasing: `divisors(12)` is [1, 2, 3, 4, 6, 12]."""
    return [d for d in range(1, n + 1) if n % d == 0]


def core_split(size: int, cores: int) -> int:
    """The largest divisor of `size` not above `cores`: `core_split(12, 5)` is 4."""
    return max(d for d in divisors(size) if d <= max(cores, 1))


def adjusted_sizes(sizes: dict[str, int], accesses: Sequence[Access]) -> dict[str, int]:
    """
    Iteration sizes with stick dims counted in sticks (the largest stick among the tensors
    that share the dim): (256, 128, 512) fp32 sticked on the last dim gives {d2: 16}.
    """
    adjusted = dict(sizes)
    for access in accesses:
        stick = sticks.layout_stick(access.layout, access.shape)
        if stick is None or stick == sticks.SPARSE or access.dims[stick] is None:
            continue
        name = access.dims[stick]
        eps = access.layout.elems_per_stick
        adjusted[name] = min(adjusted[name], -(-sizes[name] // eps))
    return adjusted


def _device_dims(access: Access) -> list[tuple[int, str | None]]:
    """(device size, iteration dim) of each device dim but the lanes, outer to inner."""
    groups = access.layout.bind(access.shape).groups
    owner: dict[int, str | None] = {}
    for group in groups:
        for digit in group.digits:
            # A device dim walking a merged group is attributed to the group's outermost dim.
            owner[digit.device_dim] = access.dims[group.host_dims[0]]
    sizes = access.layout.device_size
    return [(sizes[j], owner.get(j)) for j in range(len(sizes) - 1)]


def per_core_span(access: Access, splits: dict[str, int]) -> int:
    """
    Bytes one core addresses in `access` under `splits`: the outermost device dim whose
    per-core extent exceeds 1, times everything inside it (the reference's `get_per_core_span`).

    Example: the (8192, 32768) fp16 default layout [512, 8192, 64] spans 512 x 8192 x 128 B
    = 512 MiB unsplit and 256 MiB with `{k: 2}`.
    """
    device = access.layout.device_size
    item = access.layout.device_dtype.element_bytes
    for j, (size, dim) in enumerate(_device_dims(access)):
        extent = -(-size // splits.get(dim, 1)) if dim is not None else size
        if extent > 1:
            return extent * math.prod(device[j + 1 :]) * item
    return item


def span_reduction(
    accesses: Sequence[Access], adjusted: dict[str, int], reduction: set[str], cores: int, limit: int
) -> dict[str, int]:
    """The splits span reduction commits (see the module docstring); at most one reduction dim."""
    splits: dict[str, int] = {}
    for access in accesses:
        if per_core_span(access, splits) <= limit:
            continue
        for size, dim in _device_dims(access):
            if dim is None or size == 1:
                continue
            used = math.prod(splits.values()) // splits.get(dim, 1)
            choices = [d for d in divisors(adjusted[dim]) if d >= splits.get(dim, 1) and used * d <= cores]
            if not choices:
                break
            spans = {d: per_core_span(access, splits | {dim: d}) for d in choices}
            fitting = [d for d in choices if spans[d] <= limit]
            best = (
                max(fitting, key=lambda d: (spans[d], -d))
                if fitting
                else min(choices, key=lambda d: spans[d])
            )
            splits[dim] = best
            if spans[best] <= limit or -(-size // best) > 1:
                break
        split_reductions = [d for d in splits if d in reduction and splits[d] > 1]
        if len(split_reductions) > 1:
            raise ValueError(f"span reduction would split reduction dims {split_reductions}")
    return {d: s for d, s in splits.items() if s > 1}


def divide(
    sizes: dict[str, int],
    reduction: Sequence[str],
    inputs: Sequence[Access],
    output: Access,
    cores: int = SPYRE.cores,
    limit: int = SPYRE.core_address_span,
) -> dict[str, int]:
    """
    Slices per iteration dim for one op (every dim of `sizes`, in its order; 1 = not split).

    `sizes` maps iteration dims to their sizes (output dims first), `reduction` names the
    reduced ones. Example: `abs` on a (256, 128, 512) fp32 tensor over 32 cores gives
    `{d0: 32, d1: 1, d2: 1}`; over 16 cores d0 is 16.
    """
    if not 1 <= cores <= SPYRE.cores:
        raise ValueError(f"invalid core count {cores} (1..{SPYRE.cores})")
    accesses = [*inputs, output]
    adjusted = adjusted_sizes(sizes, accesses)
    committed = span_reduction(accesses, adjusted, set(reduction), cores, limit)
    outputs = {dim for size, dim in _device_dims(output) if dim is not None and size > 1}
    output_dims = sorted(
        (d for d in sizes if d in outputs and d not in committed), key=lambda d: -adjusted[d]
    )
    reduction_dims = [d for d in sizes if d not in outputs and d not in committed]
    if any(d in reduction for d in committed):
        reduction_dims = []
    left = cores // math.prod(committed.values())
    splits = dict(committed)
    for dim in output_dims:
        if left <= 1:
            break
        splits[dim] = core_split(adjusted[dim], left)
        left //= splits[dim]
    if reduction_dims and left > 1:
        dim = max(reduction_dims, key=lambda d: core_split(adjusted[d], left))
        splits[dim] = core_split(adjusted[dim], left)
    return {dim: splits.get(dim, 1) for dim in sizes}


def core_slices(splits: dict[str, int], fastest: str | None = None) -> list[dict[str, int]]:
    """
    Each core's slice index per dim: a mixed-radix decomposition of the core id, first dim
    fastest (`fastest`, e.g. `k` for a K-split matmul, moves to the front so that K partners
    are ring neighbours). Example: `{d0: 2, d1: 1}` gives core 0 -> {d0: 0, d1: 0}, core 1 ->
    {d0: 1, d1: 0}.
    """
    order = list(splits)
    if fastest is not None and fastest in order:
        order.remove(fastest)
        order.insert(0, fastest)
    slices = []
    for core in range(math.prod(splits.values())):
        index, radix = {}, 1
        for dim in order:
            index[dim] = (core // radix) % splits[dim]
            radix *= splits[dim]
        slices.append({dim: index[dim] for dim in splits})
    return slices
