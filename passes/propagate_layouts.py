"""
`ktir-propagate-layouts`: give every tensor of graph-level ktir a `#ktir.tiled` layout.

The pass decides, it does not move data: it chooses the stick of every value so that the
total restickify cost (host elements moved by relayouts) is minimal under the per-op rules of
`ktir.planning.rules`, writes each value's layout as its type's encoding, and records the plan's
cost on the function:

```mlir
func.func @f(...) attributes {ktir.layout_plan = {cost = 16384 : i64, lower_bound = 16384 : i64,
                                                  search = "exact"}}
```

Operands that the plan reads in another layout keep their own type: `ktir-insert-restickify`
materializes those edges. Arguments keep their encoding, a `{ktir.layout = #ktir.tiled<...>}`
argument attribute, or get the default layout.

Options: `strategy=exact|beam` (exact min-sum variable elimination, falling back to the beam
with a reported lower bound when a table would exceed `max-table-size=200000` entries) and
`beam-width=64`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, ModuleOp, StringAttr, TensorType, i64
from xdsl.ir import Attribute
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from ktir.dialects.ktir.attributes import TiledLayoutAttr
from ktir.dialects.ktir.functions import LAYOUT_PLAN
from ktir.ir.diagnostics import Severity, emit, op_error
from ktir.ir.values import functions_of
from ktir.passes.verify_layouts import check_layouts_in_debug_mode
from ktir.planning.plan import LayoutPlan, PlanError, plan_function

__all__ = ["PropagateLayoutsPass", "functions_of", "plan_attribute", "write_layouts"]


STRATEGIES = ("exact", "beam")


def write_layouts(function: func.FuncOp, plan: LayoutPlan) -> None:
    """Set every planned value's type to carry its layout, and update the signature."""
    for value, layout in plan.layouts.items():
        value_type = cast(TensorType[Attribute], value.type)
        encoded = TensorType(
            value_type.element_type, value_type.get_shape(), TiledLayoutAttr.from_layout(layout)
        )
        if encoded != value_type:
            Rewriter.replace_value_with_new_type(value, encoded)
    function.update_function_type()


def plan_attribute(plan: LayoutPlan) -> DictionaryAttr:
    """The `ktir.layout_plan` dictionary of a plan."""
    return DictionaryAttr(
        {
            "cost": IntegerAttr(int(plan.cost), i64),
            "lower_bound": IntegerAttr(int(plan.lower_bound), i64),
            "search": StringAttr(plan.search),
        }
    )


@dataclass(frozen=True)
class PropagateLayoutsPass(ModulePass):
    """Choose minimum-restickify-cost layouts for every tensor (see the module docstring)."""

    name = "ktir-propagate-layouts"

    strategy: str = "exact"
    beam_width: int = 64
    max_table_size: int = 200_000

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy '{self.strategy}' (expected one of: {', '.join(STRATEGIES)})")
        if self.beam_width < 1:
            raise ValueError(f"beam-width must be positive, not {self.beam_width}")
        if self.max_table_size < 1:
            raise ValueError(f"max-table-size must be positive, not {self.max_table_size}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in functions_of(op):
            try:
                plan = plan_function(function, self.strategy, self.beam_width, self.max_table_size)
            except PlanError as error:
                raise op_error(error.op or function, str(error)) from error
            write_layouts(function, plan)
            function.attributes[LAYOUT_PLAN] = plan_attribute(plan)
            if self.strategy == "exact" and plan.search != "exact":
                emit(
                    function,
                    Severity.REMARK,
                    f"exact layout search too large; beam search found cost {int(plan.cost)}, "
                    f"at most {int(plan.cost - plan.lower_bound)} above the optimum",
                )
        check_layouts_in_debug_mode(op, pending=True)
