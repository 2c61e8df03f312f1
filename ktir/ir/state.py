"""
Accessors of the IR state the dialect declares (`ktir.dialects.ktir.core.STATE_ATTRIBUTES`):
build, write and read what one pass hands on to a later one, with located errors for values of
the wrong kind.

```python
set_division(op, {"m": 16, "n": 1, "k": 2})  # {ktir.work_division = {m = 16 : i64, ...}}
read_division(op)  # {"m": 16, "n": 1, "k": 2}
set_core_order(op, ["n", "m"])  # {ktir.core_order = ["n", "m"]}
read_core_order(op)  # ("n", "m")
set_lx_placement(op, address=4096, size=8192)  # {ktir.lx_address = 4096 : i64, ktir.lx_bytes = 8192 : i64}
read_lx_placement(op)  # (4096, 8192)
set_kernel_plan(op, {"m": 2, "k": 4}, {"in0": 0, "in1": 8192, "acc": 16384}, prefetch=[1])
read_chunk_plan(op)  # ({"m": 2, "k": 4}, False): the cuts and whether x is kept whole
read_lx_buffers(op)  # {"in0": 0, "in1": 8192, "acc": 16384}
read_prefetch(op)  # frozenset({1})
```
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypeVar

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntegerAttr, StringAttr, UnitAttr, i64
from xdsl.ir import Operation, SSAValue

from ktir.dialects.ktir.core import (
    CHUNK_PLAN_ATTR,
    CORE_ORDER_ATTR,
    LX_ADDRESS_ATTR,
    LX_BUFFERS_ATTR,
    LX_BYTES_ATTR,
    LX_HANDOFF_ATTR,
    PREFETCH_ATTR,
    WORK_DIVISION_ATTR,
    KernelOp,
)
from ktir.dialects.ktir.functions import UPDATED_BY_ARG
from ktir.dialects.ktir.kernel_plan import ChunkPlanAttr, LxBuffersAttr, PrefetchAttr
from ktir.ir.diagnostics import op_error


def division_attr(splits: dict[str, int]) -> DictionaryAttr:
    """`{d0 = 2 : i64, ...}` for a split."""
    return DictionaryAttr({name: IntegerAttr(count, i64) for name, count in splits.items()})


def set_division(op: Operation, splits: dict[str, int]) -> None:
    """Record the work division `splits` on `op` (`ktir.work_division`)."""
    op.attributes[WORK_DIVISION_ATTR] = division_attr(splits)


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


def set_core_order(op: Operation, dims: Sequence[str]) -> None:
    """Record the order in which `op`'s cores take their slices (`ktir.core_order`), fastest first."""
    op.attributes[CORE_ORDER_ATTR] = ArrayAttr([StringAttr(d) for d in dims])


def read_core_order(op: Operation) -> tuple[str, ...]:
    """
    The iteration dims of `op`'s recorded core order, fastest first; () without one (the
    default order). A located error when it is not an array of distinct dim names of its division.
    """
    attr = op.attributes.get(CORE_ORDER_ATTR)
    if attr is None:
        return ()
    names = [a.data for a in attr.data if isinstance(a, StringAttr)] if isinstance(attr, ArrayAttr) else []
    # a graph op's division is an attribute; a kernel records the one it was lowered with
    division = op.work_division.data if isinstance(op, KernelOp) else read_division(op) or {}
    if not isinstance(attr, ArrayAttr) or len(names) != len(attr.data) or sorted(names) != sorted(division):
        raise op_error(op, f"'{CORE_ORDER_ATTR}' must list each dim of its work division once, not {attr}")
    return tuple(names)


def clear_handoff(op: Operation) -> None:
    """Drop `op`'s recorded core order and hand-off, if any (`ktir-divide-work` decides anew)."""
    op.attributes.pop(CORE_ORDER_ATTR, None)
    op.attributes.pop(LX_HANDOFF_ATTR, None)


def set_lx_handoff(op: Operation) -> None:
    """Mark `op`'s result as handed off to its consumer in LX (`ktir.lx_handoff`)."""
    op.attributes[LX_HANDOFF_ATTR] = UnitAttr()


def handed_off(op: Operation) -> bool:
    """Whether `op`'s result is handed off to its consumer in LX (`ktir.lx_handoff`)."""
    attr = op.attributes.get(LX_HANDOFF_ATTR)
    if attr is not None and not isinstance(attr, UnitAttr):
        raise op_error(op, f"'{LX_HANDOFF_ATTR}' must be a unit attribute, not {attr}")
    return attr is not None


def set_lx_placement(op: Operation, address: int, size: int) -> None:
    """Keep `op`'s result resident in LX at byte `address`, `size` bytes per core."""
    op.attributes[LX_ADDRESS_ATTR] = IntegerAttr(address, i64)
    op.attributes[LX_BYTES_ATTR] = IntegerAttr(size, i64)


