"""
The iteration space of each graph-level op: the dims a kernel loops over and how each tensor
is indexed by them (docs/work-division.md).

Names: `b0, b1, ..., m, n, k` for matmul and bmm; `d0, d1, ...` otherwise, output dims first,
then reduced dims. Examples:

    ktir.add  [4, 64] + [64]          -> {d0: 4, d1: 64}; the [64] operand is indexed by (d1,)
    ktir.sum  [8, 32, 64] dims [1]    -> {d0: 8, d1: 64, d2: 32}; d2 is reduced
    ktir.matmul [B, M, K] @ [K, N]    -> {b0: B, m: M, n: N, k: K}; y is indexed by (k, n)
    ktir.attention q [B, H, G, S, D]  -> {b0, h: H * G, s, e, l, d}; k's head is h // G

Some dims must stay whole on a core (`whole`): reduced and normalized dims of every op but
matmul (whose K partial sums the ring adds up), the dim a cat, pad or slice works along, and
the trailing dims a copying reshape regroups. Views that only reinterpret their input's
device bytes and `ktir.cpu_fallback` are not kernels (`iteration_space` gives None).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from xdsl.dialects import func
from xdsl.ir import Operation, SSAValue

from ktir.cores import fusion
from ktir.cores.space import IterationError, IterationSpace, layout_of, normalized_dims
from ktir.cores.tiling import Access
from ktir.dialects.ktir import data
from ktir.dialects.ktir import elementwise as ew
from ktir.dialects.ktir import structured as st
from ktir.dialects.ktir.attributes import ComputeUnit
from ktir.dialects.ktir.core_functions import TIMED_FUNCTION_LEVEL_OPS
from ktir.ir.values import is_tensor, shape_of
from ktir.planning.plan import copying_view
from ktir.planning.rules import POINTWISE, VIEWS, rule_of


def _access(op: Operation, value: SSAValue, dims: tuple[str | None, ...]) -> Access:
    shape = shape_of(value.type)
    dims = tuple(None if n == 1 else d for n, d in zip(shape, dims, strict=True))
    return Access(layout_of(op, value), shape, dims)


def _aligned(op: Operation, value: SSAValue, names: list[str]) -> Access:
    """An operand indexed by the trailing output dims (NumPy broadcasting)."""
    rank = len(shape_of(value.type))
    return _access(op, value, tuple(names[len(names) - rank :]))


def _names(rank: int) -> list[str]:
    return [f"d{i}" for i in range(rank)]


def _map(op: Operation, whole: frozenset[str] = frozenset()) -> IterationSpace:
    result = op.results[0]
    names = _names(len(shape_of(result.type)))
    inputs = tuple(_aligned(op, v, names) if is_tensor(v) else None for v in op.operands)
    sizes = dict(zip(names, shape_of(result.type), strict=True))
    return IterationSpace(sizes, (), whole, inputs, _access(op, result, tuple(names)), ComputeUnit.SFU)


def _matmul(op: st.MatmulBase) -> IterationSpace:
    x, y = shape_of(op.x.type), shape_of(op.y.type)
    out = shape_of(op.result.type)
    batch = [f"b{i}" for i in range(len(out) - 2)]
    sizes = dict(zip([*batch, "m", "n"], out, strict=True)) | {"k": x[-1]}
    inputs = (
        _access(op, op.x, (*batch, "m", "k")),
        _access(op, op.y, (*batch[len(batch) - (len(y) - 2) :], "k", "n")),
    )
    return IterationSpace(
        sizes, ("k",), frozenset(), inputs, _access(op, op.result, (*batch, "m", "n")), ComputeUnit.PT
    )


def _attention(op: st.AttentionOp) -> IterationSpace:
    """
    {b0: B, h: H * G, s: S, e: E, l: L, d: D}: `h` walks the query heads, [H, G] flattened, and
    reads key and value head h // G (`Access.repeats`), so the G query heads of a group share
    their key and value tiles. A core takes whole key ranges (`l`) and head sizes (`d`, `e`),
    so whole softmax rows; cores split batch, query heads and queries. When a core's keys and
    values do not fit LX it walks its keys in chunks (`chunkable`) with an online softmax.
    """
    q, k, v = shape_of(op.q.type), shape_of(op.k.type), shape_of(op.v.type)
    group = q[2]
    sizes = {"b0": q[0], "h": q[1] * group, "s": q[3], "e": v[3], "l": k[2], "d": q[4]}
    whole = {"l", "d", "e"}

    def shared(value: SSAValue, inner: str) -> Access:
        access = _access(op, value, ("b0", "h", "l", inner))
        return Access(access.layout, access.shape, access.dims, (1, group, 1, 1))

    inputs = [_access(op, op.q, ("b0", "h", "h", "s", "d")), shared(op.k, "d"), shared(op.v, "e")]
    if op.mask is not None:
        mask = shape_of(op.mask.type)
        padded = (1,) * (5 - len(mask)) + tuple(mask)
        access = _aligned(op, op.mask, ["b0", "h", "h", "s", "l"])
        if padded[1] > 1 and padded[2] == 1:  # one mask per key head: read by its group
            repeats = tuple(group if i == len(mask) - 4 else 1 for i in range(len(mask)))
            access = Access(access.layout, access.shape, access.dims, repeats)
        elif padded[1] == 1 and padded[2] > 1:  # one mask per group member: heads stay whole
            whole.add("h")
        inputs.append(access)
    output = _access(op, op.result, ("b0", "h", "h", "s", "e"))
    return IterationSpace(
        sizes, ("l", "d"), frozenset(whole), tuple(inputs), output, ComputeUnit.PT, chunkable=frozenset({"l"})
    )


def _reduction(op: st.ReductionOp) -> IterationSpace:
    source = shape_of(op.input.type)
    reduced = set(st.ints(op.dims))
    kept = [d for d in range(len(source)) if d not in reduced]
    names = {d: f"d{i}" for i, d in enumerate([*kept, *sorted(reduced)])}
    keepdim = op.keepdim is not None
    out_dims = (
        tuple(names[d] if d in kept else None for d in range(len(source)))
        if keepdim
        else tuple(names[d] for d in kept)
    )
    sizes = {names[d]: source[d] for d in [*kept, *sorted(reduced)]}
    reduction = tuple(names[d] for d in sorted(reduced))
    inputs = (_access(op, op.input, tuple(names[d] for d in range(len(source)))),)
    return IterationSpace(
        sizes, reduction, frozenset(reduction), inputs, _access(op, op.result, out_dims), ComputeUnit.SFU
    )


def _normalizing(op: Operation, dims: list[int]) -> IterationSpace:
    names = _names(len(shape_of(op.results[0].type)))
    return _map(op, frozenset(names[d] for d in dims))


def _view(op: Operation) -> IterationSpace | None:
    source, result = op.operands[0], op.results[0]
    rule = rule_of(op)
    if not copying_view(op, rule, layout_of(op, source), layout_of(op, result)):
        return None  # the result is the input's device bytes seen another way
    in_shape, out_shape = shape_of(source.type), shape_of(result.type)
    names = _names(len(out_shape))
    if isinstance(op, st.PermuteOp):
        perm = st.ints(op.perm)
        dims = [""] * len(perm)
        for out_dim, in_dim in enumerate(perm):
            dims[in_dim] = names[out_dim]
        space = _map(op)
        return IterationSpace(
            space.sizes, (), frozenset(), (_access(op, source, tuple(dims)),), space.output, ComputeUnit.SFU
        )
    if isinstance(op, st.SliceOp):
        return _map(op, frozenset({names[op.dim.value.data]}))
    # reshape / expand: the leading dims both sides share map one to one; the rest regroup
    shared = 0
    while shared < min(len(in_shape), len(out_shape)) and in_shape[shared] == out_shape[shared]:
        shared += 1
    if isinstance(op, st.ExpandOp):
        return _map(op)
    whole = frozenset(names[shared:])
    sizes = dict(zip(names, out_shape, strict=True))
    in_dims = tuple(names[i] if i < shared else None for i in range(len(in_shape)))
    output = _access(op, result, tuple(names))
    return IterationSpace(sizes, (), whole, (_access(op, source, in_dims),), output, ComputeUnit.SFU)


def _pad(op: st.PadOp) -> IterationSpace:
    low, high = st.ints(op.low), st.ints(op.high)
    return _map(op, frozenset(f"d{d}" for d in range(len(low)) if low[d] or high[d]))


_BUILDERS: tuple[tuple[type | tuple[type, ...], Callable[[Any], IterationSpace | None]], ...] = (
    (st.FusedOp, lambda op: fusion.op_space(op).space),
    (st.MatmulBase, _matmul),
    (st.ReductionOp, _reduction),
    (st.AttentionOp, _attention),
    ((st.SoftmaxOp, st.NormOp), lambda op: _normalizing(op, normalized_dims(op))),
    (data.CumsumOp, lambda op: _normalizing(op, [op.dim.value.data])),
    (VIEWS, _view),
    (st.CatOp, lambda op: _map(op, frozenset({f"d{op.dim.value.data}"}))),
    (st.PadOp, _pad),
    ((*POINTWISE, ew.FullOp, st.CopyOp, st.RestickifyOp), _map),
)
"""Op kinds and the iteration-space builder of each, tried in order (the first match wins)."""


def iteration_space(op: Operation) -> IterationSpace | None:
    """
    The iteration space of a graph-level op, or None for an op that is not a kernel (a view
    that moves no data, `ktir.cpu_fallback`, the data-dependent ops the simulator times at
    function level (`TIMED_FUNCTION_LEVEL_OPS`), `func.return`).
    """
    if isinstance(op, (func.ReturnOp, st.CpuFallbackOp, *TIMED_FUNCTION_LEVEL_OPS)):
        return None
    for kinds, build in _BUILDERS:
        if isinstance(op, kinds):
            return build(op)
    raise IterationError(op, f"'{op.name}' has no kernel lowering")


__all__ = ["IterationError", "IterationSpace", "iteration_space", "layout_of"]
