"""
`ktir-fuse{remarks=false target=""}`: group producer-consumer chains of graph ops into `ktir.fused`
kernels whose intermediates never leave the scratchpad (docs/performance.md, "Fusion").

Groups grow backwards from a consumer (the root, the group's one result), in reverse program
order: a producer joins its consumer's group when

1. it is an op a fused kernel can run (`ktir.cores.fusion.FUSABLE`): not a restickify (its
   consumers read another stick layout than it writes), a host fallback, or an expand;
2. every use of its result is inside the group: a value that another kernel reads must reach
   device memory anyway, so its producer stays a kernel of its own;
3. a matmul on a function argument (a weight) keeps its dataflow schedule, which accumulates
   over K in chunks and across cores: it joins only as a matmul of an elementwise epilogue
   (bias, activation, residual add, the SwiGLU product), which runs on each output tile once K
   is summed, and its own operands stay outside (no prologue). Matmuls of one x with results
   of one type share an epilogue (SwiGLU's gate and up: each x chunk is loaded once for both);
4. the group still has one iteration space (`ktir.cores.fusion.fused_space`): the same dims,
   or a reduction of them, with the same sizes along every path;
5. the group's smallest chunk still fits in LX with its intermediates;
6. in the final group, its result varies with every dim the group splits across cores or
   chunks: otherwise each tile along that dim would compute it again (the group is grown
   again without it).

A group with at least two ops that are kernels becomes one `ktir.fused` op at the root's
place. With `remarks=true` every producer left out of its consumer's group is reported as a
`remark` at the producer with the reason.

Example: HF's RMSNorm (`convert, pow, mean, add, rsqrt, mul, convert, mul`) becomes one kernel
reading x and the norm's weight and writing the normalized tensor.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects import func
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from ktir.cores.chunking import smallest_footprint
from ktir.cores.fusion import FUSABLE, FusionError, anchors_of, fused_space
from ktir.cores.iteration import iteration_space
from ktir.dialects.ktir import core
from ktir.dialects.ktir import elementwise as ew
from ktir.dialects.ktir import structured as st
from ktir.hardware.target import Target
from ktir.ir.diagnostics import Severity, emit
from ktir.ir.values import is_tensor
from ktir.passes.function_pass import FunctionPass


def _reads_argument(value: SSAValue) -> bool:
    """Whether `value` is a function argument seen through views (a weight, for a matmul)."""
    while isinstance(value.owner, st.ShapeChangeOp) and iteration_space(value.owner) is None:
        value = value.owner.operands[0]
    return isinstance(value, BlockArgument)


def _weight_matmul(op: Operation) -> bool:
    """A matmul reading a function argument: it keeps its dataflow schedule (epilogues only)."""
    return isinstance(op, st.MatmulBase) and (_reads_argument(op.x) or _reads_argument(op.y))


def _is_kernel(op: Operation) -> bool:
    return iteration_space(op) is not None


@dataclass
class _Grouper:
    """Grows one group from its root and says why a producer stays out."""

    target: Target
    taken: set[Operation]
    position: dict[Operation, int] = field(default_factory=dict)
    """Each op's index in the block, computed once: `Block.get_operation_index` scans the block,
    which made grouping quadratic in the ops (1,357 slices of a positional convolution)."""

    def grow(self, root: Operation) -> tuple[list[Operation], dict[Operation, str]]:
        """
        The group of `root` and why each producer left out is out. A member whose result does
        not vary with a dim the final group splits would be computed again for every tile
        along it: it is left out and the group grown again without it.
        """
        banned: dict[Operation, str] = {}
        while True:
            members, rejected = self._grow(root, banned)
            recomputed = self._recomputed(members)
            if not recomputed:
                return members, rejected | banned
            banned |= recomputed

    def _grow(
        self, root: Operation, banned: dict[Operation, str]
    ) -> tuple[list[Operation], dict[Operation, str]]:
        members = {root}
        rejected: dict[Operation, str] = {}
        changed = True
        while changed:
            changed = False
            for producer in self._producers(members):
                reason = banned.get(producer) or self.reject(producer, members)
                if reason is None:
                    members.add(producer)
                    rejected.pop(producer, None)
                    changed = True
                else:
                    rejected[producer] = reason
        ordered = sorted(members, key=self.position.__getitem__)
        return ordered, {op: why for op, why in rejected.items() if op not in members}

    @staticmethod
    def _recomputed(members: list[Operation]) -> dict[Operation, str]:
        """Members (kernels, not the root) whose result lacks a dim the group splits."""
        if len(members) < 2:
            return {}
        fused = fused_space(members, members[-1].results[0], _inputs(members))
        space = fused.space
        split = {d for d, n in space.sizes.items() if n > 1} - space.whole - set(space.reduction)
        found = {}
        for op in members[:-1]:
            missing = sorted(split - set(fused.dims.get(op.results[0], ())))
            if missing and _is_kernel(op) and not isinstance(op, ew.FullOp):  # a full costs nothing
                found[op] = (
                    f"not fused: its result does not vary with dim {missing[0]}, so every tile along "
                    f"{missing[0]} would compute it again"
                )
        return found

    def _producers(self, members: set[Operation]) -> list[Operation]:
        found = {
            v.owner
            for m in members
            for v in m.operands
            if isinstance(v.owner, Operation) and v.owner not in members and v.owner not in self.taken
        }
        return sorted(found, key=self.position.__getitem__, reverse=True)

    def reject(self, producer: Operation, members: set[Operation]) -> str | None:
        """Why `producer` cannot join the group of `members`, or None if it can."""
        if isinstance(producer, st.RestickifyOp):
            return "not fused: 'ktir.restickify' changes the stick layout between producer and consumer"
        if not isinstance(producer, FUSABLE):
            return f"not fused: '{producer.name}' does not run inside a fused kernel"
        outside = [u.operation for r in producer.results for u in r.uses if u.operation not in members]
        if outside:
            return (
                f"not fused: its result is also read by '{outside[0].name}', a kernel of its own "
                "that needs it in device memory"
            )
        if any(_weight_matmul(u.operation) for r in producer.results for u in r.uses):
            return "not fused: a matmul on a function argument does not take a prologue"
        return self.check(sorted([*members, producer], key=self.position.__getitem__))

    def check(self, ops: list[Operation]) -> str | None:
        """Why `ops` cannot be one kernel (no shared iteration space, or LX overflow)."""
        inputs = _inputs(ops)
        if not all(is_tensor(v) for v in inputs):
            return "not fused: a fused kernel reads tensors only"
        anchors = anchors_of(ops)
        if any(_weight_matmul(op) and op not in anchors for op in ops):
            return (
                "not fused: a matmul on a function argument keeps its dataflow schedule and fuses "
                "only as a matmul of an elementwise epilogue (matmuls sharing one x)"
            )
        try:
            space = fused_space(ops, ops[-1].results[0], inputs).space
        except FusionError as error:
            return f"not fused: {error}"
        need = smallest_footprint(space, self.target)
        if need > self.target.lx_usable_bytes:
            return (
                f"not fused: LX overflow: the fused kernel needs {need:,} bytes of LX per core for "
                f"its smallest chunk, more than the {self.target.lx_usable_bytes:,} usable"
            )
        return None


def _inputs(ops: list[Operation]) -> list[SSAValue]:
    """
    The tensors the group reads from outside, in order of first use; an epilogue group's matmul
    operands first (x, then each y), as its iteration space expects.
    """
    inside = {r for op in ops for r in op.results}
    anchors = anchors_of(ops)
    inputs: list[SSAValue] = [anchors[0].x, *(a.y for a in anchors)] if anchors else []
    for op in ops:
        for value in op.operands:
            if value not in inside and value not in inputs:
                inputs.append(value)
    return inputs


def build_fused(ops: list[Operation]) -> st.FusedOp:
    """Replace `ops` (in program order, the last one the root) by one `ktir.fused` op."""
    root = ops[-1]
    inputs = _inputs(ops)
    body = Block(arg_types=[v.type for v in inputs])
    for arg, value in zip(body.args, inputs, strict=True):
        arg.name_hint = value.name_hint
    mapping: dict[SSAValue, SSAValue] = dict(zip(inputs, body.args, strict=True))
    for op in ops:
        body.add_op(op.clone(value_mapper=mapping))
    body.add_op(core.YieldOp(mapping[root.results[0]]))
    fused = st.FusedOp(inputs, root.results[0].type, Region(body))
    fused.location = root.location  # diagnostics about the kernel point at its result's source
    Rewriter.insert_op(fused, InsertPoint.before(root))
    root.results[0].replace_all_uses_with(fused.result)
    fused.result.name_hint = root.results[0].name_hint
    for op in reversed(ops):
        Rewriter.erase_op(op)
    return fused


def _one_full_per_reader(function: func.FuncOp) -> None:
    """
    Give every reader of a `ktir.full` its own copy: a full reads nothing, so each consumer's
    kernel can make it (as one broadcast value) instead of a kernel writing it to memory.
    Example: one token's rotary tables at position 0 fold to all-ones and all-zeros, read by
    the q and the k rotary kernels.
    """
    for full in [op for op in function.body.block.ops if isinstance(op, ew.FullOp)]:
        for use in list(full.result.uses)[1:]:
            copy = full.clone()
            Rewriter.insert_op(copy, InsertPoint.before(use.operation))
            use.operation.operands[use.index] = copy.result


def fuse_function(function: func.FuncOp, target: Target, remarks: bool = False) -> int:
    """Fuse the chains of `function` (see the module docstring); returns the fused kernels made."""
    _one_full_per_reader(function)
    ops = list(function.body.block.ops)
    grouper = _Grouper(target, set(), {op: i for i, op in enumerate(ops)})
    groups: list[list[Operation]] = []
    for root in reversed(ops):
        if root in grouper.taken or not isinstance(root, FUSABLE) or not _is_kernel(root):
            continue
        if _weight_matmul(root):
            continue
        members, rejected = grouper.grow(root)
        if remarks:
            for producer, reason in sorted(rejected.items(), key=lambda item: grouper.position[item[0]]):
                emit(producer, Severity.REMARK, f"{reason} (consumer: '{root.name}')")
        if sum(_is_kernel(m) for m in members) >= 2:
            grouper.taken.update(members)
            groups.append(members)
    for members in groups:
        build_fused(members)
    return len(groups)


@dataclass(frozen=True)
class FusePass(FunctionPass):
    """Fuse producer-consumer chains into `ktir.fused` kernels (see the module docstring)."""

    name = "ktir-fuse"

    remarks: bool = False
    """Report each producer left out of its consumer's kernel, with the reason."""

    def apply_function(self, function: func.FuncOp, target: Target) -> None:
        fuse_function(function, target, self.remarks)
