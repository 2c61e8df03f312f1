"""
The continuous-batching scheduler of the serving simulator: vLLM's scheduling policy, event by event.

`simulate(requests, step_cost, policy)` replays requests (`ktir.llm.workload`) through a
scheduler that runs one step at a time, as vLLM's engine does; `step_cost(step)` gives each
step's microseconds (the compiled programs' table, `ktir.llm.step_costs`, or any callable: the
tests use an affine one). Each step, at time `t`:

1. Requests that have arrived by `t` join the waiting queue (FIFO).
2. Running requests are scheduled first, in admission order, within the step's token budget
   (`max_batched_tokens`): a request still in its prompt gets a prefill chunk of
   `min(rest of prompt, prefill_chunk, budget left)` tokens, a decoding request one token.
3. Then waiting requests are admitted in FIFO order while the budget lasts, fewer than
   `max_seqs` requests run, and the KV cache has room for the head request's prompt and output
   tokens (`kv_capacity_tokens`); a request that does not fit blocks those behind it, as
   vLLM's FIFO policy does. An admitted request gets its first prefill chunk in the same step.
4. The step takes `step_cost(step)`; at its end each request whose prompt is now complete
   emits its first token, each decoding request its next one, and a request that has emitted
   all its output tokens leaves and frees its cache.

When nothing is running or waiting, time jumps to the next arrival. Unlike vLLM, the cache is
reserved for a request's whole output at admission, so no request is ever preempted.
Everything is deterministic: no randomness beyond the requests themselves.

`simulate` runs the policy `policy.scheduler` names: this one (`"vllm"`, the default) or the
Spyre plugin's (`"spyre"`, `ktir.llm.spyre_scheduler`); both share `ktir.llm.scheduling`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ktir.llm.scheduling import Scheduled, SchedulerState, Step, StepCost, check_kv_fit, replay
from ktir.llm.serving_result import Policy, ServingResult, Slo
from ktir.llm.spyre_scheduler import SpyreState, check_spyre_fit, spyre_single_request_ttft_us
from ktir.llm.workload import Request, WorkloadError


class VllmState(SchedulerState):
    """Upstream vLLM's policy (module docstring): running requests first, then FIFO admissions."""

    def schedule(self, now: float) -> Scheduled:
        """The next step: running requests first, then FIFO admissions, within the token budget."""
        budget = self.policy.max_batched_tokens
        chunks: list[tuple[int, int]] = []
        decodes: list[int] = []
        for index in self.running:
            if budget == 0:
                break
            request = self.requests[index]
            if self.prefilled[index] < request.prompt_tokens:
                tokens = min(
                    request.prompt_tokens - int(self.prefilled[index]), self.policy.prefill_chunk, budget
                )
                chunks.append((index, tokens))
                budget -= tokens
            else:
                decodes.append(index)
                budget -= 1
        while self.waiting and budget > 0 and len(self.running) < self.policy.max_seqs:
            if not self.kv_fits(self.waiting[0]):
                break  # FIFO: the head blocks the queue until running requests free the cache
            index = self.admit(now)
            tokens = min(self.requests[index].prompt_tokens, self.policy.prefill_chunk, budget)
            chunks.append((index, tokens))
            budget -= tokens
        step = Step(
            prefill_chunks=tuple((n, int(self.prefilled[i])) for i, n in chunks),
            decode_contexts=tuple(self.requests[i].prompt_tokens + int(self.emitted[i]) for i in decodes),
        )
        return Scheduled(step, chunks, decodes)


def simulate(
    requests: Sequence[Request],
    step_cost: StepCost,
    policy: Policy | None = None,
    *,
    cards: int = 1,
    slo: Slo | None = None,
    rate_per_s: float | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ServingResult:
    """
    Replay `requests` through the continuous-batching scheduler of `policy.scheduler` (module
    docstring), each step timed by `step_cost`; `progress(finished, total)` is called after each
    step that finishes a request. `WorkloadError` if a request can never run.
    """
    policy = policy or Policy()
    policy.check()
    requests = sorted(requests, key=lambda r: r.arrival_us)
    if not requests:
        raise WorkloadError("no request to simulate")
    check_requests_fit(requests, policy)
    state = SpyreState(requests, policy) if policy.scheduler == "spyre" else VllmState(requests, policy)
    return replay(state, step_cost, cards=cards, slo=slo, rate_per_s=rate_per_s, progress=progress)


def single_request_ttft_us(prompt_tokens: int, step_cost: StepCost, policy: Policy | None = None) -> float:
    """A lone request's time to first token: its prompt's chunks, one step each."""
    policy = policy or Policy()
    if policy.scheduler == "spyre":
        return spyre_single_request_ttft_us(prompt_tokens, step_cost, policy)
    chunk = min(policy.prefill_chunk, policy.max_batched_tokens)
    total, cached = 0.0, 0
    while cached < prompt_tokens:
        tokens = min(chunk, prompt_tokens - cached)
        total += float(step_cost(Step(prefill_chunks=((tokens, cached),))))
        cached += tokens
    return total


def check_requests_fit(requests: Sequence[Request], policy: Policy) -> None:
    """`WorkloadError` for the first request that can never run under `policy` (KV cache, spyre's limits)."""
    check_kv_fit(requests, policy)
    if policy.scheduler == "spyre":
        check_spyre_fit(requests, policy)


def decode_bound_tokens_per_s(step_cost: StepCost, policy: Policy, context: int) -> float:
    """Tokens per second of back-to-back decode steps of `max_seqs` requests at `context`: the ceiling."""
    batch = policy.max_seqs
    if policy.scheduler == "vllm":  # a decode is a token of the budget
        batch = min(batch, policy.max_batched_tokens)
    step = Step(decode_contexts=(context,) * batch)
    return len(step.decode_contexts) * 1e6 / float(step_cost(step))
