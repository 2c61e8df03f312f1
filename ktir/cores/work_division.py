"""
Static work division of one op's iteration space over the cores (the reference stack's
`torch_spyre/_inductor/work_division.py`; docs/work-division.md walks through it).

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

import itertools
import math
from collections.abc import Sequence

from ktir.cores.factors import divisors
from ktir.cores.tiling import Access, granules
from ktir.hardware.cost_model import matmul_cost_us
from ktir.hardware.target import Target


def core_split(size: int, cores: int) -> int:
    """The largest divisor of `size` not above `cores`: `core_split(12, 5)` is 4."""
    return max(d for d in divisors(size) if d <= max(cores, 1))


def adjusted_sizes(
    sizes: dict[str, int], accesses: Sequence[Access], whole: frozenset[str] = frozenset()
) -> dict[str, int]:
    """
    Iteration sizes in cuttable units (`ktir.cores.tiling.granules`): stick dims count sticks, dims
    in `whole` count 1. Example: (256, 128, 512) fp32 sticked on the last dim gives {d2: 16}.
    """
    return granules(sizes, accesses, whole)


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


class HintError(ValueError):
    """A `work_division_hint` that breaks one of the reference's rules."""


def check_hint(
    hint: dict[str, int], adjusted: dict[str, int], reduction: Sequence[str], cores: int
) -> dict[str, int]:
    """
    Validate a user hint like the reference: every value a positive integer naming a known
    dim, product <= cores, each split dividing the dim's cuttable size, at most one reduction
    dim split. Returns the full split (1 for unnamed dims); raises `HintError`.
    """
    for name, split in hint.items():
        if name not in adjusted:
            raise HintError(f"hint names '{name}', which is not one of the dims {list(adjusted)}")
        if split < 1:
            raise HintError(f"hint {name} = {split} must be a positive integer")
        if adjusted[name] % split:
            raise HintError(
                f"hint {name} = {split} does not divide the dim's {adjusted[name]} cuttable unit(s)"
                + (" (it must stay whole on a core)" if adjusted[name] == 1 else "")
            )
    if (used := math.prod(hint.values())) > cores:
        raise HintError(f"hint uses {used} cores, more than the {cores} available")
    if len(split := [d for d in hint if d in reduction and hint[d] > 1]) > 1:
        raise HintError(f"hint splits more than one reduction dim: {split}")
    return {name: hint.get(name, 1) for name in adjusted}


def _default(
    sizes: dict[str, int],
    adjusted: dict[str, int],
    committed: dict[str, int],
    reduction: Sequence[str],
    output: Access,
    cores: int,
) -> dict[str, int]:
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


def _cheapest_matmul(
    sizes: dict[str, int],
    adjusted: dict[str, int],
    element_bytes: int,
    cores: int,
    at_least: int,
    target: Target,
) -> dict[str, int]:
    names = list(sizes)
    best: tuple[float, tuple[int, ...]] | None = None
    candidates = ([d for d in divisors(adjusted[name]) if d <= cores] for name in names)
    for choice in itertools.product(*candidates):
        used = math.prod(choice)
        if used > cores or used < at_least:
            continue
        cost = matmul_cost_us(sizes, dict(zip(names, choice, strict=True)), element_bytes, target)
        if best is None or cost < best[0]:
            best = (cost, choice)
    assert best is not None  # the default split itself is a candidate
    return dict(zip(names, best[1], strict=True))


def divide(
    sizes: dict[str, int],
    reduction: Sequence[str],
    inputs: Sequence[Access],
    output: Access,
    target: Target,
    cores: int | None = None,
    *,
    whole: frozenset[str] = frozenset(),
    hint: dict[str, int] | None = None,
    policy: str = "default",
) -> dict[str, int]:
    """
    Slices per iteration dim for one op (every dim of `sizes`, in its order; 1 = not split).

    `sizes` maps iteration dims to their sizes (output dims first), `reduction` names the
    reduced ones, `whole` those a core must see whole. A valid `hint` is taken as given;
    `policy="cost"` picks a matmul's split with `matmul_cost_us` (never on fewer cores than
    the default, and not when span reduction already committed a split). `cores` defaults to
    all of `target`'s; a core's tensors must fit `target.core_address_span`. Example: `abs` on a
    (256, 128, 512) fp32 tensor over 32 cores gives `{d0: 32, d1: 1, d2: 1}`; over 16, d0 is 16.
    """
    cores = target.cores if cores is None else cores
    if not 1 <= cores <= target.cores:
        raise ValueError(f"invalid core count {cores} (1..{target.cores})")
    if policy not in ("default", "cost"):
        raise ValueError(f"unknown work division policy '{policy}' (default, cost)")
    accesses = [*inputs, output]
    check_device_memory(accesses, target)
    adjusted = adjusted_sizes(sizes, accesses, whole)
    if hint:
        return check_hint(hint, adjusted, reduction, cores)
    committed = span_reduction(accesses, adjusted, set(reduction), cores, target.core_address_span)
    splits = _default(sizes, adjusted, committed, reduction, output, cores)
    if policy == "cost" and not committed and {"m", "n", "k"} <= set(sizes):
        at_least = math.prod(splits.values())
        element_bytes = output.layout.device_dtype.element_bytes
        splits = _cheapest_matmul(sizes, adjusted, element_bytes, cores, at_least, target)
    return splits


def check_device_memory(accesses: Sequence[Access], target: Target) -> None:
    """
    A `ValueError` if a tensor one op touches is larger than the target's device memory
    (128 GiB on Spyre): such an op cannot run, and dividing it would be wasted work.
    """
    largest = max(accesses, key=lambda a: a.layout.device_bytes)
    if (size := largest.layout.device_bytes) <= target.device_memory_bytes:
        return
    raise ValueError(
        f"a tensor of shape {list(largest.shape)} takes {_gib(size)} of device memory, more than "
        f"the {_gib(target.device_memory_bytes)} of {target.name}"
    )


def _gib(n: int) -> str:
    return f"{n / 1024**3:,.1f} GiB"


def core_slices(splits: dict[str, int], fastest: Sequence[str] = ()) -> list[dict[str, int]]:
    """
    Each core's slice index per dim: a mixed-radix decomposition of the core id, first dim
    fastest. The dims in `fastest` move to the front in that order (`k` for a K-split matmul,
    so that K partners are ring neighbours; a kernel's recorded core order,
    `ktir.cores.kernels.Kernel.order`). Example: `{d0: 2, d1: 1}` gives core 0 -> {d0: 0, d1: 0},
    core 1 -> {d0: 1, d1: 0}; `{m: 2, n: 2}` with `fastest=("n",)` gives core 1 -> {m: 0, n: 1}.
    """
    order = [d for d in fastest if d in splits] + [d for d in splits if d not in fastest]
    slices = []
    for core in range(math.prod(splits.values())):
        index, radix = {}, 1
        for dim in order:
            index[dim] = (core // radix) % splits[dim]
            radix *= splits[dim]
        slices.append({dim: index[dim] for dim in splits})
    return slices
