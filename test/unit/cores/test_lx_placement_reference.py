"""
The reference stack's solver test cases (torch-spyre `tests/inductor/test_scratchpad_solver.py`),
rewritten for `ktir.cores.lx_placement.plan`: the same buffers, limits and alignments, and the
addresses the reference's greedy, first-fit and best-fit solvers give. Where the reference
accepts a set of layouts, the value asserted here is the one its solver produces (worked out in
the comments).
"""

from __future__ import annotations

import pytest

from ktir.cores.lx_placement import SOLVERS, plan

SMALL, LARGE, ALIGNMENT = 10, 512, 128  # the reference's SMALL_SIZE, LARGE_SIZE, ALIGNMENT
FIT_SOLVERS = ("firstfit", "bestfit")


def buf(name: str, size: int, uses: list[int], **extra: object) -> dict[str, object]:
    return {"name": name, "size": size, "uses": uses, **extra}


def three_small() -> list[dict[str, object]]:
    return [buf("buffer0", 3, [0, 1]), buf("buffer1", 3, [0, 1]), buf("buffer2", 4, [0, 1])]


@pytest.mark.parametrize("solver", SOLVERS)
def test_simple_layout(solver: str) -> None:
    assert plan(three_small(), SMALL, 1, solver) == [0, 3, 6]


@pytest.mark.parametrize("solver", SOLVERS)
def test_simple_layout_below_alignment(solver: str) -> None:
    # Sizes are not rounded up to the alignment: buffer0 (3 bytes) fits the 10-byte limit at 0;
    # the next aligned address, 128, leaves no room for the others.
    assert plan(three_small(), SMALL, ALIGNMENT, solver) == [0, None, None]


@pytest.mark.parametrize("solver", SOLVERS)
def test_alignment_enforced(solver: str) -> None:
    assert plan(three_small(), LARGE, ALIGNMENT, solver) == [0, 128, 256]


@pytest.mark.parametrize("solver", SOLVERS)
def test_simple_eviction_layout(solver: str) -> None:
    specs = [buf("buffer0", 7, [0, 1]), buf("buffer1", 4, [0, 1]), buf("buffer2", 3, [0, 1])]
    assert plan(specs, SMALL, 1, solver) == [0, None, 7]


@pytest.mark.parametrize("solver", SOLVERS)
def test_realloc(solver: str) -> None:
    assert plan([buf("buffer0", 10, [0, 1]), buf("buffer1", 3, [2])], SMALL, 1, solver) == [0, 0]


@pytest.mark.parametrize(
    ("solver", "expected"), [("greedy", [0, 3, 6, 3]), ("firstfit", [6, 0, 3, 0]), ("bestfit", [6, 0, 3, 0])]
)
def test_realloc_between(solver: str, expected: list[int]) -> None:
    # First-fit and best-fit place buffer3 (score 1/1.5), buffer1 and buffer2 (2/2.5 each) before
    # buffer0 (4/2.5); greedy places them in time order.
    specs = [
        buf("buffer0", 3, [0, 3]),
        buf("buffer1", 3, [1, 2]),
        buf("buffer2", 3, [2, 3]),
        buf("buffer3", 3, [3]),
    ]
    assert plan(specs, SMALL, 1, solver) == expected


@pytest.mark.parametrize(
    ("solver", "expected"),
    [("greedy", [0, 256, 384, 256]), ("firstfit", [256, 0, 128, 0]), ("bestfit", [256, 0, 128, 0])],
)
def test_realloc_between_with_alignment(solver: str, expected: list[int]) -> None:
    specs = [
        buf("buffer0", 200, [0, 3]),
        buf("buffer1", 100, [1, 2]),
        buf("buffer2", 100, [2, 3]),
        buf("buffer3", 100, [3]),
    ]
    assert plan(specs, LARGE, ALIGNMENT, solver) == expected


@pytest.mark.parametrize("solver", SOLVERS)
def test_inplace_allocation(solver: str) -> None:
    specs = [buf("buffer0", LARGE, [0, 3]), buf("buffer1", LARGE, [3], in_place_parents=["buffer0"])]
    assert plan(specs, LARGE + 1, ALIGNMENT, solver) == [0, 0]


@pytest.mark.parametrize(
    ("solver", "expected"), [("greedy", [0, None]), ("firstfit", [None, 0]), ("bestfit", [None, 0])]
)
def test_without_inplace_allocation(solver: str, expected: list[int | None]) -> None:
    # First-fit and best-fit place the short-lived buffer1 (score 1/1.5) first.
    specs = [buf("buffer0", LARGE, [0, 3]), buf("buffer1", LARGE, [3])]
    assert plan(specs, LARGE, ALIGNMENT, solver) == expected


