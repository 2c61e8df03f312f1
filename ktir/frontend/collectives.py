"""
The collectives between cards as PyTorch ops, and their converters to `ktir.all_reduce` /
`ktir.all_gather` (`dialects/ktir/collective.py`).

A model split over cards by tensor parallelism (`ktir.llm.tensor_parallel`) is one card's shard
in PyTorch: where the cards must combine their values it calls `ktir::all_reduce(x, cards)` or
`ktir::all_gather(x, dim, cards)`, custom ops (`torch.library`) that `torch.export` keeps whole
and the FX importer turns into the dialect's ops. Custom ops rather than `torch.distributed`'s
functional collectives: those need a process group per card to trace, while a shard here is one
program that every card runs, and the group exists only in the simulator (`CardGroup`).

In eager PyTorch a card is alone: on one card a collective is a copy, and over more it raises
(there are no other cards' values to combine; `ktir.compile(model, args, cards=N)` runs them).

```python
y = torch.ops.ktir.all_reduce(partial, 4)            # the sum over 4 cards
logits = torch.ops.ktir.all_gather(block, -1, 4)     # 4 blocks along the last dim
```
"""

from __future__ import annotations

import torch
from xdsl.ir import SSAValue

from ktir.dialects.ktir import collective
from ktir.frontend.aten import arg, converts, i64_attr, make
from ktir.frontend.emitter import Emitter, node_arg, node_type
from ktir.layout.shapes import normalize_dim


def _alone(name: str, cards: int) -> None:
    if cards != 1:
        raise RuntimeError(
            f"ktir::{name} over {cards} cards has no other cards in eager PyTorch: "
            f"compile the shard with ktir.compile(model, args, cards={cards})"
        )


@torch.library.custom_op("ktir::all_reduce", mutates_args=())
def all_reduce(x: torch.Tensor, cards: int) -> torch.Tensor:
    """The sum of every card's `x` over `cards` cards (`ktir.all_reduce`)."""
    _alone("all_reduce", cards)
    return x.clone()


@all_reduce.register_fake
def _all_reduce_fake(x: torch.Tensor, cards: int) -> torch.Tensor:
    return torch.empty_like(x)


@torch.library.custom_op("ktir::all_gather", mutates_args=())
def all_gather(x: torch.Tensor, dim: int, cards: int) -> torch.Tensor:
    """Every card's `x` concatenated along `dim` in card order (`ktir.all_gather`)."""
    _alone("all_gather", cards)
    return x.clone()


@all_gather.register_fake
def _all_gather_fake(x: torch.Tensor, dim: int, cards: int) -> torch.Tensor:
    shape = list(x.shape)
    shape[dim] *= cards
    return x.new_empty(shape)


@converts(torch.ops.ktir.all_reduce.default)
def _all_reduce(e: Emitter, node: torch.fx.Node) -> SSAValue:
    cards = i64_attr(int(arg(node, 1, "cards")))
    return make(e, collective.AllReduceOp, [e.value(node.args[0])], node_type(node), cards=cards)


@converts(torch.ops.ktir.all_gather.default)
def _all_gather(e: Emitter, node: torch.fx.Node) -> SSAValue:
    source = node_arg(node.args[0])
    rank = len(source.meta["val"].shape)
    dim = i64_attr(normalize_dim(int(arg(node, 1, "dim")), rank))
    cards = i64_attr(int(arg(node, 2, "cards")))
    return make(e, collective.AllGatherOp, [e.value(source)], node_type(node), dim=dim, cards=cards)


__all__ = ["all_gather", "all_reduce"]
