"""
Graph-level ops of mixture-of-experts routing in the `ktir` dialect: choosing experts
(`ktir.topk`), grouping tokens by expert (`ktir.sort`, `ktir.histc`, `ktir.scatter_rows`) and the
per-expert matmuls over the grouped rows (`ktir.grouped_matmul`). They are how Hugging Face's
MoE layers export (`topk`, `sort`, `histc`, `index_put` and transformers' `grouped_mm`), and each
is usable on its own.

```mlir
%w, %e = ktir.topk %probs k 2 : tensor<16x8xf16> -> tensor<16x2xf16>, tensor<16x2xi64>
%v, %p = ktir.sort %ids : tensor<32xi64> -> tensor<32xi64>, tensor<32xi64>
%n = ktir.histc %ids bins 8 min 0.0 max 7.0 : tensor<32xf32> -> tensor<8xf32>
%r = ktir.scatter_rows %values into %dest[%p]
    : tensor<32xi64>, tensor<32xi64>, tensor<32xi64> -> tensor<32xi64>
%y = ktir.grouped_matmul %x, %experts, %offsets
    : tensor<32x64xf16>, tensor<8x64x256xf16>, tensor<8xi64> -> tensor<32x256xf16>
```
"""

from __future__ import annotations

import math

from xdsl.dialects.builtin import I64, Float64Type, FloatAttr, IntegerAttr, IntegerType, TensorType, UnitAttr
from xdsl.ir import Attribute
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from ktir.dialects.ktir.elementwise import (
    checked_shape,
    is_bool,
    is_float,
    require_element_type,
    require_shape,
    tensor_of,
)


def _require_integer(value_type: Attribute, what: str) -> None:
    if not isinstance(value_type, IntegerType) or is_bool(value_type):
        raise VerifyException(f"{what} must be integers, not {value_type}")


@irdl_op_definition
class TopkOp(IRDLOperation):
    """
    The `k` largest elements along the last dim, largest first, and their indices (PyTorch's
    `topk(x, k)` with `largest=True, sorted=True`; equal values keep their order, lower index
    first). Example: `[0.1, 0.7, 0.2]` with k 2 gives values `[0.7, 0.2]`, indices `[1, 2]`.
    """

    name = "ktir.topk"
    input = operand_def(TensorType)
    k = prop_def(IntegerAttr[I64])
    values = result_def(TensorType)
    indices = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input `k` $k attr-dict `:` type($input) `->` type($values) `,` type($indices)"

    def verify_(self) -> None:
        shape = checked_shape(self.input, "input")
        k = self.k.value.data
        if not shape:
            raise VerifyException("topk needs a tensor of rank 1 or more")
        if not 1 <= k <= shape[-1]:
            raise VerifyException(f"k {k} must be in 1..{shape[-1]} (the last dim)")
        picked = (*shape[:-1], k)
        require_shape(self.values, picked, "the input's with k last")
        require_shape(self.indices, picked, "the input's with k last")
        require_element_type(self.values, tensor_of(self.input, "input").element_type, "the input's")
        _require_integer(tensor_of(self.indices, "indices").element_type, "indices")

    def parallel_extent(self) -> tuple[str, int]:
        """What the cores may share: the rows, each chosen from on its own."""
        return "rows", _leading(self)


def _leading(op: IRDLOperation) -> int:
    """The rows of an op along its last dim: the product of the other dims."""
    return math.prod(checked_shape(op.operands[0], "input")[:-1])


@irdl_op_definition
class SortOp(IRDLOperation):
    """
    The elements along the last dim in ascending order, and where each came from (PyTorch's
    `sort(x)`; equal values keep their order). Example: `[3, 1, 3, 0]` gives `[0, 1, 3, 3]` and
    indices `[3, 1, 0, 2]`.
    """

    name = "ktir.sort"
    input = operand_def(TensorType)
    values = result_def(TensorType)
    indices = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($values) `,` type($indices)"

    def verify_(self) -> None:
        shape = checked_shape(self.input, "input")
        if not shape:
            raise VerifyException("sort needs a tensor of rank 1 or more")
        require_shape(self.values, shape, "the input shape")
        require_shape(self.indices, shape, "the input shape")
        require_element_type(self.values, tensor_of(self.input, "input").element_type, "the input's")
        _require_integer(tensor_of(self.indices, "indices").element_type, "indices")

    def parallel_extent(self) -> tuple[str, int]:
        """What the cores may share: the rows, each sorted on its own."""
        return "rows", _leading(self)


