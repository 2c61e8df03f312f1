"""
Collectives between cards of the `ktir` dialect: what a tensor-parallel group of cards exchanges.

A program with collectives is one card's shard of a model split over `cards` cards (every card
runs the same program on its own share of the weights, `ktir.llm.tensor_parallel`); a collective
combines the value each card holds:

- `ktir.all_reduce` sums `input` over the cards: every card gets the same sum (after a
  row-parallel matmul, whose partial sums the cards hold);
- `ktir.all_gather` concatenates each card's `input` along `dim`, in card order: every card
  gets the whole (after a column-parallel matmul, whose column blocks the cards hold).

They stay at function level next to the kernels (`TIMED_FUNCTION_LEVEL_OPS`): the simulator
times each from the target's card-to-card link as a ring (`ktir.hardware.cost_model.
collective_cycles`) and computes its value from the other cards' (`ktir.reference.collective`).

```mlir
%h = ktir.all_reduce %partial cards 4 : tensor<1x8x4096xf16> -> tensor<1x8x4096xf16>
%logits = ktir.all_gather %block dim 2 cards 4 : tensor<1x1x32064xf16> -> tensor<1x1x128256xf16>
```
"""

from __future__ import annotations

from xdsl.dialects.builtin import I64, IntegerAttr, TensorType
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from ktir.dialects.ktir.elementwise import (
    checked_shape,
    is_bool,
    require_element_type,
    require_like_input,
    require_shape,
    tensor_of,
)


def _cards(op: AllReduceOp | AllGatherOp) -> int:
    """The op's card count; at least 1 (one card: the collective is a copy)."""
    cards = op.cards.value.data
    if cards < 1:
        raise VerifyException(f"cards must be at least 1, not {cards}")
    return cards


def _require_not_bool(op: IRDLOperation) -> None:
    element = tensor_of(op.operands[0], "input").element_type
    if is_bool(element):
        raise VerifyException(f"{op.name} is not defined on i1 tensors (a sum of booleans)")


@irdl_op_definition
class AllReduceOp(IRDLOperation):
    """
    `result = sum over the cards of each card's input`, elementwise; every card of the group
    gets the same result. Floats are summed in fp32 in card order and rounded once to the
    element type. Example: on 2 cards holding `[1, 2]` and `[10, 20]`, both get `[11, 22]`.
    """

    name = "ktir.all_reduce"
    input = operand_def(TensorType)
    cards = prop_def(IntegerAttr[I64])
    result = result_def(TensorType)
    assembly_format = "$input `cards` $cards attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        _cards(self)
        checked_shape(self.input, "input")
        _require_not_bool(self)
        require_like_input(self)

    @property
    def card_count(self) -> int:
        """Cards the sum runs over."""
        return self.cards.value.data

    def parallel_extent(self) -> tuple[str, int]:
        """What moves in parallel: one chunk per card (the ring's steps move a chunk each)."""
        return "chunks", self.card_count


@irdl_op_definition
class AllGatherOp(IRDLOperation):
    """
    `result = concatenation of each card's input along dim`, in card order; every card gets the
    same result, `cards` times the input along `dim`. Example: on 2 cards holding `[[1, 2]]`
    and `[[3, 4]]`, a gather along dim 1 gives both `[[1, 2, 3, 4]]`.
    """

    name = "ktir.all_gather"
    input = operand_def(TensorType)
    dim = prop_def(IntegerAttr[I64])
    cards = prop_def(IntegerAttr[I64])
    result = result_def(TensorType)
    assembly_format = "$input `dim` $dim `cards` $cards attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        cards = _cards(self)
        shape = checked_shape(self.input, "input")
        dim = self.dim.value.data
        if not 0 <= dim < len(shape):
            raise VerifyException(f"dim {dim} is out of range for a rank-{len(shape)} input")
        gathered = (*shape[:dim], shape[dim] * cards, *shape[dim + 1 :])
        require_shape(self.result, gathered, f"the input's with dim {dim} times {cards} cards")
        require_element_type(self.result, tensor_of(self.input, "input").element_type, "the input's")

    @property
    def card_count(self) -> int:
        """Cards the gather runs over."""
        return self.cards.value.data

    def parallel_extent(self) -> tuple[str, int]:
        """What moves in parallel: one chunk per card."""
        return "chunks", self.card_count


COLLECTIVE_OPS: list[type[IRDLOperation]] = [AllReduceOp, AllGatherOp]
"""Every op defined in this file, in documentation order."""

CollectiveOp = AllReduceOp | AllGatherOp
"""Either collective."""

__all__ = ["COLLECTIVE_OPS", "AllGatherOp", "AllReduceOp", "CollectiveOp"]
