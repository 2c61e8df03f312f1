"""
`ktir-divide-work{cores=32 policy=default|cost}`: decide how each kernel's iteration space is
cut over the cores.

Every op that becomes a kernel (`ktir.iteration.iteration_space`) gets a `work_division`
dictionary: iteration dim -> slice count, every dim listed in order (output dims first, then
reduced dims). The math is `ktir.work_division.divide`, the reference's three passes: span
reduction (each core addresses at most 256 MiB), then either the default distribution or,
with `policy=cost`, the reference's matmul cost model; a valid `work_division_hint`
dictionary on the op overrides both.

```mlir
%r = ktir.abs %x {work_division = {d0 = 2 : i64, d1 = 1 : i64}} : tensor<4x64xf16, ...> -> ...
```

Views that only reinterpret bytes, `ktir.cpu_fallback` and `func.return` get nothing. An op
without layouts, a bad hint or a bad core count is a located error.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, ModuleOp, i64
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from ktir.diagnostics import op_error
from ktir.iteration import IterationError, iteration_space
from ktir.layout_plan import functions_of
from ktir.target import SPYRE
from ktir.work_division import HintError, divide

WORK_DIVISION_ATTR = "work_division"
"""Op attribute: iteration dim -> number of slices."""

HINT_ATTR = "work_division_hint"
"""Op attribute a user sets to force a division: iteration dim -> number of slices."""

POLICIES = ("default", "cost")


def division_attr(splits: dict[str, int]) -> DictionaryAttr:
    """`{d0 = 2 : i64, ...}` for a split."""
    return DictionaryAttr({name: IntegerAttr(count, i64) for name, count in splits.items()})


def read_division(op: Operation, name: str = WORK_DIVISION_ATTR) -> dict[str, int] | None:
    """The split an op carries in attribute `name`, in its order; None without one."""
    attr = op.attributes.get(name)
    if attr is None:
        return None
    if not isinstance(attr, DictionaryAttr):
        raise op_error(op, f"'{name}' must be a dictionary of integers, not {attr}")
    splits = {}
    for key, value in attr.data.items():
        if not isinstance(value, IntegerAttr):
            raise op_error(op, f"'{name}' entry '{key}' must be an integer, not {value}")
        splits[key] = value.value.data
    return splits


def divide_op(op: Operation, cores: int, policy: str) -> dict[str, int] | None:
    """The split of one op (None when it is not a kernel); located errors on bad input."""
    try:
        space = iteration_space(op)
    except IterationError as error:
        raise op_error(error.op, str(error)) from error
    if space is None:
        return None
    hint = read_division(op, HINT_ATTR)
    inputs = [a for a in space.inputs if a is not None]
    try:
        return divide(
            space.sizes,
            space.reduction,
            inputs,
            space.output,
            cores,
            whole=space.whole,
            hint=hint,
            policy=policy,
        )
    except HintError as error:
        raise op_error(op, f"invalid {HINT_ATTR}: {error}") from error
    except ValueError as error:
        raise op_error(op, str(error)) from error


@dataclass(frozen=True)
class DivideWorkPass(ModulePass):
    """Write a `work_division` on every kernel op (see the module docstring)."""

    name = "ktir-divide-work"

    cores: int = SPYRE.cores
    policy: str = "default"

    def __post_init__(self) -> None:
        if not 1 <= self.cores <= SPYRE.cores:
            raise ValueError(f"cores must be in 1..{SPYRE.cores}, not {self.cores}")
        if self.policy not in POLICIES:
            raise ValueError(f"unknown policy '{self.policy}' (expected one of: {', '.join(POLICIES)})")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in functions_of(op):
            for inner in function.body.block.ops:
                splits = divide_op(inner, self.cores, self.policy)
                if splits is not None:
                    inner.attributes[WORK_DIVISION_ATTR] = division_attr(splits)
