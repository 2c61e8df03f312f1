"""
Helpers shared by the unit tests (`test/unit` is on sys.path: `from helpers import ...`).

- fp16 spacing: `fp16_ulp`, `fp16_ulp_at_largest`, the unit every fp16 tolerance is stated in;
- eager oracles: `torch_of`, `eager`, `in_fp32_once` (one op on NumPy arrays), `run_both` (a
  torch function through the FX importer and the reference executor, and eagerly);
- whole models against eager and the fp64 truth: `model_output`, `to_double`,
  `check_against_eager`;
- values unchanged by a pipeline: `assert_pipeline_keeps_values`;
- tiny graphs: `t`, `unary`, `matmul`, `attention` (IR text), `compiled` (through `ktir-compile`),
  `import_f16` (a torch function imported on fp16 inputs).

The real models themselves are in `model_zoo.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from xdsl.dialects.builtin import ModuleOp

import ktir
from ktir.frontend.fx import FxImport, import_program
from ktir.ir.context import make_context
from ktir.ir.diagnostics import parse_module, verify_module
from ktir.layout import SpyreTensorLayout, sticks
from ktir.pipeline import run_pipeline
from ktir.reference import executor as reference
from ktir.sim import Report

#### fp16 spacing ####

FP16_SUBNORMAL_ULP = 2.0**-24
"""The spacing of fp16 numbers below 2**-14 (subnormals and zero): the smallest fp16 ulp."""


def fp16_ulp(x: Any) -> Any:
    """
    The ulp of fp16 at magnitude |x|, elementwise: `np.spacing(np.float16(abs(x)))`.

    |x| is rounded to fp16 first (as `np.float16` does); a magnitude in the normal binade
    [2**e, 2**(e + 1)) has ulp 2**(e - 10), and anything below 2**-14 has the subnormal spacing
    2**-24 (the minimum). This is `np.spacing` for every finite fp16 magnitude but the largest,
    65504, where `np.spacing` gives inf (the step to overflow) and this gives 32, the spacing of
    its binade, so a bound at the top of the range stays a bound. A magnitude that is not a
    finite fp16 number (inf, nan, or beyond 65504 once rounded) has no ulp: nan, so any
    `error <= k * ulp` built on it fails instead of passing vacuously.

    A scalar gives a float, an array an array of float64.
    """
    with np.errstate(over="ignore"):  # |x| > 65519 rounds to inf: reported as nan below
        magnitude = np.abs(np.asarray(x, dtype=np.float64)).astype(np.float16).astype(np.float64)
    finite = np.isfinite(magnitude)
    exponent = np.floor(np.log2(np.maximum(np.where(finite, magnitude, 1.0), 2.0**-14)))
    ulp = np.where(finite, np.exp2(exponent - 10), np.nan)
    return float(ulp) if ulp.ndim == 0 else ulp


def fp16_ulp_at_largest(values: Any) -> float:
    """
    The fp16 ulp at the largest magnitude of `values`: one number for a whole output.

    Model-level bounds are stated in it ("within 8 ulps of eager"): an fp16 error anywhere in
    an output is judged against the output's scale, not against the (possibly tiny) element
    it occurs in, because matmul and reduction errors scale with the largest values involved.
    """
    return fp16_ulp(float(np.max(np.abs(np.asarray(values, dtype=np.float64)))))


#### Eager oracles ####


def torch_of(array: np.ndarray) -> torch.Tensor:
    """A torch tensor sharing the NumPy array's storage dtype (fp16 stays fp16)."""
    return torch.from_numpy(np.ascontiguousarray(array))


