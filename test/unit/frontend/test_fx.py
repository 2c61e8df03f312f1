"""Tests of the FX importer (`ktir.frontend.fx`): structure, locations, errors, entry points."""

from __future__ import annotations

import copy
import inspect

import numpy as np
import pytest
import torch
from helpers import fp16_ulp, run_both
from xdsl.dialects import func
from xdsl.dialects.builtin import FileLineColLoc, IntegerAttr

import ktir
from ktir.frontend.fx import FxImportError, export_program, import_exported, import_fx, import_program
from ktir.ir.context import make_context
from ktir.ir.diagnostics import parse_module, verify_module
from ktir.reference import executor as reference

HERE = __file__


def op_names(module) -> list[str]:
    function = next(op for op in module.ops if isinstance(op, func.FuncOp))
    return [op.name for op in function.body.block.ops]


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


def lgamma_and_atan2(x: torch.Tensor) -> torch.Tensor:
    y = torch.lgamma(x) + 1
    return torch.atan2(x, y) + torch.special.i0(x)


def test_unsupported_ops_are_listed_together_with_locations() -> None:
    with pytest.raises(FxImportError) as caught:
        import_fx(lgamma_and_atan2, (torch.randn(4, 8),))
    diagnostics = caught.value.diagnostics
    messages = [d.message for d in diagnostics]
    assert messages[:3] == [
        "unsupported ATen op 'aten.lgamma.default' (node 'lgamma')",
        "unsupported ATen op 'aten.atan2.default' (node 'atan2')",
        "unsupported ATen op 'aten.i0.default' (node 'i0')",
    ]
    assert messages[3] == "3 unsupported op(s) in the FX graph; nothing was imported"
    first_line = inspect.getsourcelines(lgamma_and_atan2)[1]
    assert [d.location.line for d in diagnostics[:3]] == [first_line + 1, first_line + 2, first_line + 2]
    assert all(d.location.file == HERE for d in diagnostics[:3])


def test_dynamic_dimension_is_an_error_naming_the_input() -> None:
    batch = torch.export.Dim("batch", min=2, max=64)
    with pytest.raises(FxImportError, match=r"input 'x' has a dynamic dimension 0 \(s\d+\)"):
        import_program(TwoLinear(), (torch.randn(4, 64),), dynamic_shapes={"x": {0: batch}})


