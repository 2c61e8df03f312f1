"""
`ktir-insert-restickify`: materialize the layout plan as `ktir.restickify` ops.

For every operand whose layout its op cannot read (`ktir.planning.rules`), a
`ktir.restickify` is inserted right before the op, producing the operand in the restickify
target layout (`ktir.layout.sticks.restickified_layout`: the reference's target formula), and the
op reads that instead. Each consumer edge gets its own restickify, so the host elements they
move add up to the plan's cost (`cse` merges identical ones afterwards). The pass is
idempotent: a second run finds every operand readable.

```mlir
%t = ktir.permute %a perm [1, 0] : tensor<128x128xf16, #A> -> tensor<128x128xf16, #T>
%s = ktir.add %t, %x : tensor<128x128xf16, #T>, tensor<128x128xf16, #X> -> tensor<128x128xf16, #X>
// becomes
%r = ktir.restickify %t : tensor<128x128xf16, #T> -> tensor<128x128xf16, #X>
%s = ktir.add %r, %x : ...
```
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern
from xdsl.rewriter import InsertPoint

from ktir.dialects.ktir.attributes import TiledLayoutAttr
from ktir.dialects.ktir.structured import RestickifyOp
from ktir.ir.diagnostics import op_error
from ktir.ir.values import encoding_of, is_tensor, shape_of
from ktir.layout import sticks
from ktir.layout.spyre import SpyreTensorLayout
from ktir.passes.verify_layouts import check_layouts_in_debug_mode
from ktir.planning.legality import LayoutViolation, value_stick
from ktir.planning.rules import RuleError, rule_of


class RestickifyOperands(RewritePattern):
    """
    Before a function-level op, restickify each operand it cannot read as it is (its rule in
    `ktir.planning.rules`); an operand no restickify can fix is a located error.
    """

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op.parent_op(), func.FuncOp):
            return
        try:
            self._rewrite(op, rewriter)
        except (LayoutViolation, RuleError) as error:
            raise op_error(error.op, str(error)) from error

    def _rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        rule = rule_of(op)
        if rule.through is not None or rule.copies:
            return  # views re-index or copy, copies relayout: nothing to insert
        results = [r for r in op.results if is_tensor(r)]
        found = [value_stick(r, op, f"result #{i}") for i, r in enumerate(results)]
        if None in found:
            raise LayoutViolation(
                op, f"result #{found.index(None)} has a split-stick layout, which no op produces"
            )
        needs = rule.needs(tuple(cast(int, s) for s in found))
        for index, operand in enumerate(op.operands):
            need = needs[index]
            if need is None or not is_tensor(operand):
                continue
            stick = value_stick(operand, op, f"operand #{index}")
            if stick is not None and need.satisfied_by(stick):
                continue
            if stick is None or stick == sticks.SPARSE or need.target is None:
                raise LayoutViolation(op, f"operand #{index} cannot be restickified to what the op reads")
            restickify = _restickify(operand, stick, need.target)
            restickify.location = op.location
            rewriter.insert(restickify, InsertPoint.before(op))
            op.operands = (*op.operands[:index], restickify.results[0], *op.operands[index + 1 :])
            rewriter.notify_op_modified(op)


def _restickify(operand: SSAValue, stick: int, target_stick: int) -> RestickifyOp:
    """A `ktir.restickify` of `operand` from `stick` to the reference's target layout on `target_stick`."""
    shape = shape_of(operand.type)
    target = sticks.restickified_layout(
        cast(SpyreTensorLayout, encoding_of(operand)), shape, stick, target_stick
    )
    element = cast(TensorType[Attribute], operand.type).element_type
    return RestickifyOp.create(
        operands=[operand], result_types=[TensorType(element, shape, TiledLayoutAttr.from_layout(target))]
    )


@dataclass(frozen=True)
class InsertRestickifyPass(ModulePass):
    """Insert `ktir.restickify` where an op reads an operand in another layout."""

    name = "ktir-insert-restickify"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(RestickifyOperands(), apply_recursively=False).rewrite_module(op)
        check_layouts_in_debug_mode(op)
