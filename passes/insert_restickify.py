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
from xdsl.ir import Attribute, Block, Operation
from xdsl.passes import ModulePass

from ktir.dialects.ktir import TiledLayoutAttr
from ktir.dialects.ktir_structured import RestickifyOp
from ktir.ir.diagnostics import op_error
from ktir.ir.values import encoding_of, functions_of, is_tensor, shape_of
from ktir.layout import sticks
from ktir.layout.tiled import SpyreTensorLayout
from ktir.passes.verify_layouts import check_layouts_in_debug_mode
from ktir.planning.legality import LayoutViolation, value_stick
from ktir.planning.rules import RuleError, rule_of


def insert_restickifies(function: func.FuncOp) -> None:
    """Insert the restickifies `function` needs (what they move: `layout_plan.relayout_elements`)."""
    for op in list(function.body.block.ops):
        _fix_operands(op)


def _fix_operands(op: Operation) -> None:
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
        shape = shape_of(operand.type)
        target = sticks.restickified_layout(
            cast(SpyreTensorLayout, encoding_of(operand)), shape, stick, need.target
        )
        element = cast(TensorType[Attribute], operand.type).element_type
        restickify = RestickifyOp.create(
            operands=[operand], result_types=[TensorType(element, shape, TiledLayoutAttr.from_layout(target))]
        )
        restickify.location = op.location
        cast(Block, op.parent_block()).insert_op_before(restickify, op)
        op.operands = (*op.operands[:index], restickify.results[0], *op.operands[index + 1 :])


@dataclass(frozen=True)
class InsertRestickifyPass(ModulePass):
    """Insert `ktir.restickify` where an op reads an operand in another layout."""

    name = "ktir-insert-restickify"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in functions_of(op):
            try:
                insert_restickifies(function)
            except (LayoutViolation, RuleError) as error:
                raise op_error(error.op, str(error)) from error
        check_layouts_in_debug_mode(op)