def eager(function: Callable[..., torch.Tensor], *arrays: np.ndarray) -> np.ndarray:
    """
    `function` on the tensors as they are: PyTorch eager on CPU, e.g. fp16 in and out.

    Compare with it only within what every PyTorch kernel on every x86-64 CPU gives: the bits of
    one IEEE operation, a selection, a conversion or data movement; otherwise a bound that holds
    for any kernel, stated with its reason. Never its transcendentals' special values or last
    ulps, nor its summation order: PyTorch picks those kernels by CPU (docs/reference.md).
    """
    return function(*(torch_of(a) for a in arrays)).numpy()


def in_fp32_once(function: Callable[..., torch.Tensor], *arrays: np.ndarray) -> np.ndarray:
    """
    `function` computed on the fp32-widened inputs and rounded once to fp16.

    This is the precision contract itself (fp16 ops compute in fp32 and round once). It is
    PyTorch's fp32 kernel, so it is an oracle only where IEEE 754 fixes the fp32 result (one
    add/sub/mul/div, a selection); elsewhere use a float64 oracle.
    """
    return function(*(torch_of(a).float() for a in arrays)).half().numpy()


def run_both(fn: Callable[..., Any], *args: torch.Tensor) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """
    (ours, eager) as lists of NumPy arrays: `fn` imported through FX and run on the reference
    executor, and `fn` run eagerly on the same tensors. The caller states the bound.
    """
    imported = import_program(fn, args)
    verify_module(imported.module)
    ours = reference.run(imported.module, imported.arguments(*args))
    result = fn(*args)
    result = result if isinstance(result, tuple) else (result,)
    return ours, [r.detach().numpy() for r in result]


#### Whole models against eager and the fp64 truth ####


def model_output(output: Any) -> torch.Tensor:
    """The tensor a model's output is judged by: its logits, last hidden state, or itself."""
    if hasattr(output, "logits"):
        return output.logits
    return output.last_hidden_state if hasattr(output, "last_hidden_state") else output


def to_double(args: tuple) -> tuple:
    """The floating-point arguments in float64 (the inputs of the fp64 "truth" model)."""
    return tuple(a.double() if a.is_floating_point() else a for a in args)


def check_against_eager(
    ours: np.ndarray, model16: Any, model64: Any, args: tuple, kwargs: dict | None = None
) -> dict[str, float]:
    """
    `ours` (an fp16 model output) is as accurate as PyTorch's own fp16 execution.

    Every model runs in fp16; ours and eager differ in summation order and in fused-vs-split
    op boundaries, so they are not bit-identical. Both are compared with the same model run in
    float64 (the "truth", `model64` on `to_double(args)`), with `ulp` the fp16 ulp at the
    truth's largest magnitude (`fp16_ulp_at_largest`):

    1. `max|ours - truth| <= 1.5 * max|eager - truth| + 2 ulp`: within 50% of eager's accuracy;
    2. `max|ours - eager| <= 8 ulp`: a direct closeness bound. Measured values are 1-2 ulp; 8
       leaves room for different BLAS accumulation orders across machines.

    Both hold whatever kernels PyTorch picks on the CPU. Eager's error against the truth comes
    from rounding its intermediates to fp16, which every kernel does; a kernel changes it by
    about an ulp (measured at most 0.25 ulp between ATEN_CPU_CAPABILITY=default/avx2/avx512,
    MKL and oneDNN limited to AVX2, and fp16 GELU through oneDNN). Bound 1 never asks for less
    than 2 ulp from the truth (measured at most 1.1 on the reference, 2.1 on the simulated
    ResNet, whose bound is 5.2), and bound 2 leaves 6 ulp for eager's own error.

    Returns the measured errors and `ulp`, for tighter per-model checks.
    """
    kwargs = kwargs or {}
    with torch.no_grad():
        eager_output = model_output(model16(*args, **kwargs)).float().numpy()
        truth = model_output(model64(*to_double(args), **kwargs)).numpy()
    ulp = fp16_ulp_at_largest(truth)
    ours64 = ours.astype(np.float64)
    errors = {
        "ours_vs_truth": float(np.abs(ours64 - truth).max()),
        "eager_vs_truth": float(np.abs(eager_output - truth).max()),
        "ours_vs_eager": float(np.abs(ours64 - eager_output).max()),
        "ulp": ulp,
    }
    assert ours.dtype == np.float16, ours.dtype
    assert ours.shape == eager_output.shape, (ours.shape, eager_output.shape)
    assert errors["ours_vs_truth"] <= 1.5 * errors["eager_vs_truth"] + 2 * ulp, errors
    assert errors["ours_vs_eager"] <= 8 * ulp, errors
    return errors


