"""
Cutting a tensor into per-core and per-chunk tiles along an op's iteration dims.

An op iterates over named dims and reads or writes tensors through an `Access`: the tensor's
layout and host shape, and the iteration dim behind each host dim. Splitting a dim `s` ways
cuts, in every tensor, the *outermost device dim* of the chain that holds that host dim
(`HostGroup.digits[-1]`) into `s` equal ranges, and keeps the inner device dims whole. So
every tile is a box of device positions (whole sticks, the same extents on every core),
which one DMA loop nest moves, and a host box follows from it:

    (100,) fp16, default layout: device [2, 64]  (2 sticks of 64 lanes)
    split 2: core 0 -> device [0:1, 0:64] = host [0:64]; core 1 -> device [1:2, 0:64] = host [64:100]

A dim can be cut `s` ways when `s` divides the outer device size of every tensor that holds
it and all of them agree on the host length of a piece; `granules` gives, per dim, the
number `G` whose divisors are exactly the allowed cuts. For a stick dim this is the stick
count and for any other dim its size, so on default layouts it is the reference's
"stick-adjusted size".
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache

from ktir.cores.factors import divisors
from ktir.layout.binding import HostGroup
from ktir.layout.spyre import SpyreTensorLayout


@dataclass(frozen=True)
class Access:
    """
    A tensor an op touches: its layout and shape, and the iteration dim of each host dim.

    Adjacent host dims that one group of device dims walks may name the same iteration dim,
    which then walks them as one flattened dim (attention's query heads [H, G] as one head
    dim of H * G). `repeats` (one per host dim, default 1) says how many consecutive positions
    of the iteration dim read one position of the host dim: attention's key heads are read by
    the G query heads of their group (`repeats` G along the head dim).
    """

    layout: SpyreTensorLayout
    shape: tuple[int, ...]
    dims: tuple[str | None, ...]  # None: a dim no iteration dim walks (broadcast, or size 1)
    repeats: tuple[int, ...] = ()

    def repeat(self, host_dim: int) -> int:
        """Iteration positions per position of `host_dim` (1 unless `repeats` says otherwise)."""
        return self.repeats[host_dim] if self.repeats else 1


@dataclass(frozen=True)
class Chain:
    """
    How one iteration dim is cut in one tensor: the outermost device dim `device_dim` of its
    host group has `size` positions of `unit` group positions each; a cut into `s` pieces
    gives each piece `padded // s` host positions along `host_dim` (padding included). With
    `repeat` r, `size` and `padded` count iteration positions, r per device position.
    """

    host_dim: int
    device_dim: int
    size: int
    padded: int
    divisible: bool  # every divisor of `size` is a valid cut
    repeat: int = 1


@cache
def _groups(layout: SpyreTensorLayout, shape: tuple[int, ...]) -> tuple[HostGroup, ...]:
    return layout.bind(shape).groups


def chains(access: Access) -> tuple[dict[str, Chain], set[str]]:
    """
    The cuttable chain of each iteration dim in `access`, and the dims it cannot cut (inner
    host dims of a merged group: a cut of those is not a device box).

    Example: (4, 100) fp16 default, dims (d0, d1): d0 -> device dim 1 (size 4, padded 4),
    d1 -> device dim 0 (2 sticks, padded 128).
    """
    cuttable: dict[str, Chain] = {}
    uncuttable: set[str] = set()
    for group in _groups(access.layout, access.shape):
        outer, *inner = group.host_dims
        name = access.dims[outer]
        flattened = [d for d in inner if name is not None and access.dims[d] == name]
        for dim in inner:
            if dim not in flattened and (other := access.dims[dim]) is not None and access.shape[dim] > 1:
                uncuttable.add(other)
        if name is None or not group.digits:
            continue
        top = group.digits[-1]
        if top.device_dim == len(access.layout.device_size) - 1 or name in cuttable:
            # The dim lies inside one stick (the lanes are never cut), or it walks two groups.
            if access.shape[outer] > 1:
                uncuttable.add(name)
            continue
        inner_size = math.prod(
            s for d, s in zip(inner, group.host_sizes[1:], strict=True) if d not in flattened
        )
        padded = top.size * top.unit
        chain = Chain(
            host_dim=outer,
            device_dim=top.device_dim,
            size=top.size,
            padded=padded // inner_size if padded % inner_size == 0 else 0,
            divisible=top.unit % inner_size == 0,
        )
        repeat = access.repeat(outer)
        if repeat > 1:
            chain = _repeated(chain, repeat)
            if chain is None:
                uncuttable.add(name)
                continue
        cuttable[name] = chain
    return cuttable, uncuttable


def _repeated(chain: Chain, repeat: int) -> Chain | None:
    """
    A chain read `repeat` times per position, counted in iteration positions; None unless
    every cut gives pieces that hold whole positions or lie inside one (then the device box
    is exact). Example: 8 key heads read by 4 query heads each: size 32; a cut into 16 gives
    each piece half of one key head's readers, the box of that one head.
    """
    size = chain.size * repeat
    if not chain.divisible or any((size // c) % repeat and repeat % (size // c) for c in divisors(size)):
        return None
    return Chain(chain.host_dim, chain.device_dim, size, chain.padded * repeat, True, repeat)


def granules(
    sizes: Mapping[str, int], accesses: Sequence[Access], whole: frozenset[str] = frozenset()
) -> dict[str, int]:
    """
    Per iteration dim, the count whose divisors are the allowed cuts (1: never cut).

    Examples: (256, 128, 512) fp32 default gives {d0: 256, d1: 128, d2: 16} (512 fp32 are 16
    sticks); an fp16 matmul x[M, K] @ y[K, N] has k = K / 64: x holds K in sticks, y in rows.
    """
    counts: dict[str, int] = {}
    padded: dict[str, set[int]] = {}
    blocked = set(whole)
    for access in accesses:
        cuttable, uncuttable = chains(access)
        blocked |= uncuttable
        for name, chain in cuttable.items():
            if not chain.divisible or chain.padded == 0:
                blocked.add(name)
                continue
            counts[name] = math.gcd(counts.get(name, 0), chain.size)
            padded.setdefault(name, set()).add(chain.padded)
    result = {}
    for name in sizes:
        agree = len(padded.get(name, ())) == 1
        result[name] = counts.get(name, 1) if name not in blocked and agree else 1
    return result


def device_box(
    access: Access, cuts: Mapping[str, int], piece: Mapping[str, int]
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """
    (start, extent) per device dim of the tile `piece` of `access` when dims are cut `cuts`
    ways (dims not named are whole). Example: (4, 64) fp16 cut {d0: 2}, piece {d0: 1}:
    start (0, 2, 0), extent (1, 2, 64) on the device size [1, 4, 64].
    """
    start = [0] * len(access.layout.device_size)
    extent = list(access.layout.device_size)
    for name, chain in chains(access)[0].items():
        cut = cuts.get(name, 1)
        if cut == 1:
            continue
        length = chain.size // cut
        first = piece.get(name, 0) * length
        if chain.repeat > 1:  # iteration positions -> the device positions they read
            first, length = first // chain.repeat, max(1, length // chain.repeat)
        start[chain.device_dim] = first
        extent[chain.device_dim] = length
    return tuple(start), tuple(extent)


def combine(outer: Mapping[str, int], inner: Mapping[str, int]) -> dict[str, int]:
    """Cuts of a core slice further cut into chunks: {d0: 4} then {d0: 2} is {d0: 8}."""
    return {name: outer.get(name, 1) * inner.get(name, 1) for name in {*outer, *inner}}


def nested(
    outer_cuts: Mapping[str, int],
    outer: Mapping[str, int],
    inner_cuts: Mapping[str, int],
    inner: Mapping[str, int],
) -> dict[str, int]:
    """The piece index, under `combine(outer_cuts, inner_cuts)`, of chunk `inner` of slice `outer`."""
    return {
        name: outer.get(name, 0) * inner_cuts.get(name, 1) + inner.get(name, 0)
        for name in {*outer_cuts, *inner_cuts}
    }