@pytest.mark.parametrize("solver", SOLVERS)
def test_multiple_evictions_do_not_corrupt_allocation(solver: str) -> None:
    specs = [buf(f"buffer{i}", SMALL, [0, 1]) for i in range(3)] + [buf("buffer3", SMALL, [2])]
    assert plan(specs, SMALL, 1, solver) == [0, None, None, 0]


@pytest.mark.parametrize("solver", SOLVERS)
def test_size_against_the_limit(solver: str) -> None:
    # test_first_buffer_exceeds_limit_is_evicted, test_single_buffer_placed_at_zero,
    # test_single_buffer_evicted_when_too_large, test_empty_returns_empty_list.
    assert plan([buf("buffer0", SMALL + 1, [0, 1])], SMALL, 1, solver) == [None]
    assert plan([buf("a", 10, [0, 4])], SMALL, 1, solver) == [0]
    assert plan([buf("a", 11, [0, 4])], 10, 1, solver) == [None]
    assert plan([], SMALL, 1, solver) == []


@pytest.mark.parametrize("solver", SOLVERS)
def test_non_overlapping_lifetimes_reuse_address(solver: str) -> None:
    assert plan([buf("b1", 20, [0, 4]), buf("b2", 20, [5, 9])], LARGE, 1, solver) == [0, 0]


@pytest.mark.parametrize("solver", SOLVERS)
def test_concurrent_buffers_packed_input_order(solver: str) -> None:
    specs = [buf("a", 10, [0, 3]), buf("b", 20, [0, 3]), buf("c", 30, [0, 3])]
    assert plan(specs, 60, 1, solver) == [0, 10, 30]
    # test_largest_buffer_evicted_when_full: 20 bytes remain for c.
    assert plan(specs, 50, 1, solver) == [0, 10, None]


@pytest.mark.parametrize("solver", SOLVERS)
def test_alignment_pads_between_buffers(solver: str) -> None:
    assert plan([buf("a", 10, [0, 3]), buf("b", 10, [0, 3])], LARGE, 128, solver) == [0, 128]


@pytest.mark.parametrize("solver", SOLVERS)
def test_alignment_can_cause_eviction(solver: str) -> None:
    # a(13)@0: the next 10-aligned address is 20, and 20 + 12 > 30.
    assert plan([buf("a", 13, [0, 4]), buf("b", 12, [0, 4])], 30, 10, solver) == [0, None]


@pytest.mark.parametrize("solver", SOLVERS)
def test_child_reuses_parent_address(solver: str) -> None:
    specs = [buf("P", 20, [0, 4]), buf("C", 15, [4, 8], in_place_parents=["P"])]
    assert plan(specs, LARGE, 1, solver) == [0, 0]


@pytest.mark.parametrize("solver", SOLVERS)
def test_child_falls_back_when_parent_evicted(solver: str) -> None:
    specs = [buf("P", 200, [0, 4]), buf("C", 15, [4, 8], in_place_parents=["P"])]
    assert plan(specs, 100, 1, solver) == [None, 0]


@pytest.mark.parametrize("solver", SOLVERS)
def test_live_parent_footprint_not_reused_at_handoff(solver: str) -> None:
    # The child takes the parent's base; the stranger, live at the handoff, stays off all 40
    # bytes of the parent (first-fit and best-fit order: parent 1.75/2.5, stranger 2/2.5, child
    # 2.75/2.5).
    specs = [
        buf("parent", 40, [0, 1]),
        buf("child", 5, [1, 3], in_place_parents=["parent"]),
        buf("stranger", 20, [1, 2]),
    ]
    assert plan(specs, 120, 1, solver) == [0, 0, 40]


@pytest.mark.parametrize(
    ("solver", "expected"), [("greedy", [0, 0, 40]), ("firstfit", [0, 40, 0]), ("bestfit", [0, 40, 0])]
)
def test_second_child_does_not_take_a_handed_off_slot(solver: str, expected: list[int]) -> None:
    specs = [
        buf("parent", 40, [0, 1]),
        buf("first", 20, [1, 3], in_place_parents=["parent"]),
        buf("second", 5, [1], in_place_parents=["parent"]),
    ]
    assert plan(specs, 120, 1, solver) == expected


