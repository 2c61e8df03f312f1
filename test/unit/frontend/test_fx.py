"""Tests of the FX importer (`ktir.frontend.fx`): structure, locations, errors, entry points."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
from xdsl.dialects import func
from xdsl.dialects.builtin import FileLineColLoc

import ktir
from ktir import reference
from ktir.context import make_context
from ktir.diagnostics import parse_module, verify_module
from ktir.frontend.fx import FxImportError, export_program, import_exported, import_fx, import_program

HERE = __file__


def op_names(module) -> list[str]:
    function = next(op for op in module.ops if isinstance(op, func.FuncOp))
    return [op.name for op in function.body.block.ops]


def run_both(fn, *args):
    """Import `fn`, run it on the reference executor, and return (ours, eager) as NumPy."""
    imported = import_program(fn, args)
    verify_module(imported.module)
    ours = reference.run(imported.module, imported.arguments(*args))
    eager = fn(*args)
    eager = eager if isinstance(eager, tuple) else (eager,)
    return ours, [e.detach().numpy() for e in eager]


class TwoLinear(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(64, 128)
        self.fc2 = torch.nn.Linear(128, 32, bias=False)
        self.register_buffer("scale", torch.full((32,), 0.5))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.fc1(x))
        return self.fc2(h) * self.scale


def test_arguments_are_user_inputs_then_parameters_and_buffers() -> None:
    imported = import_program(TwoLinear(), (torch.randn(8, 64),))
    assert imported.input_names == ["x", "p_fc1_weight", "p_fc1_bias", "p_fc2_weight", "b_scale"]
    assert imported.user_input_count == 1
    text = str(imported.module)
    assert '%x: tensor<8x64xf32> {ktir.name = "x"}' in text
    assert 'ktir.parameter = "fc1.weight"' in text
    assert 'ktir.buffer = "scale"' in text
    assert op_names(imported.module) == [
        "ktir.permute",
        "ktir.matmul",
        "ktir.add",
        "ktir.relu",
        "ktir.permute",
        "ktir.matmul",
        "ktir.mul",
        "func.return",
    ]
    np.testing.assert_array_equal(imported.arguments(torch.ones(8, 64))[4], np.full(32, 0.5, np.float32))


def test_printed_module_parses_back_identically() -> None:
    module = import_fx(TwoLinear(), (torch.randn(8, 64),))
    text = str(module)
    assert str(parse_module(make_context(), text, "<imported>")) == text


def test_ops_carry_source_locations_of_the_model_code() -> None:
    module = import_fx(TwoLinear(), (torch.randn(8, 64),))
    relu = next(op for op in module.walk() if op.name == "ktir.relu")
    assert isinstance(relu.location, FileLineColLoc)
    assert relu.location.filename.data == HERE
    source_lines, first = inspect.getsourcelines(TwoLinear.forward)
    expected = first + next(i for i, line in enumerate(source_lines) if "torch.relu" in line)
    assert relu.location.line.data == expected
    assert relu.location.column.data == 9  # the first character of the indented statement
    assert relu.results[0].name_hint == "relu"


def erf_and_atan2(x: torch.Tensor) -> torch.Tensor:
    y = torch.erf(x) + 1
    return torch.atan2(x, y) + torch.special.i0(x)


def test_unsupported_ops_are_listed_together_with_locations() -> None:
    with pytest.raises(FxImportError) as caught:
        import_fx(erf_and_atan2, (torch.randn(4, 8),))
    diagnostics = caught.value.diagnostics
    messages = [d.message for d in diagnostics]
    assert messages[:3] == [
        "unsupported ATen op 'aten.erf.default' (node 'erf')",
        "unsupported ATen op 'aten.atan2.default' (node 'atan2')",
        "unsupported ATen op 'aten.i0.default' (node 'i0')",
    ]
    assert messages[3] == "3 unsupported op(s) in the FX graph; nothing was imported"
    first_line = inspect.getsourcelines(erf_and_atan2)[1]
    assert [d.location.line for d in diagnostics[:3]] == [first_line + 1, first_line + 2, first_line + 2]
    assert all(d.location.file == HERE for d in diagnostics[:3])


def test_dynamic_dimension_is_an_error_naming_the_input() -> None:
    batch = torch.export.Dim("batch", min=2, max=64)
    with pytest.raises(FxImportError, match=r"input 'x' has a dynamic dimension 0 \(s\d+\)"):
        import_program(TwoLinear(), (torch.randn(4, 64),), dynamic_shapes={"x": {0: batch}})


def test_negative_padding_is_reported_not_imported() -> None:
    def crop(x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.pad(x, (-1, 2))

    with pytest.raises(FxImportError, match=r"constant_pad_nd with negative padding \[-1, 2\]"):
        import_fx(crop, (torch.randn(4, 8),))


def test_plain_function_exported_program_and_graph_module_inputs() -> None:
    def f(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(a) * b - 1.5

    args = (torch.randn(4, 64), torch.randn(64))
    from_function = str(import_fx(f, args))
    exported = export_program(f, args)
    from_program = str(import_exported(exported).module)
    graph_module = torch.fx.symbolic_trace(f)
    from_graph_module = str(import_fx(graph_module, args))
    assert from_function == from_program == from_graph_module
    assert "ktir.sigmoid" in from_function
    assert "ktir.full 1.500000e+00 : tensor<1xf32>" in from_function


def test_aot_autograd_graph_module_imports() -> None:
    """What a `torch.compile` backend receives through aot_autograd: a core-ATen GraphModule."""
    from torch._dynamo.backends.common import aot_autograd
    from torch._functorch.aot_autograd import make_boxed_func

    graphs: list[torch.fx.GraphModule] = []
    calls: list[tuple[torch.Tensor, ...]] = []

    def compiler(gm: torch.fx.GraphModule, example_inputs: list[torch.Tensor]):
        graphs.append(gm)

        def run(*args: torch.Tensor):
            calls.append(args)  # the real tensors (example_inputs are fake)
            return gm(*args)

        return make_boxed_func(run)

    model = TwoLinear().eval()
    x = torch.randn(8, 64)
    with torch.no_grad():
        expected = torch.compile(model, backend=aot_autograd(fw_compiler=compiler))(x)
    gm, args = graphs[0], calls[0]
    imported = import_program(gm, args)
    assert imported.user_input_count == len(args)  # aot_autograd lifts parameters to inputs
    (ours,) = reference.run(imported.module, imported.arguments(*args))
    np.testing.assert_allclose(ours, expected.numpy(), rtol=1e-5, atol=1e-5)


def test_scalars_become_size_one_constants_and_promotion_converts() -> None:
    def f(x: torch.Tensor, i: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return x * 2.0, i + 0.5

    module = import_fx(f, (torch.randn(4, 64).half(), torch.arange(6)))
    text = str(module)
    assert "ktir.full 2.000000e+00 : tensor<1xf16>" in text
    assert "ktir.convert %i : tensor<6xi64> -> tensor<6xf32>" in text


def test_cpu_fallback_ops_keep_their_arguments_and_run_through_torch() -> None:
    def f(x: torch.Tensor, ids: torch.Tensor, table: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return torch.cumsum(ids, 0), torch.sin(x), torch.nn.functional.embedding(ids, table)

    args = (torch.randn(4, 8), torch.tensor([3, 1, 2]), torch.randn(5, 16))
    text = str(import_fx(f, args))
    assert 'ktir.cpu_fallback "aten::cumsum.default"(%ids) {args = [#ktir.operand<0>, 0 : i64]}' in text
    assert 'ktir.cpu_fallback "aten::sin.default"' in text
    ours, eager = run_both(f, *args)
    for got, want in zip(ours, eager, strict=True):
        np.testing.assert_array_equal(got, want)


def test_multi_output_ops() -> None:
    def f(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        a, b = torch.split(x, [24, 40], dim=1)
        values = torch.max(x, dim=1).values
        both = torch.max(x, dim=0)
        return a + 1, b * 2, values, both.values, both.indices

    ours, eager = run_both(f, torch.randn(4, 64))
    for got, want in zip(ours, eager, strict=True):
        np.testing.assert_array_equal(got, want)
    names = op_names(import_fx(f, (torch.randn(4, 64),)))
    assert names.count("ktir.slice") == 2
    assert names.count("ktir.max") == 1  # values only
    assert names.count("ktir.cpu_fallback") == 1  # values and indices


def test_many_ops_match_eager_in_fp16() -> None:
    def f(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, ...]:
        t = torch.where(x > 0, x, y[0]).clamp(-1.0, 0.75)
        u = torch.cat([x[:, ::2], torch.nn.functional.pad(y[:2, :30], (0, 2))], dim=0)
        v = (1 - x).pow(2) / (x.abs() + 1)
        w = torch.softmax(x, dim=-1).mean(dim=0, keepdim=True) + x.amax(dim=1).unsqueeze(0).t().sum()
        z = torch.nn.functional.layer_norm(x, (64,)) + y.permute(1, 0).t().expand(4, 64)
        return t, u, v, w, z, torch.floor_divide(x, 0.3), x.select(1, 3)

    x = torch.randn(4, 64, generator=torch.Generator().manual_seed(5)).half()
    y = torch.randn(4, 64, generator=torch.Generator().manual_seed(6)).half()
    ours, eager = run_both(f, x, y)
    for index, (got, want) in enumerate(zip(ours, eager, strict=True)):
        assert got.shape == want.shape, index
        assert got.dtype == want.dtype, index
        np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=2e-3, atol=2e-3)


def test_meta_device_model_imports_without_weights() -> None:
    with torch.device("meta"):
        model = TwoLinear()
        x = torch.empty(8, 64)
    imported = import_program(model, (x,))
    assert "ktir.matmul" in str(imported.module)
    with pytest.raises(ValueError, match="a meta tensor has no values"):
        imported.arguments(torch.ones(8, 64))


def test_package_level_import_fx() -> None:
    module = ktir.import_fx(torch.nn.Linear(64, 32), (torch.randn(8, 64),))
    assert op_names(module) == ["ktir.permute", "ktir.matmul", "ktir.add", "func.return"]
