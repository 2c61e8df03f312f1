"""
The Spyre plugin's scheduling policy (`Policy(scheduler="spyre")`): how vLLM schedules on the
card through IBM's plugin (vllm-spyre, now sendnn-inference), after its documentation,
"Scheduling and Padding Logic" (`docs/contributing/scheduler.md` of
github.com/torch-spyre/sendnn-inference). Unlike upstream vLLM (`ktir.llm.scheduler`), a step
is **either one prefill chunk of one request or a decode step of the whole batch**, never both:

- **Prefill padding** (`PrefillLayout`): a prompt is right-padded to a whole block
  (`policy.block_size`) and left-padded with dummy blocks to a whole number of chunks
  (`policy.prefill_chunk`, a multiple of the block); every prefill step computes one whole
  chunk, padding included, after the chunks before it.
- **One prefill at a time**, an ongoing prefill before any new request; while requests decode,
  two prefill steps never follow each other (prefill and decode steps interleave); a prefill
  that cannot run leaves the step to the decodes (no idle step).
- **Decode padding** (`_Rectangle`): every sequence of the decode batch holds the same number
  of blocks, shorter ones left-padded with dummy blocks, so the decode step attends over the
  batch's max-tkv for every sequence. A request's tkv is its dummy blocks plus its tokens; a
  request that needs a new block drops a dummy block if it has one, else the whole batch
  widens by one ("tkv jumping"). Before each decode step, the dummy blocks every sequence has
  are removed (vllm-spyre's model runner, `reduce_left_padding`: an assumption here, the
  scheduler's documentation does not say).
- **Admission**: the first chunk needs a free batch slot and no prefill in progress (and the
  KV cache reserved for the prompt and output, as the vLLM policy's); the last chunk needs room
  in the decode batch and the **volumetric constraint**: batch size x max-tkv within
  `policy.max_batch_tkv` (131,072, the documented limit) at every future decode step while
  the sequences run out their outputs (`volume_fits`: the documentation's forward-looking
  check; a decoding sequence's tkv projected one block higher, for a realignment).

The maximum model length is not a separate limit here: a request that can never run (KV cache,
volumetric limit alone) is an error up front. Prefix caching is out of scope.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ktir.llm.scheduling import Scheduled, SchedulerState, Step, StepCost
from ktir.llm.serving_result import Policy
from ktir.llm.workload import Request, WorkloadError


@dataclass(frozen=True)
class PrefillLayout:
    """A prompt padded for the Spyre prefill: dummy blocks on the left, the last block right-padded."""

    prompt: int
    block: int
    chunk: int

    @property
    def padded(self) -> int:
        """The prompt right-padded to a whole block."""
        return -(-self.prompt // self.block) * self.block

    @property
    def chunks(self) -> int:
        """Prefill steps: whole chunks over the left padding and the padded prompt."""
        return -(-self.padded // self.chunk)

    @property
    def left_padding(self) -> int:
        """Dummy positions before the prompt (whole blocks): the padded length fills whole chunks."""
        return self.chunks * self.chunk - self.padded

    def real_tokens(self, chunk: int) -> int:
        """Prompt tokens (not padding) that chunk `chunk` (from 0) computes."""
        start = max(chunk * self.chunk, self.left_padding)
        end = min((chunk + 1) * self.chunk, self.left_padding + self.prompt)
        return max(end - start, 0)

    def tkv_after(self, chunk: int) -> int:
        """The request's tkv after chunk `chunk`: positions filled, left padding included."""
        return min((chunk + 1) * self.chunk, self.left_padding + self.prompt)


