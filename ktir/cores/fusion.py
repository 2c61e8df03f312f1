"""
The iteration space of a group of graph ops run as one kernel (`ktir.fused`, `ktir-fuse`).

A fused kernel iterates over the dims of its result. Walking the group from the result back to
its inputs, each op says which iteration dim indexes each dim of its operands:

    elementwise, convert, copy    operands follow the result, trailing-aligned (broadcasting)
    reduction (keepdim or not)    kept dims follow the result; reduced dims are new, whole dims
    softmax, norms                operands follow the result; the normalized dims are whole
    permute                       operand dim perm[j] is result dim j
    reshape adding/dropping 1s    the non-1 dims map in order
    slice, cat, pad               the dim they work along is whole, and new in the operands
    matmul, bmm                   x = (batch, m, k), y = (batch, k', n); k and k' new and whole;
                                  n whole (a core computes whole rows of the product)

Two paths that reach the same tensor must agree: their dims are unified (same size), else the
ops cannot run on one iteration space. Example, HF's RMSNorm on x: (1, 16, 256) fp16:

    %c = convert %x -> f32         dims (-, d1, d2)
    %p = pow %c                    dims (-, d1, d2)
    %m = mean %p dims [2] keepdim  dims (-, d1, -)    and %p's d2 is a new whole dim r0,
    %a = add %m, %eps              dims (-, d1, -)    unified with d2: d2 becomes whole
    %r = rsqrt %a; %y = mul %c, %r ...                result (-, d1, d2): cores split d1 only

`fused_space` answers for a candidate group (ops in program order, one result) or raises a
`FusionError` that says why the group cannot be one kernel; `ktir-fuse` shows it as a remark.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from xdsl.ir import Operation, SSAValue

from ktir.cores.space import IterationError, IterationSpace, layout_of, normalized_dims
from ktir.cores.tiling import Access
from ktir.dialects.ktir import elementwise as ew
from ktir.dialects.ktir import structured as st
from ktir.dialects.ktir.attributes import ComputeUnit
from ktir.ir.liveness import live_bytes
from ktir.ir.values import is_tensor, shape_of
from ktir.layout.sticks import in_sticks

Dims = tuple[str | None, ...]

_FOLLOW_RESULT = (*ew.POINTWISE, st.CopyOp)
"""Ops whose tensor operands are indexed like their result (NumPy broadcasting)."""

FUSABLE = (
    *_FOLLOW_RESULT,
    ew.FullOp,
    st.ReductionOp,
    st.SoftmaxOp,
    st.NormOp,
    st.PermuteOp,
    st.ReshapeOp,
    st.SliceOp,
    st.CatOp,
    st.PadOp,
    st.MatmulBase,
)
"""Graph ops a fused kernel can run."""


class FusionError(ValueError):
    """A group that cannot run as one kernel; the message says why."""


@dataclass
class _DimTable:
    """Iteration dims with union-find: each has a size and may have to stay whole on a core."""

    parent: dict[str, str] = field(default_factory=dict)
    size: dict[str, int] = field(default_factory=dict)
    whole: set[str] = field(default_factory=set)

    def new(self, name: str, size: int, whole: bool) -> str:
        self.parent[name], self.size[name] = name, size
        if whole:
            self.whole.add(name)
        return name

    def find(self, name: str) -> str:
        while self.parent[name] != name:
            self.parent[name] = self.parent[self.parent[name]]
            name = self.parent[name]
        return name

    def unify(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return
        if self.size[ra] != self.size[rb]:
            raise FusionError(f"iteration dims disagree: {self.size[ra]} elements meet {self.size[rb]}")
        keep, drop = sorted((ra, rb), key=_dim_order)
        self.parent[drop] = keep
        if drop in self.whole:
            self.whole.add(keep)

    def make_whole(self, name: str | None) -> None:
        if name is not None:
            self.whole.add(self.find(name))


def _dim_order(name: str) -> tuple[int, int]:
    """Result dims (`d<i>`) before new ones (`r<i>`), then by index: names stay stable."""
    if not name[1:].isdigit():  # an epilogue group's matmul dims: m, n, k
        return (2, "mnk".index(name))
    return (0 if name.startswith("d") else 1 if name.startswith("r") else 2, int(name[1:]))


@dataclass
class _Walk:
    """The backward walk: dims of every tensor the group touches."""

    group: set[Operation]
    anchors: tuple[st.MatmulBase, ...] = ()
    table: _DimTable = field(default_factory=_DimTable)
    dims: dict[SSAValue, Dims] = field(default_factory=dict)
    fresh: int = 0

    def new_dim(self, size: int) -> str | None:
        if size == 1:
            return None
        self.fresh += 1
        return self.table.new(f"r{self.fresh - 1}", size, whole=True)

    def assign(self, value: SSAValue, dims: Dims) -> None:
        shape = shape_of(value.type)
        dims = tuple(None if n == 1 else d for n, d in zip(shape, dims, strict=True))
        known = self.dims.get(value)
        if known is None:
            self.dims[value] = dims
            return
        for a, b in zip(known, dims, strict=True):
            if (a is None) != (b is None):
                raise FusionError("iteration dims disagree on a broadcast dim")
            if a is not None and b is not None:
                self.table.unify(a, b)

    def operand_dims(self, op: Operation, out: Dims) -> list[Dims | None]:
        """Dims of each operand of `op` given its result's (None: not a tensor)."""
        rule = _RULES.get(type(op)) or next((r for base, r in _BASE_RULES if isinstance(op, base)), None)
        if rule is None:
            raise FusionError(f"'{op.name}' cannot run inside a fused kernel")
        return rule(self, op, out)


