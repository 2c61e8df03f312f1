"""
vLLM's mixed serving step as one compiled program: a prefill chunk beside decodes (`mixed_program`).

A continuous-batching server runs a step that holds both a prefill chunk of one request and one
token of each of `batch` decoding requests as ONE forward pass over the packed rows: vLLM
flattens the step's `tokens + batch` tokens into one batch of rows, so every linear layer, norm
and the MLP runs once over all of them, and only attention is per sequence, each over its own
KV cache. `MixedStepModel` is that forward pass, built from a Hugging Face decoder's own
submodules (the embedding, each layer's norms, q/k/v/o projections and MLP, the rotary
embedding, the final norm and the LM head) and exported by ktir's normal frontend:

- the packed rows `(1, tokens + batch)`: the chunk's tokens first, then each decode's token;
- per layer, the input norm and the q/k/v projections over all rows; then the chunk's rows, at
  positions `cached..cached+tokens-1` (known to the compiler, as `prefill_program`'s, so its
  attention mask folds to a causal one), are rotated, written into the chunk's static cache and
  attend over it; the decodes' rows, at position `context - 1` (an input, as `decode_program`'s),
  are rotated, written into their `(batch, ...)` cache and attend over it with the mask the
  Hugging Face model builds for a decode step; the two attention outputs are packed again for
  one o_proj, residual, post-attention norm and MLP;
- the final norm and the LM head over the chunk's last row and each decode's row: logits of
  shape `(1, 1 + batch, vocab)`, the chunk's first, as a server samples them.

The attention itself is the model's own attention function (`config._attn_implementation`,
SDPA), so each part compiles to the `ktir.attention` kernel that the prefill and decode programs
compile to. Architectures: those whose decoder layer is Llama's (`MIXED_ARCHITECTURES`: Llama,
Mistral, Qwen2, Granite with its multipliers, Gemma), a sliding window (Mistral's) masking keys
as the model's mask does; any other, or one whose layers mix sliding and full attention, is an
`EstimateError`.
"""

from __future__ import annotations

import inspect
from typing import Any, NamedTuple

import torch

from ktir.llm.architecture import EstimateError, check_architecture
from ktir.llm.cache import whole_blocks
from ktir.llm.estimate import card_model, compiled_program
from ktir.llm.quantization import WeightFormat
from ktir.pipeline import TargetLike
from ktir.program import Program

MIXED_ARCHITECTURES = ("llama", "mistral", "qwen2", "granite", "gemma")
"""Decoders `MixedStepModel` builds: Llama's layer layout (pre-norm attention and MLP, separate
q/k/v/o projections, rotary positions), Granite's multipliers and Gemma's scaled embedding
(inside its embedding module) included."""


def check_mixed_architecture(config: Any) -> None:
    """
    `EstimateError` (one line) unless `MixedStepModel` builds `config`'s decoder: an architecture
    of `MIXED_ARCHITECTURES` whose layers attend alike (all over a sliding window or none).
    """
    check_architecture(config)
    model_type = str(getattr(config, "model_type", "?"))
    if model_type not in MIXED_ARCHITECTURES:
        raise EstimateError(
            f"ktir compiles the mixed step of {', '.join(MIXED_ARCHITECTURES)} decoders, not '{model_type}'"
        )
    layer_types = set(getattr(config, "layer_types", None) or ())
    if len(layer_types) > 1:
        raise EstimateError(
            f"'{model_type}' mixes {' and '.join(sorted(layer_types))} layers: ktir compiles the "
            "mixed step of decoders whose layers attend alike"
        )


def sliding_window(config: Any) -> int | None:
    """
    The sliding window every layer of `config` attends over (Mistral's; Qwen2's when it turns
    it on for every layer), or None for full causal attention.
    """
    window = getattr(config, "sliding_window", None)
    layer_types = getattr(config, "layer_types", None)
    if window is None or getattr(config, "use_sliding_window", True) is False:  # Qwen2's switch
        return None
    if layer_types is not None and "sliding_attention" not in layer_types:
        return None
    return int(window)


