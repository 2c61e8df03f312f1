"""Per-op stick rules (`ktir.planning.rules`) and the stick <-> layout helpers of `ktir.layout.sticks`."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ktir.ir.context import make_context
from ktir.ir.diagnostics import parse_module
from ktir.ir.values import functions_of
from ktir.layout.spyre import SpyreTensorLayout
from ktir.layout.sticks import (
    SPARSE,
    candidate_sticks,
    layout_stick,
    permuted_layout,
    reshaped_layout,
    restickified_layout,
    stick_layout,
)
from ktir.layout.transfer import to_device
from ktir.planning.rules import ANY, Need, on, pointwise_need, rule_of


def ops_of(body: str, args: str) -> list:
    text = f"func.func @f({args}) {{\n{body}\n  func.return\n}}\n"
    return list(functions_of(parse_module(make_context(), text))[0].body.block.ops)[:-1]


def test_need_costs() -> None:
    assert on(1).cost(1, 100) == 0
    assert on(1).cost(0, 100) == 100  # a dense restickify moves every element
    assert on(1).cost(SPARSE, 100) == math.inf  # no gather back into dense sticks
    assert on(SPARSE).cost(0, 100) == 100  # spreading a dense tensor is a strided write
    assert ANY.cost(SPARSE, 100) == 0 and Need(frozenset({0})).cost(1, 5) == math.inf


def test_pointwise_needs_follow_broadcasting() -> None:
    assert pointwise_need((64,), 1, (4, 64)) == on(0)
    assert pointwise_need((64,), 0, (4, 64)) == on(SPARSE)  # broadcast along the result stick
    assert pointwise_need((4, 1), 1, (4, 64)) == on(SPARSE)
    assert pointwise_need((1, 1), 0, (4, 64)) == ANY  # a single element fits any stick


def test_reduction_matmul_softmax_and_view_rules() -> None:
    total, matmul, softmax, permute, split = ops_of(
        "  %s = ktir.sum %x dims [1] : tensor<8x128xf16> -> tensor<8xf16>\n"
        "  %m = ktir.matmul %x, %y : tensor<8x128xf16>, tensor<128x64xf16> -> tensor<8x64xf16>\n"
        "  %p = ktir.softmax %x dim 0 : tensor<8x128xf16> -> tensor<8x128xf16>\n"
        "  %t = ktir.permute %x perm [1, 0] : tensor<8x128xf16> -> tensor<128x8xf16>\n"
        "  %r = ktir.reshape %x : tensor<8x128xf16> -> tensor<8x4x32xf16>",
        "%x: tensor<8x128xf16>, %y: tensor<128x64xf16>",
    )
    rule = rule_of(total)
    assert rule.domains == ((0, SPARSE),)
    assert rule.needs((SPARSE,)) == (Need(frozenset({1, SPARSE}), 1),)  # reduce over the stick
    assert rule.needs((0,)) == (on(0),)
    rule = rule_of(matmul)
    assert rule.domains == ((1,),) and rule.needs((1,)) == (on(1), on(1))  # x on K, y on N
    assert rule_of(softmax).domains == ((0,),) and rule_of(softmax).needs((0,)) == (on(0),)
    through = rule_of(permute).through
    assert through is not None and (through(1), through(0), through(SPARSE)) == (0, 1, SPARSE)
    through = rule_of(split).through
    assert through is not None and (through(1), through(0)) == (None, 0)  # 128 -> 4 x 32 splits sticks


shapes = st.lists(st.integers(1, 5).map(lambda n: [1, 3, 64, 100, 130][n - 1]), min_size=1, max_size=3)


@settings(max_examples=60, deadline=None)
@given(shapes, st.data())
def test_stick_layouts_are_sticked_where_asked(shape: list[int], data: st.DataObject) -> None:
    stick = data.draw(st.sampled_from(candidate_sticks(shape)))
    layout = stick_layout(shape, "float16", stick)
    assert layout_stick(layout, shape) == stick
    dense = [d for d in candidate_sticks(shape) if d != SPARSE]
    if stick != SPARSE and dense:
        new = data.draw(st.sampled_from(dense))
        assert layout_stick(restickified_layout(layout, shape, stick, new), shape) == new


@settings(max_examples=40, deadline=None)
@given(st.permutations([0, 1, 2]), st.sampled_from([0, 1, 2]))
def test_permuted_layout_holds_the_same_device_bytes(perm: list[int], stick: int) -> None:
    shape = (3, 64, 100)
    host = np.arange(math.prod(shape), dtype=np.float16).reshape(shape)
    layout = stick_layout(shape, "float16", stick)
    seen = permuted_layout(layout, shape, perm)
    assert seen is not None and seen.device_size == layout.device_size
    permuted = np.ascontiguousarray(np.transpose(host, perm))  # the layouts describe contiguous tensors
    assert np.array_equal(to_device(permuted, seen), to_device(host, layout))


def test_reshaped_layout_keeps_bytes_or_says_none() -> None:
    layout = SpyreTensorLayout((4, 128), "float16")
    assert reshaped_layout(layout, (4, 2, 64)) == layout
    assert reshaped_layout(SpyreTensorLayout((8, 64), "float16"), (8, 4, 16)) is None  # split sticks


@settings(max_examples=40, deadline=None)
@given(st.permutations([0, 1, 2]))
def test_permuting_a_merged_layout_splits_its_device_dims(perm: list[int]) -> None:
    """(128, 64) bytes read as (4, 32, 64): one device dim walks two host dims at once."""
    layout = SpyreTensorLayout((128, 64), "float16")
    host = np.arange(128 * 64, dtype=np.float16).reshape(4, 32, 64)
    seen = permuted_layout(layout, (4, 32, 64), perm)
    assert seen is not None
    permuted = np.ascontiguousarray(np.transpose(host, perm))
    assert np.array_equal(to_device(permuted, seen).ravel(), to_device(host, layout).ravel())


@pytest.mark.parametrize(
    ("operand_stick", "operand_shape", "result_stick", "result_shape", "expected"),
    [
        (1, (4, 64), 1, (4, 64), True),
        (0, (64,), 1, (4, 64), True),  # a bias along the stick
        (0, (4, 64), 1, (4, 64), False),  # a transposed operand needs a restickify
        (SPARSE, (4, 1), 1, (4, 64), True),  # one value per row, broadcast along the stick
        (SPARSE, (4, 1), 0, (4, 64), False),
        (0, (1,), 0, (4, 64), True),  # a scalar
        (None, (4, 64), 1, (4, 64), False),
    ],
)
def test_pointwise_need_accepts_an_operand_read_as_it_is(
    operand_stick: int | None, operand_shape: tuple, result_stick: int, result_shape: tuple, expected: bool
) -> None:
    assert pointwise_need(operand_shape, result_stick, result_shape).satisfied_by(operand_stick) is expected  # type: ignore[arg-type]
