"""The mixed serving step (`ktir.llm.mixed`): a prefill chunk and decodes in one forward pass."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import transformers

import ktir
from ktir.llm.architecture import EstimateError
from ktir.llm.cache import static_cache_model
from ktir.llm.mixed import MixedStepModel, mixed_program

TOKENS, CACHED, BATCH, CONTEXT, CHUNK_CACHE = 5, 3, 2, 12, 16
"""A chunk of 5 tokens after 3 cached, beside 2 decodes at context 12."""

CONFIGS = {
    "llama": transformers.LlamaConfig,
    "mistral": transformers.MistralConfig,
    "qwen2": transformers.Qwen2Config,
    "granite": transformers.GraniteConfig,
    "gemma": transformers.GemmaConfig,
}
SIZES = {
    "hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4, "num_key_value_heads": 2,
    "num_hidden_layers": 2, "vocab_size": 256,
}  # fmt: skip
SPECIFIC = {
    "granite": {
        "embedding_multiplier": 12.0, "residual_multiplier": 0.22, "attention_multiplier": 0.2,
        "logits_scaling": 8.0,
    },
    "gemma": {"head_dim": 16},  # its default is 256
    "mistral": {"sliding_window": 4},  # the chunk and the decodes see only their last 4 keys
}  # fmt: skip


def _model(name: str) -> torch.nn.Module:
    torch.manual_seed(0)
    config = CONFIGS[name](**SIZES, **SPECIFIC.get(name, {}))
    model = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.float16)
    return model.eval().requires_grad_(False)


def _filled(model: torch.nn.Module) -> tuple[MixedStepModel, torch.nn.Module, torch.nn.Module]:
    """
    The mixed step, the chunk's prefill program and the decode step's (as `prefill_program` and
    `decode_program` wrap the model) over the same random caches: the chunk's holds `CACHED`
    positions, each decode's `CONTEXT - 1`.
    """
    mixed = MixedStepModel(
        model, tokens=TOKENS, cached=CACHED, batch=BATCH, chunk_cache=CHUNK_CACHE, decode_cache=CONTEXT
    )
    prefill = static_cache_model(model, CHUNK_CACHE, 1, TOKENS)
    prefill.prefill_positions = torch.arange(CACHED, CACHED + TOKENS)
    decode = static_cache_model(model, CONTEXT, BATCH)
    for i in range(SIZES["num_hidden_layers"]):
        for kind in ("key", "value"):
            chunk = torch.randn_like(getattr(mixed, f"chunk_{kind}_{i}"))
            chunk[:, :, CACHED:] = 0
            decodes = torch.randn_like(getattr(mixed, f"decode_{kind}_{i}"))
            decodes[:, :, CONTEXT - 1 :] = 0
            for target, values in ((f"chunk_{kind}_{i}", chunk), (f"decode_{kind}_{i}", decodes)):
                getattr(mixed, target).copy_(values)
            getattr(prefill, f"{kind}_cache_{i}").copy_(chunk)
            getattr(decode, f"{kind}_cache_{i}").copy_(decodes)
    return mixed, prefill, decode


INPUTS = (torch.tensor([[17, 200, 3, 99, 42, 7, 128]]), torch.tensor([CONTEXT - 1]))
"""The packed rows (the chunk's 5 tokens, then each decode's) and the decodes' position."""


@pytest.mark.parametrize("name", list(CONFIGS))
def test_the_mixed_step_computes_the_chunk_and_the_decodes(name: str) -> None:
    """Its logits and written caches are the prefill program's and the decode program's, on real values."""
    mixed, prefill, decode = _filled(_model(name))
    ids, position = INPUTS
    with torch.no_grad():
        logits = mixed(ids, position)
        chunk = prefill(ids[:, :TOKENS])
        decodes = decode(ids[0, TOKENS:].view(BATCH, 1), position)
    assert logits.shape == (1, 1 + BATCH, SIZES["vocab_size"])
    ulp = float(np.spacing(np.float16(logits.abs().max())))
    # the packed rows meet the same kernels as the separate programs': fp16 rounding at most
    assert (logits[0, 0] - chunk[0, -1]).abs().max() <= 2 * ulp
    assert (logits[0, 1:] - decodes[:, -1]).abs().max() <= 2 * ulp
    for i in range(SIZES["num_hidden_layers"]):  # each part wrote its keys and values where its program does
        torch.testing.assert_close(getattr(mixed, f"chunk_key_{i}"), getattr(prefill, f"key_cache_{i}"))
        torch.testing.assert_close(getattr(mixed, f"decode_value_{i}"), getattr(decode, f"value_cache_{i}"))


@pytest.mark.slow
def test_the_compiled_mixed_step_computes_what_the_model_does() -> None:
    """ktir's compiled mixed step, run on values, gives the eager module's logits (fp16 rounding)."""
    mixed, _, _ = _filled(_model("llama"))
    with torch.no_grad():
        program = ktir.compile(mixed, INPUTS, quiet=True)  # the buffers' values: the caches before the step
        eager = mixed(*INPUTS).float().numpy()
    ours = np.asarray(program(*INPUTS), dtype=np.float64)
    assert np.abs(ours - eager).max() <= 4 * float(np.spacing(np.float16(np.abs(eager).max())))


def test_an_architecture_without_llamas_layer_is_refused() -> None:
    config = transformers.Phi3Config(**SIZES)  # one fused qkv projection
    with pytest.raises(EstimateError, match="granite, gemma decoders, not 'phi3'"):
        mixed_program(config, 1, TOKENS, CACHED, BATCH, CONTEXT)


def test_a_mix_of_sliding_and_full_layers_is_refused() -> None:
    config = transformers.Qwen2Config(**SIZES, use_sliding_window=True, max_window_layers=1)
    with pytest.raises(EstimateError, match="mixes full_attention and sliding_attention layers"):
        mixed_program(config, 1, TOKENS, CACHED, BATCH, CONTEXT)


def test_bad_sizes_are_refused() -> None:
    with pytest.raises(EstimateError, match="batch must be an integer >= 1, not 0"):
        mixed_program(transformers.LlamaConfig(**SIZES), 1, TOKENS, CACHED, 0, CONTEXT)
