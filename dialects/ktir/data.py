"""
Data-dependent graph-level ops of the `ktir` dialect: what a value decides, not only a shape.

- `ktir.gather_rows` reads the rows of a table that an index tensor names: PyTorch's
  `embedding`, `index_select` along dim 0, and `index` with index tensors on leading dims. On the
  chip it is an indirect DMA: each core reads its share of the indices, then one row per index.
- `ktir.cumsum` is the running sum along one dim (a scan on the SFU).

```mlir
%h = ktir.gather_rows %table[%ids] : tensor<256x64xf16>, tensor<1x24xi64> -> tensor<1x24x64xf16>
%c = ktir.cumsum %x dim 1 : tensor<1x24xi64> -> tensor<1x24xi64>
```
"""

from __future__ import annotations

import math

from xdsl.dialects.builtin import I64, IntegerAttr, IntegerType, TensorType
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from ktir.dialects.ktir.elementwise import (
    checked_shape,
    is_bool,
    require_element_type,
    require_like_input,
    require_shape,
    tensor_of,
)


@irdl_op_definition
class GatherRowsOp(IRDLOperation):
    """
    `result[i..., j...] = table[indices[i...], j...]`: one row of `table` (its dim 0) per
    element of `indices`. The result's shape is `indices.shape + table.shape[1:]`. An index `k`
    in `[-rows, 0)` means `rows + k`, as PyTorch's `index` reads it; an index outside
    `[-rows, rows)` is a run-time error located at the op.

    Example: a (256, 64) embedding table and ids of shape (1, 24) give (1, 24, 64); ids
    `[[3, 7, ...]]` give rows 3, 7, ... of the table.
    """

    name = "ktir.gather_rows"
    table = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$table `[` $indices `]` attr-dict `:` type($table) `,` type($indices) `->` type($result)"
    )

    def verify_(self) -> None:
        table = checked_shape(self.table, "table")
        indices = checked_shape(self.indices, "indices")
        if not table:
            raise VerifyException("the table must have at least one dim (its rows)")
        index_type = tensor_of(self.indices, "indices").element_type
        if not isinstance(index_type, IntegerType) or is_bool(index_type):
            raise VerifyException(f"indices must be integers, not {index_type}")
        require_shape(self.result, (*indices, *table[1:]), "the indices' shape followed by a row's")
        require_element_type(self.result, tensor_of(self.table, "table").element_type, "the table's")

    def parallel_extent(self) -> tuple[str, int]:
        """What the cores may share: the rows it reads, one per index."""
        return "rows", math.prod(checked_shape(self.indices, "indices"))


@irdl_op_definition
class CumsumOp(IRDLOperation):
    """
    The running sum along `dim`: `result[..., k, ...] = sum(input[..., :k+1, ...])`, in the
    input's element type (fp16 and bf16 accumulate in fp32 and round each prefix once, as
    PyTorch does). Example: `[1, 2, 3]` gives `[1, 3, 6]`.
    """

    name = "ktir.cumsum"
    input = operand_def(TensorType)
    dim = prop_def(IntegerAttr[I64])
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input `dim` $dim attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        shape = checked_shape(self.input, "input")
        dim = self.dim.value.data
        if not 0 <= dim < max(len(shape), 1):
            raise VerifyException(f"dim {dim} is out of range for a rank-{len(shape)} input")
        if is_bool(tensor_of(self.input, "input").element_type):
            raise VerifyException("ktir.cumsum is not defined on i1 tensors (convert to an integer first)")
        require_like_input(self)

    @property
    def scan_length(self) -> int:
        """How many elements each running sum covers (1 for a rank-0 input)."""
        shape = checked_shape(self.input, "input")
        return shape[self.dim.value.data] if shape else 1


@irdl_op_definition
class TakeAlongOp(IRDLOperation):
    """
    Elements picked along the last dim: `result[..., j] = source[..., index[..., j]]` (PyTorch's
    `gather` along the last dim, NumPy's `take_along_axis`). `index` has the result's shape; in
    the other dims it may be shorter than `source` (the first rows are used), as PyTorch allows.
    An index in `[-n, 0)` counts from the end; one outside `[-n, n)` is a located run-time error.
    Example: source `[[5, 6, 7]]`, index `[[2, 0]]` give `[[7, 5]]`.
    """

    name = "ktir.take_along"
    source = operand_def(TensorType)
    index = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$source `[` $index `]` attr-dict `:` type($source) `,` type($index) `->` type($result)"

    def verify_(self) -> None:
        source, index = checked_shape(self.source, "source"), checked_shape(self.index, "index")
        if not source or len(index) != len(source):
            raise VerifyException(
                f"index must have the source's rank {len(source)} (at least 1), not {len(index)}"
            )
        if any(i > s for i, s in zip(index[:-1], source[:-1], strict=True)):
            raise VerifyException(
                f"index shape {list(index)} exceeds the source {list(source)} outside the last dim"
            )
        index_type = tensor_of(self.index, "index").element_type
        if not isinstance(index_type, IntegerType) or is_bool(index_type):
            raise VerifyException(f"index must be integers, not {index_type}")
        require_shape(self.result, index, "the index shape")
        require_element_type(self.result, tensor_of(self.source, "source").element_type, "the source's")

    def parallel_extent(self) -> tuple[str, int]:
        """What the cores may share: the rows, each picking from its own source row."""
        return "rows", math.prod(checked_shape(self.index, "index")[:-1])


DATA_OPS: list[type[IRDLOperation]] = [GatherRowsOp, CumsumOp, TakeAlongOp]
"""Every op defined in this file, in documentation order."""


def rows_of(op: GatherRowsOp) -> tuple[int, int]:
    """(rows the op reads, rows the table has): one row per index."""
    return math.prod(checked_shape(op.indices, "indices")), checked_shape(op.table, "table")[0]


__all__ = ["DATA_OPS", "CumsumOp", "GatherRowsOp", "TakeAlongOp", "rows_of"]
