"""The Spyre plugin's scheduling policy (`Policy(scheduler="spyre")`), with analytic step costs."""

import dataclasses

import pytest

from ktir.llm.serving import Policy, Step, simulate
from ktir.llm.spyre_scheduler import PrefillLayout, volume_fits
from ktir.llm.workload import Request, WorkloadError

SMALL = Policy(scheduler="spyre", block_size=4, prefill_chunk=8, max_seqs=4)
"""The documentation's figures: blocks of 4 tokens, chunks of 8."""


def record(steps: list[Step]):
    def cost(step: Step) -> float:
        steps.append(step)
        return 100.0

    return cost


def prefill(cached: int, chunk: int = 8) -> Step:
    return Step(prefill_chunks=((chunk, cached),))


def decode(*contexts: int) -> Step:
    return Step(decode_contexts=contexts)


def test_a_prompt_is_padded_to_whole_chunks_as_the_documentation_shows():
    # 10 tokens, blocks of 4, chunks of 8: right-padded to 12, a dummy block on the left, two chunks
    layout = PrefillLayout(10, 4, 8)
    assert (layout.padded, layout.left_padding, layout.chunks) == (12, 4, 2)
    assert [layout.tkv_after(i) for i in range(2)] == [8, 14]
    assert [layout.real_tokens(i) for i in range(2)] == [4, 6]
    # the same with blocks of 64 and chunks of 128: 160 tokens
    wide = PrefillLayout(160, 64, 128)
    assert (wide.padded, wide.left_padding, wide.chunks) == (192, 64, 2)
    assert [wide.tkv_after(i) for i in range(2)] == [128, 224]


def test_every_prefill_step_is_one_whole_chunk():
    steps: list[Step] = []
    result = simulate([Request(0.0, 10, 1)], record(steps), SMALL)
    assert steps == [prefill(0), prefill(8)]  # 4 and 6 prompt tokens, padding included
    assert result.first_token_us.tolist() == [200.0]


def test_one_prefill_at_a_time_and_the_ongoing_one_first():
    steps: list[Step] = []
    requests = [Request(0.0, 20, 1), Request(0.0, 20, 1)]  # three chunks each, one token out
    result = simulate(requests, record(steps), SMALL)
    assert all(len(step.prefill_chunks) == 1 and not step.decode_contexts for step in steps)
    assert steps == [prefill(0), prefill(8), prefill(16)] * 2
    assert result.admitted_us[1] == result.first_token_us[0] == 300.0


def test_prefill_and_decode_steps_interleave_and_decodes_share_the_batchs_max_tkv():
    # A (10 tokens) prefills in two steps (nothing decodes yet), then its decodes alternate with
    # B's one chunk. B joins with more dummy blocks, so both sit in the same last block.
    steps: list[Step] = []
    simulate([Request(0.0, 10, 5), Request(0.0, 3, 5)], record(steps), SMALL)
    assert steps == [
        prefill(0), prefill(8),  # A: tkv 8, then 14
        decode(11),  # A's dummy block is dropped: no other sequence needs it
        prefill(0),  # B: a dummy block on the left of its 3 tokens
        decode(12, 12),  # B padded to A's 3 blocks: both at tkv 12
        decode(13, 13),  # A needs a 4th block: B gets one more dummy block
        decode(14, 14),
        decode(7),  # A has finished: B's dummy blocks are dropped
    ]  # fmt: skip


def test_prefill_chunks_alternate_with_decodes_and_no_step_is_mixed():
    steps: list[Step] = []
    requests = [Request(0.0, 10, 6), Request(0.0, 20, 2)]
    simulate(requests, record(steps), SMALL)
    kinds = "".join("P" if step.prefill_chunks else "D" for step in steps)
    assert "PP" not in kinds[2:]  # after A's prefill, B's chunks never follow each other
    assert all(not (step.prefill_chunks and step.decode_contexts) for step in steps)
    assert kinds == "PPDPDPDPDD"  # B's three chunks between A's decodes; then both decode


def test_the_volumetric_limit_refuses_an_admission():
    # B's admission projects B from tkv 7 over 5 tokens, A from 12 + one block over 3: two
    # sequences at 16 + 3 = 19 need 38 positions. Under a limit of 30, B waits for A to finish.
    requests = [Request(0.0, 10, 5), Request(0.0, 3, 5)]
    tight = simulate(requests, record([]), dataclasses.replace(SMALL, max_batch_tkv=30))
    assert tight.admitted_us[1] == tight.finish_us[0]
    roomy = simulate(requests, record([]), dataclasses.replace(SMALL, max_batch_tkv=38))
    assert roomy.admitted_us[1] < roomy.finish_us[0]


def test_the_volume_is_checked_at_every_future_step():
    # (steps left, tkv now): four sequences for 5 steps, the longest at tkv 25 by then (4 x 25),
    # then one alone to 40; not four at 40, each batch is checked at its own last step
    assert volume_fits([(5, 0), (5, 0), (20, 20), (5, 0)], 100)
    assert not volume_fits([(5, 0), (5, 0), (20, 20), (5, 0)], 99)
    assert volume_fits([(5, 0), (6, 0), (20, 20), (5, 0)], 100)  # two at 26 on the 6th step
    assert not volume_fits([(5, 0), (20, 0), (20, 20), (5, 0)], 79)  # two at 40 on the 20th


def test_the_batch_size_limits_the_decode_batch():
    steps: list[Step] = []
    requests = [Request(0.0, 4, 3) for _ in range(3)]
    result = simulate(requests, record(steps), dataclasses.replace(SMALL, max_seqs=2))
    assert result.admitted_us[2] == min(result.finish_us[:2])
    assert max(len(step.decode_contexts) for step in steps) == 2


@pytest.mark.parametrize(
    ("policy", "one", "message"),
    [
        (Policy(scheduler="spyre", prefill_chunk=100), Request(0.0, 10, 1), "whole blocks of 64"),
        (Policy(scheduler="sarathi"), Request(0.0, 10, 1), "scheduler must be one of vllm, spyre"),
        (Policy(scheduler="spyre", max_batch_tkv=1000), Request(0.0, 1000, 10), "over the volumetric limit"),
    ],
)
def test_a_bad_spyre_policy_or_a_request_that_never_fits_is_an_error(policy, one, message):
    with pytest.raises(WorkloadError, match=message):
        simulate([one], record([]), policy)
