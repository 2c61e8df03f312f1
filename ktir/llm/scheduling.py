"""
What every scheduling policy of the serving simulator shares: the `Step` a scheduler runs, the
requests' bookkeeping (admission, KV-cache reservation, tokens emitted, times), and the replay
loop that runs a policy's steps against a `StepCost` and integrates the queue for Little's law.

A policy (`ktir.llm.scheduler`, upstream vLLM's; `ktir.llm.spyre_scheduler`, the Spyre plugin's)
is a `SchedulerState` whose `schedule(now)` picks the next step; `replay` does the rest.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

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


@dataclass
class Scheduled:
    """A step chosen by a policy, and what it does to the requests."""

    step: Step
    chunks: list[tuple[int, int]] = field(default_factory=list)
    """`(request, prompt tokens)`: the real prompt tokens each prefilling request advances by."""
    decodes: list[int] = field(default_factory=list)
    """Requests that decode one token."""


class SchedulerState(ABC):
    """
    The requests' state during a simulation (one instance per run): a policy subclasses it and
    defines `schedule`. Admission reserves the request's prompt and output tokens of the KV
    cache (`kv_fits`, `admit`); it is freed when the request leaves, so none is ever preempted.
    """

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

    @abstractmethod
    def schedule(self, now: float) -> Scheduled:
        """The next step at `now` (the policy's rule); only called with requests running or waiting."""

    def kv_need(self, index: int) -> int:
        """Tokens of cache a request reserves: its prompt and its whole output."""
        return self.requests[index].prompt_tokens + self.requests[index].output_tokens

    def kv_fits(self, index: int) -> bool:
        """Whether the KV cache holds request `index` beside the running ones."""
        limit = self.policy.kv_capacity_tokens
        return limit is None or self.kv_used + self.kv_need(index) <= limit

    def admit(self, now: float) -> int:
        """Admit the head of the waiting queue at `now`: it runs and holds its cache. Its index."""
        index = self.waiting.popleft()
        self.running.append(index)
        self.kv_used += self.kv_need(index)
        self.admitted[index] = now
        return index

    def finish_step(self, end: float, scheduled: Scheduled) -> None:
        """Apply a step ending at `end`: prompts advance, tokens are emitted, finished requests leave."""
        emitting = list(scheduled.decodes)
        for index, tokens in scheduled.chunks:
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
                self.leave(index)

    def leave(self, index: int) -> None:
        """A finished request leaves and frees its cache."""
        self.kv_used -= self.kv_need(index)
        self.running.remove(index)
        self.done += 1


def replay(
    state: SchedulerState,
    step_cost: StepCost,
    *,
    cards: int = 1,
    slo: Slo | None = None,
    rate_per_s: float | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ServingResult:
    """
    Run `state`'s policy over its requests (sorted by arrival), each step timed by `step_cost`:
    arrivals join the waiting queue, the policy picks a step, time advances by its cost; when
    nothing is running or waiting, time jumps to the next arrival. `progress(finished, total)`
    is called after each step that finishes a request.
    """
    requests = state.requests
    now, arrived, steps = 0.0, 0, 0
    queue_integral = system_integral = 0.0
    while state.done < len(requests):
        while arrived < len(requests) and requests[arrived].arrival_us <= now:
            state.waiting.append(arrived)
            arrived += 1
        if not state.running and not state.waiting:
            now = requests[arrived].arrival_us  # idle until the next arrival
            continue
        scheduled = state.schedule(now)
        duration = float(step_cost(scheduled.step))
        if not duration > 0:
            raise WorkloadError(f"step cost must be positive, not {duration} for {scheduled.step}")
        end = now + duration
        # Requests that arrive during the step wait from their arrival to its end.
        late = _waits_before(requests, arrived, end)
        in_system = len(state.waiting) + len(state.running)
        queue_integral += len(state.waiting) * duration + sum(late)
        system_integral += in_system * duration + sum(late)
        done_before = state.done
        state.finish_step(end, scheduled)
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
        policy=state.policy,
    )


def _waits_before(requests: Sequence[Request], start: int, end: float) -> list[float]:
    """`end - arrival` of each request from index `start` on that arrives by `end` (they are sorted)."""
    waits = []
    for request in requests[start:]:
        if request.arrival_us > end:
            break
        waits.append(end - request.arrival_us)
    return waits


def check_kv_fit(requests: Sequence[Request], policy: Policy) -> None:
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
