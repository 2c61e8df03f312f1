"""
Per-op stick rules of graph-level ktir: which sticks an op's results may take and which
sticks each operand must then have. Layout propagation searches over these rules,
restickify insertion materializes them, and the legality check verifies them.

A *stick* is the host dim a tensor's sticks walk, or `SPARSE` (see `ktir.layout.sticks`). An op's
rule gives, for every tensor result, its candidate sticks, and for a choice of result sticks,
a `Need` per operand: the operand sticks it reads as they are, and the dense dim a
restickify may move a mismatched operand to (none when only a gather/scatter could help,
e.g. from a sparse tensor to a dense one). Views (permute, reshape, expand, slice) have a
`through` function instead: their result's stick is a function of the input's stick, or
None when the view splits or offsets the stick, in which case the view itself must copy.

The rules (the reference stack's `torch_spyre/_inductor/propagate_layouts.py` and its layout
guide `docs/source/user_guide/tensors_and_layouts.md`):

| op | result sticks | operands |
|---|---|---|
| pointwise (unary, binary, where, clamp, pow, convert) | any | on the result stick (*) |
| reductions | any; sparse iff reducing over the stick | input on the matching dim |
| matmul / bmm | N | x on K, y on N |
| softmax, layer_norm, rms_norm | the normalized dim | the same |
| attention | E | q and k on D, v on E, the mask on the keys |
| cat, pad | any (a stick the op shifts costs a copy) | aligned |
| copy | any, same density | any |
| `ktir.full` | any (free) | - |
| `ktir.cumsum` | any | on the result stick |
| `ktir.gather_rows` | the row's last dim | the table on its last dim, the indices any |
| `ktir.cpu_fallback` | any (the host writes it), for free | any |
| `ktir.all_reduce` | any | on the result stick (the cards exchange device bytes as they are) |
| `ktir.all_gather` | the last dim | on the last dim |

(*) An operand broadcast along the result stick (missing or size 1 there) must be sparse.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Operation

from ktir.dialects.ktir import collective, data, routing
from ktir.dialects.ktir import elementwise as ew
from ktir.dialects.ktir import structured as st
from ktir.ir.values import shape_of
from ktir.layout import sticks
from ktir.layout.dtypes import ELEMENT_TYPE_TO_DEVICE_DTYPE
from ktir.layout.sticks import SPARSE

Shape = tuple[int, ...]


@dataclass(frozen=True)
class Need:
    """
    What one operand must look like: `accept` are the sticks read as they are (None: any),
    `target` the stick a restickify moves any other dense operand to (None: impossible).

    A restickify reads dense sticks: it can move a dense tensor's stick to another dim, or
    spread it to one element per stick (`SPARSE`, a strided write). A sparse tensor can never
    be restickified: gathering single elements back into dense sticks has no mechanism
    (the reference's "No mechanism to gather/scatter elements").
    """

    accept: frozenset[int] | None
    target: int | None = None

    def satisfied_by(self, stick: int) -> bool:
        """Whether an operand with `stick` is read as it is."""
        return self.accept is None or stick in self.accept

    def cost(self, stick: int, numel: int) -> float:
        """0 if read as is, `numel` if a restickify fixes it, infinity otherwise."""
        if self.satisfied_by(stick):
            return 0.0
        if stick != SPARSE and self.target is not None:
            return float(numel)
        return math.inf


ANY = Need(None)


def on(stick: int) -> Need:
    """The operand must be sticked on `stick` (a dense dim or `SPARSE`); a restickify can move it there."""
    return Need(frozenset({stick}), stick)


@dataclass(frozen=True)
class Rule:
    """
    The stick rule of one op: `domains[i]` are the candidate sticks of tensor result `i`;
    `needs(result_sticks)` gives a `Need` per operand (None for non-tensor operands).
    A view instead has `through`, mapping its input's stick to its result's stick.
    `copies` marks ops that move data themselves (copy, restickify): nothing is inserted
    before them. `shifts` are the result sticks for which the op must shift elements inside
    sticks (a cat or pad that does not start its pieces on stick boundaries): it then moves
    its whole result, which counts as a relayout of that many elements.
    """

    domains: tuple[tuple[int, ...], ...]
    needs: Callable[[tuple[int, ...]], tuple[Need | None, ...]]
    through: Callable[[int], int | None] | None = None
    copies: bool = False
    shifts: frozenset[int] = frozenset()


class RuleError(Exception):
    """An op that layout propagation has no rule for; `op` is the culprit."""

    def __init__(self, op: Operation, message: str) -> None:
        super().__init__(message)
        self.op = op


def elems_per_stick(value_type: Attribute) -> int:
    """Elements per stick of a tensor type's element type (64 for f16, 32 for f32)."""
    element = str(cast(TensorType[Attribute], value_type).element_type)
    return ELEMENT_TYPE_TO_DEVICE_DTYPE[element].elems_per_stick


def pointwise_need(operand: Shape, result_stick: int, result: Shape) -> Need:
    """
    What a broadcasting pointwise op needs of an operand of shape `operand`.

    A single element fits any stick. Otherwise the operand dim under the result stick
    (NumPy right-alignment) must be the operand's stick; if the operand is missing or size 1
    there, each result stick sees one operand element, so the operand must be sparse.
    Example: (64,) + (4, 64) with result stick 1 needs the (64,) operand on dim 0;
    with result stick 0 it needs a sparse (64,), one element per stick (a restickify spreads it).
    """
    if math.prod(operand) == 1:
        return ANY
    if result_stick == SPARSE:
        return on(SPARSE)
    own = result_stick - (len(result) - len(operand))
    if own < 0 or operand[own] == 1:
        return on(SPARSE)
    return on(own)


def _operand_shapes(op: Operation) -> list[Shape | None]:
    return [shape_of(v.type) if isinstance(v.type, TensorType) else None for v in op.operands]


def _pointwise(op: Operation, shifts: Sequence[int] = ()) -> Rule:
    result = shape_of(op.results[0].type)
    operands = _operand_shapes(op)

    def needs(chosen: tuple[int, ...]) -> tuple[Need | None, ...]:
        return tuple(None if s is None else pointwise_need(s, chosen[0], result) for s in operands)

    return Rule((sticks.candidate_sticks(result),), needs, shifts=frozenset(shifts))


def _fixed(op: Operation, stick: int, operand_sticks: Sequence[int | None]) -> Rule:
    """A result with one allowed stick; operand `i` must be on `operand_sticks[i]` (None: any)."""
    result = shape_of(op.results[0].type)
    fixed = sticks.normalize(stick, result)
    operands = _operand_shapes(op)
    needs = tuple(
        ANY if wanted is None or shape is None else on(cast(int, sticks.normalize(wanted, shape)))
        for wanted, shape in zip(operand_sticks, operands, strict=True)
    )
    return Rule(((cast(int, fixed),),), lambda _chosen: needs)


def _reduction(op: st.ReductionOp) -> Rule:
    source = shape_of(op.input.type)
    result = shape_of(op.result.type)
    dims = st.ints(op.dims)
    keepdim = op.keepdim is not None
    kept = [d for d in range(len(source)) if keepdim or d not in dims]
    reduced = [d for d in dims if source[d] > 1]

    def needs(chosen: tuple[int, ...]) -> tuple[Need | None, ...]:
        if chosen[0] == SPARSE:  # reduce over the stick: the input is sticked on a reduced dim
            return (Need(frozenset({*reduced, SPARSE}), reduced[0] if reduced else SPARSE),)
        return (on(kept[chosen[0]]),)

    return Rule((sticks.candidate_sticks(result),), needs)


def _matmul(op: st.MatmulBase) -> Rule:
    x, y = shape_of(op.x.type), shape_of(op.y.type)
    return _fixed(op, len(shape_of(op.result.type)) - 1, [len(x) - 1, len(y) - 1])


def _norm(op: st.NormOp) -> Rule:
    rank = len(shape_of(op.result.type))
    wanted = [rank - 1] + [len(s) - 1 if s else None for s in _operand_shapes(op)[1:]]
    return _fixed(op, rank - 1, wanted)


def _copy(op: Operation, relayout_cost: bool) -> Rule:
    """copy / restickify: any dense input to any dense result (a sparse one stays sparse)."""
    source = shape_of(op.operands[0].type)
    result = shape_of(op.results[0].type)
    dense = frozenset(s for s in sticks.candidate_sticks(source) if s != SPARSE)

    def needs(chosen: tuple[int, ...]) -> tuple[Need | None, ...]:
        if math.prod(source) == 1:
            return (ANY,)
        # A restickify op charges its own move (target = its result stick); a copy is free,
        # and may spread a dense input to a sparse result, but not gather a sparse one.
        if relayout_cost:
            return (on(chosen[0]),)
        return (Need(dense | {SPARSE}) if chosen[0] == SPARSE else Need(dense),)

    return Rule((sticks.candidate_sticks(result),), needs, copies=True)


def _view(op: st.ShapeChangeOp) -> Rule:
    source = shape_of(op.input.type)
    result = shape_of(op.result.type)
    eps = elems_per_stick(op.input.type)
    if isinstance(op, st.PermuteOp):
        perm = st.ints(op.perm)

        def through(stick: int) -> int | None:
            return sticks.through_permute(stick, perm)
    elif isinstance(op, st.ReshapeOp):

        def through(stick: int) -> int | None:
            return sticks.through_reshape(stick, source, result, eps)
    elif isinstance(op, st.ExpandOp):

        def through(stick: int) -> int | None:
            return sticks.through_expand(stick, source, result)
    else:
        assert isinstance(op, st.SliceOp)
        dim, start, step = (cast(int, a.value.data) for a in (op.dim, op.start, op.step))

        def through(stick: int) -> int | None:
            return sticks.through_slice(stick, dim, start, step, eps)

    def normalized(stick: int) -> int | None:
        return sticks.normalize(through(stick), result)

    return Rule((sticks.candidate_sticks(result),), lambda _chosen: (ANY,), through=normalized)


def _cat(op: st.CatOp) -> Rule:
    dim = cast(int, op.dim.value.data)
    eps = elems_per_stick(op.result.type)
    leading = [shape_of(v.type)[dim] for v in op.inputs][:-1]
    # Sticks along the cat dim stay whole only if every piece but the last fills whole sticks.
    return _pointwise(op, shifts=() if all(n % eps == 0 for n in leading) else (dim,))


def _pad(op: st.PadOp) -> Rule:
    eps = elems_per_stick(op.result.type)
    shifted = [d for d, low in enumerate(st.ints(op.low)) if low % eps]
    return _pointwise(op, shifts=shifted)


POINTWISE = ew.POINTWISE
VIEWS = (st.PermuteOp, st.ReshapeOp, st.ExpandOp, st.SliceOp)


def _softmax(op: st.SoftmaxOp) -> Rule:
    dim = cast(int, op.dim.value.data)
    return _fixed(op, dim, [dim])


def _attention(op: st.AttentionOp) -> Rule:
    # Sticks along each contraction: q and k along D (the scores' dot products), v and the
    # result along E, the mask along the keys, as the scores it is added to.
    mask = [len(shape_of(op.mask.type)) - 1] if op.mask is not None else []
    return _fixed(op, 4, [4, 3, 3, *mask])


def _full(op: ew.FullOp) -> Rule:
    return Rule((sticks.candidate_sticks(shape_of(op.result.type)),), lambda _chosen: ())


def _gather_rows(op: data.GatherRowsOp) -> Rule:
    # Whole rows move: the table and the result keep their rows' last dim as the stick, so one
    # row is whole sticks; the indices are read as numbers, in any layout.
    rank = len(shape_of(op.result.type))
    return _fixed(op, rank - 1, [len(shape_of(op.table.type)) - 1, None])


def _scatter_rows(op: routing.ScatterRowsOp) -> Rule:
    # Whole rows move, as in a gather: values, dest and the result keep the last dim as the stick.
    rank = len(shape_of(op.result.type))
    return _fixed(op, rank - 1, [len(shape_of(op.values.type)) - 1, rank - 1, None])


def _grouped_matmul(op: routing.GroupedMatmulOp) -> Rule:
    # Like a matmul: x on K, each expert's weights on N, the result on N.
    return _fixed(op, 1, [1, 2, None])


def _all_gather(op: collective.AllGatherOp) -> Rule:
    # Each card's block lands whole in the result: both keep the last dim as the stick.
    rank = len(shape_of(op.result.type))
    return _fixed(op, rank - 1, [rank - 1])


def _cpu_fallback(op: Operation) -> Rule:
    # The host (or, for the routing ops, the cores reading whole small tensors into LX) computes
    # the results and the DMA back lays them out: any layout, for free.
    domains = tuple(sticks.candidate_sticks(shape_of(r.type)) for r in op.results)
    return Rule(domains, lambda _chosen: tuple(ANY for _ in op.operands))


def _return(op: func.ReturnOp) -> Rule:
    return Rule((), lambda _chosen: tuple(ANY for _ in op.operands))


_RULES: tuple[tuple[type | tuple[type, ...], Callable[[Any], Rule]], ...] = (
    (POINTWISE, _pointwise),
    (VIEWS, _view),
    (st.ReductionOp, _reduction),
    (st.MatmulBase, _matmul),
    (st.SoftmaxOp, _softmax),
    (st.AttentionOp, _attention),
    (st.NormOp, _norm),
    ((st.CopyOp, st.RestickifyOp), lambda op: _copy(op, relayout_cost=isinstance(op, st.RestickifyOp))),
    (st.CatOp, _cat),
    (st.PadOp, _pad),
    (ew.FullOp, _full),
    (data.GatherRowsOp, _gather_rows),
    (data.CumsumOp, _pointwise),
    (routing.GroupedMatmulOp, _grouped_matmul),
    (routing.ScatterRowsOp, _scatter_rows),
    ((routing.TopkOp, routing.SortOp, routing.HistcOp, data.TakeAlongOp), _cpu_fallback),
    (st.CpuFallbackOp, _cpu_fallback),
    (collective.AllReduceOp, _pointwise),
    (collective.AllGatherOp, _all_gather),
    (func.ReturnOp, _return),
)
"""Op kinds and the rule builder of each, tried in order (the first match wins)."""


def rule_of(op: Operation) -> Rule:
    """The stick rule of a graph-level op; raises `RuleError` for ops without one."""
    for kinds, rule in _RULES:
        if isinstance(op, kinds):
            return rule(op)
    raise RuleError(op, "has no layout rule: layout propagation handles graph-level ktir ops only")