def _aligned(value: SSAValue, out: Dims) -> Dims:
    rank = len(shape_of(value.type))
    return out[len(out) - rank :] if rank else ()


def _follow(walk: _Walk, op: Operation, out: Dims) -> list[Dims | None]:
    return [_aligned(v, out) if is_tensor(v) else None for v in op.operands]


def _reduction(walk: _Walk, op: st.ReductionOp, out: Dims) -> list[Dims | None]:
    source = shape_of(op.input.type)
    reduced = set(st.ints(op.dims))
    kept = iter(out) if op.keepdim is None else None
    dims: list[str | None] = []
    for d, size in enumerate(source):
        if d in reduced:
            dims.append(walk.new_dim(size))
        else:
            dims.append(next(kept) if kept is not None else out[d])
    return [tuple(dims)]


def _normalizing(walk: _Walk, op: st.SoftmaxOp | st.NormOp, out: Dims) -> list[Dims | None]:
    for d in normalized_dims(op):
        walk.table.make_whole(out[d])
    return _follow(walk, op, out)


def _permute(walk: _Walk, op: st.PermuteOp, out: Dims) -> list[Dims | None]:
    dims: list[str | None] = [None] * len(out)
    for j, d in enumerate(st.ints(op.perm)):
        dims[d] = out[j]
    return [tuple(dims)]


def _reshape(walk: _Walk, op: st.ReshapeOp, out: Dims) -> list[Dims | None]:
    source, result = shape_of(op.input.type), shape_of(op.result.type)
    if [n for n in source if n != 1] != [n for n in result if n != 1]:
        raise FusionError("'ktir.reshape' regroups dims (only adding or dropping size-1 dims fuses)")
    kept = iter(d for d, n in zip(out, result, strict=True) if n != 1)
    return [tuple(next(kept) if n != 1 else None for n in source)]


def _along(walk: _Walk, op: Operation, out: Dims, axes: Sequence[int]) -> list[Dims | None]:
    """Slice, cat and pad: `axes` stay whole, and each operand has its own size along them."""
    result: list[Dims | None] = []
    for d in axes:
        walk.table.make_whole(out[d])
    for value in op.operands:
        if not is_tensor(value):
            result.append(None)
            continue
        shape = shape_of(value.type)
        result.append(tuple(walk.new_dim(shape[d]) if d in axes else out[d] for d in range(len(out))))
    return result


def _slice(walk: _Walk, op: st.SliceOp, out: Dims) -> list[Dims | None]:
    return _along(walk, op, out, [op.dim.value.data])


def _cat(walk: _Walk, op: st.CatOp, out: Dims) -> list[Dims | None]:
    return _along(walk, op, out, [op.dim.value.data])


def _pad(walk: _Walk, op: st.PadOp, out: Dims) -> list[Dims | None]:
    low, high = st.ints(op.low), st.ints(op.high)
    return _along(walk, op, out, [d for d in range(len(low)) if low[d] or high[d]])


def _matmul(walk: _Walk, op: st.MatmulBase, out: Dims) -> list[Dims | None]:
    x, y = shape_of(op.x.type), shape_of(op.y.type)
    *batch, m, n = out
    if op in walk.anchors:  # K accumulates (chunked, split over cores); x and each y share it
        k = "k" if "k" in walk.table.size else walk.table.new("k", x[-1], whole=False)
        return [(*batch[len(batch) - (len(x) - 2) :], m, k), (*batch[len(batch) - (len(y) - 2) :], k, n)]
    walk.table.make_whole(n)
    k_x, k_y = walk.new_dim(x[-1]), walk.new_dim(y[-2])
    return [(*batch[len(batch) - (len(x) - 2) :], m, k_x), (*batch[len(batch) - (len(y) - 2) :], k_y, n)]


