"""
The serving simulator's scheduler and figures, with analytic step costs (no model compiled).
The checks of issue 38's item 4 (Little's law, a lone request's TTFT, the throughput bounds,
percentiles against the rate, determinism) run under both scheduling policies.
"""

import dataclasses
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ktir.llm.serving import Policy, Slo, Step, decode_bound_tokens_per_s, simulate, single_request_ttft_us
from ktir.llm.serving_result import ServingFormatError, ServingResult
from ktir.llm.workload import Request, TokenCount, WorkloadError, poisson_requests


def affine_cost(step: Step) -> float:
    """2 ms a step, 10 µs a token, 0.1 ns per prefill (token x position), 0.01 µs per decode position."""
    attention = sum(n * (c + n / 2) for n, c in step.prefill_chunks) * 0.1 / 1000
    return 2000.0 + 10.0 * step.tokens + attention + 0.01 * sum(step.decode_contexts)


def tokens_cost(step: Step) -> float:
    return 100.0 + step.tokens


def test_a_small_schedule_by_hand():
    # Step 1 at 0: A admitted with a 4-token chunk, B with its 3-token prompt (7 tokens, 107 us):
    # B's first token is its only one. Step 2: A's last 2 prompt tokens (102 us). Step 3: A decodes.
    requests = [Request(0.0, 6, 2), Request(0.0, 3, 1)]
    result = simulate(requests, tokens_cost, Policy(max_batched_tokens=8, prefill_chunk=4))
    assert result.steps == 3
    assert result.first_token_us.tolist() == [209.0, 107.0]
    assert result.finish_us.tolist() == [310.0, 107.0]
    assert result.inter_token_us.tolist() == [101.0]
    assert result.admitted_us.tolist() == [0.0, 0.0]


def test_running_requests_come_before_admissions_and_the_budget_caps_chunks():
    # B arrives while A is prefilling: A's chunk takes the budget first, B gets what is left.
    steps = []

    def cost(step: Step) -> float:
        steps.append(step)
        return 100.0

    requests = [Request(0.0, 10, 1), Request(50.0, 10, 1)]
    simulate(requests, cost, Policy(max_batched_tokens=6, prefill_chunk=5))
    assert steps[0] == Step(prefill_chunks=((5, 0),))
    assert steps[1] == Step(prefill_chunks=((5, 5), (1, 0)))
    assert steps[2] == Step(prefill_chunks=((5, 1),))  # the chunk size caps it
    assert steps[3] == Step(prefill_chunks=((4, 6),))


def test_a_request_waits_until_the_kv_cache_has_room():
    requests = [Request(0.0, 10, 5), Request(1.0, 10, 5)]
    result = simulate(requests, tokens_cost, Policy(kv_capacity_tokens=20))
    assert result.admitted_us[1] == result.finish_us[0]
    roomy = simulate(requests, tokens_cost, Policy(kv_capacity_tokens=30))
    assert roomy.admitted_us[1] < roomy.finish_us[0]


def test_max_seqs_limits_the_running_requests():
    requests = [Request(0.0, 4, 3) for _ in range(3)]
    result = simulate(requests, tokens_cost, Policy(max_seqs=2))
    assert result.admitted_us[2] == min(result.finish_us[:2])


def test_a_request_that_never_fits_is_an_error():
    with pytest.raises(WorkloadError, match="never fits the KV cache of 100 tokens"):
        simulate([Request(0.0, 90, 20)], tokens_cost, Policy(kv_capacity_tokens=100))


SCHEDULERS = ["vllm", "spyre"]


def workload(rate: float, count: int, seed: int = 0) -> list[Request]:
    prompts, outputs = TokenCount.parse("uniform:200:3000"), TokenCount.parse("uniform:2:200")
    return poisson_requests(rate, count, prompts, outputs, seed)


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_the_same_seed_gives_the_same_run(scheduler):
    policy = Policy(max_seqs=16, scheduler=scheduler)
    one, two = (simulate(workload(5.0, 200, seed=3), affine_cost, policy) for _ in range(2))
    assert one.to_dict() == two.to_dict()
    other = simulate(workload(5.0, 200, seed=4), affine_cost, policy)
    assert other.to_dict()["ttft_ms"] != one.to_dict()["ttft_ms"]


@pytest.mark.parametrize(
    ("scheduler", "chunks"),
    [
        ("vllm", ((1024, 0), (1024, 1024), (952, 2048))),  # three chunks of 1024, 1024 and 952 tokens
        ("spyre", ((1024, 0), (1024, 1024), (1024, 2048))),  # 3,000 padded to 3,008, 64 on the left
    ],
)
def test_at_a_very_low_rate_ttft_is_the_single_request_ttft(scheduler, chunks):
    prompt = 3000
    policy = Policy(scheduler=scheduler)
    requests = poisson_requests(0.01, 50, TokenCount.parse(str(prompt)), TokenCount.parse("64"), seed=1)
    result = simulate(requests, affine_cost, policy)
    alone = single_request_ttft_us(prompt, affine_cost, policy)
    by_hand = sum(2000 + 10 * n + n * (c + n / 2) * 1e-4 for n, c in chunks)
    assert alone == pytest.approx(by_hand, rel=1e-12)
    assert np.median(result.ttft_us) == pytest.approx(alone, rel=0.02)


