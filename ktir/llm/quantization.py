"""
The weight format of a checkpoint: which weights are stored in fp8 or int8, with which scales,
and the KV cache's format, from a Hugging Face config's `quantization_config` or a `--dtype`.

Two checkpoint forms are read:

- **compressed-tensors** (`"quant_method": "compressed-tensors"`, as llm-compressor writes FP8
  and INT8 checkpoints): `config_groups.*.weights` gives `num_bits` 8 and `type` `float` (fp8,
  e4m3) or `int` (int8), `strategy` `channel` (one fp32 scale per output row) or `tensor` (one
  fp32 scale); `ignore` lists modules kept in 16 bits (names, or `re:` patterns); a
  `kv_cache_scheme` of 8-bit floats makes the KV cache fp8.
- **fbgemm-fp8** (`"quant_method": "fbgemm_fp8"`): fp8 weights with one fp32 scale per output
  row; `modules_to_not_convert` stay in 16 bits.

Only the linear layers are quantized (`torch.nn.Linear` modules), and the LM head stays 16-bit
unless the checkpoint says otherwise, as both tools do by default; embeddings and norms stay
16-bit. Activations stay fp16 (int8 weights with fp16 activations).

```python
weight_format(config)                # the config's quantization_config, or fp16
weight_format(config, dtype="fp8")   # fp8 weights, per-channel scales, LM head kept
```
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import torch

from ktir.llm.architecture import EstimateError

PRECISIONS = {"fp16": "float16", "fp8": "float8_e4m3fn", "int8": "int8"}
"""Weight formats by short name (`--dtype`) -> the PyTorch dtype name the device table knows."""

KV_PRECISIONS = ("fp16", "fp8")
"""KV-cache formats (`--kv-dtype`)."""

_SCALES = ("none", "channel", "tensor")


@dataclass(frozen=True)
class WeightFormat:
    """How a model's weights and KV cache are stored (see the module docstring)."""

    dtype: str = "fp16"
    """The quantized weights' format: a key of `PRECISIONS`."""
    scales: str = "none"
    """`channel`: one fp32 scale per output row; `tensor`: one per weight; `none` for fp16."""
    keep: tuple[str, ...] = ("lm_head",)
    """Modules kept in 16 bits: names (the last parts of a module's path) or `re:` patterns."""
    kv_cache: str = "fp16"
    source: str = "fp16"
    """Where the format comes from (`--dtype fp8`, `compressed-tensors`, `fbgemm_fp8`)."""

    def quantizes(self, module: str) -> bool:
        """Whether the linear layer at path `module` (`model.layers.0.mlp.up_proj`) is quantized."""
        if self.dtype == "fp16":
            return False
        return not any(_matches(entry, module) for entry in self.keep)

    @property
    def torch_dtype(self) -> str:
        """The PyTorch dtype name of the quantized weights (`float8_e4m3fn`)."""
        return PRECISIONS[self.dtype]

    @property
    def kv_torch_dtype(self) -> str:
        """The PyTorch dtype name of the KV cache."""
        return PRECISIONS[self.kv_cache]


def _matches(entry: str, module: str) -> bool:
    """Whether an ignore entry names `module`: a `re:` pattern, or the module's trailing path."""
    if entry.startswith("re:"):
        return re.match(entry[3:], module) is not None
    return module == entry or module.endswith("." + entry)


def weight_format(config: Any, dtype: str | None = None, kv_dtype: str | None = None) -> WeightFormat:
    """
    The format of `config`'s weights: `dtype` (`fp8`, `int8`: per-channel scales, the LM head
    kept; `fp16`) if given, else the config's `quantization_config`, else fp16. `kv_dtype`
    overrides the KV cache's. `EstimateError` for a form or scheme ktir does not read.
    """
    if dtype is not None and dtype not in PRECISIONS:
        raise EstimateError(f"unknown weight dtype '{dtype}' (known: {', '.join(PRECISIONS)})")
    if kv_dtype is not None and kv_dtype not in KV_PRECISIONS:
        raise EstimateError(f"unknown KV cache dtype '{kv_dtype}' (known: {', '.join(KV_PRECISIONS)})")
    if dtype is not None:
        scales = "none" if dtype == "fp16" else "channel"
        found = WeightFormat(dtype, scales, source=f"--dtype {dtype}")
    else:
        found = _from_config(getattr(config, "quantization_config", None))
    if kv_dtype is None:
        return found
    return WeightFormat(found.dtype, found.scales, found.keep, kv_dtype, found.source)


def _from_config(quantization: Any) -> WeightFormat:
    """The format a `quantization_config` describes (a dict, or an object with `to_dict`)."""
    if quantization is None:
        return WeightFormat()
    if not isinstance(quantization, dict):
        quantization = quantization.to_dict()
    method = quantization.get("quant_method")
    if method == "fbgemm_fp8":
        keep = (*(quantization.get("modules_to_not_convert") or ()), "lm_head")
        return WeightFormat("fp8", "channel", keep, source="fbgemm_fp8")
    if method == "compressed-tensors":
        return _compressed_tensors(quantization)
    raise EstimateError(
        f"quantization_config '{method}' is not a form ktir reads (compressed-tensors, fbgemm_fp8); "
        "give --dtype to count the weights in another format"
    )


def _compressed_tensors(quantization: dict[str, Any]) -> WeightFormat:
    """The format of a compressed-tensors config: one weight scheme over its groups."""
    schemes = {
        _weight_scheme(group.get("weights") or {}) for group in quantization.get("config_groups", {}).values()
    }
    if len(schemes) != 1:
        raise EstimateError(
            f"compressed-tensors config with {len(schemes)} weight schemes: "
            "ktir reads one (8-bit, channel or tensor scales)"
        )
    ((dtype, scales),) = schemes
    kv = quantization.get("kv_cache_scheme") or {}
    kv_cache = "fp8" if kv.get("num_bits") == 8 and kv.get("type") == "float" else "fp16"
    keep = tuple(quantization.get("ignore") or ())
    return WeightFormat(dtype, scales, keep, kv_cache, source="compressed-tensors")


