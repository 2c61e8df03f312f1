"""
`torch.compile(model, backend="ktir")` (`ktir.torch_backend`): it compiles for inference, so
grad mode builds the program `torch.no_grad()` builds, `backward()` is refused with a clear
error, and `options` set the cores and the target.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

import ktir
from ktir.hardware.target import SPYRE, Target
from ktir.torch_backend import INFERENCE_ONLY, OPTIONS, BackendOptions, TorchBackendError


class SiluMLP(torch.nn.Module):
    """Linear, SiLU, linear: in grad mode aot_autograd would save SiLU's input for backward."""

    def __init__(self) -> None:
        super().__init__()
        self.up = torch.nn.Linear(64, 256)
        self.down = torch.nn.Linear(256, 64)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(torch.nn.functional.silu(self.up(x)))


def _model() -> torch.nn.Module:
    torch.manual_seed(0)
    return SiluMLP().half().eval()


X = torch.randn(32, 64, generator=torch.Generator().manual_seed(1)).half()


def _run(model: torch.nn.Module, grad: bool, **options: object) -> tuple[torch.Tensor, ktir.program.Program]:
    """One call of a fresh `torch.compile` of `model`, in grad mode or under `no_grad`."""
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="ktir", **options)
    with torch.set_grad_enabled(grad):
        y = compiled(X)
    return y, ktir.torch_backend.last_program()


def test_grad_mode_builds_the_no_grad_program() -> None:
    model = _model()
    y_inference, inference = _run(model, grad=False)
    y_grad, grad = _run(model, grad=True)
    assert str(grad.module) == str(inference.module)
    assert grad.report.total_cycles == inference.report.total_cycles
    assert [k.op for k in grad.report.kernels if k.cores] == [
        "ktir.fused[matmul+add+silu]",
        "ktir.fused[matmul+add]",
    ]
    assert grad.report.traffic_ratio >= 1 and grad.report.bytes == inference.report.bytes
    assert torch.equal(y_grad.detach(), y_inference)


@pytest.mark.slow  # the fast tier (make check) leaves out whole-model runs
def test_backward_says_the_backend_is_inference_only() -> None:
    y, _ = _run(_model(), grad=True)
    assert y.requires_grad  # the parameters require grad, so autograd reaches the backend
    with pytest.raises(TorchBackendError, match=f"^{re.escape(INFERENCE_ONLY)}$"):
        y.sum().backward()
    frozen = _model().requires_grad_(False)
    torch._dynamo.reset()
    x = X.clone().requires_grad_(True)
    out = torch.compile(frozen, backend="ktir")(x)
    with pytest.raises(TorchBackendError, match="inference-only"):
        out.sum().backward()
    y, _ = _run(_model(), grad=False)
    assert not y.requires_grad  # under no_grad nothing is recorded


@pytest.fixture
def small_chip(tmp_path: Path) -> Path:
    path = tmp_path / "small.toml"
    path.write_text('name = "small"\ncores = 16\nlx_bytes = 1048576\n')
    return path


@pytest.mark.slow  # the fast tier (make check) leaves out whole-model runs
def test_options_set_the_cores_and_the_target(small_chip: Path) -> None:
    model = _model()
    _, spyre = _run(model, grad=False)
    _, on_16 = _run(model, grad=False, options={"cores": 16})
    assert max(k.cores for k in spyre.report.kernels) > 16
    assert max(k.cores for k in on_16.report.kernels) == 16 and on_16.target is SPYRE
    chip = Target(name="half", cores=16, lx_bytes=1 << 20)
    _, on_chip = _run(model, grad=True, options={"target": chip})
    assert on_chip.report.target is chip and max(k.cores for k in on_chip.report.kernels) == 16
    _, from_file = _run(model, grad=False, options={"target": str(small_chip), "cores": 8})
    assert from_file.target.name == "small" and max(k.cores for k in from_file.report.kernels) == 8


def test_an_unknown_option_is_an_error_naming_the_known_ones() -> None:
    torch._dynamo.reset()
    with pytest.raises(torch._dynamo.exc.BackendCompilerFailed) as raised:
        torch.compile(_model(), backend="ktir", options={"cores": 16, "corez": 8})(X)
    error = raised.value.inner_exception
    assert isinstance(error, TorchBackendError)
    assert str(error) == (
        "unknown option(s) 'corez' for torch.compile's 'ktir' backend; known options: "
        "'cores' (an int), 'target' (a ktir.hardware.target.Target or a TOML file)"
    )
    assert list(OPTIONS) == ["cores", "target"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ([("cores", 16)], "options must be a dict, not list"),
        ({"cores": "16"}, "option 'cores' must be an int, not str"),
        ({"cores": True}, "option 'cores' must be an int, not bool"),
        ({"cores": 64}, "option 'cores' must be in 1..32, not 64"),
        ({"cores": 32, "target": Target(cores=16)}, "option 'cores' must be in 1..16, not 32"),
        ({"target": 16}, "option 'target': target must be a ktir.hardware.target.Target, a path"),
        ({"target": "no/such/chip.toml"}, "option 'target': cannot read target file 'no/such/chip.toml'"),
    ],
)
def test_bad_option_values_are_refused(options: object, message: str) -> None:
    with pytest.raises(TorchBackendError, match=f"^{re.escape(message)}"):
        BackendOptions.parse(options)


def test_mode_is_refused() -> None:
    torch._dynamo.reset()
    with pytest.raises(torch._dynamo.exc.BackendCompilerFailed) as raised:
        torch.compile(_model(), backend="ktir", mode="max-autotune")(X)
    assert isinstance(raised.value.inner_exception, TorchBackendError)
    assert "has no modes; got mode='max-autotune'" in str(raised.value.inner_exception)


def test_a_backend_object_keeps_its_own_last_program() -> None:
    """A `KtirBackend()` of one's own records its calls; the `"ktir"` backend's last program is untouched."""
    from ktir.torch_backend import KtirBackend, torch_backend

    own = KtirBackend()
    with pytest.raises(RuntimeError, match=r"no model has run through this ktir torch\.compile backend yet"):
        own.last_report()
    _, named = _run(_model(), grad=False)
    torch._dynamo.reset()
    with torch.no_grad():
        torch.compile(_model(), backend=own, options={"cores": 8})(X)
    assert own.last_program() is not named and torch_backend.last_program() is named
    assert max(k.cores for k in own.last_report().kernels) == 8  # its options, its program
    assert max(k.cores for k in named.report.kernels) == 32