def _full(walk: _Walk, op: Operation, out: Dims) -> list[Dims | None]:
    # A fused kernel holds one value of a `full`, which only elementwise consumers broadcast.
    if not all(isinstance(u.operation, _FOLLOW_RESULT) for u in op.results[0].uses):
        raise FusionError("'ktir.full' fuses only into elementwise consumers")
    return []


_Rule = Callable[[_Walk, Any, Dims], list[Dims | None]]
"""How a rule reads the dims of an op's operands: each takes the ops of its key's type."""

_RULES: dict[type[Operation], _Rule] = {
    st.PermuteOp: _permute,
    st.ReshapeOp: _reshape,
    st.SliceOp: _slice,
    st.CatOp: _cat,
    st.PadOp: _pad,
    ew.FullOp: _full,
    st.SoftmaxOp: _normalizing,
}
_BASE_RULES: tuple[tuple[type[Operation] | tuple[type[Operation], ...], _Rule], ...] = (
    (_FOLLOW_RESULT, _follow),
    (st.ReductionOp, _reduction),
    (st.NormOp, _normalizing),
    (st.MatmulBase, _matmul),
)


@dataclass(frozen=True)
class FusedSpace:
    """A fused group's iteration space, and the dims of every tensor inside it."""

    space: IterationSpace
    dims: dict[SSAValue, Dims]


def anchors_of(ops: Sequence[Operation]) -> tuple[st.MatmulBase, ...]:
    """
    The matmuls a group is the epilogue of, or (): the group's matmuls, all reading one x and
    each its own y from outside the group, with results of one type, and every other op
    elementwise. Such a group keeps the matmuls' own iteration space (`b<i>, m, n, k`, K a
    reduction) and schedule: each K chunk of x feeds every product (x is loaded once), and the
    other ops run on each output tile once K is summed. Example: SwiGLU's
    `silu(x @ W_gate) * (x @ W_up)` is two products and a two-op epilogue.
    """
    matmuls = tuple(op for op in ops if isinstance(op, st.MatmulBase))
    if not matmuls:
        return ()
    inside = {r for op in ops for r in op.results}
    x = matmuls[0].x
    ys = [m.y for m in matmuls]
    if x in inside or any(y in inside or y is x for y in ys) or len(set(ys)) != len(ys):
        return ()
    if any(m.x is not x or m.result.type != matmuls[0].result.type for m in matmuls):
        return ()
    if any(v is x or v in ys for op in ops if op not in matmuls for v in op.operands):
        return ()  # the epilogue reads output tiles only
    if not all(isinstance(op, (*_FOLLOW_RESULT, ew.FullOp)) for op in ops if op not in matmuls):
        return ()
    return matmuls


def fused_space(ops: Sequence[Operation], result: SSAValue, inputs: Sequence[SSAValue]) -> FusedSpace:
    """
    The iteration space of `ops` (in program order) computing `result` from `inputs` (the
    tensors the group reads from outside). Raises `FusionError` when the ops do not share one.
    An epilogue group (`anchors_of`) must list the matmuls' x and then their y first among
    its inputs.
    """
    walk = _Walk(set(ops), anchors_of(ops))
    names = tuple(walk.table.new(f"d{i}", n, whole=False) for i, n in enumerate(shape_of(result.type)))
    walk.assign(result, names)
    for op in reversed(ops):
        out = walk.dims.get(op.results[0])
        if out is None:
            raise FusionError(f"the result of '{op.name}' is not used inside the group")
        for value, dims in zip(op.operands, walk.operand_dims(op, out), strict=True):
            if dims is not None:
                walk.assign(value, dims)
    return _space(walk, ops, result, inputs)


def _matmul_names(walk: _Walk) -> dict[str, str]:
    """An epilogue group's dims renamed as its matmuls': `b<i>`, `m`, `n` (and `k`)."""
    if not walk.anchors:
        return {}
    out = walk.dims[walk.anchors[0].result]
    names = [*(f"b{i}" for i in range(len(out) - 2)), "m", "n"]
    return {walk.table.find(d): name for d, name in zip(out, names, strict=True) if d is not None}


