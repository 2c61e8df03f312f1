"""
ktdp's inter-tile communication on every tile at once: `inter_tile_produce` gathers each
group's partials, `inter_tile_reduce` folds them for the group's consumers on the ring, and
`inter_tile_consume` copies one producer's partial to each consumer (broadcast, routing).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ktir.dialects.ktdp.comm import InterTileProduceOp, InterTileReduceOp
from ktir.dialects.ktdp.delivery import InterTileConsumeOp
from ktir.hardware import cost_model
from ktir.ir.diagnostics import location_of
from ktir.ir.interpreter import Implementations
from ktir.ktdp_engine.memory import KtdpError
from ktir.ktdp_engine.tiles import (
    box_of,
)

if TYPE_CHECKING:
    from ktir.ktdp_engine.engine import Handler, TileProgram

IMPLS: Implementations[Handler] = Implementations()
"""The communication ops (`ktir.ir.interpreter`)."""


@dataclass
class Future:
    """`inter_tile_produce`'s partials (tiles x ...) and which tiles produce for which group."""

    partials: list[np.ndarray]
    groups: list[int]
    producers: np.ndarray  # groups x tiles, bool


def _members(tile_set: Any, groups: Sequence[int], tiles: int) -> np.ndarray:
    """groups x tiles: whether tile i is in the set for group g (`(i)[g]` constraints)."""
    points = [[_holds(tile_set, [i], [g]) for i in range(tiles)] for g in groups]
    return np.array(points, dtype=bool).reshape(len(groups), tiles)


def _group_ids(groups_set: Any) -> list[int]:
    lower, upper = box_of(groups_set, [], 1)
    return list(range(int(lower[0, 0]), int(upper[0, 0]) + 1))


@IMPLS.impl(InterTileProduceOp)
def _produce(run: TileProgram, op: Any) -> list[Future]:
    if run.charges.active is not None:
        raise KtdpError(
            "an inter-tile reduction in a loop whose trip count differs between tiles: not supported",
            location_of(op),
        )
    groups = _group_ids(op.future.type.groups.data)
    producers = _members(op.producer_tiles_per_group.data, groups, run.tiles)
    if (producers.sum(axis=0) > 1).any():
        raise KtdpError("a tile produces for more than one group: not supported", location_of(op))
    gid = np.array(groups)[producers.argmax(axis=0)]
    run.env[op.body.block.args[0]] = gid
    partials = run.run_block(op.body.block.ops)
    yielded = op.body.block.last_op
    if yielded is not None and yielded.operands:  # the reduce waits for the partial
        run.schedule.alias(op.results[:1], yielded.operands[:1])
    return [Future([np.asarray(p) for p in partials], groups, producers)]


@IMPLS.impl(InterTileReduceOp)
def _inter_tile_reduce(run: TileProgram, op: Any) -> list[np.ndarray]:
    """
    Each consumer gets its group's partials folded from the identity, in tile (ring) order; a
    tile that consumes for no group gets the identity. The combiner's ops are the ring's steps
    (`cost_model.ring_cycles` has each step add its partner's partial): they take no time or
    FLOPs of their own, as ktir's `ring_reduce` takes none.
    """
    future = cast(Future, run.env[op.future])
    consumers = _members(op.consumer_tiles_per_group.data, future.groups, run.tiles)
    identity = np.broadcast_to(np.asarray(run.env[op.identity[0]]), future.partials[0].shape)
    group_of = np.where(consumers.any(axis=0), consumers.argmax(axis=0), -1)
    members = [np.flatnonzero(row) for row in future.producers]
    longest = max((len(m) for m in members), default=0)
    block = op.combiner.block
    accumulated = identity.copy()
    run.schedule.collecting += 1
    run.charges.muted += 1
    try:
        for k in range(longest):
            picks = np.array([members[g][k] if g >= 0 and k < len(members[g]) else -1 for g in group_of])
            rhs = np.where(
                (picks >= 0).reshape(-1, *[1] * (identity.ndim - 1)), future.partials[0][picks], identity
            )
            run.env[block.args[0]], run.env[block.args[1]] = accumulated, rhs
            accumulated = np.asarray(run.run_block(block.ops)[0])
    finally:
        run.schedule.collecting -= 1
        run.charges.muted -= 1
    partial = future.partials[0][0]
    reduce = float(cost_model.ring_cycles(partial.size, partial.dtype.itemsize, max(longest, 1), run.target))
    # Then the sum travels on from the group's first producer to its other consumers, a hop each.
    hop = run.target.ring_hop_cycles + partial.nbytes / run.target.ring_bytes_per_cycle
    hops = max(
        (len(set(np.flatnonzero(c)) - set(m[:1])) for c, m in zip(consumers, members, strict=True)), default=0
    )
    run.charges.charge_ring(reduce + hops * hop, _ring_groups(members, run.tiles))
    return [accumulated]