def _weight_scheme(weights: dict[str, Any]) -> tuple[str, str]:
    """(dtype, scales) of a compressed-tensors weight scheme; `EstimateError` for one ktir does not read."""
    bits, kind, strategy = weights.get("num_bits"), weights.get("type"), weights.get("strategy")
    dtype = {(8, "float"): "fp8", (8, "int"): "int8"}.get((bits, kind))  # pyright: ignore[reportArgumentType]  # JSON values: any other pair is not found
    if dtype is None or strategy not in _SCALES[1:]:
        raise EstimateError(
            f"compressed-tensors weights of {bits} bits, type {kind!r}, strategy {strategy!r}: ktir reads "
            "8-bit float or int weights with channel or tensor scales"
        )
    return dtype, strategy


FP8_MAX = 448.0
"""The largest float8_e4m3fn value: quantization maps a row's (or a token's) largest magnitude to it."""

ACTIVATION_SCALE_FLOOR = 2.0**-14
"""Least activation scale (fp16's smallest normal): an all-zero token quantizes to zeros, not NaN."""


class Fp8Linear(torch.nn.Module):
    """
    A linear layer with fp8 (e4m3) weights, run as Spyre runs one (torch-spyre's FP8 path:
    `quantize_fp8_with_scale` then `torch._scaled_mm`, lowered to `batchmatmulfp8`): W8A8.

    - weights: `weight` [N, K] in float8_e4m3fn and `weight_scale` [1, N] in fp32, one scale per
      output row (per-channel), `W ~ weight * weight_scale`;
    - activations, per token (dynamic): `scale = max(|x|) / 448` (at least 2^-14),
      `xq = fp8(clamp(x * (1 / scale), -448, 448))` on the SFU;
    - the fp8 x fp8 product on the PE arrays at the fp8 rate, accumulated in fp32, rounded to
      fp16, then `* scale` and `* weight_scale` (and `+ bias`) as elementwise ops.
    """

    def __init__(self, weight: torch.Tensor, weight_scale: torch.Tensor, bias: torch.Tensor | None) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(weight, requires_grad=False)
        self.weight_scale = torch.nn.Parameter(weight_scale, requires_grad=False)
        self.bias = None if bias is None else torch.nn.Parameter(bias, requires_grad=False)

    @classmethod
    def from_linear(cls, linear: torch.nn.Linear, scales: str = "channel") -> Fp8Linear:
        """
        `linear` quantized: each output row (`channel`) or the whole weight (`tensor`) scaled so
        its largest magnitude is 448, rounded to e4m3. On the meta device only the shapes are made.
        """
        w = linear.weight.detach()
        if w.is_meta:
            weight = torch.empty(w.shape, dtype=torch.float8_e4m3fn, device="meta")
            return cls(weight, torch.empty(1, w.shape[0], device="meta"), linear.bias)
        w32 = w.float()
        amax = w32.abs().amax(dim=1) if scales == "channel" else w32.abs().amax().expand(w.shape[0])
        scale = (amax / FP8_MAX).clamp(min=ACTIVATION_SCALE_FLOOR)
        weight = (w32 / scale[:, None]).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)
        bias = None if linear.bias is None else linear.bias.detach()
        return cls(weight, scale[None, :].contiguous(), bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """`x @ W.T (+ bias)` with x quantized per token and W in fp8 (the class docstring)."""
        # The scale and the quantization run on x's own shape: a (batch, tokens, hidden) x
        # flattened to rows first has a row dim whose device layout holds the batch inside
        # the sticks' dim, which work division can only cut batch ways (2 cores at batch 2).
        scale = (x.abs().amax(-1, keepdim=True) / FP8_MAX).clamp(min=ACTIVATION_SCALE_FLOOR)
        quantized = (x * scale.reciprocal()).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)
        out = torch._scaled_mm(  # pyright: ignore[reportPrivateImportUsage]  # torch: the fp8 matmul is not public
            quantized.reshape(-1, x.shape[-1]), self.weight.t(), scale_a=scale.float().reshape(-1, 1),
            scale_b=self.weight_scale, bias=self.bias, out_dtype=torch.float16,
        )  # fmt: skip
        return out.reshape(*x.shape[:-1], out.shape[-1])


def quantize_model(model: torch.nn.Module, form: WeightFormat) -> torch.nn.Module:
    """
    `model` with the linear layers `form` quantizes replaced by `Fp8Linear` (in place; returned).
    fp16 formats leave it as it is; `EstimateError` for int8, whose programs ktir does not build.
    """
    if form.dtype == "fp16":
        return model
    if form.dtype != "fp8":
        raise EstimateError(
            f"{form.dtype} weights are counted in memory only: ktir compiles fp16 and fp8 weights"
        )
    targets = [
        (name, module)
        for name, module in model.named_modules()
        if isinstance(module, torch.nn.Linear) and form.quantizes(name)
    ]
    for name, module in targets:
        parent, _, leaf = name.rpartition(".")
        setattr(model.get_submodule(parent), leaf, Fp8Linear.from_linear(module, form.scales))
    return model


__all__ = [
    "FP8_MAX",
    "KV_PRECISIONS",
    "PRECISIONS",
    "Fp8Linear",
    "WeightFormat",
    "quantize_model",
    "weight_format",
]