#### Values unchanged by a pipeline ####


def assert_pipeline_keeps_values(
    model: Callable[..., Any],
    args: tuple,
    kwargs: dict | None,
    pipeline: str,
    execute: Callable[[ModuleOp, list[np.ndarray]], list[np.ndarray]] = reference.run,
) -> FxImport:
    """
    Import `model`, run it on the reference executor, run `pipeline` on the module, run it
    again with `execute`, and require bit-identical outputs (same dtype, NaN in the same
    places). The bound is exact because these passes move data (layouts, padding, tiling),
    they never change the arithmetic. Returns the imported program, its module transformed.
    """
    program = import_program(model, args, kwargs or {})
    inputs = program.arguments(*args)
    before = reference.run(program.module, inputs)
    ktir.run_pipeline(program.module, pipeline)
    after = execute(program.module, inputs)
    assert len(before) == len(after)
    for old, new in zip(before, after, strict=True):
        assert old.dtype == new.dtype and np.array_equal(old, new, equal_nan=True)
    return program


#### Tiny graphs ####


def t(shape: str, element: str = "f16") -> str:
    """A tensor type, e.g. t("100x70") is `tensor<100x70xf16>`."""
    return f"tensor<{shape}x{element}>"


def unary(op: str, shape: str, element: str = "f16", extra: str = "") -> str:
    """@f(%x) -> op(%x); `extra` goes after the operand (e.g. "dim 1", or an attribute dict)."""
    x = t(shape, element)
    operand = f"%x {extra}" if extra else "%x"
    return f"func.func @f(%x: {x}) -> {x} {{\n  %y = {op} {operand} : {x} -> {x}\n  return %y : {x}\n}}"


def matmul(m: int, k: int, n: int, hint: str = "") -> str:
    """@mm(%x, %w) -> x @ w, fp16 (m x k) @ (k x n), optionally with a work-division hint."""
    x, w, y = t(f"{m}x{k}"), t(f"{k}x{n}"), t(f"{m}x{n}")
    attributes = f" {{ktir.work_division_hint = {{{hint}}}}}" if hint else ""
    return (
        f"func.func @mm(%x: {x}, %w: {w}) -> {y} {{\n"
        f"  %y = ktir.matmul %x, %w{attributes} : {x}, {w} -> {y}\n  return %y : {y}\n}}"
    )


def attention(
    batch: int, heads: int, group: int, queries: int, keys: int, causal: int, hint: str = ""
) -> str:
    """
    @attention(%q, %k, %v): `ktir.attention` of fp16 queries [batch, heads * group, queries, 64]
    (viewed grouped) over `heads` key and value heads of `keys` keys, under `causal c`,
    optionally with a work-division hint.
    """
    q4, q5 = t(f"{batch}x{heads * group}x{queries}x64"), t(f"{batch}x{heads}x{group}x{queries}x64")
    kv = t(f"{batch}x{heads}x{keys}x64")
    attributes = f" {{ktir.work_division_hint = {{{hint}}}}}" if hint else ""
    return (
        f"func.func @attention(%q: {q4}, %k: {kv}, %v: {kv}) -> {q4} {{\n"
        f"  %g = ktir.reshape %q : {q4} -> {q5}\n"
        f"  %o = ktir.attention %g, %k, %v scale 0.125 causal {causal}{attributes}"
        f" : {q5}, {kv}, {kv} -> {q5}\n"
        f"  %r = ktir.reshape %o : {q5} -> {q4}\n  return %r : {q4}\n}}"
    )


