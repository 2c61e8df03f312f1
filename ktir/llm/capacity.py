"""
Does a language model fit on the card? Device memory per card, from a Hugging Face config.

`card_memory(config, context=2048, batch=1, prompt=512, cards=1)` answers with the bytes each
card holds, against `Target.device_memory_bytes` (128 GiB on Spyre):

- **weights**: every parameter of the model at its device-layout size (`SpyreTensorLayout`'s
  `device_bytes`: the last dim padded to whole 128-byte sticks), counted on the model built on
  PyTorch's `meta` device with one and with two decoder layers, as `estimate_llm` builds it,
  and extrapolated to N layers as `W(1) + (N - 1) * (W(2) - W(1))` (no weight is allocated).
  fp16, or the format of `ktir.llm.quantization` (the config's `quantization_config` or a
  `dtype`): fp8 or int8 linear layers take 1 byte an element, 128 to a stick, plus their fp32
  scales (a vector per output row, or one stick per tensor); the rest stays fp16.
- **KV cache**: `2 (keys, values) x layers x batch x kv_heads_per_card x context x head_dim`
  elements (fp16, or fp8 with `kv_dtype` or a `kv_cache_scheme`) at the static cache's
  device-layout size (`[batch, kv heads, context, head_dim]` per layer, as `ktir.llm.cache`
  allocates it; head_dim padded to whole sticks).
- **activations**: the prefill's largest live set of one decoder layer (layers run one after
  another, so one layer's buffers are live at a time; attention is a fused kernel, so its
  scores stay in the scratchpad). Before attention: the residual stream, the normed input,
  q, k, v and the attention output, `batch x prompt x (2 h + (2 heads + 2 kv_heads) x
  head_dim)` (heads and KV heads: each card's); in the MLP: the residual, the normed input and
  the fused gate-and-up activation, `batch x prompt x (2 h + intermediate / cards)`; the larger
  of the two, plus the last token's logits, `batch x vocab / cards`; all fp16 (2 bytes). An
  estimate of the live set, not the compiled program's allocation.
- **runtime reserve**: `Target.device_memory_reserved_fraction` of the card (0.08 on Spyre,
  10.24 GiB), for what the runtime keeps (compiled programs, descriptors, the allocator's
  slack). An assumption: IBM publishes no figure, and vllm-spyre has no available-memory API
  yet (its worker reports 2**64 bytes free and asks for a known-good KV block count instead).
  0.08 is the share vLLM leaves by default on every other device (`gpu_memory_utilization`
  0.92); docs/hardware.md.

**Several cards** (`cards = 2, 4, 8`: Spyre groups up to 8 cards over PCIe) split the model
Megatron-style, as tensor parallelism does: q/gate/up projections, the embedding and the LM
head by their output rows (`ceil(rows / cards)` per card), o/down projections by their input
columns, each card keeps `kv_heads / cards` key and value heads (or one head when there are
fewer heads than cards, each head then held by `cards / kv_heads` cards, as vLLM does), MoE
expert tensors by expert, and norms are held whole by every card. `cards` must divide the
attention heads, and the KV heads must divide by `cards` or `cards` by them; otherwise
`EstimateError`. The same split is what `estimate_llm(..., cards=N)` times
(`ktir.frontend.tensor_parallel`: one card's shard and its all-reduces), except that there each
card holds the embedding whole.

Worked example, Llama-3-8B (`bench/configs/llama-3-8b.json`: h 4096, intermediate 14336, 32
heads, 8 KV heads, head_dim 128, 32 layers, vocab 128256, untied) in fp16 at context 2048,
batch 1, prompt 512, one card:

- weights: embedding and LM head 2 x 128256 x 4096, per layer q and o 2 x 4096^2, k and v
  2 x 1024 x 4096, the MLP 3 x 14336 x 4096, two norms 2 x 4096, and the final norm 4096:
  8,030,261,248 parameters, x 2 bytes = 16,060,522,496 B = 14.96 GiB (every dim is a multiple
  of 64, so no stick padding);
- KV cache: 2 x 32 x 1 x 8 x 2048 x 128 x 2 B = 268,435,456 B = 0.25 GiB;
- activations: max(512 x (2 x 4096 + (64 + 16) x 128), 512 x (2 x 4096 + 14336)) = 11,534,336
  elements, plus 128256 logits: 23,325,184 B = 0.02 GiB;
- reserve: 0.08 x 128 GiB = 10.24 GiB; in all 25.47 GiB of 128 GiB: it fits, and a batch of
  up to 378 sequences fits at that context (`max_fit`).

Llama-3-70B (h 8192, intermediate 28672, 64 heads, 8 KV heads, 80 layers) in fp16 has
70,553,706,496 parameters, 131.4 GiB of weights alone: at context 2048 and batch 1 it needs
142.3 GiB on one card, and fits two (65.7 GiB of weights and 76.3 GiB in all on each).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from ktir.frontend.tensor_parallel import TensorParallelError, kv_heads_per_card
from ktir.hardware.target import Target
from ktir.layout.spyre import SpyreTensorLayout
from ktir.llm.architecture import EstimateError, check_architecture, meta_model
from ktir.llm.quantization import WeightFormat, weight_format
from ktir.pipeline import TargetLike, chip_of

GIB = 1024**3
"""Bytes per GiB: the card's "128 GB" is `device_memory_bytes` = 128 x 1024**3 (docs/hardware.md)."""