class MixedStepModel(torch.nn.Module):
    """
    One forward pass over a prefill chunk and `batch` decodes, packed (module docstring):
    `forward(input_ids, decode_position)` -> the logits of the chunk's last token and of each
    decode, `(1, 1 + batch, vocab)`. Each layer's caches are buffers, written in place:
    `chunk_key_{i}`/`chunk_value_{i}` `(1, kv_heads, chunk_cache, head_dim)` and
    `decode_key_{i}`/`decode_value_{i}` `(batch, kv_heads, decode_cache, head_dim)`.
    """

    chunk_start: torch.Tensor

    def __init__(
        self, model: Any, *, tokens: int, cached: int, batch: int, chunk_cache: int, decode_cache: int
    ) -> None:
        super().__init__()
        self.model = model
        self.tokens, self.batch = tokens, batch
        self.lengths = {"chunk": chunk_cache, "decode": decode_cache}
        self.window = sliding_window(model.config)
        config = model.config
        attention = model.model.layers[0].self_attn
        kv_heads, head_dim = int(config.num_key_value_heads), int(attention.head_dim)
        # A host scalar even for a model on the meta device, as the prefill's first position: the
        # compiler folds the chunk's positions, its mask and its rotary cos/sin from it.
        self.register_buffer("chunk_start", torch.tensor(cached), persistent=False)
        for i in range(len(model.model.layers)):
            for part, length in self.lengths.items():
                rows = 1 if part == "chunk" else batch
                for kind in ("key", "value"):
                    cache = torch.zeros(
                        rows, kv_heads, length, head_dim, dtype=model.dtype, device=model.device
                    )
                    self.register_buffer(f"{part}_{kind}_{i}", cache, persistent=False)

    def forward(self, input_ids: torch.Tensor, decode_position: torch.Tensor) -> torch.Tensor:
        """The logits of the chunk's last token and of each decode's token, `(1, 1 + batch, vocab)`."""
        inner = self.model.model
        hidden = inner.embed_tokens(input_ids)
        if hasattr(inner, "embedding_multiplier"):  # Granite
            hidden = hidden * inner.embedding_multiplier
        device = hidden.device
        chunk = torch.arange(self.tokens, device=device) + self.chunk_start
        decode = torch.arange(1, device=device) + decode_position[0]
        mask = _causal_mask(self.lengths["decode"], decode, self.window).expand(self.batch, -1, -1, -1)
        parts = (
            _Part(
                "chunk",
                chunk,
                inner.rotary_emb(hidden, chunk[None, :]),
                _causal_mask(self.lengths["chunk"], chunk, self.window),
            ),
            _Part("decode", decode, inner.rotary_emb(hidden, decode[None, :]), mask),
        )
        for i, layer in enumerate(inner.layers):
            hidden = self._layer(i, layer, hidden, parts)
        hidden = inner.norm(hidden)
        # the rows whose logits a server samples, contiguous: the chunk's last, then each decode's
        logits = self.model.lm_head(hidden[:, self.tokens - 1 :])
        scaling = getattr(self.model.config, "logits_scaling", None)
        return logits if scaling is None else logits / scaling  # Granite

    def _layer(self, i: int, layer: Any, hidden: torch.Tensor, parts: tuple[_Part, _Part]) -> torch.Tensor:
        """One decoder layer over the packed rows: attention per part, everything else once."""
        attention = layer.self_attn
        normed = layer.input_layernorm(hidden)
        shape = (1, self.tokens + self.batch, -1, attention.head_dim)
        qkv = [proj(normed).view(shape) for proj in (attention.q_proj, attention.k_proj, attention.v_proj)]
        chunk = self._attend(i, attention, [t[:, : self.tokens] for t in qkv], parts[0])
        # each decode is a sequence of its own: (batch, 1, heads, head_dim), as a decode step's
        decodes = [t[:, self.tokens :].reshape(self.batch, 1, *t.shape[2:]) for t in qkv]
        decode = self._attend(i, attention, decodes, parts[1])
        out = attention.o_proj(torch.cat([chunk, decode.reshape(1, self.batch, -1)], dim=1))
        multiplier = getattr(layer, "residual_multiplier", None)  # Granite
        hidden = hidden + (out if multiplier is None else out * multiplier)
        mlp = layer.mlp(layer.post_attention_layernorm(hidden))
        return hidden + (mlp if multiplier is None else mlp * multiplier)

    def _attend(self, i: int, attention: Any, qkv: list[torch.Tensor], part: _Part) -> torch.Tensor:
        """
        One part's attention in layer `i`, as the model's attention module runs it: q/k/v
        `(sequences, tokens, heads, head_dim)` rotated, k/v written into the part's cache at its
        positions, attention over the cache; `(sequences, tokens, heads * head_dim)`.
        """
        code: Any = inspect.getmodule(type(attention))  # the model's own modeling module
        query, key, value = (t.transpose(1, 2) for t in qkv)
        query, key = code.apply_rotary_pos_emb(query, key, *part.rope)
        keys, values = getattr(self, f"{part.name}_key_{i}"), getattr(self, f"{part.name}_value_{i}")
        keys.index_copy_(2, part.positions, key)
        values.index_copy_(2, part.positions, value)
        interface = code.ALL_ATTENTION_FUNCTIONS.get_interface(
            attention.config._attn_implementation, code.eager_attention_forward
        )
        out, _ = interface(attention, query, keys, values, part.mask, dropout=0.0, scaling=attention.scaling)
        return out.reshape(*qkv[0].shape[:2], -1)