@irdl_op_definition
class HistcOp(IRDLOperation):
    """
    Counts of the input's elements in `bins` equal bins over `[min, max]` (PyTorch's `histc`:
    the last bin includes `max`; elements outside are not counted). Example: `[0, 1, 1, 3]` with
    4 bins over [0, 3] gives `[1, 2, 0, 1]`.
    """

    name = "ktir.histc"
    input = operand_def(TensorType)
    bins = prop_def(IntegerAttr[I64])
    min = prop_def(FloatAttr[Float64Type])
    max = prop_def(FloatAttr[Float64Type])
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `bins` $bins `min` $min `max` $max attr-dict `:` type($input) `->` type($result)"
    )

    def verify_(self) -> None:
        checked_shape(self.input, "input")
        element_type = tensor_of(self.input, "input").element_type
        if not is_float(element_type):
            raise VerifyException(f"histc needs a floating-point input, not {element_type}")
        bins = self.bins.value.data
        if bins < 1:
            raise VerifyException(f"bins must be at least 1, not {bins}")
        if not self.min.value.data < self.max.value.data:
            raise VerifyException("min must be below max")
        require_shape(self.result, (bins,), "one count per bin")
        require_element_type(self.result, element_type, "the input's")

    def parallel_extent(self) -> tuple[str, int]:
        """One histogram: one core counts it."""
        return "rows", 1


@irdl_op_definition
class ScatterRowsOp(IRDLOperation):
    """
    `dest` with row `indices[i]` replaced by row `i` of `values` (PyTorch's `index_put` with one
    index tensor and `accumulate=False`): the inverse of `ktir.gather_rows`. Indices wrap from
    the end like gather's; when two name the same row, the later one wins.
    Example: dest `[0, 0, 0]`, indices `[2, 0]`, values `[5, 7]` give `[7, 0, 5]`.

    With `dim d` the rows are slices along dim d (PyTorch's `index_copy(dest, d, indices,
    values)`): `result[..., indices[i], ...] = values[..., i, ...]`, values shaped like dest
    with `len(indices)` at dim d. Example: a static KV cache `[1, 8, 2048, 128]` takes one new
    token's keys `[1, 8, 1, 128]` at `indices = [p]` along dim 2.

    `in_place`: the result takes dest's device memory and only the named rows are written (a
    KV cache updated where it lives); dest must have no other use and the same type, layout
    included, as the result.

    `contiguous`: the indices are known, when the program is compiled, to be one ascending run
    `s, s + 1, ..., s + n - 1` (a prefill chunk's positions in a static cache; the frontend
    decides it, `ktir.frontend.updates.mark_contiguous_rows`). The rows then form one box of
    dest, which each core writes with one strided DMA instead of one per row; a run on
    indices that are not such a run is an `ExecutionError`.
    """

    name = "ktir.scatter_rows"
    values = operand_def(TensorType)
    dest = operand_def(TensorType)
    indices = operand_def(TensorType)
    dim = opt_prop_def(IntegerAttr[I64])
    in_place = opt_prop_def(UnitAttr)
    contiguous = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$values `into` $dest `[` $indices `]` (`dim` $dim^)? (`in_place` $in_place^)? "
        "(`contiguous` $contiguous^)? attr-dict `:` "
        "type($values) `,` type($dest) `,` type($indices) `->` type($result)"
    )

    def scatter_dim(self) -> int:
        """The dim whose slices are the rows (0 unless `dim` says otherwise)."""
        return 0 if self.dim is None else self.dim.value.data

    def verify_(self) -> None:
        dest = checked_shape(self.dest, "dest")
        indices = checked_shape(self.indices, "indices")
        if not dest:
            raise VerifyException("dest must have at least one dim (its rows)")
        dim = self.scatter_dim()
        if not 0 <= dim < len(dest):
            raise VerifyException(f"dim {dim} is out of range for dest of rank {len(dest)}")
        _require_integer(tensor_of(self.indices, "indices").element_type, "indices")
        if len(indices) != 1:
            raise VerifyException(f"indices must be one-dimensional, not rank {len(indices)}")
        element_type = tensor_of(self.dest, "dest").element_type
        values = checked_shape(self.values, "values")
        wanted = (*dest[:dim], *indices, *dest[dim + 1 :])
        if values != wanted:
            raise VerifyException(
                f"values shape {list(values)} must be one row of dest per index {list(wanted)}"
            )
        if (value_type := tensor_of(self.values, "values").element_type) != element_type:
            raise VerifyException(f"values element type {value_type} must be {element_type} (dest's)")
        require_shape(self.result, dest, "dest's shape")
        require_element_type(self.result, element_type, "dest's")
        if self.in_place is not None:
            self._verify_in_place()

    def _verify_in_place(self) -> None:
        if not self.dest.has_one_use():
            raise VerifyException("an in_place scatter's dest must have no other use (its memory is reused)")
        if self.dest.type != self.result.type:
            raise VerifyException(
                f"an in_place scatter keeps dest's type and layout: {self.dest.type} vs {self.result.type}"
            )

    def rows_written(self) -> int:
        """Slices written: one per index for each position of the dims before `dim`."""
        dim = self.scatter_dim()
        return math.prod(checked_shape(self.dest, "dest")[:dim]) * checked_shape(self.indices, "indices")[0]

    def parallel_extent(self) -> tuple[str, int]:
        """What the cores may share: the rows it writes."""
        return "rows", self.rows_written()