def compiled(text: str, cores: int, fuse: bool = True, target: str = "") -> ModuleOp:
    """The graph-level IR `text` parsed and compiled with `ktir-compile{cores=N fuse=... target=...}`."""
    module = parse_module(make_context(), text)
    chip = f" target={target}" if target else ""
    ktir.run_pipeline(module, f"ktir-compile{{cores={cores} fuse={str(fuse).lower()}{chip}}}")
    return module


def import_f16(fn: Callable[..., torch.Tensor], *shapes: Sequence[int]) -> ModuleOp:
    """`fn` imported with `ktir.import_fx` on fp16 tensors of ones of the given shapes."""
    return ktir.import_fx(fn, tuple(torch.ones(*s, dtype=torch.float16) for s in shapes))


def check_never_faster_than_physics(report: Report) -> None:
    """
    No kernel and no program beats its datasheet roofline or its sustained bound (the card's
    sustained rates, never above the peaks), or moves less than it must.
    """
    for kernel in report.kernels:
        if kernel.cores:
            assert kernel.cycles >= kernel.sustained_bound_cycles >= kernel.bound_cycles, kernel
            assert kernel.bytes >= kernel.compulsory_bytes, kernel
    assert report.total_cycles >= report.sustained_bound_cycles >= report.bound_cycles
    assert report.bytes >= report.compulsory_bytes


def transpose_module(rows: int, cols: int, cores: int) -> ModuleOp:
    """`x.t().contiguous()`: a permute view and a restickify into the row-major layout."""
    x = SpyreTensorLayout((rows, cols), "float16")
    view = sticks.permuted_layout(x, (rows, cols), (1, 0))
    out = SpyreTensorLayout((cols, rows), "float16")
    assert view is not None

    def typed(r: int, c: int, stl: SpyreTensorLayout) -> str:
        layout = f"#ktir.tiled<device_size = {stl.device_size}, stride_map = {stl.stride_map}>"
        return f"tensor<{r}x{c}xf16, {layout}>"

    src, mid, dst = typed(rows, cols, x), typed(cols, rows, view), typed(cols, rows, out)
    text = (
        f"func.func @f(%x: {src}) -> {dst} {{\n  %t = ktir.permute %x perm [1, 0] : {src} -> {mid}\n"
        f"  %y = ktir.restickify %t : {mid} -> {dst}\n  func.return %y : {dst}\n}}"
    )
    module = parse_module(make_context(), text)
    divide = f"ktir-divide-work{{cores={cores}}}"
    run_pipeline(
        module,
        f"ktir-pad-matmul,ktir-fuse,{divide},ktir-plan-scratchpad,ktir-plan-kernels,ktir-lower-to-cores",
    )
    return module


def swiglu_mlp(m: int, h: int, i: int) -> str:
    """A SwiGLU MLP, down(silu(x @ wg) * (x @ wu)), on m tokens of width h through i."""
    x, w, wd, mid, y = (f"tensor<{a}x{b}xf16>" for a, b in ((m, h), (h, i), (i, h), (m, i), (m, h)))
    return f"""
func.func @mlp(%x: {x}, %wg: {w} {{ktir.parameter = "wg"}}, %wu: {w} {{ktir.parameter = "wu"}},
               %wd: {wd} {{ktir.parameter = "wd"}}) -> {y} {{
  %g = ktir.matmul %x, %wg : {x}, {w} -> {mid}
  %u = ktir.matmul %x, %wu : {x}, {w} -> {mid}
  %a = ktir.silu %g : {mid} -> {mid}
  %hid = ktir.mul %a, %u : {mid}, {mid} -> {mid}
  %y = ktir.matmul %hid, %wd : {mid}, {wd} -> {y}
  func.return %y : {y}
}}
"""
