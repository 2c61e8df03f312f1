"""Tests of the FX argument accessors of `ktir.frontend.emitter`: the schema's type, or `UnsupportedNode`."""

from __future__ import annotations

import operator

import pytest
import torch

from ktir.frontend.emitter import (
    UnsupportedNode,
    float_arg,
    int_arg,
    int_list,
    node_arg,
    node_list,
    optional_node_list,
    used_outputs,
)


def _graph() -> tuple[torch.fx.Node, torch.fx.Node]:
    """A placeholder `x` and `topk(x, 2)`, whose values and indices getitem nodes read."""
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    topk = graph.call_function(torch.ops.aten.topk.default, (x, 2))
    graph.call_function(operator.getitem, (topk, 0))
    graph.call_function(operator.getitem, (topk, 1))
    return x, topk


def test_node_arg_is_the_node_or_unsupported() -> None:
    x, _ = _graph()
    assert node_arg(x) is x
    with pytest.raises(UnsupportedNode, match=r"expected a tensor argument, got 2\.0"):
        node_arg(2.0)


def test_int_arg_keeps_ints_and_rejects_the_rest() -> None:
    assert int_arg(-1) == -1
    with pytest.raises(UnsupportedNode, match=r"expected a static integer, got 1\.5"):
        int_arg(1.5)
    x, _ = _graph()
    with pytest.raises(UnsupportedNode, match="expected a static integer, got x"):
        int_arg(x)


def test_float_arg_keeps_the_number_as_given() -> None:
    assert float_arg(0.5) == 0.5
    exact = 2**60 + 1  # an int stays exact (it is not rounded through an f64)
    assert float_arg(exact) == exact and isinstance(float_arg(exact), int)
    with pytest.raises(UnsupportedNode, match="expected a number, got 'none'"):
        float_arg("none")


def test_lists_of_ints_and_of_tensors() -> None:
    x, topk = _graph()
    assert int_list([1, 2]) == [1, 2]
    with pytest.raises(UnsupportedNode, match="expected a list of static integers, got x"):
        int_list(x)
    with pytest.raises(UnsupportedNode, match="expected a static integer, got x"):
        int_list([1, x])
    assert node_list([x, topk]) == [x, topk]
    with pytest.raises(UnsupportedNode, match="expected a tensor argument, got 3"):
        node_list([x, 3])
    assert optional_node_list((None, x)) == [None, x]
    with pytest.raises(UnsupportedNode, match="expected a list of tensors, got x"):
        optional_node_list(x)


def test_used_outputs_are_the_getitem_indices() -> None:
    x, topk = _graph()
    assert used_outputs(topk) == {0, 1}
    assert used_outputs(x) == set()