def clear_lx_placement(op: Operation) -> None:
    """Drop a previous LX placement of `op`'s result, if any."""
    op.attributes.pop(LX_ADDRESS_ATTR, None)
    op.attributes.pop(LX_BYTES_ATTR, None)


def read_lx_placement(op: Operation) -> tuple[int, int] | None:
    """(address, bytes per core) where `op`'s result stays in LX; None when it goes to memory."""
    if LX_ADDRESS_ATTR not in op.attributes:
        return None
    values = []
    for name in (LX_ADDRESS_ATTR, LX_BYTES_ATTR):
        attr = op.attributes.get(name)
        if not isinstance(attr, IntegerAttr) or attr.value.data < 0:
            raise op_error(op, f"'{name}' must be a non-negative integer, not {attr}")
        values.append(attr.value.data)
    return values[0], values[1]


def resident_placement(value: SSAValue) -> tuple[int, int] | None:
    """(address, bytes per core) of a value the scratchpad plan keeps in LX; None otherwise."""
    owner = value.owner
    return read_lx_placement(owner) if isinstance(owner, Operation) else None


def set_kernel_plan(
    op: Operation,
    cuts: dict[str, int],
    addresses: dict[str, int],
    whole_x: bool = False,
    prefetch: Iterable[int] = (),
) -> None:
    """
    Record `op`'s kernel plan (`ktir-plan-kernels`): its chunks per dim, whether a matmul keeps
    x whole in LX, its staging buffers' addresses and its prefetched inputs (none: no attribute).
    """
    op.attributes[CHUNK_PLAN_ATTR] = ChunkPlanAttr(cuts, whole_x)
    op.attributes[LX_BUFFERS_ATTR] = LxBuffersAttr(addresses)
    op.attributes.pop(PREFETCH_ATTR, None)
    if chosen := sorted(prefetch):
        op.attributes[PREFETCH_ATTR] = PrefetchAttr(chosen)


def clear_kernel_plan(op: Operation) -> None:
    """Drop `op`'s recorded kernel plan, if any (core-level IR does not carry it)."""
    for name in (CHUNK_PLAN_ATTR, LX_BUFFERS_ATTR, PREFETCH_ATTR):
        op.attributes.pop(name, None)


_Plan = TypeVar("_Plan", ChunkPlanAttr, LxBuffersAttr, PrefetchAttr)


def _plan_attr(op: Operation, name: str, kind: type[_Plan]) -> _Plan | None:
    """`op`'s attribute `name`, None without one; a located error when it is not a `kind`."""
    attr = op.attributes.get(name)
    if attr is not None and not isinstance(attr, kind):
        raise op_error(op, f"'{name}' must be a #{kind.name}, not {attr}")
    return attr


def read_chunk_plan(op: Operation) -> tuple[dict[str, int], bool] | None:
    """`op`'s recorded chunks per dim and whether a matmul keeps x whole; None without a plan."""
    attr = _plan_attr(op, CHUNK_PLAN_ATTR, ChunkPlanAttr)
    return None if attr is None else (attr.cuts, attr.keeps_whole_x)


def read_lx_buffers(op: Operation) -> dict[str, int] | None:
    """`op`'s recorded staging buffer addresses by role; None without them."""
    attr = _plan_attr(op, LX_BUFFERS_ATTR, LxBuffersAttr)
    return None if attr is None else attr.by_role


def read_prefetch(op: Operation) -> frozenset[int]:
    """The tensor inputs of `op` whose first load is a prefetch (none without the attribute)."""
    attr = _plan_attr(op, PREFETCH_ATTR, PrefetchAttr)
    return frozenset() if attr is None else attr.indices


__all__ = [
    "clear_handoff",
    "clear_kernel_plan",
    "clear_lx_placement",
    "division_attr",
    "handed_off",
    "read_chunk_plan",
    "read_core_order",
    "read_division",
    "read_lx_buffers",
    "read_lx_placement",
    "read_prefetch",
    "resident_placement",
    "set_core_order",
    "set_division",
    "set_kernel_plan",
    "set_lx_handoff",
    "set_lx_placement",
]


def updated_arguments(function: func.FuncOp) -> dict[int, int]:
    """
    Argument index -> index of the result holding its new value, for the model state a call
    updates in place (`ktir.updated_by`, `ktir.dialects.ktir.functions.UPDATED_BY_ARG`).
    """
    found = {}
    attributes = function.arg_attrs.data if function.arg_attrs is not None else ()
    for index, entry in enumerate(attributes):
        if isinstance(result := entry.data.get(UPDATED_BY_ARG), IntegerAttr):
            found[index] = result.value.data
    return found
