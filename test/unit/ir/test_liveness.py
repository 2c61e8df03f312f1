"""The one liveness sweep (`ktir.ir.liveness`): what is live, and how many bytes, at each position."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ktir.ir.liveness import live_bytes, live_sets

lifetimes = st.lists(
    st.tuples(st.integers(0, 12), st.integers(0, 6), st.integers(1, 1000)).map(
        lambda t: (t[0], t[0] + t[1], t[2])
    ),
    max_size=12,
)


def test_the_documented_example() -> None:
    assert live_bytes([(0, 1, 8), (1, 2, 4)], 3).tolist() == [8, 12, 4]
    assert list(live_sets([(0, 1, "a"), (1, 2, "b")], 3)) == [["a"], ["a", "b"], ["b"]]


def test_a_lifetime_past_the_last_position_counts_to_the_end() -> None:
    assert live_bytes([(1, 9, 5)], 3).tolist() == [0, 5, 5]
    assert live_bytes([], 2).tolist() == [0, 0] and live_bytes([(0, 0, 3)], 0).tolist() == []


def test_live_sets_sweeps_closed_lifetimes() -> None:
    lifetimes = [(0, 1, "a"), (1, 2, "b"), (4, 4, "c"), (2, 5, "d")]
    assert list(live_sets(lifetimes, 6)) == [["a"], ["a", "b"], ["b", "d"], ["d"], ["c", "d"], ["d"]]


@settings(max_examples=200, deadline=None, derandomize=True)
@given(lifetimes, st.integers(0, 20))
def test_both_sweeps_equal_a_scan_of_every_lifetime(spans: list[tuple[int, int, int]], count: int) -> None:
    scanned = [[i for i, (a, b, _) in enumerate(spans) if a <= p <= b] for p in range(count)]
    assert list(live_sets([(a, b, i) for i, (a, b, _) in enumerate(spans)], count)) == scanned
    assert live_bytes(spans, count).tolist() == [sum(spans[i][2] for i in live) for live in scanned]


def test_live_bytes_past_int64_are_exact_not_an_overflow():
    # a fuzzed kernel's 2^62 x 64 f32 tensor: 2^70 bytes, which int64 cannot hold
    huge = 2**62 * 64 * 4
    assert list(live_bytes([(0, 1, huge), (1, 2, 4)], 3)) == [huge, huge + 4, 4]