@pytest.mark.parametrize("scheduler", SCHEDULERS)
@pytest.mark.parametrize("rate", [2.0, 8.0, 30.0])
def test_littles_law_holds_on_the_simulated_system_and_queue(rate, scheduler):
    policy = Policy(max_seqs=16, kv_capacity_tokens=20000, scheduler=scheduler)
    result = simulate(workload(rate, 400, seed=7), affine_cost, policy)
    law = result.littles_law()
    # The counts are integrated from the scheduler's state, the times from the request records.
    assert law["system_mean_count"] == pytest.approx(law["system_rate_x_time"], rel=1e-9)
    assert law["queue_mean_count"] == pytest.approx(law["queue_rate_x_time"], rel=1e-9)
    assert law["system_mean_count"] > 0.1  # the check is not vacuous


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_littles_law_with_the_configured_rate_in_steady_state(scheduler):
    rate = 4.0
    result = simulate(workload(rate, 3000, seed=11), affine_cost, Policy(max_seqs=16, scheduler=scheduler))
    mean_in_system = result.system_integral_us / result.duration_us
    assert mean_in_system == pytest.approx(rate * result.e2e_us.mean() / 1e6, rel=0.02)


@pytest.mark.parametrize("scheduler", SCHEDULERS)
@pytest.mark.parametrize("rate", [1.0, 10.0, 200.0])
def test_throughput_never_exceeds_arrivals_nor_the_decode_bound(rate, scheduler):
    policy = Policy(max_seqs=8, scheduler=scheduler)
    result = simulate(workload(rate, 300, seed=5), affine_cost, policy)
    offered = result.arrival_rate_per_s * result.output_tokens.mean()
    bound = decode_bound_tokens_per_s(affine_cost, policy, context=200)
    assert result.tokens_per_second_per_card <= offered
    assert result.tokens_per_second_per_card <= bound
    if rate == 200.0:  # saturated: most of the decode bound is reached
        assert result.tokens_per_second_per_card > 0.3 * bound


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), scheduler=st.sampled_from(SCHEDULERS))
def test_item_4_checks_hold_for_any_seed(seed, scheduler):
    # Little's law on the scheduler's own integrals, throughput within arrivals and the decode
    # bound, and latency percentiles that do not fall as the same requests arrive faster.
    policy = Policy(max_seqs=8, kv_capacity_tokens=20000, scheduler=scheduler)
    requests = workload(1.0, 120, seed=seed)
    bound = decode_bound_tokens_per_s(affine_cost, policy, context=200)
    previous = None
    for factor in (1.0, 4.0, 16.0):
        faster = [dataclasses.replace(r, arrival_us=r.arrival_us / factor) for r in requests]
        result = simulate(faster, affine_cost, policy)
        law = result.littles_law()
        assert law["system_mean_count"] == pytest.approx(law["system_rate_x_time"], rel=1e-9)
        assert result.tokens_per_second_per_card <= result.arrival_rate_per_s * result.output_tokens.mean()
        assert result.tokens_per_second_per_card <= bound
        figures = result.to_dict()
        if previous is not None:
            for key in ("ttft_ms", "e2e_ms"):
                for p in ("p50", "p90", "p99"):
                    assert figures[key][p] >= previous[key][p] * 0.99, (key, p, factor)
        previous = figures


def test_goodput_counts_requests_within_the_slos():
    result = simulate(workload(20.0, 200, seed=2), affine_cost, Policy(max_seqs=8), slo=Slo(ttft_ms=100.0))
    met = result.ttft_us <= 100e3
    assert 0 < met.sum() < len(met)
    assert result.goodput_per_s == pytest.approx(met.sum() * 1e6 / result.duration_us)
    figures = result.to_dict()
    assert figures["slo_attainment"] == pytest.approx(met.mean())
    assert figures["ttft_ms"]["p50"] == pytest.approx(np.percentile(result.ttft_us, 50) / 1e3)


def test_cards_divide_throughput():
    one = simulate(workload(5.0, 50), affine_cost)
    two = simulate(workload(5.0, 50), affine_cost, cards=2)
    assert two.tokens_per_second_per_card == pytest.approx(one.tokens_per_second_per_card / 2)


def test_a_bad_policy_is_an_error():
    with pytest.raises(WorkloadError, match="max_seqs must be at least 1, not 0"):
        simulate(workload(5.0, 5), affine_cost, Policy(max_seqs=0))


def test_arrivals_at_one_instant_have_no_arrival_rate():
    result = simulate([Request(0.0, 10, 3), Request(0.0, 20, 2)], tokens_cost)
    assert np.isnan(result.arrival_rate_per_s)
    assert result.to_dict()["requests"] == 2


def test_without_a_kv_capacity_simulate_sets_no_limit_and_the_result_keeps_its_policy():
    policy = Policy(max_seqs=4)
    result = simulate([Request(0.0, 5000, 10)], tokens_cost, policy)
    assert policy.kv_capacity_tokens is None and result.policy == policy


def test_a_result_round_trips_through_json_and_bad_json_is_refused():
    requests = poisson_requests(
        40.0, 50, TokenCount.parse("uniform:8:64"), TokenCount.parse("uniform:1:12"), seed=4
    )
    result = simulate(requests, affine_cost, Policy(max_batched_tokens=64, max_seqs=4, prefill_chunk=32))
    again = ServingResult.from_json(result.to_json())
    assert again.to_json() == result.to_json()
    assert json.dumps(again.to_dict()) == json.dumps(result.to_dict())
    assert np.array_equal(again.inter_token_us, result.inter_token_us) and again.policy == result.policy
    for text, message in (
        ("[1", "not JSON"),
        ('{"format": "ktir-report"}', "not a ktir serving result"),
        ('{"format": "ktir-serving-run", "version": 9}', "version 9"),
        ('{"format": "ktir-serving-run", "version": 1, "run": {}}', "malformed serving result: KeyError"),
    ):
        with pytest.raises(ServingFormatError, match=message):
            ServingResult.from_json(text)
