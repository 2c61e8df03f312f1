"""
Generic helpers for reading ktir IR: a module's functions, a value's tensor type, element count,
device data format and `#ktir.tiled` layout. Every layer above the dialect reads IR through
these (the planner, the core executor, the simulator, the passes).

```python
for function in functions_of(module):
    for arg in function.args:
        layout = encoding_of(arg)  # a SpyreTensorLayout, or None before layout propagation
```
"""

from __future__ import annotations

import functools
import math
from typing import Any, cast

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from ktir.dialects.ktir.attributes import TiledLayoutAttr
from ktir.ir.diagnostics import ExecutionError
from ktir.layout.dtypes import ELEMENT_TYPE_TO_DEVICE_DTYPE, numpy_dtype
from ktir.layout.spyre import SpyreTensorLayout


def functions_of(module: Operation) -> list[func.FuncOp]:
    """The function definitions (not declarations) of a module, in order."""
    return [op for op in module.walk() if isinstance(op, func.FuncOp) and op.body.blocks]


def position_in_block(op: Operation) -> int:
    """The index of `op` in its block (program order within a function body)."""
    block = op.parent_block()
    assert block is not None
    return block.get_operation_index(op)


def shape_of(value: SSAValue | Attribute) -> tuple[int, ...]:
    """The static shape of a tensor value or tensor type: `tensor<4x64xf16>` -> (4, 64)."""
    value_type = value.type if isinstance(value, SSAValue) else value
    return tuple(cast(TensorType[Attribute], value_type).get_shape())


def element_type_of(value: SSAValue | Attribute) -> Attribute:
    """
    The element type of a tensor or memref value or type (`tensor<4x64xf16>` -> f16, an LX
    buffer's `memref<...xf16>` -> f16); a scalar's own type (`index` -> `index`).
    """
    value_type = value.type if isinstance(value, SSAValue) else value
    return value_type.element_type if isinstance(value_type, TensorType | MemRefType) else value_type


def is_tensor(value: SSAValue) -> bool:
    """Whether `value` is a ranked tensor (the values that get layouts)."""
    return isinstance(value.type, TensorType)


def numel(value: SSAValue) -> int:
    """Host element count of a tensor value."""
    return math.prod(cast(TensorType[Attribute], value.type).get_shape())


def device_dtype(value_type: Attribute) -> object:
    """The Spyre data format of a tensor type's element type."""
    return ELEMENT_TYPE_TO_DEVICE_DTYPE[str(cast(TensorType[Attribute], value_type).element_type)]


def encoding_of(value: SSAValue) -> SpyreTensorLayout | None:
    """The `#ktir.tiled` layout a value's type carries, if any."""
    return layout_of_type(value.type)


def layout_of_type(value_type: Attribute) -> SpyreTensorLayout | None:
    """The `#ktir.tiled` layout a tensor type carries, if any."""
    tensor = cast(TensorType[Attribute], value_type)
    if isinstance(tensor.encoding, TiledLayoutAttr):
        return _layout_of(tensor.encoding, tensor.element_type)
    return None


@functools.lru_cache(maxsize=4096)
def _layout_of(encoding: TiledLayoutAttr, element_type: Attribute) -> SpyreTensorLayout:
    # Attributes are immutable and hashable; decoding one is the costly part of reading IR.
    return encoding.layout_for(element_type)


def tensor_layout(value_type: Attribute) -> tuple[SpyreTensorLayout, tuple[int, ...], np.dtype[Any]]:
    """
    The layout, host shape and NumPy storage type of a tensor with a `#ktir.tiled` encoding;
    `ExecutionError` for one without (IR not yet through layout propagation).
    """
    tensor = cast(TensorType[Attribute], value_type)
    layout = layout_of_type(tensor)
    if layout is None:
        raise ExecutionError(f"tensor {tensor} has no layout; run the pipeline to ktir-lower-to-cores first")
    return layout, tuple(tensor.get_shape()), numpy_dtype(tensor.element_type)


__all__ = [
    "device_dtype",
    "element_type_of",
    "encoding_of",
    "functions_of",
    "is_tensor",
    "layout_of_type",
    "numel",
    "shape_of",
    "tensor_layout",
]