CARD_COUNTS = (1, 2, 4, 8)
"""Cards `max_fit` reports: up to 8 Spyre cards are grouped, with tensor parallelism over PCIe."""

ACTIVATION_BYTES = 2
"""Bytes per activation element: ktir runs activations in fp16."""


_KV_PROJECTIONS = ("k_proj", "v_proj")
_ROW_PARALLEL = ("o_proj", "down_proj")  # split by input columns: the stick dim
_COLUMN_PARALLEL = ("q_proj", "gate_proj", "up_proj")  # their biases split with them


@dataclass(frozen=True)
class CardMemory:
    """Bytes one card holds for a model at a context and batch (see the module docstring)."""

    cards: int
    weights: int
    kv_cache: int
    activations: int
    reserve: int
    capacity: int
    """The card's device memory (`Target.device_memory_bytes`)."""

    @property
    def needed(self) -> int:
        """Every byte the card must hold: weights, KV cache, activations and the reserve."""
        return self.weights + self.kv_cache + self.activations + self.reserve

    @property
    def fits(self) -> bool:
        """Whether it all fits in the card's device memory."""
        return self.needed <= self.capacity

    def describe(self) -> str:
        """One line: `needs 135.7 GiB per card, has 128 GiB (weights 131.4 + KV cache ...)`."""
        on = f" on each of {self.cards} cards" if self.cards > 1 else " per card"
        return (
            f"needs {_gib(self.needed)} GiB{on}, has {_gib(self.capacity)} GiB "
            f"(weights {_gib(self.weights)} + KV cache {_gib(self.kv_cache)} + activations "
            f"{_gib(self.activations)} + runtime reserve {_gib(self.reserve)} GiB)"
        )

    def to_dict(self) -> dict[str, Any]:
        """The bytes as plain data (JSON)."""
        return {
            "cards": self.cards, "weights": self.weights, "kv_cache": self.kv_cache,
            "activations": self.activations, "reserve": self.reserve, "needed": self.needed,
            "capacity": self.capacity, "fits": self.fits,
        }  # fmt: skip


def _gib(n: int) -> str:
    """GiB with one decimal, two below 1 GiB (a KV cache of 0.25), none when whole (the card's 128)."""
    value = n / GIB
    if value == int(value):
        return f"{int(value):,}"
    return f"{value:,.2f}" if value < 1 else f"{value:,.1f}"