def _space(walk: _Walk, ops: Sequence[Operation], result: SSAValue, inputs: Sequence[SSAValue]) -> FusedSpace:
    table = walk.table
    rename = _matmul_names(walk)

    def name(d: str) -> str:
        root = table.find(d)
        return rename.get(root, root)

    dims = {v: tuple(None if d is None else name(d) for d in ds) for v, ds in walk.dims.items()}
    for ds in dims.values():
        named = [d for d in ds if d is not None]
        if len(set(named)) != len(named):
            raise FusionError("one tensor would be indexed twice by the same dim")
    roots = {d for ds in walk.dims.values() for d in ds if d is not None}
    sizes = {name(d): table.size[table.find(d)] for d in sorted(roots, key=_dim_order)}
    whole = frozenset(name(d) for d in roots if table.find(d) in table.whole)
    reduction: tuple[str, ...] = ()
    if walk.anchors:  # the matmuls' dims in their own order, size-1 ones included
        anchor = walk.anchors[0]
        shape = shape_of(anchor.result.type)
        names = [*(f"b{i}" for i in range(len(shape) - 2)), "m", "n"]
        sizes = dict(zip(names, shape, strict=True)) | {"k": shape_of(anchor.x.type)[-1]}
        reduction = ("k",)
    split = {d for d, n in sizes.items() if n > 1} - whole - set(reduction)
    uncovered = sorted(split - set(dims[result]), key=_dim_order)
    if uncovered:
        raise FusionError(f"the result does not hold dim {uncovered[0]}: cores would write it twice")

    def access(value: SSAValue) -> Access:
        try:
            return Access(layout_of(ops[-1], value), shape_of(value.type), dims[value])
        except IterationError as error:
            raise FusionError(str(error)) from error

    internal = [op.results[0] for op in ops if op.results[0] is not result]
    position = {op: i for i, op in enumerate(ops)}
    live = tuple(
        (position[v.owner], max(position[u.operation] for u in v.uses if u.operation in position))
        for v in internal
    )
    unit = ComputeUnit.PT if any(isinstance(op, st.MatmulBase) for op in ops) else ComputeUnit.SFU
    space = IterationSpace(
        sizes,
        reduction,
        whole,
        tuple(access(v) for v in inputs),
        access(result),
        unit,
        scratch=tuple(access(v) for v in internal),
        scratch_live=live,
        products=max(len(walk.anchors), 1),
    )
    return FusedSpace(space, dims)


def op_space(op: st.FusedOp) -> FusedSpace:
    """
    The iteration space of a `ktir.fused` op (its body's arguments have the inputs' types). A
    matmul epilogue must take x, then each matmul's y in program order, as its first operands
    (as `ktir-fuse` writes it): its kernel feeds product p from operand p; an `IterationError`
    otherwise.
    """
    body = op.body.block
    assert body.last_op is not None
    anchors = anchors_of(op.members)
    expected = [anchors[0].x, *(a.y for a in anchors)] if anchors else []
    if list(body.args[: len(expected)]) != expected:
        raise IterationError(
            op,
            "a matmul epilogue's 'ktir.fused' takes x, then the y of each matmul in program order, "
            "as its first operands",
        )
    return fused_space(op.members, body.last_op.operands[0], list(body.args))


def scratch_bytes(space: IterationSpace, cuts: dict[str, int], stick_bytes: int) -> int:
    """
    LX bytes per core for a fused kernel's intermediates under `cuts` (splits times chunks per
    dim), each tile in whole sticks of `stick_bytes` (`in_sticks`): the most that are live at once, an
    intermediate being live from the op that makes it to its last reader. Intermediates live
    at the same time never share bytes. Example: in `exp -> neg -> abs` the exp and neg tiles
    are live together while neg runs, and exp's is free when abs runs: two tiles, not three.
    """
    sizes = []
    for access in space.scratch:
        extent = [1 if d is None else -(-space.sizes[d] // cuts.get(d, 1)) for d in access.dims]
        element_bytes = access.layout.device_dtype.element_bytes
        sizes.append(in_sticks(extent, element_bytes, stick_bytes) * element_bytes)
    spans = space.scratch_live or tuple((0, 0) for _ in sizes)  # no spans: all live at once
    lifetimes = [(first, last, n) for n, (first, last) in zip(sizes, spans, strict=True)]
    count = max((last for _, last in spans), default=-1) + 1
    return int(live_bytes(lifetimes, count).max(initial=0))


__all__ = [
    "FUSABLE",
    "FusedSpace",
    "FusionError",
    "anchors_of",
    "fused_space",
    "op_space",
    "scratch_bytes",
]
