"""
The K-split forms of a core-level kernel as `ktdp` + `linalg`: an accumulator's zero
(`ktir.lx_fill`), a matmul chunk that adds its products to the accumulator (`ktir.compute ...
accumulate`), the K partners' ring reduction of their partial sums (`ktir.ring_reduce`), and a
store by the group's first core only (`ktir.dma_store ... writers g`).

- `lx_fill` is a `linalg.fill` of the accumulator's host tile, zero-padded to whole sticks as
  ktir's LX buffer is (its N in the output tile's sticks);
- an accumulating matmul is a `linalg.matmul` (or `batch_matmul`) whose `outs` is the
  accumulator: linalg's semantics, the products summed in fp32 and added to the accumulator,
  rounded once to its element type, as ktir's PE arrays add a chunk into an fp32 tile;
- a ring reduction over groups of `g` consecutive cores is a `ktdp.inter_tile_produce` of every
  core's partial for its group `id floordiv g` and a `ktdp.inter_tile_reduce` whose consumer is
  the group's first core, folding the partials in core order from `-0.0` (the identity of an
  fp32 addition that changes no bit, so the sum is ktir's `p0 + p1 + ...`);
- a store by writers `g` is an `scf.if` on `id mod g == 0` around the `ktdp.store`.

Example: the MLP's second matmul at the card's rates splits K = 256 over 2 cores: each core
zeroes a 2 x 64 f32 accumulator, adds its 2 x 128 @ 128 x 64 product, the pair's partials are
added on the ring into core 2i, which adds the bias and alone stores the 2 x 32 result.
"""

from __future__ import annotations

import math

from xdsl.ir import Attribute, Operation

from ktir.export.ktdp_payload import (
    HostTensor,
    Writer,
    destination,
    extract_slice,
    float_literal,
    per_core_operands,
    reshaped,
    zero_padded,
)
from ktir.ir.diagnostics import op_error

COMBINERS = {
    "add": ("arith.addf", -0.0),
    "max": ("arith.maximumf", -math.inf),
    "min": ("arith.minimumf", math.inf),
}
"""A ring reduction's combine kind: its `arith` op and its identity (`-0.0 + x` is `x`, bit for bit)."""


def filled(writer: Writer, shape: tuple[int, ...], element: Attribute, value: float) -> HostTensor:
    """`linalg.fill` of a new `shape` tensor with `value` (an accumulator's start)."""
    scalar = writer.fresh("c")
    writer.emit(f"{scalar} = arith.constant {float_literal(value, element)} : {element}")
    out, empty = destination(writer, shape, element)
    destination_text = f"outs({empty} : {out.type_text}) -> {out.type_text}"
    writer.emit(f"{out.name} = linalg.fill ins({scalar} : {element}) {destination_text}")
    return out


def accumulated_matmul(
    writer: Writer, op: Operation, x: HostTensor, y: HostTensor, acc: HostTensor, k_sticks: int
) -> HostTensor:
    """
    x @ y added to the accumulator `acc` (x's leading dims and y's N as `acc`'s, N in whole
    sticks): the operands zero-padded to K in whole sticks (`k_sticks`) and to `acc`'s N, as
    ktir's PE arrays run a matmul kernel's tiles, then one `linalg.matmul` (2-D y) or
    `linalg.batch_matmul` (equal batches) into `acc`.
    """
    k, n_padded = x.shape[-1], acc.shape[-1]
    if y.shape[-2] < k or acc.shape[:-1] != x.shape[:-1]:
        raise op_error(op, f"its tiles {x.shape} x {y.shape} do not accumulate into {acc.shape}")
    k_padded = max(k_sticks, k)
    if y.shape[-2] > k:  # y carries matmul padding rows: the product reads x's K only
        y = extract_slice(writer, y, [0] * len(y.shape), (*y.shape[:-2], k, y.shape[-1]))
    x = zero_padded(writer, x, (*x.shape[:-1], k_padded))
    y = zero_padded(writer, y, (*y.shape[:-2], k_padded, n_padded))
    if (batch_of_one := per_core_operands(writer, x, y)) is not None:  # ktir: one GEMM per core
        operands = list(batch_of_one)
        into, name = reshaped(writer, acc, (1, *acc.shape[-2:])), "linalg.batch_matmul"
    elif all(n == 1 for n in y.shape[:-2]):  # one y for every row of x: a 2-D product
        rows = math.prod(x.shape[:-1])
        operands = [reshaped(writer, x, (rows, k_padded)), reshaped(writer, y, y.shape[-2:])]
        into, name = reshaped(writer, acc, (rows, n_padded)), "linalg.matmul"
    elif x.shape[:-2] == y.shape[:-2]:
        batch = math.prod(x.shape[:-2])
        operands = [reshaped(writer, t, (batch, *t.shape[-2:])) for t in (x, y)]
        into, name = reshaped(writer, acc, (batch, *acc.shape[-2:])), "linalg.batch_matmul"
    else:
        raise op_error(
            op, f"ktir-emit-ktdp writes batched matmuls of equal batches, not {x.shape} x {y.shape}"
        )
    out = HostTensor(writer.fresh("t"), into.shape, into.element)
    names, types = ", ".join(t.name for t in operands), ", ".join(t.type_text for t in operands)
    writer.emit(
        f"{out.name} = {name} ins({names} : {types}) outs({into.name} : {into.type_text}) -> {out.type_text}"
    )
    return reshaped(writer, out, acc.shape)


