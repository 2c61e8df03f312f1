"""LX address planning (`ktir.cores.lx_placement.plan`): the three solvers, their rules and invariants."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ktir.cores.lx_placement import SOLVERS
from ktir.cores.lx_placement import plan as plan_on
from ktir.hardware.target import SPYRE


def plan(
    buffers: list[dict[str, object]],
    limit: int = SPYRE.lx_usable_bytes,
    alignment: int = SPYRE.lx_alignment,
    solver: str = "greedy",
) -> list[int | None]:
    """`ktir.cores.lx_placement.plan` on Spyre's LX unless told otherwise."""
    return plan_on(buffers, limit, alignment, solver)


def buf(name: str, size: int, uses: list[int], **extra: object) -> dict[str, object]:
    return {"name": name, "size": size, "uses": uses, **extra}


def test_usable_lx_is_the_reference_figure() -> None:
    assert SPYRE.lx_usable_bytes == 1_677_721
    # As in the reference, a buffer fits while it ends by the limit, aligned or not.
    assert plan([buf("a", 1_677_721, [0])]) == [0]
    assert plan([buf("a", 1_677_722, [0])]) == [None]


@pytest.mark.parametrize("solver", SOLVERS)
def test_docstring_example(solver: str) -> None:
    a, b = buf("a", 1000, [0, 1]), buf("b", 1000, [1, 2])
    assert sorted(plan([a, b], solver=solver)) == [0, 1024]  # type: ignore[type-var]
    b_in_place = buf("b", 1000, [1, 2], in_place_parents=["a"])
    assert plan([a, b_in_place], solver=solver) == [0, 0]


@pytest.mark.parametrize("solver", SOLVERS)
def test_no_in_place_reuse_unless_the_parent_dies_there_and_is_large_enough(solver: str) -> None:
    parent = buf("p", 512, [0, 1, 2])  # still used after the child starts at op 1
    child = buf("c", 512, [1, 3], in_place_parents=["p"])
    addresses = plan([parent, child], solver=solver)
    assert addresses[0] != addresses[1]
    small_parent = buf("p", 256, [0, 1])
    big_child = buf("c", 512, [1, 3], in_place_parents=["p"])
    addresses = plan([small_parent, big_child], solver=solver)
    assert addresses[0] != addresses[1]


def test_greedy_order_of_choices() -> None:
    # Address 0 when every live buffer lies above: a frees [0, 256) after op 1, c fits there.
    specs = [buf("a", 256, [0, 1]), buf("b", 256, [0, 3]), buf("c", 256, [2, 3])]
    assert plan(specs, solver="greedy") == [0, 256, 0]
    # Otherwise the aligned high-water mark (200 bytes round up to 256).
    assert plan([buf("a", 200, [0, 3]), buf("b", 256, [1, 2])], solver="greedy") == [0, 256]
    # Above the high-water mark LX is full: the first gap, here [256, 512).
    specs = [buf("a", 256, [0, 3]), buf("g", 256, [0, 1]), buf("x", 256, [0, 3]), buf("c", 256, [2, 3])]
    assert plan(specs, limit=768, solver="greedy") == [0, 256, 512, 256]
    # No room at all: left in device memory.
    assert plan([buf("a", 512, [0, 1]), buf("b", 512, [1])], limit=768) == [0, None]


def test_firstfit_takes_the_first_gap_and_bestfit_the_tightest() -> None:
    # Priority order x1, w2, x3, w4, n. When n is placed, w2 and w4 are live at [512, 640) and
    # [896, 1024): the free ranges are [0, 512) and [640, 896).
    specs = [
        buf("x1", 512, [0, 1]),
        buf("w2", 128, [0, 1, 2, 3, 4]),
        buf("x3", 256, [0, 2]),
        buf("w4", 128, [0, 4]),
        buf("n", 256, [3, 6], first_use_is_read=True),
    ]
    assert plan(specs, limit=1024, solver="firstfit") == [0, 512, 640, 896, 0]
    assert plan(specs, limit=1024, solver="bestfit") == [0, 512, 640, 896, 640]


def test_a_parent_is_replaced_in_place_by_one_child_only() -> None:
    specs = [buf("p", 256, [0, 1]), buf("c1", 256, [1, 2], in_place_parents=["p"])]
    specs.append(buf("c2", 256, [1, 2], in_place_parents=["p"]))
    for solver in SOLVERS:
        addresses = plan(specs, solver=solver)
        assert addresses[0] in (addresses[1], addresses[2]) and addresses[1] != addresses[2]


