"""
`ktir.compile` returns what the model returns: pytrees, dataclasses, empty tensors, 0-d and
bf16 tensors; `torch.compile(backend="ktir")` specializes symbolic shapes; export failures
are located `FxImportError`s.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

import ktir
from ktir.frontend.fx import FxImportError
from ktir.frontend.outputs import flatten_output, unflatten_output


@dataclasses.dataclass
class Pair:
    """An unregistered dataclass (torch.export alone refuses it as an output)."""

    first: torch.Tensor
    second: torch.Tensor
    label: str = "pair"


def test_flatten_and_unflatten_round_trip() -> None:
    a, b, c = torch.ones(2), torch.zeros(3), torch.full((1,), 7.0)
    value = {"x": (a, [b, None]), "p": Pair(c, a, "tag"), "k": 3}
    tensors, tree = flatten_output(value)
    assert [t.shape for t in tensors] == [(2,), (3,), (1,), (2,)]
    rebuilt = unflatten_output(tree, tensors)
    assert rebuilt["k"] == 3 and rebuilt["x"][1][1] is None
    assert isinstance(rebuilt["p"], Pair) and rebuilt["p"].label == "tag"
    assert torch.equal(rebuilt["p"].first, c)
    with pytest.raises(ValueError, match="hold 4 tensor"):
        unflatten_output(tree, tensors[:3])


def structured(x: torch.Tensor) -> dict:
    return {"sum": x.sum(), "pair": Pair(x * 2, x + 1), "rest": [x - 1, None], "n": 5}


def test_compile_returns_the_structure_shapes_and_dtypes() -> None:
    x = torch.arange(12, dtype=torch.float16).reshape(3, 4) / 8
    out = ktir.compile(structured, (x,))(x)
    expected = structured(x)
    assert set(out) == {"sum", "pair", "rest", "n"} and out["n"] == 5 and out["rest"][1] is None
    assert out["sum"].shape == () and out["sum"].dtype == torch.float16
    assert torch.equal(out["sum"], expected["sum"])
    assert isinstance(out["pair"], Pair)
    assert torch.equal(out["pair"].first, expected["pair"].first)
    assert torch.equal(out["rest"][0], expected["rest"][0])


def test_a_single_tensor_comes_back_as_a_tensor_and_bf16_stays_bf16() -> None:
    x = torch.linspace(-2, 2, 64, dtype=torch.bfloat16).reshape(2, 32)
    out = ktir.compile(lambda t: t * 2, (x,))(x)
    assert isinstance(out, torch.Tensor) and out.dtype == torch.bfloat16
    assert torch.equal(out, x * 2)


def rotate_all(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    rot, rest = x[..., :16], x[..., 16:]  # `rest` has no elements, as in Phi-3's full rotary
    return torch.cat((-rot, rest), dim=-1), rest


def test_empty_tensors_need_no_kernel() -> None:
    x = torch.randn(2, 16).half()
    prog = ktir.compile(rotate_all, (x,))
    kernels = [op for op in prog.module.walk() if op.name == "ktir.kernel"]
    assert len(kernels) == 1  # the neg; the empty slice and the cat with it are gone
    rotated, rest = prog(x)
    assert torch.equal(rotated, -x) and rest.shape == (2, 0) and rest.dtype == torch.float16


def test_empty_permuted_and_gather_import_and_run() -> None:
    def fn(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        zeros = torch.ops.aten.empty_permuted.default([4, 8], [1, 0], dtype=torch.float16).zero_()
        return torch.gather(x + zeros, 1, index)

    x = torch.randn(4, 8).half()
    index = torch.tensor([[0, 7], [1, 6], [2, 5], [3, 4]])
    out = ktir.compile(fn, (x, index))(x, index)
    assert torch.equal(out, torch.gather(x, 1, index))


def test_data_dependent_control_flow_is_a_located_import_error() -> None:
    def branchy(x: torch.Tensor) -> torch.Tensor:
        if x.sum() > 0:
            return x + 1
        return x - 1

    with pytest.raises(FxImportError) as raised:
        ktir.compile(branchy, (torch.randn(4, 4),))
    (diagnostic,) = raised.value.diagnostics
    assert "depends on tensor values" in diagnostic.message
    assert diagnostic.location is not None and diagnostic.location.file == __file__
    assert diagnostic.location.line == branchy.__code__.co_firstlineno + 1


@pytest.mark.slow
def test_torch_compile_specializes_each_shape_and_survives_a_failure() -> None:
    torch.manual_seed(0)
    model = torch.nn.Linear(64, 32).half()
    torch._dynamo.reset()
    with pytest.raises(torch._dynamo.exc.BackendCompilerFailed):
        torch.compile(lambda x: torch.polar(x, x) * 2, backend="ktir")(torch.ones(4, 4))
    for dynamic in (None, True):
        torch._dynamo.reset()
        compiled = torch.compile(model, backend="ktir", dynamic=dynamic)
        for rows in (8, 16, 8):
            x = torch.randn(rows, 64).half()
            with torch.no_grad():
                ours, eager = compiled(x), model(x)
            assert ours.shape == (rows, 32)
            assert (ours.float() - eager.float()).abs().max() <= 4e-3
