"""
Reference semantics of the collectives between cards (`dialects/ktir/collective.py`): the value
each card of a tensor-parallel group gets, from every card's input.

A program with collectives is one card's shard; its cards run together in a `CardGroup`, each
on a thread of its own (`CardGroup.run`), and a collective exchanges the cards' values at a
barrier: `ktir.all_reduce` sums them (floats in fp32, in card order, rounded once to the
element type; so every card gets the same bits), `ktir.all_gather` concatenates them along its
dim in card order. On one card (`cards = 1`) a collective is a copy; a collective over more
cards outside a group is an `ExecutionError` (the other cards' values are not there).

```python
group = CardGroup(2)
outputs = group.run(lambda rank: reference.run(module, shard_inputs[rank]))
```
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from ktir.dialects.ktir.collective import AllGatherOp, AllReduceOp
from ktir.ir.diagnostics import ExecutionError
from ktir.ir.interpreter import Implementations
from ktir.reference.ops import Implementation, result_element
from ktir.reference.precision import store, widen

COLLECTIVE: Implementations[Implementation] = Implementations()
implements = COLLECTIVE.impl

T = TypeVar("T")

_CARD: contextvars.ContextVar[tuple[CardGroup, int] | None] = contextvars.ContextVar(
    "ktir_card", default=None
)
"""The group and rank of the card the current thread runs (set by `CardGroup.run`)."""


class CardGroup:
    """
    `cards` cards running one shard program each, on threads of their own, that exchange
    values at the program's collectives (`exchange`). A card that fails breaks the barrier, so
    the others stop instead of waiting for it; `run` raises the first failure.
    """

    def __init__(self, cards: int) -> None:
        self.cards = cards
        self._barrier = threading.Barrier(cards)
        self._slots: list[Any] = [None] * cards

    def exchange(self, rank: int, value: np.ndarray) -> list[np.ndarray]:
        """Every card's `value` of this collective, in card order (blocks until all gave theirs)."""
        self._slots[rank] = value
        self._barrier.wait()
        values = list(self._slots)
        self._barrier.wait()  # no card overwrites its slot before every card has read them all
        return values

    def run(self, card: Callable[[int], T]) -> list[T]:
        """`card(rank)` for every rank at once, each on its own thread; the results in card order."""
        results: list[Any] = [None] * self.cards
        errors: list[BaseException | None] = [None] * self.cards

        def body(rank: int) -> None:
            _CARD.set((self, rank))
            try:
                results[rank] = card(rank)
            except BaseException as error:  # re-raised by `run`, after every card stopped
                errors[rank] = error
                self._barrier.abort()

        threads = [threading.Thread(target=body, args=(rank,), daemon=True) for rank in range(self.cards)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        failures = [error for error in errors if error is not None]
        if failures:  # the card that failed first, not the ones its broken barrier stopped
            broken = threading.BrokenBarrierError
            raise next((e for e in failures if not isinstance(e, broken)), failures[0])
        return results


def _peers(op: AllReduceOp | AllGatherOp, value: np.ndarray) -> list[np.ndarray]:
    """Every card's input of `op`, in card order; `ExecutionError` outside a group of its size."""
    cards = op.card_count
    if cards == 1:
        return [value]
    card = _CARD.get()
    if card is None or card[0].cards != cards:
        raise ExecutionError(
            f"{op.name} over {cards} cards needs the other cards' values: run the {cards} shards "
            f"together (ktir.compile(model, args, cards={cards}))"
        )
    group, rank = card
    return group.exchange(rank, value)


@implements(AllReduceOp)
def _all_reduce(op: AllReduceOp, args: list[np.ndarray]) -> list[np.ndarray]:
    values = _peers(op, args[0])
    total = widen(values[0]).copy()
    for value in values[1:]:
        total += widen(value)
    return [store(total, result_element(op))]


@implements(AllGatherOp)
def _all_gather(op: AllGatherOp, args: list[np.ndarray]) -> list[np.ndarray]:
    return [np.concatenate(_peers(op, args[0]), axis=op.dim.value.data)]


__all__ = ["COLLECTIVE", "CardGroup"]
