"""
Accessors of the IR state the dialect declares (`ktir.dialects.ktir_core`): build and read the
work division a pass hands on, with located errors for malformed values.

```python
op.attributes[WORK_DIVISION_ATTR] = division_attr({"m": 16, "n": 1, "k": 2})
read_division(op)  # {"m": 16, "n": 1, "k": 2}
```
"""

from __future__ import annotations

from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, i64
from xdsl.ir import Operation

from ktir.dialects.ktir_core import WORK_DIVISION_ATTR
from ktir.ir.diagnostics import op_error


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


__all__ = ["division_attr", "read_division"]