def test_bad_input_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown solver 'lru'"):
        plan([], solver="lru")
    with pytest.raises(ValueError, match="buffer #0 lacks uses"):
        plan([{"name": "a", "size": 4}])
    with pytest.raises(ValueError, match="uses must be a non-empty increasing list"):
        plan([buf("a", 4, [2, 1])])
    with pytest.raises(ValueError, match="unknown in-place parents"):
        plan([buf("a", 4, [0], in_place_parents=["zz"])])
    for size in (0, -4, True, "4", float("nan"), float("inf")):
        with pytest.raises(ValueError, match="size must be a positive number of bytes"):
            plan([buf("a", size, [0])])


@pytest.mark.parametrize("solver", SOLVERS)
def test_buffers_smaller_than_the_alignment_keep_their_size(solver: str) -> None:
    """
    The reference sizes a buffer as `128 * sticks / cores` bytes, which can be a fraction of
    a stick (one stick over 32 cores is 4.0). Each starts on an aligned address but occupies
    only its own bytes (a fraction rounds up to a whole byte), so a 127.5-byte buffer just
    fits below a 256-byte limit at 128 while a 129-byte one does not.
    """
    specs = [buf("a", 4.0, [0, 2]), buf("b", 1, [0, 2]), buf("c", 127.5, [1, 2])]
    addresses = plan(specs, limit=1024, alignment=128, solver=solver)
    assert sorted(addresses) == [0, 128, 256]  # type: ignore[type-var]
    assert plan(specs, limit=256, alignment=128, solver=solver).count(None) == 1
    specs = [buf("a", 4.0, [0, 2]), buf("c", 127.5, [1, 2])]
    assert sorted(plan(specs, limit=256, alignment=128, solver=solver)) == [0, 128]  # type: ignore[type-var]
    specs = [buf("a", 4.0, [0, 2]), buf("c", 129, [1, 2])]
    assert plan(specs, limit=256, alignment=128, solver=solver).count(None) == 1


@st.composite
def buffer_sets(draw: st.DrawFn) -> list[dict[str, object]]:
    count = draw(st.integers(1, 12))
    specs: list[dict[str, object]] = []
    for index in range(count):
        start = draw(st.integers(0, 8))
        uses = sorted({start, *draw(st.lists(st.integers(start, start + 6), max_size=3))})
        parents = draw(st.lists(st.sampled_from([s["name"] for s in specs]), max_size=1)) if specs else []
        specs.append(
            buf(
                f"b{index}",
                draw(st.integers(1, 700)),
                uses,
                in_place_parents=parents,
                first_use_is_read=draw(st.booleans()),
            )
        )
    return specs


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(buffer_sets(), st.sampled_from(SOLVERS), st.sampled_from([1024, 2048, 4096]))
def test_live_buffers_never_overlap(specs: list[dict[str, object]], solver: str, limit: int) -> None:
    addresses = plan(specs, limit=limit, alignment=128, solver=solver)
    assert plan(specs, limit=limit, alignment=128, solver=solver) == addresses  # deterministic
    placed = []
    for spec, address in zip(specs, addresses, strict=True):
        if address is None:
            continue
        size = int(spec["size"])  # type: ignore[call-overload]
        assert address % 128 == 0 and 0 <= address and address + size <= limit
        uses = spec["uses"]
        placed.append((spec, address, size, uses[0], uses[-1] + 1))  # type: ignore[index]
    for i, (a, a_addr, a_size, a_start, a_end) in enumerate(placed):
        for b, b_addr, b_size, b_start, b_end in placed[i + 1 :]:
            if not (a_start < b_end and b_start < a_end):
                continue  # never live together
            if a_addr + a_size <= b_addr or b_addr + b_size <= a_addr:
                continue
            # The only allowed overlap: a chain of in-place replacements (each parent dying at
            # its child's first use) sharing one address.
            assert a_addr == b_addr
            assert in_place_chain(specs, a, b) or in_place_chain(specs, b, a)


def in_place_chain(
    specs: list[dict[str, object]], ancestor: dict[str, object], child: dict[str, object]
) -> bool:
    by_name = {s["name"]: s for s in specs}
    frontier = [child]
    while frontier:
        current = frontier.pop()
        for name in current["in_place_parents"]:  # type: ignore[attr-defined]
            parent = by_name[name]
            if parent["uses"][-1] != current["uses"][0]:  # type: ignore[index]
                continue
            if parent is ancestor:
                return True
            frontier.append(parent)
    return False
