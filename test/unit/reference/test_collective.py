"""
`ktir.reference.collective` and the simulator's collectives: the shards of a program run together
in a `CardGroup`, one thread per card, and a collective combines every card's value.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from ktir.ir.context import make_context
from ktir.ir.diagnostics import parse_module
from ktir.pipeline import run_pipeline
from ktir.reference.collective import CardGroup
from ktir.reference.executor import ExecutionError, run
from ktir.sim import estimate, simulate
from ktir.sim.memory import SimulationError

SHARD = """
func.func @shard(%x: tensor<8x128xf16>, %w: tensor<128x64xf16>)
    -> (tensor<8x64xf16>, tensor<8xGATHEREDxf16>) {
  %p = ktir.matmul %x, %w : tensor<8x128xf16>, tensor<128x64xf16> -> tensor<8x64xf16>
  %h = ktir.all_reduce %p cards CARDS : tensor<8x64xf16> -> tensor<8x64xf16>
  %g = ktir.all_gather %p dim 1 cards CARDS : tensor<8x64xf16> -> tensor<8xGATHEREDxf16>
  func.return %h, %g : tensor<8x64xf16>, tensor<8xGATHEREDxf16>
}
"""


def shard(cards: int) -> ModuleOp:
    """One card's program: a matmul of its weights, summed and gathered over `cards` cards."""
    text = SHARD.replace("GATHERED", str(64 * cards)).replace("CARDS", str(cards))
    return parse_module(make_context(), text)


def inputs(cards: int) -> list[list[np.ndarray]]:
    """
    Small integers: every product and sum is exact in fp16 (at most 4 x 128 x 4 = 2048), so the
    results do not depend on the order of any accumulation (or the CPU).
    """
    rng = np.random.default_rng(0)
    x = rng.integers(-2, 3, (8, 128)).astype(np.float16)
    return [[x, rng.integers(-2, 3, (128, 64)).astype(np.float16)] for _ in range(cards)]


def expected(per_card: list[list[np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    partials = [(x.astype(np.float32) @ w.astype(np.float32)).astype(np.float16) for x, w in per_card]
    total = sum(p.astype(np.float32) for p in partials)
    return total.astype(np.float16), np.concatenate(partials, axis=1)


@pytest.mark.parametrize("cards", [2, 4])
def test_the_reference_sums_and_gathers_every_cards_value(cards: int) -> None:
    module, args = shard(cards), inputs(cards)
    outputs = CardGroup(cards).run(lambda rank: run(module, args[rank]))
    reduced, gathered = expected(args)
    for h, g in outputs:  # every card gets the same sum and the whole gather
        np.testing.assert_array_equal(h, reduced)
        np.testing.assert_array_equal(g, gathered)


def test_the_simulator_runs_the_collectives_of_compiled_shards() -> None:
    module, args = shard(2), inputs(2)
    run_pipeline(module, "ktir-compile")
    results = CardGroup(2).run(lambda rank: simulate(module, args[rank]))
    reduced, gathered = expected(args)
    for result in results:
        np.testing.assert_array_equal(result.outputs[0], reduced)
        np.testing.assert_array_equal(result.outputs[1], gathered)
    report = results[0].report
    assert [k.op for k in report.collectives] == ["ktir.all_reduce (link)", "ktir.all_gather (link)"]
    # 8 x 64 fp16 = 1024 B: the all-reduce sends 2 (N - 1) / N of it, the gather (N - 1) / N of 2048 B
    assert [k.link_bytes for k in report.collectives] == [1024.0, 1024.0]
    assert report.collective_cycles == pytest.approx((1024 / 63e9 * 2 * 1e6 + 3 * 2.0) * 1500)
    assert str(report.counts).endswith("2 between cards)")
    assert estimate(module).collective_cycles == report.collective_cycles


def test_a_collective_over_several_cards_run_alone_is_a_located_error() -> None:
    module, args = shard(2), inputs(2)
    with pytest.raises(ExecutionError, match=r"ktir\.all_reduce over 2 cards needs the other cards' values"):
        run(module, args[0])
    run_pipeline(module, "ktir-compile")
    with pytest.raises(SimulationError, match="over 2 cards needs the other cards"):
        simulate(module, args[0])


def test_on_one_card_a_collective_is_a_copy() -> None:
    module, args = shard(1), inputs(1)
    h, g = run(module, args[0])
    partial = expected(args)[1]
    np.testing.assert_array_equal(h, partial)
    np.testing.assert_array_equal(g, partial)


def test_a_card_that_fails_stops_the_group_with_its_own_error() -> None:
    module, args = shard(2), inputs(2)

    def card(rank: int) -> list[np.ndarray]:
        if rank == 1:
            raise ValueError("card 1 failed before its all-reduce")
        return run(module, args[rank])  # waits at the all-reduce for card 1, which never comes

    with pytest.raises(ValueError, match="card 1 failed before its all-reduce"):
        CardGroup(2).run(card)