@pytest.mark.parametrize(
    ("solver", "expected"),
    [("greedy", [0, 0, None, 20]), ("firstfit", [None, 0, 0, 20]), ("bestfit", [None, 0, 0, 20])],
)
def test_in_place_merge_stays_within_capacity(solver: str, expected: list[int | None]) -> None:
    # Greedy places stacked first and has no room left for the parent (20 + 20 > 30). First-fit
    # and best-fit place late (score 1/1.5) and the parent first, so stacked has no room; late
    # sits on the parent's base while the child lives, so the child cannot take it. Either way
    # the child goes to 20 and ends at 25 <= 30.
    specs = [
        buf("stacked", 20, [0, 2]),
        buf("late", 5, [6]),
        buf("parent", 20, [0, 1]),
        buf("child", 5, [1, 2, 5, 6], in_place_parents=["parent"]),
    ]
    assert plan(specs, 30, 10, solver) == expected


def two_gap_buffers() -> list[dict[str, object]]:
    """When x is placed, the free ranges are [0, 40) (waste 30) and [100, 120) (waste 10)."""
    return [
        buf("b_mid", 40, [2, 3]),
        buf("b_left", 30, [1, 4]),
        buf("b_right", 30, [3, 7]),
        buf("x", 10, [4, 8]),
    ]


def test_firstfit_picks_first_gap_and_bestfit_the_tightest() -> None:
    assert plan(two_gap_buffers(), 120, 1, "firstfit") == [0, 40, 70, 0]
    assert plan(two_gap_buffers(), 120, 1, "bestfit") == [0, 40, 70, 100]


def test_bestfit_measures_waste_from_the_aligned_start() -> None:
    # Order b1, b2, b0, b3. When b3 (20 bytes) is placed, b1 holds [0, 15) and b0 [40, 60): the
    # free ranges are [15, 40) and [60, 80). From its 10-aligned start 20, [15, 40) leaves 0
    # bytes, as does [60, 80): the tie goes to the first, although [60, 80) is the shorter.
    specs = [buf("b0", 20, [0, 2]), buf("b1", 15, [3]), buf("b2", 40, [0]), buf("b3", 20, [1, 3])]
    assert plan(specs, 80, 10, "bestfit") == [40, 0, 0, 20]


@pytest.mark.parametrize("solver", FIT_SOLVERS)
def test_score_ordering(solver: str) -> None:
    # test_higher_use_count_placed_first
    specs = [buf("few", 10, [0, 4]), buf("many", 10, [0, 1, 2, 3, 4])]
    assert plan(specs, 10, 1, solver) == [None, 0]
    # test_inplace_discount_raises_priority
    specs = [
        buf("plain", 10, [0, 4]),
        buf("parent", 10, [0, 4]),
        buf("child", 10, [4, 8], in_place_parents=["parent"]),
    ]
    assert plan(specs, 10, 1, solver) == [None, 0, 0]
    # test_failed_inplace_reuse_does_not_overlap_live_parent
    specs = [
        buf("parent", 20, [0, 4]),
        buf("blocker", 5, [5, 8]),
        buf("child", 10, [4, 8], in_place_parents=["parent"]),
    ]
    assert plan(specs, 30, 1, solver) == [0, 0, 20]
    # test_write_first_buffer_placed_before_read_only
    specs = [buf("reader", 10, [0, 4], first_use_is_read=True), buf("writer", 10, [0, 4])]
    assert plan(specs, 10, 1, solver) == [None, 0]


@pytest.mark.parametrize("solver", FIT_SOLVERS)
def test_parents_before_children_then_by_score(solver: str) -> None:
    """
    The order is a topological sort (Kahn's) that always takes the best-scored buffer whose
    parents are placed: c (score 0.5) waits for its parent p (2.3), and x (1.6) goes before p.
    x then holds the only 10 bytes while p lives, so p is not placed and c has no slot either.
    """
    specs = [buf("p", 10, [0, 5]), buf("c", 10, [5], in_place_parents=["p"]), buf("x", 10, [3, 6])]
    assert plan(specs, 10, 1, solver) == [None, None, 0]


def test_an_in_place_cycle_is_refused() -> None:
    specs = [buf("a", 10, [2], in_place_parents=["b"]), buf("b", 10, [2], in_place_parents=["a"])]
    with pytest.raises(ValueError, match=r"in-place parents form a cycle: a -> b -> a"):
        plan(specs, 100, 1, "firstfit")