def _set(group: int, first_only: bool) -> str:
    """The tiles of group `s0` (`d0` a tile id): all `group` of them, or the first only."""
    if first_only:
        return f"affine_set<(d0)[s0] : (d0 - s0 * {group} == 0)>"
    return f"affine_set<(d0)[s0] : (d0 - s0 * {group} >= 0, -d0 + s0 * {group} + {group - 1} >= 0)>"


def ring_reduced(
    writer: Writer, op: Operation, acc: HostTensor, group: int, tiles: int, combine: str
) -> HostTensor:
    """
    Every tile's `acc` combined over its group of `group` consecutive tiles into the group's
    first tile (module docstring). The other tiles' result is the identity: ktir leaves their
    partials, which nothing stores.
    """
    if combine not in COMBINERS or tiles % group:
        raise op_error(
            op, f"a '{combine}' ring reduction over groups of {group} of {tiles} cores is not written"
        )
    arith_op, identity = COMBINERS[combine]
    future_type = (
        f"<({acc.type_text}), groups = affine_set<(d0) : (d0 >= 0, -d0 + {tiles // group - 1} >= 0)>>"
    )
    future, gid = writer.fresh("future"), writer.fresh("gid")
    producers = _set(group, first_only=False)
    writer.emit(
        f"{future} = ktdp.inter_tile_produce producer_tiles_per_group = {producers} -> {future_type} {{"
    )
    writer.emit(f"^bb0({gid}: index):")
    writer.emit(f"ktdp.yield_partial {acc.name} : {acc.type_text}", 2)
    writer.emit("}")
    start = writer.fresh("identity")
    writer.emit(f"{start} = arith.constant dense<{float_literal(identity, acc.element)}> : {acc.type_text}")
    out = HostTensor(writer.fresh("t"), acc.shape, acc.element)
    lhs, rhs, combined = (writer.fresh(stem) for stem in ("lhs", "rhs", "v"))
    consumers = _set(group, first_only=True)
    writer.emit(
        f"{out.name} = ktdp.inter_tile_reduce({future}) consumer_tiles_per_group = {consumers}, "
        f"identity({start} : {acc.type_text}) : {future_type} -> {acc.type_text} {{"
    )
    writer.emit(f"^bb0({lhs}: {acc.type_text}, {rhs}: {acc.type_text}):")
    writer.emit(f"{combined} = {arith_op} {lhs}, {rhs} : {acc.type_text}", 2)
    writer.emit(f"ktdp.yield_reduced {combined} : {acc.type_text}", 2)
    writer.emit("}")
    return out


def writers_condition(writer: Writer, writers: int) -> str:
    """An `i1` true on the tiles whose id is a multiple of `writers` (a K-split kernel's storers)."""
    divisor, zero, rest, condition = (writer.fresh(s) for s in ("w", "c", "r", "writes"))
    writer.emit(f"{divisor} = arith.constant {writers} : index")
    writer.emit(f"{zero} = arith.constant 0 : index")
    writer.emit(f"{rest} = arith.remui %id, {divisor} : index")
    writer.emit(f"{condition} = arith.cmpi eq, {rest}, {zero} : index")
    return condition


__all__ = ["COMBINERS", "accumulated_matmul", "filled", "ring_reduced", "writers_condition"]
