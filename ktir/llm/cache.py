"""
A Hugging Face decoder with a static KV cache, as one exportable module.

`static_cache_model(model, max_cache_len)` wraps transformers' static-cache export path
(`TorchExportableModuleWithStaticCache`, which registers every layer's key and value cache as a
buffer): `forward(input_ids, cache_position)` writes the keys and values of the tokens at
`cache_position` into the caches in place and returns the logits of the last token, as a
serving engine computes them (the LM head over one token, not the whole prompt).
`torch.export` sees the updates as buffer mutations, which ktir imports as in-place state
updates (`ktir.frontend.updates`).

One fix over the upstream wrapper: the cache layers read their tensors from the wrapper's
buffers at each call. Upstream, a non-strict export sees the layers' own tensors as constants
distinct from the registered buffers (transformers 5.x with torch 2.13), mutates those, and the
export cannot be decomposed.

```python
wrapper = StaticCacheModel(model, max_cache_len=64)
logits = wrapper(ids, torch.arange(ids.shape[1]))  # the prompt fills positions 0..n-1; (1, 1, V)
prefill = static_cache_model(model, max_cache_len=64, prefill_length=ids.shape[1])
logits = prefill(ids)  # the same, with the positions known to the compiler
```
"""

from __future__ import annotations

from typing import Any, cast

import torch

from ktir.hardware.cost_model import ATTENTION_BLOCK


def static_cache_model(
    model: Any, max_cache_len: int, batch_size: int = 1, prefill_length: int | None = None
) -> torch.nn.Module:
    """
    `model` (a Hugging Face causal LM) wrapped with a static KV cache of `max_cache_len`:
    `forward(input_ids, cache_position)` -> the last token's logits.

    With `prefill_length` it is the prefill of an empty cache instead, `forward(input_ids)` with
    the positions 0..prefill_length-1 held as a buffer: the compiler then knows them, so the
    attention mask folds to a causal one whose key blocks past the prompt a kernel skips.
    """
    from transformers.integrations.executorch import TorchExportableModuleWithStaticCache

    class StaticCacheModel(TorchExportableModuleWithStaticCache):
        """A causal LM with a static KV cache: forward(input_ids, cache_position) -> logits."""

        def forward(self, input_ids: torch.Tensor, cache_position: torch.Tensor) -> torch.Tensor:
            # transformers types the layers as its mixins, without the attributes set here
            for i, layer in enumerate(cast("list[Any]", self.static_cache.layers)):
                layer.keys = getattr(self, f"key_cache_{i}")
                layer.values = getattr(self, f"value_cache_{i}")
                layer.cumulative_length = getattr(self, f"cumulative_length_{i}")
                layer.cumulative_length.copy_(cache_position[0])  # where this call's tokens go
            outputs = self.model(
                input_ids=input_ids,
                attention_mask=None,
                past_key_values=self.static_cache,
                use_cache=True,
                logits_to_keep=1,
            )
            return outputs.logits

    class PrefillModel(StaticCacheModel):
        """The prefill of an empty cache: forward(input_ids) at positions 0..n-1 -> logits."""

        def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
            return super().forward(input_ids, cast(torch.Tensor, self.prefill_positions))  # a buffer

    generation = model.generation_config
    generation.use_cache = True
    generation.cache_implementation = "static"
    if prefill_length is None:
        return StaticCacheModel(model, batch_size=batch_size, max_cache_len=max_cache_len)
    wrapper = PrefillModel(model, batch_size=batch_size, max_cache_len=max_cache_len)
    # On the host even for a model on the meta device: the compiler folds what it decides.
    wrapper.register_buffer("prefill_positions", torch.arange(prefill_length), persistent=False)
    return wrapper


__all__ = ["static_cache_model"]


def whole_blocks(positions: int) -> int:
    """
    `positions` rounded up to whole blocks of `ATTENTION_BLOCK` (64) positions: the KV cache a
    paged server holds for them, and what attention reads (the last block's unused positions
    masked). Example: 18,433 positions are 289 blocks, 18,496 positions.
    """
    return -(-positions // ATTENTION_BLOCK) * ATTENTION_BLOCK
