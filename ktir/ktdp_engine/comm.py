"""
ktdp's inter-tile communication on every tile at once: `inter_tile_produce` gathers each
group's partials, `inter_tile_reduce` folds them for the group's consumers on the ring,
`inter_tile_consume` copies one producer's partial to each consumer (broadcast, routing), and
the placed deliveries (`reduce_scatter`, `gather`, `all_to_all`, `scatter`) give each consumer
a part or an assembly of them (`ktir.dialects.ktdp.placement`).

On the ring a copy delivery costs one hop of its piece per piece a tile sends or receives from
another tile, one after another (the busiest tile's count); a reduction `P - 1` ring steps of
the piece each consumer keeps (`cost_model.ring_cycles`). These use the ring's hop latency and
bandwidth; no rate of their own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ktir.dialects.ktdp.comm import DEPENDENCY, InterTileProduceOp, InterTileReduceOp
from ktir.dialects.ktdp.delivery import InterTileConsumeOp
from ktir.dialects.ktdp.placed_delivery import (
    InterTileAllToAllOp,
    InterTileGatherOp,
    InterTileReduceScatterOp,
    InterTileScatterOp,
    axes_of,
)
from ktir.dialects.ktdp.placement import PlacementError, concat_pieces, split_part
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
    Each consumer gets its group's partials (or those its dependency set names: a partial
    reduction) folded from the identity, in tile (ring) order; a tile that consumes for no
    group gets the identity. The combiner's ops are the ring's steps
    (`cost_model.ring_cycles` has each step add its partner's partial): they take no time or
    FLOPs of their own, as ktir's `ring_reduce` takes none.
    """
    future = cast(Future, run.env[op.future])
    consumers = _consumers(run, op, future)
    members = [np.flatnonzero(row) for row in future.producers]
    sources = [np.zeros(0, np.int64)] * run.tiles
    for tile, named in _deliveries(op, future, consumers):
        sources[tile] = named
    accumulated = _fold(run, op, future.partials[0], sources)
    longest = max((len(s) for s in sources), default=0)
    partial = future.partials[0][0]
    reduce = float(cost_model.ring_cycles(partial.size, partial.dtype.itemsize, max(longest, 1), run.target))
    # Then the sum travels on from the group's first producer to its other consumers, a hop each.
    hops = max(
        (len(set(np.flatnonzero(c)) - set(m[:1])) for c, m in zip(consumers, members, strict=True)), default=0
    )
    run.charges.charge_ring(
        reduce + hops * _hop_cycles(run, partial.nbytes), _ring_groups(members, run.tiles)
    )
    return [accumulated]


def _fold(run: TileProgram, op: Any, partials: np.ndarray, sources: Sequence[np.ndarray]) -> np.ndarray:
    """
    Every tile's `sources` partials folded by `op`'s combiner from its identity, in the order
    given, all tiles at once (a tile with fewer sources adds the identity). The combiner's ops
    are the ring's steps: they take no time or FLOPs of their own.
    """
    identity = np.broadcast_to(np.asarray(run.env[op.operands[1]]), partials.shape)
    longest = max((len(s) for s in sources), default=0)
    block = op.regions[0].block
    accumulated = identity.copy()
    run.schedule.collecting += 1
    run.charges.muted += 1
    try:
        for k in range(longest):
            picks = np.array([s[k] if k < len(s) else -1 for s in sources])
            rhs = np.where((picks >= 0).reshape(-1, *[1] * (identity.ndim - 1)), partials[picks], identity)
            run.env[block.args[0]], run.env[block.args[1]] = accumulated, rhs
            accumulated = np.asarray(run.run_block(block.ops)[0])
    finally:
        run.schedule.collecting -= 1
        run.charges.muted -= 1
    return accumulated


