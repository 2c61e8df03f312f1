"""
Serving a causal LM under load on the simulated chip: `simulate_serving` and `serve_at_rates`.

They compile the model's step costs (`ktir.llm.step_costs`) and replay requests through the
continuous-batching scheduler (`ktir.llm.scheduler`: upstream vLLM's policy by default, or the
Spyre plugin's, `scheduler="spyre"`, `ktir.llm.spyre_scheduler`); the scheduler's names are
re-exported here, so `ktir.llm.serving` is the one import a user needs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from ktir.llm.estimate import check_card_split
from ktir.llm.scheduler import (
    Step,
    StepCost,
    check_requests_fit,
    decode_bound_tokens_per_s,
    simulate,
    single_request_ttft_us,
)
from ktir.llm.serving_result import Policy, ServingResult, Slo, percentiles
from ktir.llm.step_costs import build_step_costs, grid_for, kv_capacity_tokens
from ktir.llm.workload import Request, TokenCount, WorkloadError, poisson_requests, read_trace

__all__ = [
    "Policy",
    "ServingResult",
    "Slo",
    "Step",
    "StepCost",
    "check_requests_fit",
    "decode_bound_tokens_per_s",
    "longest_request",
    "percentiles",
    "serve_at_rates",
    "simulate",
    "simulate_serving",
    "single_request_ttft_us",
]


def simulate_serving(
    config: Any,
    *,
    rate: float | None = None,
    requests: int = 200,
    prompt_tokens: str | int = 512,
    output_tokens: str | int = 128,
    trace: str | None = None,
    policy: Policy | None = None,
    scheduler: str | None = None,
    seed: int = 0,
    slo: Slo | None = None,
    target: Any = None,
    cores: int | None = None,
    cards: int = 1,
    cache_dir: str | None = None,
    progress: Any = None,
    jobs: int = 1,
) -> ServingResult:
    """
    Serve `requests` Poisson arrivals at `rate` per second (token counts: a number or a
    `TokenCount` text such as `"uniform:256:1024"`), or the requests of `trace`, with the
    step costs of `config` compiled for `target` on `cores` (`ktir.llm.step_costs`, cached
    under `cache_dir`, its points timed in `jobs` processes). `scheduler` (`"vllm"` or
    `"spyre"`), if given, replaces `policy.scheduler`. Without `policy.kv_capacity_tokens` set,
    the cache holds what device memory leaves (`kv_capacity_tokens`).
    """
    if scheduler is not None:
        policy = dataclasses.replace(policy or Policy(), scheduler=scheduler)
    if trace is not None:
        workload = read_trace(trace)
    elif rate is None:
        raise WorkloadError("give an arrival rate or a trace")
    else:
        prompts, outputs = TokenCount.parse(str(prompt_tokens)), TokenCount.parse(str(output_tokens))
        workload = poisson_requests(rate, requests, prompts, outputs, seed)
    runs = serve_at_rates(
        config,
        workload,
        policy,
        factors=(1.0,),
        rate=rate if trace is None else None,
        slo=slo,
        target=target,
        cores=cores,
        cards=cards,
        cache_dir=cache_dir,
        progress=progress,
        jobs=jobs,
    )
    return runs[0]


def longest_request(workload: Sequence[Request]) -> tuple[int, int]:
    """The longest request's positions (prompt and output) and the longest prompt: what a grid covers."""
    return max(r.prompt_tokens + r.output_tokens for r in workload), max(r.prompt_tokens for r in workload)


def serve_at_rates(
    config: Any,
    workload: Sequence[Request],
    policy: Policy | None,
    *,
    factors: Sequence[float],
    rate: float | None = None,
    slo: Slo | None = None,
    target: Any = None,
    cores: int | None = None,
    cards: int = 1,
    cache_dir: str | None = None,
    progress: Any = None,
    jobs: int = 1,
) -> list[ServingResult]:
    """
    Serve `workload` with its arrivals sped up by each of `factors` (1.0: as given; `rate`, if
    the workload is Poisson at that rate, is scaled with it), on the step costs of `config`
    compiled for `target` on `cores` (one card's shard of `cards`, tensor parallelism: each card
    holds its share of every sequence's cache), the table's points timed in `jobs` processes.
    Every request is checked against the KV cache before anything is compiled. Announces the
    compiled programs and each run to `progress`.
    """
    check_card_split(cards, config)
    policy = policy or Policy()
    if policy.kv_capacity_tokens is None:
        kv = kv_capacity_tokens(config, target, cards=cards, step_tokens=policy.step_tokens)
        policy = dataclasses.replace(policy, kv_capacity_tokens=kv)
    policy.check()
    if not workload:
        raise WorkloadError("no request to simulate")
    check_requests_fit(workload, policy)
    grid = grid_for(policy, *longest_request(workload))
    costs = build_step_costs(
        config, target=target, grid=grid, cores=cores, cache_dir=cache_dir, progress=progress, cards=cards,
        jobs=jobs,
    )  # fmt: skip
    runs = []
    for factor in factors:
        if progress is not None and len(factors) > 1:
            progress.stage(f"serving at {factor:g} x the rate")
        scaled = [dataclasses.replace(r, arrival_us=r.arrival_us / factor) for r in workload]
        rate_per_s = rate * factor if rate else None
        runs.append(simulate(scaled, costs, policy, slo=slo, rate_per_s=rate_per_s, cards=cards))
    return runs