@dataclass(frozen=True)
class _Shape:
    """The config's sizes the KV cache and activations need."""

    layers: int
    hidden: int
    intermediate: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int

    @classmethod
    def of(cls, config: Any) -> _Shape:
        """The sizes of a transformers config; `EstimateError` naming a missing one."""
        sizes = {}
        for name in ("num_hidden_layers", "hidden_size", "num_attention_heads", "vocab_size"):
            value = getattr(config, name, None)
            if not isinstance(value, int) or value < 1:
                raise EstimateError(
                    f"the config has no positive integer {name}: is it a decoder-only language model?"
                )
            sizes[name] = value
        heads = sizes["num_attention_heads"]
        kv_heads = getattr(config, "num_key_value_heads", None) or heads
        head_dim = getattr(config, "head_dim", None) or sizes["hidden_size"] // heads
        intermediate = getattr(config, "intermediate_size", None) or 4 * sizes["hidden_size"]
        return cls(
            sizes["num_hidden_layers"], sizes["hidden_size"], intermediate, heads, kv_heads, head_dim,
            sizes["vocab_size"],
        )  # fmt: skip

    def kv_heads_per_card(self, cards: int) -> int:
        """KV heads each card keeps; `EstimateError` when `cards` cannot split the heads."""
        try:
            return kv_heads_per_card(self.heads, self.kv_heads, cards)
        except TensorParallelError as error:
            raise EstimateError(str(error)) from None