def _hop_cycles(run: TileProgram, nbytes: float) -> float:
    """One ring hop of `nbytes`: the hop latency, then the bytes at ring bandwidth."""
    return run.target.ring_hop_cycles + nbytes / run.target.ring_bytes_per_cycle


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
    consumers = _consumers(run, op, future)
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
    members = [np.flatnonzero(row) for row in future.producers]
    run.charges.charge_ring(
        max(hops, default=0) * _hop_cycles(run, partials[0].nbytes), _ring_groups(members, run.tiles)
    )
    return [result]


@IMPLS.impl(InterTileGatherOp)
def _inter_tile_gather(run: TileProgram, op: InterTileGatherOp) -> list[np.ndarray]:
    """
    Each consumer gets its sources' partials (its group's producers, or those its dependency
    set names) concatenated over `gather_dimensions` in tile order. On the ring the remote
    partials reach a consumer one hop after another, as a ring all-gather's steps.
    """
    future = cast(Future, run.env[op.future])
    axes = axes_of(op, "gather_dimensions")
    partials = future.partials[0]
    result = np.zeros((run.tiles, *op.result.type.get_shape()), partials.dtype)
    remote = 0
    for tile, sources in _deliveries(op, future, _consumers(run, op, future)):
        result[tile] = _result(
            op, tile, _checked(op, tile, concat_pieces, [partials[s] for s in sources], axes)
        )
        remote = max(remote, int((sources != tile).sum()))
    _charge_copies(run, future, remote, partials[0].nbytes)
    return [result]


@IMPLS.impl(InterTileScatterOp)
def _inter_tile_scatter(run: TileProgram, op: InterTileScatterOp) -> list[np.ndarray]:
    """
    Each consumer gets its part (by its local index among its group's consumers) of its
    group's one producer's partial, split over `scatter_dimensions`; the producer sends the
    parts for other tiles one hop after another.
    """
    future = cast(Future, run.env[op.future])
    axes = axes_of(op, "scatter_dimensions")
    partials = future.partials[0]
    result = np.zeros((run.tiles, *op.result.type.get_shape()), partials.dtype)
    sent: dict[int, int] = {}  # per producer: the parts it sends to other tiles (groups in parallel)
    for tile, sources, local, parts in _split_deliveries(run, op, future):
        if len(sources) != 1:
            raise KtdpError(
                f"group of consumer tile {tile} has {len(sources)} producers: an inter_tile_scatter has one",
                location_of(op),
            )
        result[tile] = _result(
            op, tile, _checked(op, tile, split_part, partials[sources[0]], axes, parts, local)
        )
        sent[int(sources[0])] = sent.get(int(sources[0]), 0) + int(sources[0] != tile)
    _charge_copies(run, future, max(sent.values(), default=0), result[0].nbytes)
    return [result]


@IMPLS.impl(InterTileAllToAllOp)
def _inter_tile_all_to_all(run: TileProgram, op: InterTileAllToAllOp) -> list[np.ndarray]:
    """
    Consumer `l` (its local index among its group's consumers) gets part `l` of each of its
    sources' partials over `split_dimensions`, concatenated in tile order over
    `concat_dimensions`; the remote parts reach it one hop after another.
    """
    future = cast(Future, run.env[op.future])
    split, concat = axes_of(op, "split_dimensions"), axes_of(op, "concat_dimensions")
    partials = future.partials[0]
    result = np.zeros((run.tiles, *op.result.type.get_shape()), partials.dtype)
    remote, part_bytes = 0, 0
    for tile, sources, local, parts in _split_deliveries(run, op, future):
        pieces = [_checked(op, tile, split_part, partials[s], split, parts, local) for s in sources]
        result[tile] = _result(op, tile, _checked(op, tile, concat_pieces, pieces, concat))
        remote = max(remote, int((sources != tile).sum()))
        part_bytes = pieces[0].nbytes if pieces else part_bytes
    _charge_copies(run, future, remote, part_bytes)
    return [result]