def test_negative_padding_crops_then_pads() -> None:
    """A negative amount crops (RWKV's time shift): a slice, then the positive padding."""

    def crop(x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.pad(x, (-1, 2)), torch.nn.functional.pad(x, (0, 0, 1, -1))

    x = torch.randn(4, 8)
    names = op_names(import_fx(crop, (x,)))
    assert names.count("ktir.slice") == 2 and names.count("ktir.pad") == 2
    ours, eager = run_both(crop, x)
    for got, want in zip(ours, eager, strict=True):
        np.testing.assert_array_equal(got, want)


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

    with torch.random.fork_rng():  # seeded weights, the global generator left as it was
        torch.manual_seed(0)
        model = TwoLinear().eval()
    x = torch.randn(8, 64, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        torch.compile(model, backend=aot_autograd(fw_compiler=compiler))(x)
        truth = copy.deepcopy(model).double()(x.double())
    gm, args = graphs[0], calls[0]
    imported = import_program(gm, args)
    assert imported.user_input_count == len(args)  # aot_autograd lifts parameters to inputs
    (ours,) = reference.run(imported.module, imported.arguments(*args))
    # Against the model in float64, not eager fp32: our fp32 is a few fp32 ulps from it, while
    # eager's matmuls sum 64 and 128 products in an order set by the CPU's BLAS kernel.
    np.testing.assert_allclose(ours, truth.numpy(), rtol=1e-5, atol=1e-5)


def test_scalars_become_size_one_constants_and_promotion_converts() -> None:
    def f(x: torch.Tensor, i: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return x * 2.0, i + 0.5

    module = import_fx(f, (torch.randn(4, 64).half(), torch.arange(6)))
    text = str(module)
    # The scalar keeps fp32 compute precision next to an f16 tensor, as in PyTorch's kernels.
    assert "ktir.full 2.000000e+00 : tensor<1xf32>" in text
    assert "ktir.mul %x, %cst : tensor<4x64xf16>, tensor<1xf32> -> tensor<4x64xf16>" in text
    assert "ktir.convert %i : tensor<6xi64> -> tensor<6xf32>" in text


def test_cpu_fallback_ops_keep_their_arguments_and_run_through_torch() -> None:
    def f(x: torch.Tensor, ids: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return torch.argmax(x, 1), ids ^ mask, torch.isin(ids, mask)

    args = (torch.randn(4, 8), torch.tensor([3, 1, 2]), torch.tensor([1, 1, 0]))
    text = str(import_fx(f, args))
    assert 'ktir.cpu_fallback "aten::argmax.default"(%x) {args = [#ktir.operand<0>, 1 : i64]}' in text
    assert 'ktir.cpu_fallback "aten::bitwise_xor.Tensor"' in text
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
    assert names.count("ktir.topk") == 1  # values and indices: a top-1
    assert "ktir.cpu_fallback" not in names


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


#### Regressions from review: PyTorch's exact semantics ####


def exact(fn, *args) -> None:
    """Reference-executor results equal eager bit for bit (same dtype, NaN in the same places)."""
    ours, eager = run_both(fn, *args)
    for got, want in zip(ours, eager, strict=True):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


F16 = (torch.randn(4096, generator=torch.Generator().manual_seed(7)) * 100).half()


def test_python_scalars_keep_fp32_precision_in_f16_arithmetic() -> None:
    exact(lambda a: (a / 100000.0, a * 70000.0, a * 0.1, 0.3 - a, a + 1e-4), F16)


def test_scalar_alpha_rounds_once() -> None:
    """
    `a + alpha * b` on f16: alpha rounded to f16, the rest in fp32, rounded once. The oracle is
    that formula in NumPy fp32 (IEEE, so the same on every CPU). Eager fp16 meets it bit for
    bit with PyTorch's vectorized kernels (AVX2, AVX-512); its scalar kernel
    (ATEN_CPU_CAPABILITY=default) rounds `alpha * b` to f16 first, so the bound that holds for
    every kernel is one f16 ulp of `alpha * b` plus one of the result (measured under
    `default`: 456 of 4096 values differ, all within it).
    """
    a, b = F16, F16.flip(0)
    ours, eager = run_both(lambda a, b: (torch.add(a, b, alpha=0.1), torch.sub(a, b, alpha=3)), a, b)
    a32, b32 = a.numpy().astype(np.float32), b.numpy().astype(np.float32)
    for got, want, alpha in zip(ours, eager, (0.1, -3.0), strict=True):
        oracle = (a32 + np.float32(np.float16(alpha)) * b32).astype(np.float16)
        np.testing.assert_array_equal(got, oracle)
        product = np.abs(np.float32(np.float16(alpha)) * b32).astype(np.float16)
        bound = fp16_ulp(product) + fp16_ulp(oracle)
        assert np.all(np.abs(got.astype(np.float64) - want.astype(np.float64)) <= bound)


def test_integer_constants_beyond_two_to_the_53_are_exact() -> None:
    ints = torch.arange(-8, 8)
    big = 2**53 + 1

    def f(a: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return a.masked_fill(a > 0, torch.iinfo(torch.int64).max), a + big, a == big

    exact(f, ints)


def test_addmm_with_zero_beta_ignores_the_bias_and_scalar_bias_broadcasts() -> None:
    generator = torch.Generator().manual_seed(10)
    x, y = torch.randn(3, 5, generator=generator), torch.randn(5, 4, generator=generator)
    for bias, beta in ((torch.full((3, 4), float("nan")), 0.0), (torch.tensor(1.0), 0.5)):

        def addmm(b: torch.Tensor, x: torch.Tensor, y: torch.Tensor, beta: float = beta) -> torch.Tensor:
            return torch.addmm(b, x, y, beta=beta)

        ours, eager = run_both(addmm, bias, x, y)
        assert ours[0].shape == eager[0].shape
        # PyTorch's addmm in float64 is the oracle (beta = 0 drops a NaN bias there too); ours
        # rounds the exact product and the sum to fp32: a few fp32 ulps of values below 10.
        truth = addmm(bias.double(), x.double(), y.double()).numpy()
        np.testing.assert_allclose(ours[0], truth, rtol=1e-6, atol=1e-6)


def test_f16_floor_division_rounds_once() -> None:
    a = (torch.rand(512, generator=torch.Generator().manual_seed(8)) * 300).half()
    b = (torch.rand(512, generator=torch.Generator().manual_seed(9)) * 2 + 0.5).half()
    exact(lambda a, b: (a // b, torch.div(a, 0.7, rounding_mode="floor")), a, b)


def test_mixed_precision_norm_weights_and_broadcasting_copy() -> None:
    def f(x: torch.Tensor, w: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y = torch.zeros(3, 4)
        y.copy_(v)
        return torch.nn.functional.layer_norm(x, (64,), w.half()) * 1.0, y

    generator = torch.Generator().manual_seed(11)
    args = tuple(torch.randn(*shape, generator=generator) for shape in ((4, 64), (64,), (4,)))
    args = (args[0].half(), *args[1:])
    imported = import_program(f, args)
    verify_module(imported.module)
    ours = reference.run(imported.module, imported.arguments(*args))
    # The norm against its float64 form (weights rounded to fp16 as the model does), not eager:
    # ours is computed in fp32 and rounded once, so it is within one fp16 ulp of each exact value.
    exact = torch.nn.functional.layer_norm(args[0].double(), (64,), args[1].half().double()).numpy()
    assert np.all(np.abs(ours[0].astype(np.float64) - exact) <= fp16_ulp(exact))
    np.testing.assert_array_equal(ours[1], f(*args)[1].numpy())  # a copy: exact


def test_reducing_a_scalar_and_rank_zero_outputs() -> None:
    exact(lambda a: (a[0].max(0).values, a.amax()), torch.randn(6))


def test_integer_matmul_and_in_place_updates_of_inputs_are_reported() -> None:
    ones = torch.ones(3, 3, dtype=torch.int64)
    with pytest.raises(FxImportError, match=r"matmul on i64 \(Spyre's PT unit multiplies floats\)"):
        import_fx(lambda a, b: a @ b, (ones, ones))

    def bump(x: torch.Tensor) -> torch.Tensor:
        x.add_(1)
        return x * 2

    with pytest.raises(FxImportError, match=r"in-place update of input 'x' is not supported"):
        import_fx(bump, (torch.ones(4),))


class Accumulate(torch.nn.Module):
    """A buffer updated in place at every call."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("total", torch.zeros(4, 64, dtype=torch.float16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.total.add_(x)
        return self.total * 2


def test_a_buffer_update_is_a_result_written_back() -> None:
    """The new value is returned after the outputs, the buffer names it; the next call sees it."""
    module = import_fx(Accumulate(), (torch.ones(4, 64, dtype=torch.float16),))
    function = module.body.block.first_op
    assert isinstance(function, func.FuncOp)
    assert len(function.function_type.outputs) == 2  # the output, then the new total
    assert function.arg_attrs.data[1].data["ktir.updated_by"] == IntegerAttr(1, 64)
    program = ktir.compile(Accumulate(), (torch.ones(4, 64, dtype=torch.float16),), quiet=True)
    x = torch.full((4, 64), 1.5, dtype=torch.float16)
    assert torch.equal(program(x), torch.full((4, 64), 3.0, dtype=torch.float16))
    assert torch.equal(program(x), torch.full((4, 64), 6.0, dtype=torch.float16))  # 1.5 + 1.5, doubled


def test_data_dependent_shapes_are_named_as_such() -> None:
    with pytest.raises(FxImportError) as caught:
        import_fx(lambda x: x[x > 0] * 2, (torch.randn(8),))
    assert any("ktir needs static shapes" in d.message for d in caught.value.diagnostics)


def test_a_square_imports_as_a_multiply_with_pytorchs_bits() -> None:
    """`pow(x, 2)` is `x * x`, as PyTorch computes it (one SFU pass); other exponents stay `pow`."""

    def f(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return x.float().pow(2), x.pow(3)

    x = torch.randn(4, 64, generator=torch.Generator().manual_seed(7)).half()
    names = op_names(import_fx(f, (x,)))
    assert names.count("ktir.mul") == 1 and names.count("ktir.pow") == 1
    ours, eager = run_both(f, x)
    np.testing.assert_array_equal(ours[0], eager[0])
