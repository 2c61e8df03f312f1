"""
The result of a serving simulation (`ktir.llm.serving.simulate`) and the limits it ran under:
`Policy` (the scheduler's), `Slo` (the objectives goodput counts), `ServingResult` (per-request
times and the figures serving engineers read from them) and its JSON form.

`result.to_json()` writes the run itself (each request, its first-token, finish and admission
times, every inter-token gap, the scheduler's integrals, policy, SLOs and rate) and, for readers,
its summary (`to_dict`); `ServingResult.from_json(text)` reads it back, and the summary is
computed again from the run:

    text = result.to_json()
    same = ServingResult.from_json(text)    # same.to_dict() == result.to_dict()
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ktir.hardware.cost_model import ATTENTION_BLOCK
from ktir.ir.json_format import read_envelope
from ktir.llm.workload import Request, WorkloadError

SERVING_FORMAT = "ktir-serving-run"
SERVING_VERSION = 1
"""`to_json` writes `{"format": SERVING_FORMAT, "version": SERVING_VERSION, ...}`; `from_json` checks both."""


class ServingFormatError(ValueError):
    """JSON that is not a serving result `from_json` can read; the message says what is wrong."""


SCHEDULERS = ("vllm", "spyre")
"""Scheduling policies: upstream vLLM's (`ktir.llm.scheduler`), the Spyre plugin's (`spyre_scheduler`)."""


@dataclass(frozen=True)
class Policy:
    """The scheduler's limits (vLLM's `max_num_batched_tokens`, `max_num_seqs`, chunk size, cache)."""

    max_batched_tokens: int = 2048
    """The token budget of a step (vLLM's policy; the spyre policy's steps are one chunk or decodes)."""
    max_seqs: int = 32
    prefill_chunk: int = 1024
    """Largest prefill chunk of one request in one step (vLLM's `long_prefill_token_threshold`);
    with the spyre policy, the chunk every prefill step computes, padding included."""
    kv_capacity_tokens: int | None = None
    """Tokens the KV cache holds, over all running requests. None: `simulate` sets no limit, and
    `simulate_serving` takes what the card's device memory leaves (`kv_capacity_tokens`)."""
    scheduler: str = "vllm"
    """`"vllm"` (upstream vLLM's v1 policy) or `"spyre"` (the Spyre plugin's, `ktir.llm.spyre_scheduler`)."""
    block_size: int = ATTENTION_BLOCK
    """Tokens per KV-cache block of the spyre policy (assumed: ktir's paged cache, `ATTENTION_BLOCK`)."""
    max_batch_tkv: int = 131_072
    """The spyre policy's volumetric limit: batch size x max-tkv of every decode step."""

    @property
    def step_tokens(self) -> int:
        """The most tokens one step computes: the budget (vLLM) or the chunk (spyre)."""
        return self.prefill_chunk if self.scheduler == "spyre" else self.max_batched_tokens

    def check(self) -> None:
        """`WorkloadError` for a non-positive limit, an unknown scheduler or a chunk not in whole blocks."""
        limits = ("max_batched_tokens", "max_seqs", "prefill_chunk", "kv_capacity_tokens", "block_size")
        for name in (*limits, "max_batch_tkv"):
            if getattr(self, name) is not None and getattr(self, name) < 1:
                raise WorkloadError(f"{name} must be at least 1, not {getattr(self, name)}")
        if self.scheduler not in SCHEDULERS:
            raise WorkloadError(f"scheduler must be one of {', '.join(SCHEDULERS)}, not {self.scheduler!r}")
        if self.scheduler == "spyre" and self.prefill_chunk % self.block_size:
            raise WorkloadError(
                f"the spyre chunk ({self.prefill_chunk}) must be whole blocks of {self.block_size}"
            )


@dataclass(frozen=True)
class Slo:
    """Service-level objectives (ms); a request meets them if it meets every one given."""

    ttft_ms: float | None = None
    tpot_ms: float | None = None
    """Mean time per output token after the first (the request's mean inter-token latency)."""
    e2e_ms: float | None = None


@dataclass
class ServingResult:
    """Per-request times of a simulation, and the figures serving engineers read from them."""

    requests: list[Request]
    first_token_us: np.ndarray
    finish_us: np.ndarray
    admitted_us: np.ndarray
    inter_token_us: np.ndarray
    """Every gap between two consecutive tokens of a request, over all requests."""
    steps: int
    cards: int = 1
    queue_integral_us: float = 0.0
    """Integral over time of the waiting queue's length, as the scheduler held it."""
    system_integral_us: float = 0.0
    """Integral over time of the requests in the system (arrived, not finished)."""
    rate_per_s: float | None = None
    """The configured Poisson rate, if any."""
    slo: Slo = field(default_factory=Slo)
    policy: Policy = field(default_factory=Policy)
    """The scheduler's limits the run was simulated with (the KV capacity resolved)."""

    @property
    def arrival_us(self) -> np.ndarray:
        """Arrival times."""
        return np.array([r.arrival_us for r in self.requests])

    @property
    def output_tokens(self) -> np.ndarray:
        """Output tokens of each request."""
        return np.array([r.output_tokens for r in self.requests])

    @property
    def ttft_us(self) -> np.ndarray:
        """Time to first token of each request: arrival to the end of the step that completes its prompt."""
        return self.first_token_us - self.arrival_us

    @property
    def e2e_us(self) -> np.ndarray:
        """End-to-end latency of each request: arrival to its last token."""
        return self.finish_us - self.arrival_us

    @property
    def queue_us(self) -> np.ndarray:
        """Queueing delay of each request: arrival to admission."""
        return self.admitted_us - self.arrival_us

    @property
    def tpot_us(self) -> np.ndarray:
        """Mean time per output token after the first, of each request (NaN for one-token outputs)."""
        gaps = self.output_tokens - 1
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(gaps > 0, (self.finish_us - self.first_token_us) / np.maximum(gaps, 1), np.nan)

    @property
    def duration_us(self) -> float:
        """From time 0 (the trace's origin) to the last token."""
        return float(self.finish_us.max())

    @property
    def tokens_per_second_per_card(self) -> float:
        """Output tokens per second of the whole run, per card."""
        return float(self.output_tokens.sum()) * 1e6 / self.duration_us / self.cards

    @property
    def tokens_per_second_per_user(self) -> float:
        """Median decode speed one user sees: 1 / TPOT (requests with at least two output tokens)."""
        tpot = self.tpot_us[~np.isnan(self.tpot_us)]
        return float(np.median(1e6 / tpot)) if tpot.size and tpot.min() > 0 else float("nan")

    @property
    def arrival_rate_per_s(self) -> float:
        """Requests per second over the arrivals: count / last arrival time."""
        last = float(self.arrival_us.max())
        return len(self.requests) * 1e6 / last if last > 0 else float("nan")

    def meets_slo(self) -> np.ndarray:
        """Which requests meet every objective of `slo`."""
        ok = np.ones(len(self.requests), dtype=bool)
        for limit, values in (
            (self.slo.ttft_ms, self.ttft_us),
            (self.slo.tpot_ms, np.nan_to_num(self.tpot_us)),
            (self.slo.e2e_ms, self.e2e_us),
        ):
            if limit is not None:
                ok &= values <= limit * 1e3
        return ok

    @property
    def goodput_per_s(self) -> float:
        """Requests per second that meet the SLOs (all of them without SLOs)."""
        return float(self.meets_slo().sum()) * 1e6 / self.duration_us

    def littles_law(self) -> dict[str, float]:
        """
        Little's law on the simulated system and queue: the time-average count (integrated from
        the scheduler's own state) against arrival rate x mean time (from the request records).
        """
        rate = len(self.requests) / self.duration_us
        return {
            "system_mean_count": self.system_integral_us / self.duration_us,
            "system_rate_x_time": rate * float(self.e2e_us.mean()),
            "queue_mean_count": self.queue_integral_us / self.duration_us,
            "queue_rate_x_time": rate * float(self.queue_us.mean()),
        }

    def to_dict(self) -> dict[str, Any]:
        """Every figure as plain data (milliseconds, tokens per second), for JSON."""
        return {
            "requests": len(self.requests), "steps": self.steps, "cards": self.cards,
            "rate_per_s": self.rate_per_s, "arrival_rate_per_s": self.arrival_rate_per_s,
            "duration_s": self.duration_us / 1e6, "ttft_ms": percentiles(self.ttft_us / 1e3),
            "itl_ms": percentiles(self.inter_token_us / 1e3), "tpot_ms": percentiles(self.tpot_us / 1e3),
            "e2e_ms": percentiles(self.e2e_us / 1e3), "queue_ms": percentiles(self.queue_us / 1e3),
            "tokens_per_second_per_card": self.tokens_per_second_per_card,
            "tokens_per_second_per_user": self.tokens_per_second_per_user,
            "goodput_requests_per_s": self.goodput_per_s,
            "slo": {"ttft_ms": self.slo.ttft_ms, "tpot_ms": self.slo.tpot_ms, "e2e_ms": self.slo.e2e_ms},
            "slo_attainment": float(self.meets_slo().mean()), "littles_law": self.littles_law(),
        }  # fmt: skip

    def to_json(self, indent: int | None = 2) -> str:
        """
        The run as JSON: `run` holds what `from_json` reads back (times in µs), `summary` is
        `to_dict()`. NaN (an empty percentile) is written as null. Deterministic.
        """
        run = {
            "requests": [[r.arrival_us, r.prompt_tokens, r.output_tokens] for r in self.requests],
            "first_token_us": self.first_token_us.tolist(), "finish_us": self.finish_us.tolist(),
            "admitted_us": self.admitted_us.tolist(), "inter_token_us": self.inter_token_us.tolist(),
            "steps": self.steps, "cards": self.cards, "queue_integral_us": self.queue_integral_us,
            "system_integral_us": self.system_integral_us, "rate_per_s": self.rate_per_s,
            "slo": asdict(self.slo), "policy": asdict(self.policy),
        }  # fmt: skip
        data = {"format": SERVING_FORMAT, "version": SERVING_VERSION, "run": run, "summary": self.to_dict()}
        return json.dumps(_nan_to_none(data), indent=indent, allow_nan=False)

    @classmethod
    def from_json(cls, text: str) -> ServingResult:
        """The result `to_json` wrote; `ServingFormatError` for anything else."""
        data = read_envelope(text, SERVING_FORMAT, SERVING_VERSION, "ktir serving result", ServingFormatError)
        try:
            return _result_from_run(data["run"])
        except (KeyError, TypeError, ValueError, WorkloadError) as error:
            raise ServingFormatError(f"malformed serving result: {type(error).__name__}: {error}") from None


def percentiles(values: np.ndarray) -> dict[str, float]:
    """p50, p90, p99 and the mean of `values` (NaNs ignored; NaN when there are none)."""
    values = values[~np.isnan(values)]
    if not values.size:
        return {"p50": float("nan"), "p90": float("nan"), "p99": float("nan"), "mean": float("nan")}
    p50, p90, p99 = np.percentile(values, [50, 90, 99])
    return {"p50": float(p50), "p90": float(p90), "p99": float(p99), "mean": float(values.mean())}


def _nan_to_none(value: Any) -> Any:
    """`value` with every NaN float replaced by None (JSON has no NaN)."""
    if isinstance(value, dict):
        return {k: _nan_to_none(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_nan_to_none(v) for v in value]
    if isinstance(value, float) and np.isnan(value):
        return None
    return value


def _times(run: dict[str, Any], name: str, count: int | None) -> np.ndarray:
    """The float array `name` of `run`, of `count` entries when given."""
    values = np.array(run[name], dtype=float).reshape(-1)
    if count is not None and values.size != count:
        raise ValueError(f"{name} has {values.size} entries for {count} requests")
    return values


def _result_from_run(run: dict[str, Any]) -> ServingResult:
    """A `ServingResult` from the `run` part of its JSON form."""
    requests = [Request(float(a), int(p), int(o)) for a, p, o in run["requests"]]
    policy = Policy(**run["policy"])
    policy.check()
    return ServingResult(
        requests=requests,
        first_token_us=_times(run, "first_token_us", len(requests)),
        finish_us=_times(run, "finish_us", len(requests)),
        admitted_us=_times(run, "admitted_us", len(requests)),
        inter_token_us=_times(run, "inter_token_us", None),
        steps=int(run["steps"]),
        cards=int(run["cards"]),
        queue_integral_us=float(run["queue_integral_us"]),
        system_integral_us=float(run["system_integral_us"]),
        rate_per_s=None if run["rate_per_s"] is None else float(run["rate_per_s"]),
        slo=Slo(**run["slo"]),
        policy=policy,
    )
