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
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ktir.llm.serving_result import Policy, ServingResult, Slo
from ktir.llm.workload import Request, WorkloadError


@dataclass(frozen=True)
class Step:
    """What one scheduler step computes."""

    prefill_chunks: tuple[tuple[int, int], ...] = ()
    """One `(tokens, cached)` per prefilling request: `tokens` prompt tokens written after `cached` ones."""
    decode_contexts: tuple[int, ...] = ()
    """One entry per decoding request: the positions its new token attends over (itself included)."""

    @property
    def tokens(self) -> int:
        """Tokens the step computes: prefill chunk tokens plus one per decode."""
        return sum(n for n, _ in self.prefill_chunks) + len(self.decode_contexts)


StepCost = Callable[[Step], float]
"""A step's time in microseconds."""


class _State:
    """The scheduler's state during a simulation (one instance per run)."""

    def __init__(self, requests: Sequence[Request], policy: Policy) -> None:
        self.requests = requests
        self.policy = policy
        count = len(requests)
        self.prefilled = np.zeros(count, dtype=np.int64)
        self.emitted = np.zeros(count, dtype=np.int64)
        self.admitted = np.full(count, np.nan)
        self.first = np.full(count, np.nan)
        self.finish = np.full(count, np.nan)
        self.last_token = np.full(count, np.nan)
        self.gaps: list[float] = []
        self.waiting: deque[int] = deque()
        self.running: list[int] = []
        self.kv_used = 0
        self.done = 0

    def schedule(self, now: float) -> tuple[Step, list[tuple[int, int]], list[int]]:
        """The next step: running requests first, then FIFO admissions (module docstring)."""
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
            index = self.waiting[0]
            request = self.requests[index]
            need = request.prompt_tokens + request.output_tokens
            limit = self.policy.kv_capacity_tokens
            if limit is not None and self.kv_used + need > limit:
                break  # FIFO: the head blocks the queue until running requests free the cache
            self.waiting.popleft()
            self.running.append(index)
            self.kv_used += need
            self.admitted[index] = now
            tokens = min(request.prompt_tokens, self.policy.prefill_chunk, budget)
            chunks.append((index, tokens))
            budget -= tokens
        step = Step(
            prefill_chunks=tuple((n, int(self.prefilled[i])) for i, n in chunks),
            decode_contexts=tuple(self.requests[i].prompt_tokens + int(self.emitted[i]) for i in decodes),
        )
        return step, chunks, decodes

    def finish_step(self, end: float, chunks: list[tuple[int, int]], decodes: list[int]) -> None:
        """Apply a step ending at `end`: prompts advance, tokens are emitted, finished requests leave."""
        emitting = list(decodes)
        for index, tokens in chunks:
            self.prefilled[index] += tokens
            if self.prefilled[index] == self.requests[index].prompt_tokens:
                emitting.append(index)
                self.first[index] = end
        for index in emitting:
            if self.emitted[index] > 0:
                self.gaps.append(end - self.last_token[index])
            self.emitted[index] += 1
            self.last_token[index] = end
            if self.emitted[index] == self.requests[index].output_tokens:
                self.finish[index] = end
                self.kv_used -= self.requests[index].prompt_tokens + self.requests[index].output_tokens
                self.running.remove(index)
                self.done += 1


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
    Replay `requests` through the continuous-batching scheduler (module docstring), each step
    timed by `step_cost`; `progress(finished, total)` is called after each step that finishes
    a request. `WorkloadError` if a request can never fit the KV cache.
    """
    policy = policy or Policy()
    policy.check()
    requests = sorted(requests, key=lambda r: r.arrival_us)
    if not requests:
        raise WorkloadError("no request to simulate")
    check_requests_fit(requests, policy)
    state = _State(requests, policy)
    now, arrived, steps = 0.0, 0, 0
    queue_integral = system_integral = 0.0
    while state.done < len(requests):
        while arrived < len(requests) and requests[arrived].arrival_us <= now:
            state.waiting.append(arrived)
            arrived += 1
        if not state.running and not state.waiting:
            now = requests[arrived].arrival_us  # idle until the next arrival
            continue
        step, chunks, decodes = state.schedule(now)
        duration = float(step_cost(step))
        if not duration > 0:
            raise WorkloadError(f"step cost must be positive, not {duration} for {step}")
        end = now + duration
        # Requests that arrive during the step wait from their arrival to its end.
        late = _waits_before(requests, arrived, end)
        in_system = len(state.waiting) + len(state.running)
        queue_integral += len(state.waiting) * duration + sum(late)
        system_integral += in_system * duration + sum(late)
        done_before = state.done
        state.finish_step(end, chunks, decodes)
        now, steps = end, steps + 1
        if progress is not None and state.done > done_before:
            progress(state.done, len(requests))
    return ServingResult(
        requests=list(requests),
        first_token_us=state.first,
        finish_us=state.finish,
        admitted_us=state.admitted,
        inter_token_us=np.array(state.gaps),
        steps=steps,
        cards=cards,
        queue_integral_us=queue_integral,
        system_integral_us=system_integral,
        rate_per_s=rate_per_s,
        slo=slo or Slo(),
        policy=policy,
    )


def _waits_before(requests: Sequence[Request], start: int, end: float) -> list[float]:
    """`end - arrival` of each request from index `start` on that arrives by `end` (they are sorted)."""
    waits = []
    for request in requests[start:]:
        if request.arrival_us > end:
            break
        waits.append(end - request.arrival_us)
    return waits


def single_request_ttft_us(prompt_tokens: int, step_cost: StepCost, policy: Policy | None = None) -> float:
    """A lone request's time to first token: its prompt's chunks, one step each."""
    policy = policy or Policy()
    chunk = min(policy.prefill_chunk, policy.max_batched_tokens)
    total, cached = 0.0, 0
    while cached < prompt_tokens:
        tokens = min(chunk, prompt_tokens - cached)
        total += float(step_cost(Step(prefill_chunks=((tokens, cached),))))
        cached += tokens
    return total


def check_requests_fit(requests: Sequence[Request], policy: Policy) -> None:
    """`WorkloadError` for the first request that can never fit the KV cache of `policy`."""
    limit = policy.kv_capacity_tokens
    if limit is None:
        return
    for request in requests:
        if request.prompt_tokens + request.output_tokens > limit:
            raise WorkloadError(
                f"a request of {request.prompt_tokens} prompt and {request.output_tokens} output tokens "
                f"never fits the KV cache of {limit} tokens"
            )


def decode_bound_tokens_per_s(step_cost: StepCost, policy: Policy, context: int) -> float:
    """Tokens per second of back-to-back decode steps of `max_seqs` requests at `context`: the ceiling."""
    step = Step(decode_contexts=(context,) * min(policy.max_seqs, policy.max_batched_tokens))
    return len(step.decode_contexts) * 1e6 / float(step_cost(step))
