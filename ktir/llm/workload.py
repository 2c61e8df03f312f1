"""
The requests a serving simulation replays (`ktir.llm.serving`): Poisson arrivals or a trace file.

A request is an arrival time, a prompt length and an output length (tokens, the first of which
the prefill gives). `poisson_requests(rate, count, prompt, output, seed)` draws arrival gaps
from an exponential distribution of mean `1 / rate` and lengths from a `TokenCount` (a fixed
count, `uniform:LO:HI` or `normal:MEAN:STD`), all from one NumPy generator seeded with `seed`,
so the same seed gives the same requests. `read_trace(path)` reads one request per line:

- JSONL: `{"arrival_time": 0.5, "prompt_tokens": 812, "output_tokens": 96}` (seconds);
- CSV with a header, in Vidur's trace form (`arrived_at,num_prefill_tokens,num_decode_tokens`)
  or with the JSONL names as columns (`arrival_time,prompt_tokens,output_tokens`; vLLM's
  benchmark names `timestamp`, `input_len`, `output_len` are read too).

```python
requests = poisson_requests(2.0, 100, TokenCount.parse("uniform:256:1024"), TokenCount.parse("128"), seed=0)
requests = read_trace("trace.jsonl")
```
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np


class WorkloadError(ValueError):
    """A bad arrival rate, token distribution or trace file; the message names the file and line."""


@dataclass(frozen=True)
class Request:
    """One request: when it arrives (µs from the start), its prompt and its output tokens."""

    arrival_us: float
    prompt_tokens: int
    output_tokens: int


@dataclass(frozen=True)
class TokenCount:
    """A token count: fixed (`kind` "fixed", `low` the count) or drawn (`uniform`, `normal`)."""

    kind: str
    low: float
    high: float = 0.0

    @classmethod
    def parse(cls, text: str) -> TokenCount:
        """`"512"`, `"uniform:LO:HI"` (integers, inclusive) or `"normal:MEAN:STD"`; else `WorkloadError`."""
        kind, _, rest = text.partition(":")
        try:
            low, high = (float(v) for v in rest.split(":")) if rest else (int(kind), 0)
        except ValueError:
            raise WorkloadError(
                f"token count '{text}': expected N, uniform:LO:HI or normal:MEAN:STD"
            ) from None
        if not rest:
            if low < 1:
                raise WorkloadError(f"token count '{text}' must be at least 1")
            return cls("fixed", low)
        if kind == "uniform" and 1 <= low <= high and low == int(low) and high == int(high):
            return cls("uniform", low, high)
        if kind == "normal" and low >= 1 and high >= 0:
            return cls("normal", low, high)
        raise WorkloadError(
            f"token count '{text}': uniform needs integers 1 <= LO <= HI, normal a MEAN >= 1 and STD >= 0"
        )

    def draw(self, rng: np.random.Generator, count: int) -> np.ndarray:
        """`count` token counts (integers >= 1; a normal draw is rounded and clipped at 1)."""
        if self.kind == "fixed":
            return np.full(count, int(self.low), dtype=np.int64)
        if self.kind == "uniform":
            return rng.integers(int(self.low), int(self.high) + 1, size=count)
        return np.maximum(1, np.rint(rng.normal(self.low, self.high, size=count))).astype(np.int64)

    @property
    def mean(self) -> float:
        """The mean count (of the distribution before rounding and clipping)."""
        return self.low if self.kind != "uniform" else (self.low + self.high) / 2


def poisson_requests(
    rate: float, count: int, prompt: TokenCount, output: TokenCount, seed: int = 0
) -> list[Request]:
    """`count` requests arriving as a Poisson process of `rate` per second (the first one gap after 0)."""
    if not rate > 0 or not np.isfinite(rate):
        raise WorkloadError(f"arrival rate must be positive, not {rate}")
    if count < 1:
        raise WorkloadError(f"request count must be at least 1, not {count}")
    rng = np.random.default_rng(seed)
    arrivals = np.cumsum(rng.exponential(1e6 / rate, size=count))
    prompts, outputs = prompt.draw(rng, count), output.draw(rng, count)
    return [Request(float(a), int(p), int(o)) for a, p, o in zip(arrivals, prompts, outputs, strict=True)]


ARRIVAL_NAMES = ("arrival_time", "arrived_at", "timestamp")
PROMPT_NAMES = ("prompt_tokens", "num_prefill_tokens", "input_len", "prompt_len")
OUTPUT_NAMES = ("output_tokens", "num_decode_tokens", "output_len")
"""Accepted names of a trace's three fields, in JSONL keys or CSV columns (arrival in seconds)."""


def read_trace(path: str | Path) -> list[Request]:
    """The requests of a JSONL or CSV trace, sorted by arrival; `WorkloadError` naming `path:line`."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise WorkloadError(f"cannot read trace '{path}': {error.strerror or error}") from None
    lines = text.splitlines()
    first = next((line for line in lines if line.strip()), "")
    if not first:
        raise WorkloadError(f"trace '{path}' has no request")
    rows = _jsonl_rows(path, lines) if first.lstrip().startswith("{") else _csv_rows(path, lines)
    requests = [_request(path, line, row) for line, row in rows]
    if not requests:
        raise WorkloadError(f"trace '{path}' has no request")
    return sorted(requests, key=lambda r: r.arrival_us)


def _jsonl_rows(path: str | Path, lines: list[str]) -> Iterable[tuple[int, dict[str, object]]]:
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise WorkloadError(f"{path}:{number}: not JSON: {error.msg}") from None
        if not isinstance(row, dict):
            raise WorkloadError(f"{path}:{number}: expected a JSON object")
        yield number, row


def _csv_rows(path: str | Path, lines: list[str]) -> Iterable[tuple[int, dict[str, object]]]:
    reader = csv.DictReader(lines)
    for row in reader:
        if None in row or any(v is None for v in row.values()):
            raise WorkloadError(f"{path}:{reader.line_num}: expected {len(reader.fieldnames or [])} columns")
        yield reader.line_num, dict(row)


def _request(path: str | Path, line: int, row: dict[str, object]) -> Request:
    arrival = _field(path, line, row, ARRIVAL_NAMES, float)
    prompt = _field(path, line, row, PROMPT_NAMES, int)
    output = _field(path, line, row, OUTPUT_NAMES, int)
    if not np.isfinite(arrival) or arrival < 0 or prompt < 1 or output < 1:
        raise WorkloadError(
            f"{path}:{line}: arrival must be >= 0 and token counts >= 1, not {arrival}, {prompt}, {output}"
        )
    return Request(arrival * 1e6, int(prompt), int(output))


def _field(path: str | Path, line: int, row: dict[str, object], names: tuple[str, ...], kind: type) -> float:
    name = next((n for n in names if n in row), None)
    if name is None:
        raise WorkloadError(f"{path}:{line}: no field {' or '.join(names)}")
    value = row[name]
    number = _as_number(value)
    if number is None:
        raise WorkloadError(f"{path}:{line}: {name} is not a number: {value!r}")
    if not np.isfinite(number):
        raise WorkloadError(f"{path}:{line}: {name} must be finite, not {value!r}")
    if kind is int and number != int(number):
        raise WorkloadError(f"{path}:{line}: {name} must be a whole number, not {value!r}")
    return number


def _as_number(value: object) -> float | None:
    """A JSON or CSV field as a float (a number, or a string that spells one); None otherwise."""
    if not isinstance(value, int | float | str):  # a JSON null, list or object
        return None
    try:
        return float(value)
    except ValueError:
        return None


__all__ = ["Request", "TokenCount", "WorkloadError", "poisson_requests", "read_trace"]