@IMPLS.impl(InterTileReduceScatterOp)
def _inter_tile_reduce_scatter(run: TileProgram, op: InterTileReduceScatterOp) -> list[np.ndarray]:
    """
    Each consumer gets its part (by local index) over `scatter_dimensions` of its sources'
    partials folded by the combiner from the identity, in tile order. On the ring, a
    reduce-scatter: `P - 1` steps, each moving and adding one part (`cost_model.ring_cycles`).
    """
    future = cast(Future, run.env[op.future])
    axes = axes_of(op, "scatter_dimensions")
    partials = future.partials[0]
    deliveries = list(_split_deliveries(run, op, future))
    sources = [np.zeros(0, np.int64)] * run.tiles
    for tile, named, _, _ in deliveries:
        sources[tile] = named
    folded = _fold(run, op, partials, sources)
    result = np.zeros((run.tiles, *op.result.type.get_shape()), partials.dtype)
    for tile, _, local, parts in deliveries:
        result[tile] = _result(op, tile, _checked(op, tile, split_part, folded[tile], axes, parts, local))
    longest = max((len(s) for s in sources), default=0)
    part = result[0]
    cycles = cost_model.ring_cycles(part.size, part.dtype.itemsize, max(longest, 1), run.target)
    members = [np.flatnonzero(row) for row in future.producers]
    run.charges.charge_ring(float(cycles), _ring_groups(members, run.tiles))
    return [result]


def _consumers(run: TileProgram, op: Any, future: Future) -> np.ndarray:
    """groups x tiles: whether a tile consumes for a group (`consumer_tiles_per_group`)."""
    return _members(op.consumer_tiles_per_group.data, future.groups, run.tiles)


def _deliveries(op: Any, future: Future, consumers: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
    """
    Each consumer tile (of `consumers`, `_consumers`) with its sources: its group's producers,
    or those its dependency set names. A copy delivery's consumer with no source is a located
    error (a reduction's gets the identity).
    """
    dependency = op.properties.get(DEPENDENCY)
    for g, group in enumerate(future.groups):
        producers = np.flatnonzero(future.producers[g])
        for tile in map(int, np.flatnonzero(consumers[g])):
            sources = producers if dependency is None else _named(dependency.data, producers, tile, group)
            if not len(sources) and not isinstance(op, InterTileReduceOp | InterTileReduceScatterOp):
                raise KtdpError(f"consumer tile {tile} of group {group} has no source", location_of(op))
            yield tile, sources


def _split_deliveries(
    run: TileProgram, op: Any, future: Future
) -> Iterator[tuple[int, np.ndarray, int, int]]:
    """`_deliveries` with each consumer's local index among its group's consumers and their count."""
    consumers = _consumers(run, op, future)
    local = np.cumsum(consumers, axis=1) - 1
    group_of = consumers.argmax(axis=0)
    for tile, sources in _deliveries(op, future, consumers):
        g = int(group_of[tile])
        yield tile, sources, int(local[g, tile]), int(consumers[g].sum())


def _checked(op: Any, tile: int, piece: Callable[..., np.ndarray], *arguments: Any) -> np.ndarray:
    """`piece(*arguments)`, a located error for the consumer tile if its placement fails."""
    try:
        return piece(*arguments)
    except PlacementError as error:
        raise KtdpError(f"consumer tile {tile}: {error}", location_of(op)) from None


def _result(op: Any, tile: int, value: np.ndarray) -> np.ndarray:
    """What `tile` receives, checked to have the op's result type (else a located error)."""
    shape = tuple(op.results[0].type.get_shape())
    if value.shape != shape:
        raise KtdpError(
            f"consumer tile {tile} receives a {list(value.shape)} tensor, the result type is {list(shape)}",
            location_of(op),
        )
    return value


def _charge_copies(run: TileProgram, future: Future, hops: int, piece_bytes: float) -> None:
    """A copy delivery on the ring: `hops` hops of `piece_bytes`, one after another."""
    members = [np.flatnonzero(row) for row in future.producers]
    run.charges.charge_ring(hops * _hop_cycles(run, piece_bytes), _ring_groups(members, run.tiles))


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
