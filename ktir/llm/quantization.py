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

from ktir.llm.estimate import EstimateError

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
    dtype = {(8, "float"): "fp8", (8, "int"): "int8"}.get((bits, kind))
    if dtype is None or strategy not in _SCALES[1:]:
        raise EstimateError(
            f"compressed-tensors weights of {bits} bits, type {kind!r}, strategy {strategy!r}: ktir reads "
            "8-bit float or int weights with channel or tensor scales"
        )
    return dtype, strategy


__all__ = ["KV_PRECISIONS", "PRECISIONS", "WeightFormat", "weight_format"]