@IMPLS.impl(InterTileConsumeOp)
def _inter_tile_consume(run: TileProgram, op: InterTileConsumeOp) -> list[np.ndarray]:
    """
    Each consumer tile gets its one source's partial: its group's producer, or with
    `producer_dependency_per_consumer` the producer the set names for it (exactly one, else a
    located error). A tile that consumes for no group gets zeros (no op of the program may read
    them). On the ring each delivery to another tile is a hop of the partial, one after another
    as the reduce's result travels on (`_inter_tile_reduce`).
    """
    future = cast(Future, run.env[op.future])
    consumers = _members(op.consumer_tiles_per_group.data, future.groups, run.tiles)
    dependency = op.producer_dependency_per_consumer
    partials = future.partials[0]
    result = np.zeros_like(partials)
    hops = [0] * len(future.groups)
    for g, group in enumerate(future.groups):
        producers = np.flatnonzero(future.producers[g])
        for tile in map(int, np.flatnonzero(consumers[g])):
            sources = producers if dependency is None else _named(dependency.data, producers, tile, group)
            if len(sources) != 1:
                raise KtdpError(
                    f"consumer tile {tile} of group {group} has {len(sources)} sources: "
                    "an inter_tile_consume delivers exactly one",
                    location_of(op),
                )
            result[tile] = partials[sources[0]]
            hops[g] += int(sources[0] != tile)
    hop = run.target.ring_hop_cycles + partials[0].nbytes / run.target.ring_bytes_per_cycle
    members = [np.flatnonzero(row) for row in future.producers]
    run.charges.charge_ring(max(hops, default=0) * hop, _ring_groups(members, run.tiles))
    return [result]


def _named(dependency: Any, producers: np.ndarray, consumer: int, group: int) -> np.ndarray:
    """The producers a `(p)[c]` or `(p)[c, g]` dependency set names for `consumer` of `group`."""
    symbols = [consumer, group][: dependency.num_symbols]
    named = [p for p in producers if _holds(dependency, [int(p)], symbols)]
    return np.array(named, dtype=np.int64)


def _holds(affine_set: Any, dims: list[int], symbols: list[int]) -> bool:
    """Whether the point satisfies every constraint of the set (`expr == 0` or `expr >= 0`)."""
    for constraint in affine_set.constraints:
        value = (constraint.lhs - constraint.rhs).eval(dims, symbols)
        if (value != 0) if constraint.kind.value == "==" else (value < 0):
            return False
    return True


def _ring_groups(members: list[np.ndarray], tiles: int) -> int:
    """
    The size of the consecutive tile groups that start the ring together (ktir's `ring_reduce`
    over groups of g cores): g when the producers split the tiles into runs of g, else all tiles.
    """
    size = len(members[0]) if members else 0
    consecutive = (
        all(len(m) == size and m[0] % size == 0 and (np.diff(m) == 1).all() for m in members)
        if size
        else False
    )
    return size if consecutive and size * len(members) == tiles else tiles


__all__ = ["IMPLS", "Future"]