class _Part(NamedTuple):
    """One part of the mixed step: its caches' name, its positions, their rotary cos/sin, its mask."""

    name: str
    positions: torch.Tensor
    rope: tuple[torch.Tensor, torch.Tensor]
    mask: torch.Tensor


def _causal_mask(length: int, positions: torch.Tensor, window: int | None) -> torch.Tensor:
    """
    `(1, 1, queries, length)`: key `l` visible to the query at position `p` when `l <= p`, and
    within a sliding `window` when `l > p - window`, as the model's mask functions say.
    """
    keys = torch.arange(length, device=positions.device)[None, None, None, :]
    queries = positions[None, None, :, None]
    visible = keys <= queries
    return visible if window is None else visible & (keys > queries - window)


def mixed_program(
    config: Any,
    layers: int,
    tokens: int,
    cached: int,
    batch: int,
    context: int,
    *,
    target: TargetLike = None,
    cores: int | None = None,
    weights: WeightFormat | None = None,
    cards: int = 1,
    handoff: bool = True,
) -> Program:
    """
    The mixed step of the model with `layers` decoder layers, compiled: a prefill chunk of
    `tokens` tokens of one sequence at positions `cached..cached+tokens-1` and `batch` decodes
    of one token each at position `context - 1`, one forward pass (`MixedStepModel`). The
    chunk's static cache holds `cached + tokens + 1` positions in whole blocks of 64, as a
    step-cost table's prefill chunk (`ktir.llm.step_costs.prefill_chunk_us`); the decodes'
    holds `context`, as its decode step. `weights`, `cards` and `handoff` as in
    `ktir.llm.estimate.prefill_program`.
    """
    for name, value, low in (
        ("tokens", tokens, 1),
        ("cached", cached, 0),
        ("batch", batch, 1),
        ("context", context, 1),
    ):
        if not isinstance(value, int) or value < low:
            raise EstimateError(f"{name} must be an integer >= {low}, not {value!r}")
    check_mixed_architecture(config)
    chunk_cache = whole_blocks(cached + tokens + 1)
    model = card_model(config, layers, weights, cards)
    wrapper = MixedStepModel(
        model, tokens=tokens, cached=cached, batch=batch, chunk_cache=chunk_cache, decode_cache=context
    )
    args = (torch.zeros(1, tokens + batch, dtype=torch.long), torch.tensor([context - 1]))
    return compiled_program(config, wrapper, args, cores, target, handoff)


__all__ = [
    "MIXED_ARCHITECTURES",
    "MixedStepModel",
    "check_mixed_architecture",
    "mixed_program",
    "sliding_window",
]
