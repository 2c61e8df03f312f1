"""
Which Hugging Face models the LLM estimates take, and their `meta`-device stand-ins.

The leaf of `ktir.llm`: `estimate`, `capacity`, `quantization` and `step_costs` all check a
config here (`check_architecture`) and build the model they time or size from it
(`meta_model`), and all raise `EstimateError` for a configuration they cannot estimate.
"""

from __future__ import annotations

import warnings
from typing import Any

import torch

CHECKED_ARCHITECTURES = ("llama", "mistral", "qwen2", "granite", "gemma")
"""Decoder architectures the tests and `bench/configs` estimate; the error for an unsupported
architecture names them (any other decoder-only causal LM transformers builds is estimated too)."""

RECURRENT_LAYER_TYPES = {"mamba", "linear_attention"}
"""`config.layer_types` of layers that keep a recurrent state (Granite-4.0 hybrid, Qwen3-Next),
which the static KV cache the estimate compiles with cannot hold."""


class EstimateError(ValueError):
    """A configuration `estimate_llm` cannot estimate (not a causal LM, bad sizes)."""


def check_architecture(config: Any) -> None:
    """
    An `EstimateError` naming the architecture unless transformers builds it as a decoder-only
    causal LM: an encoder-decoder, an encoder (a masked-LM architecture, such as BERT, whose
    config is not set up as a decoder: its causal-LM head ignores the KV cache) or an
    architecture with no causal LM at all cannot be estimated.
    """
    # transformers is imported on use: its auto mappings alone take about a second.
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    )

    model_type = str(getattr(config, "model_type", "?"))
    recurrent = sorted(set(getattr(config, "layer_types", None) or ()) & RECURRENT_LAYER_TYPES)
    if model_type not in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        problem = "has no causal language model in transformers"
    elif recurrent:
        problem = f"has {' and '.join(recurrent)} layers (a recurrent state, not a KV cache)"
    elif getattr(config, "is_encoder_decoder", False):
        problem = "is an encoder-decoder"
    elif model_type in MODEL_FOR_MASKED_LM_MAPPING_NAMES and not getattr(config, "is_decoder", False):
        problem = "is an encoder (its config does not set is_decoder)"
    else:
        return
    raise EstimateError(
        f"architecture '{model_type}' {problem}: ktir estimates decoder-only causal "
        f"language models, such as {', '.join(CHECKED_ARCHITECTURES)}"
    )


def meta_model(config: Any, layers: int) -> torch.nn.Module:
    """The fp16 model of `config` with `layers` decoder layers, on the meta device, in eval mode."""
    import transformers

    fields = {**config.to_dict(), "num_hidden_layers": layers, "use_cache": True}
    if isinstance(fields.get("layer_types"), list):  # one entry per layer (sliding or full attention)
        fields["layer_types"] = fields["layer_types"][:layers]
    small = config.__class__.from_dict(fields)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.device("meta"):
            try:
                model = transformers.AutoModelForCausalLM.from_config(small, dtype=torch.float16)
            except ValueError as error:
                raise EstimateError(f"not a causal language model transformers knows: {error}") from None
        return model.eval().requires_grad_(False)