class MemoryModel:
    """
    One model's device memory per card at any context, batch and card count. The weights of
    each card count are counted once (from two `meta` models built here) and reused.
    """

    def __init__(
        self, config: Any, *, dtype: str | None = None, kv_dtype: str | None = None, target: TargetLike = None
    ) -> None:
        config = getattr(config, "config", config)
        self.format = weight_format(config, dtype, kv_dtype)
        check_architecture(config)
        self.shape = _Shape.of(config)
        self.target: Target = chip_of(target)
        self._models = [meta_model(config, count) for count in (1, 2)]
        self._weights: dict[int, int] = {}

    def weights(self, cards: int) -> int:
        """Weight bytes on each of `cards` cards: `W(1) + (N - 1) * (W(2) - W(1))`."""
        if cards not in self._weights:
            kv_card = self.shape.kv_heads_per_card(cards)
            one, two = (_card_weight_bytes(m, cards, kv_card, self.shape, self.format) for m in self._models)
            self._weights[cards] = one + (self.shape.layers - 1) * (two - one)
        return self._weights[cards]

    def per_card(self, *, context: int, batch: int, prompt: int, cards: int = 1) -> CardMemory:
        """Each card's bytes on `cards` cards: `context` positions, `batch` sequences, `prompt` tokens."""
        s = self.shape
        kv_card = s.kv_heads_per_card(cards)
        cache = SpyreTensorLayout(
            (batch, kv_card, context, s.head_dim), self.format.kv_torch_dtype
        ).device_bytes
        attention = 2 * s.hidden + (2 * s.heads // cards + 2 * kv_card) * s.head_dim
        mlp = 2 * s.hidden + math.ceil(s.intermediate / cards)
        live = batch * prompt * max(attention, mlp) + batch * math.ceil(s.vocab / cards)
        return CardMemory(
            cards=cards,
            weights=self.weights(cards),
            kv_cache=2 * s.layers * cache,
            activations=live * ACTIVATION_BYTES,
            reserve=int(self.target.device_memory_bytes * self.target.device_memory_reserved_fraction),
            capacity=self.target.device_memory_bytes,
        )


def _card_weight_bytes(model: Any, cards: int, kv_card: int, shape: _Shape, form: WeightFormat) -> int:
    """
    Device bytes of one card's share of every parameter of `model` (Megatron split, module
    docstring): a quantized linear weight in its format (128 fp8 or int8 elements per stick)
    plus its fp32 scales (one per output row of the card's share, or one stick per tensor);
    every other parameter in fp16.
    """
    quantized = {
        f"{name}.weight"
        for name, module in model.named_modules()
        if isinstance(module, torch.nn.Linear) and form.quantizes(name)
    }
    total = 0
    for name, parameter in model.named_parameters():
        card = _card_shape(name, tuple(parameter.shape), cards, kv_card, shape.kv_heads)
        if name not in quantized:
            total += SpyreTensorLayout(card, "float16").device_bytes
            continue
        total += SpyreTensorLayout(card, form.torch_dtype).device_bytes
        scales = (card[0],) if form.scales == "channel" else (1,)
        total += SpyreTensorLayout(scales, "float32").device_bytes
    return total


def _card_shape(
    name: str, shape: tuple[int, ...], cards: int, kv_card: int, kv_heads: int
) -> tuple[int, ...]:
    """The shape of one card's share of a parameter under Megatron-style tensor parallelism."""
    if cards == 1 or len(shape) == 0:
        return shape  # one card holds everything; a scalar (0-d) is held whole on every card
    parts = name.split(".")
    module = parts[-2] if parts[-1] in ("weight", "bias") and len(parts) > 1 else parts[-1]
    if len(shape) >= 3:  # MoE experts: whole experts per card
        return (math.ceil(shape[0] / cards), *shape[1:])
    if module in _KV_PROJECTIONS:
        return (shape[0] * kv_card // kv_heads, *shape[1:])
    if module in _ROW_PARALLEL:
        return (shape[0], math.ceil(shape[1] / cards)) if len(shape) == 2 else shape
    if len(shape) == 1 and module not in _COLUMN_PARALLEL:
        return shape  # norms: every card holds them whole
    return (math.ceil(shape[0] / cards), *shape[1:])


def card_memory(
    config: Any,
    *,
    context: int = 2048,
    batch: int = 1,
    prompt: int = 512,
    cards: int = 1,
    dtype: str | None = None,
    kv_dtype: str | None = None,
    target: TargetLike = None,
) -> CardMemory:
    """The bytes each of `cards` cards holds for `config` (a transformers config or a model)."""
    return MemoryModel(config, dtype=dtype, kv_dtype=kv_dtype, target=target).per_card(
        context=context, batch=batch, prompt=prompt, cards=cards
    )


@dataclass(frozen=True)
class MaxFit:
    """The largest batch at a context, and the largest context at a batch, that fit on `cards` cards."""

    cards: int
    batch: int
    """Largest batch at the context; 0 if not even one sequence fits."""
    context: int
    """Largest context (at least the prompt) at the batch; 0 if not even the prompt fits."""
    weights: int
    """Weight bytes per card."""
    reason: str = ""
    """Why this card count cannot hold the model at all (heads it cannot split); else empty."""

    def to_dict(self) -> dict[str, Any]:
        """Plain data (JSON)."""
        return {
            "cards": self.cards, "max_batch": self.batch, "max_context": self.context,
            "weights": self.weights, "reason": self.reason,
        }  # fmt: skip


def max_fit(
    memory: MemoryModel, *, context: int, batch: int, prompt: int, cards: Sequence[int] = CARD_COUNTS
) -> list[MaxFit]:
    """
    For each card count, the largest batch at `context` and the largest context (at least
    `prompt`) at `batch` whose `per_card` memory fits: the largest n with `fits(n)` and not
    `fits(n + 1)`, found by doubling then bisection on the same `per_card` the check uses.
    """
    return [_fit_row(memory, count, context=context, batch=batch, prompt=prompt) for count in cards]


def _fit_row(memory: MemoryModel, cards: int, *, context: int, batch: int, prompt: int) -> MaxFit:
    """`max_fit`'s row for one card count."""
    try:
        weights = memory.weights(cards)
    except EstimateError as error:
        return MaxFit(cards, 0, 0, 0, str(error))

    def fits(at_context: int, at_batch: int) -> bool:
        return memory.per_card(context=at_context, batch=at_batch, prompt=prompt, cards=cards).fits

    largest_batch = _largest(lambda b: fits(context, b), 1)
    return MaxFit(cards, largest_batch, _largest(lambda c: fits(c, batch), prompt), weights)


def _largest(fits: Callable[[int], bool], low: int) -> int:
    """The largest n >= `low` with `fits(n)` (which is monotone: more needs more); 0 if `low` does not fit."""
    if not fits(low):
        return 0
    high = low * 2
    while fits(high):
        low, high = high, high * 2
    while high - low > 1:  # fits(low), not fits(high)
        middle = (low + high) // 2
        low, high = (middle, high) if fits(middle) else (low, middle)
    return low


__all__ = [
    "CARD_COUNTS", "GIB", "CardMemory", "MaxFit", "MemoryModel", "card_memory", "max_fit",
]  # fmt: skip
