"""
The K-split forms of a core-level kernel as `ktdp` + `linalg`: an accumulator's zero
(`ktir.lx_fill`), a matmul chunk that adds its products to the accumulator (`ktir.compute ...
accumulate`), the K partners' ring reduction of their partial sums (`ktir.ring_reduce`), and a
store by the group's first core only (`ktir.dma_store ... writers g`).

- `lx_fill` is a `linalg.fill` of the accumulator's host tile, zero-padded to whole sticks as
  ktir's LX buffer is (its N in the output tile's sticks; `structured.filled`);
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

from xdsl.dialects import arith
from xdsl.dialects.builtin import AffineSetAttr, ArrayAttr, IndexType
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineConstraintExpr, AffineConstraintKind, AffineExpr, AffineSet

from ktir.dialects.ktdp.attributes import TileFutureType
from ktir.dialects.ktdp.comm import InterTileProduceOp, InterTileReduceOp, YieldPartialOp, YieldReducedOp
from ktir.export.to_ktdp.emitter import Emitter, HostTensor
from ktir.export.to_ktdp.loops import index_constant
from ktir.export.to_ktdp.payload import per_core_operands
from ktir.export.to_ktdp.structured import COMBINERS
from ktir.export.to_ktdp.tensors import PRODUCTS, constant, extract_slice, reshaped, splat, zero_padded
from ktir.ir.diagnostics import op_error

IDENTITIES = {"add": -0.0, "max": -math.inf, "min": math.inf}
"""A ring reduction's identity by combine kind (`-0.0 + x` is `x`, bit for bit)."""

_GE, _EQ = AffineConstraintKind.ge, AffineConstraintKind.eq


def accumulated_matmul(
    emitter: Emitter, op: Operation, x: HostTensor, y: HostTensor, acc: HostTensor, k_sticks: int
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
        y = extract_slice(emitter, y, [0] * len(y.shape), (*y.shape[:-2], k, y.shape[-1]))
    x = zero_padded(emitter, x, (*x.shape[:-1], k_padded))
    y = zero_padded(emitter, y, (*y.shape[:-2], k_padded, n_padded))
    if (batch_of_one := per_core_operands(emitter, x, y)) is not None:  # ktir: one GEMM per core
        operands = list(batch_of_one)
        into, kind = reshaped(emitter, acc, (1, *acc.shape[-2:])), "batch_matmul"
    elif all(n == 1 for n in y.shape[:-2]):  # one y for every row of x: a 2-D product
        rows = math.prod(x.shape[:-1])
        operands = [reshaped(emitter, x, (rows, k_padded)), reshaped(emitter, y, y.shape[-2:])]
        into, kind = reshaped(emitter, acc, (rows, n_padded)), "matmul"
    elif x.shape[:-2] == y.shape[:-2]:
        batch = math.prod(x.shape[:-2])
        operands = [reshaped(emitter, t, (batch, *t.shape[-2:])) for t in (x, y)]
        into, kind = reshaped(emitter, acc, (batch, *acc.shape[-2:])), "batch_matmul"
    else:
        raise op_error(
            op, f"ktir-emit-ktdp writes batched matmuls of equal batches, not {x.shape} x {y.shape}"
        )
    out = emitter.tensor(PRODUCTS[kind]([t.value for t in operands], [into.value]))
    return reshaped(emitter, out, acc.shape)


def _set(group: int, first_only: bool) -> AffineSetAttr:
    """The tiles of group `s0` (`d0` a tile id): all `group` of them, or the first only."""
    d0, s0 = AffineExpr.dimension(0), AffineExpr.symbol(0)
    if first_only:
        constraints = [AffineConstraintExpr(_EQ, d0 - s0 * group, AffineExpr.constant(0))]
    else:
        constraints = [
            AffineConstraintExpr(_GE, d0 - s0 * group, AffineExpr.constant(0)),
            AffineConstraintExpr(_GE, -d0 + s0 * group + (group - 1), AffineExpr.constant(0)),
        ]
    return AffineSetAttr(AffineSet(1, 1, tuple(constraints)))


def _groups(count: int) -> AffineSetAttr:
    """The group ids 0 to `count` - 1."""
    d0 = AffineExpr.dimension(0)
    constraints = (
        AffineConstraintExpr(_GE, d0, AffineExpr.constant(0)),
        AffineConstraintExpr(_GE, -d0 + (count - 1), AffineExpr.constant(0)),
    )
    return AffineSetAttr(AffineSet(1, 0, constraints))


def ring_reduced(
    emitter: Emitter, op: Operation, acc: HostTensor, group: int, tiles: int, combine: str
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
    future_type = TileFutureType(ArrayAttr([acc.type]), _groups(tiles // group))
    producer = Block(arg_types=[IndexType()])
    future_name = emitter.fresh("future")
    emitter.name(producer.args, "gid")
    with emitter.inside(producer):
        emitter.add(YieldPartialOp(acc.value))
    future = emitter.named(
        InterTileProduceOp(_set(group, first_only=False), future_type, Region(producer)), future_name
    )
    start = constant(emitter, splat(IDENTITIES[combine], acc.shape, acc.element), "identity")
    name = emitter.fresh("t")
    combiner = Block(arg_types=[acc.type, acc.type])
    emitter.name([combiner.args[0]], "lhs")
    emitter.name([combiner.args[1]], "rhs")
    with emitter.inside(combiner):
        combined = emitter.value(COMBINERS[combine](combiner.args[0], combiner.args[1]), "v")
        emitter.add(YieldReducedOp(combined))
    reduce = InterTileReduceOp(future, _set(group, first_only=True), start.value, Region(combiner))
    return HostTensor(emitter.named(reduce, name))


def writers_condition(emitter: Emitter, tile_id: SSAValue, writers: int) -> SSAValue:
    """An `i1` true on the tiles whose id is a multiple of `writers` (a K-split kernel's storers)."""
    divisor = index_constant(emitter, writers, "w")
    zero = index_constant(emitter, 0, "c")
    rest = emitter.value(arith.RemUIOp(tile_id, divisor), "r")
    return emitter.value(arith.CmpiOp(rest, zero, "eq"), "writes")


__all__ = ["IDENTITIES", "accumulated_matmul", "ring_reduced", "writers_condition"]