class _Rectangle:
    """The decode batch's block table: the same width for every sequence, dummy blocks on the left."""

    def __init__(self, block: int) -> None:
        self.block = block
        self.width = 0
        self.dummy: dict[int, int] = {}
        self.length: dict[int, int] = {}
        """The positions each sequence's next decode attends over (its tokens, the new one included)."""

    def _blocks(self, positions: int) -> int:
        return -(-positions // self.block)

    def join(self, index: int, dummy: int, length: int) -> None:
        """A sequence joins with `dummy` blocks of left padding before `length` positions."""
        own = dummy + self._blocks(length)
        if own > self.width:  # the others are padded to the newcomer's width
            for other in self.dummy:
                self.dummy[other] += own - self.width
            self.width = own
        self.dummy[index] = dummy + self.width - own
        self.length[index] = length

    def advance(self, index: int) -> None:
        """A sequence's next token: one more position, a new block when it crosses one (tkv jumping)."""
        before = self._blocks(self.length[index])
        self.length[index] += 1
        if self._blocks(self.length[index]) == before:
            return
        if self.dummy[index] > 0:
            self.dummy[index] -= 1  # one dummy block fewer keeps the width
            return
        self.width += 1
        for other in self.dummy:
            if other != index:
                self.dummy[other] += 1

    def leave(self, index: int) -> None:
        """A sequence leaves the batch."""
        del self.dummy[index], self.length[index]

    def compact(self) -> None:
        """Drop the dummy blocks every sequence has (`reduce_left_padding`)."""
        common = min(self.dummy.values(), default=self.width)
        for index in self.dummy:
            self.dummy[index] -= common
        self.width -= common

    def tkv(self, index: int) -> int:
        """A sequence's tkv: its dummy positions and its own."""
        return self.dummy[index] * self.block + self.length[index]

    def max_tkv(self) -> int:
        """The positions the decode step attends over, for every sequence."""
        return max(self.tkv(index) for index in self.dummy)


class SpyreState(SchedulerState):
    """The Spyre plugin's policy (module docstring)."""

    def __init__(self, requests: Sequence[Request], policy: Policy) -> None:
        super().__init__(requests, policy)
        self.layouts = [layout(r.prompt_tokens, policy) for r in requests]
        self.chunks_done = [0] * len(requests)
        self.prefilling: int | None = None
        self.last_was_prefill = False
        self.decoding = _Rectangle(policy.block_size)

    def schedule(self, now: float) -> Scheduled:
        """A prefill chunk when one may run, else a decode step of the batch."""
        may_prefill = not (self.last_was_prefill and self.decoding.dummy)
        index = self._prefill_candidate(now) if may_prefill else None
        if index is not None:
            chunk = self.chunks_done[index]
            real = self.layouts[index].real_tokens(chunk)
            step = Step(prefill_chunks=((self.policy.prefill_chunk, chunk * self.policy.prefill_chunk),))
            return Scheduled(step, chunks=[(index, real)])
        if not self.decoding.dummy:
            raise RuntimeError("spyre scheduler: no prefill may run and no request decodes")
        self.decoding.compact()
        decodes = list(self.decoding.dummy)
        step = Step(decode_contexts=(self.decoding.max_tkv(),) * len(decodes))
        return Scheduled(step, decodes=decodes)

    def _prefill_candidate(self, now: float) -> int | None:
        """The request whose chunk runs next: the ongoing prefill, else the head if admitted; or None."""
        index = self.prefilling
        if index is not None:
            return index if not self._is_last_chunk(index) or self._may_decode(index) else None
        if not self.waiting or len(self.running) >= self.policy.max_seqs:
            return None
        head = self.waiting[0]
        if not self.kv_fits(head) or (self._is_last_chunk(head) and not self._may_decode(head)):
            return None  # FIFO: the head blocks the queue
        self.prefilling = self.admit(now)
        return self.prefilling

    def _is_last_chunk(self, index: int) -> bool:
        return self.chunks_done[index] == self.layouts[index].chunks - 1

    def _may_decode(self, index: int) -> bool:
        """The last-chunk constraints: room in the decode batch, and the volumetric limit ahead."""
        if len(self.decoding.dummy) >= self.policy.max_seqs:
            return False
        layout = self.layouts[index]
        request = self.requests[index]
        # (tokens still to generate, tkv now): the documentation's projection
        future = [(request.output_tokens, layout.left_padding + request.prompt_tokens)]
        for other in self.decoding.dummy:
            left = self.requests[other].output_tokens - int(self.emitted[other])
            future.append((left, self.decoding.tkv(other) + self.policy.block_size))
        return volume_fits(future, self.policy.max_batch_tkv)

    def finish_step(self, end: float, scheduled: Scheduled) -> None:
        """Apply the step; a finished prompt joins the decode batch, decodes advance their tkv."""
        self.last_was_prefill = bool(scheduled.chunks)
        super().finish_step(end, scheduled)
        for index, _ in scheduled.chunks:
            self.chunks_done[index] += 1
            if self.chunks_done[index] < self.layouts[index].chunks:
                continue
            self.prefilling = None
            if index in self.running:  # it emitted its first token and has more to come
                layout = self.layouts[index]
                self.decoding.join(index, layout.left_padding // self.policy.block_size, layout.prompt)
                self.decoding.advance(index)
        for index in scheduled.decodes:
            if index in self.decoding.dummy:
                self.decoding.advance(index)

    def leave(self, index: int) -> None:
        """A finished request leaves the decode batch too."""
        super().leave(index)
        if index in self.decoding.dummy:
            self.decoding.leave(index)


def volume_fits(future: Sequence[tuple[int, int]], limit: int) -> bool:
    """
    Whether batch size x max-tkv stays within `limit` at every future decode step, each
    sequence given as (steps it still runs, its tkv now), its tkv growing by one a step: `s`
    steps ahead, the sequences with `s` steps left or more run, the largest at its tkv plus `s`.
    Each batch is checked at its last step, where its max-tkv is largest, as each sequence is
    projected to finish, from the longest-lived on.
    """
    largest, count = 0, 0
    for steps, tkv in sorted(future, key=lambda item: -item[0]):
        largest, count = max(largest, tkv), count + 1
        if count * (largest + steps) > limit:
            return False
    return True


def layout(prompt_tokens: int, policy: Policy) -> PrefillLayout:
    """The prefill layout of a prompt under `policy`'s block and chunk."""
    return PrefillLayout(prompt_tokens, policy.block_size, policy.prefill_chunk)


def check_spyre_fit(requests: Sequence[Request], policy: Policy) -> None:
    """`WorkloadError` for the first request that alone exceeds the volumetric limit."""
    for request in requests:
        padding = layout(request.prompt_tokens, policy).left_padding
        tkv = padding + request.prompt_tokens + request.output_tokens
        if tkv > policy.max_batch_tkv:
            raise WorkloadError(
                f"a request of {request.prompt_tokens} prompt and {request.output_tokens} output tokens "
                f"reaches a tkv of {tkv}, over the volumetric limit of {policy.max_batch_tkv}"
            )


def spyre_single_request_ttft_us(prompt_tokens: int, step_cost: StepCost, policy: Policy) -> float:
    """A lone request's time to first token: its padded prompt's chunks, one step each."""
    chunk = policy.prefill_chunk
    steps = range(layout(prompt_tokens, policy).chunks)
    return sum(float(step_cost(Step(prefill_chunks=((chunk, i * chunk),)))) for i in steps)