@irdl_op_definition
class GroupedMatmulOp(IRDLOperation):
    """
    Per-expert matmuls over rows grouped by expert (transformers' `grouped_mm`): rows
    `[offsets[e-1], offsets[e])` of `x` (S x K) times `weights[e]` (K x N), fp32 accumulation,
    one rounding; rows past the last offset are zero. `offsets` are cumulative counts, one per
    expert. Example: offsets `[2, 2, 5]` multiply rows 0-1 by expert 0, none by expert 1 and rows
    2-4 by expert 2.
    """

    name = "ktir.grouped_matmul"
    x = operand_def(TensorType)
    weights = operand_def(TensorType)
    offsets = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$x `,` $weights `,` $offsets attr-dict `:` type($x) `,` type($weights) `,` type($offsets) "
        "`->` type($result)"
    )

    def verify_(self) -> None:
        x, weights = checked_shape(self.x, "x"), checked_shape(self.weights, "weights")
        offsets = checked_shape(self.offsets, "offsets")
        if len(x) != 2 or len(weights) != 3:
            raise VerifyException(
                f"x must be (S, K) and weights (E, K, N), not {list(x)} and {list(weights)}"
            )
        if x[1] != weights[1]:
            raise VerifyException(f"x has K = {x[1]} but the experts' weights take {weights[1]}")
        if list(offsets) != [weights[0]]:
            raise VerifyException(
                f"offsets must hold one count per expert ({weights[0]}), not shape {list(offsets)}"
            )
        _require_integer(tensor_of(self.offsets, "offsets").element_type, "offsets")
        element_type = tensor_of(self.x, "x").element_type
        if not is_float(element_type):
            raise VerifyException(f"grouped_matmul needs floating-point operands, not {element_type}")
        if (weight_type := tensor_of(self.weights, "weights").element_type) != element_type:
            raise VerifyException(f"weights element type {weight_type} must be {element_type} (x's)")
        require_shape(self.result, (x[0], weights[2]), "(S, N)")
        require_element_type(self.result, element_type, "x's")

    def parallel_extent(self) -> tuple[str, int]:
        """What the cores may share: each expert's output columns N (its weights read once)."""
        return "n", checked_shape(self.weights, "weights")[2]


ROUTING_OPS: list[type[IRDLOperation]] = [TopkOp, SortOp, HistcOp, ScatterRowsOp, GroupedMatmulOp]
"""Every op defined in this file, in documentation order."""

__all__ = ["ROUTING_OPS", "GroupedMatmulOp", "HistcOp", "ScatterRowsOp", "SortOp", "TopkOp"]
