"""Requests for the serving simulator: Poisson arrivals, token distributions, trace files."""

import numpy as np
import pytest

from ktir.llm.workload import Request, TokenCount, WorkloadError, poisson_requests, read_trace


def test_poisson_arrivals_have_the_rate_and_are_seeded():
    requests = poisson_requests(4.0, 4000, TokenCount.parse("100"), TokenCount.parse("uniform:5:9"), seed=1)
    gaps = np.diff([0.0] + [r.arrival_us for r in requests])
    assert gaps.mean() == pytest.approx(250e3, rel=0.05)
    assert {r.prompt_tokens for r in requests} == {100}
    assert {r.output_tokens for r in requests} == {5, 6, 7, 8, 9}
    again = poisson_requests(4.0, 4000, TokenCount.parse("100"), TokenCount.parse("uniform:5:9"), seed=1)
    assert again == requests


def test_normal_counts_are_rounded_and_at_least_one():
    counts = TokenCount.parse("normal:3:5").draw(np.random.default_rng(0), 1000)
    assert counts.min() == 1 and counts.dtype == np.int64


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("0", "token count '0' must be at least 1"),
        ("many", "expected N, uniform:LO:HI or normal:MEAN:STD"),
        ("uniform:9:5", "uniform needs integers 1 <= LO <= HI"),
        ("gamma:1:2", "uniform needs integers"),
    ],
)
def test_bad_token_counts(text, message):
    with pytest.raises(WorkloadError, match=message):
        TokenCount.parse(text)


@pytest.mark.parametrize("rate", [0.0, -1.0, float("nan"), float("inf")])
def test_a_rate_must_be_positive_and_finite(rate):
    with pytest.raises(WorkloadError, match="arrival rate must be positive"):
        poisson_requests(rate, 3, TokenCount.parse("1"), TokenCount.parse("1"))


def test_jsonl_trace(tmp_path):
    path = tmp_path / "trace.jsonl"
    path.write_text(
        '{"arrival_time": 1.5, "prompt_tokens": 10, "output_tokens": 3}\n\n'
        '{"arrival_time": 0.25, "prompt_tokens": 7, "output_tokens": 1}\n'
    )
    assert read_trace(path) == [Request(250000.0, 7, 1), Request(1500000.0, 10, 3)]


@pytest.mark.parametrize(
    "header", ["arrived_at,num_prefill_tokens,num_decode_tokens", "timestamp,input_len,output_len"]
)
def test_csv_traces(tmp_path, header):
    path = tmp_path / "trace.csv"
    path.write_text(f"{header}\n0.0,512,64\n2.0,100,10\n")
    assert read_trace(path) == [Request(0.0, 512, 64), Request(2e6, 100, 10)]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"arrival_time": 0, "prompt_tokens": 3, "output_tokens": 1}\n{"arrival_time": 1\n', ":2: not JSON"),
        ('{"arrival_time": 0, "prompt_tokens": 3}\n', ":1: no field output_tokens or num_decode_tokens"),
        ('{"arrival_time": 0, "prompt_tokens": 3.5, "output_tokens": 1}\n', ":1: prompt_tokens must be a"),
        ('{"arrival_time": -1, "prompt_tokens": 3, "output_tokens": 1}\n', ":1: arrival must be >= 0"),
        ("arrived_at,num_prefill_tokens,num_decode_tokens\n0,5\n", ":2: expected 3 columns"),
        ("arrived_at,num_prefill_tokens,num_decode_tokens\n0,x,5\n", ":2: num_prefill_tokens is not"),
        ("arrived_at,num_prefill_tokens,num_decode_tokens\n0,nan,5\n", ":2: num_prefill_tokens must be f"),
        ("", "has no request"),
    ],
)
def test_malformed_traces_name_the_line(tmp_path, text, message):
    path = tmp_path / "trace.txt"
    path.write_text(text)
    with pytest.raises(WorkloadError, match=message):
        read_trace(path)


def test_a_missing_trace(tmp_path):
    with pytest.raises(WorkloadError, match=r"cannot read trace .*nope\.jsonl"):
        read_trace(tmp_path / "nope.jsonl")
