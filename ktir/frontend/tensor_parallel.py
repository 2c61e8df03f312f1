"""
Tensor parallelism: one card's shard of a Hugging Face decoder split Megatron-style over `cards`
cards, with the collectives between them (`ktir::all_reduce`, `ktir::all_gather`).

`shard_model(model, rank, cards)` builds card `rank`'s model from the model's own class and a
config whose attention heads, KV heads and MLP width are each card's, and copies each card's
share of the weights (none on the `meta` device):

- **attention**: q/k/v projections split by output rows (column-parallel): each card keeps
  `heads / cards` query heads and `kv_heads / cards` key-value heads, or, with fewer KV heads
  than cards, the one KV head its query heads read (held by `cards / kv_heads` cards, as vLLM
  does); o_proj split by input columns (row-parallel), then **one all-reduce** of the hidden
  state (its bias, if any, added once after it);
- **MLP**: gate/up split by output rows, down_proj by input columns, then **one all-reduce**;
- **LM head**: split by output rows (`ceil(vocab / cards)` each, the last card's padded with
  zero rows), then **one all-gather** of the logits along the vocabulary (the padding sliced
  off): every card gets the whole logits, as a sampler on any card needs them;
- the embedding and the norms are held whole by every card. (Megatron splits the embedding by
  rows and all-reduces its lookup; here each card reads the token's rows of its own copy,
  the same bytes for the same time, without the all-reduce.)

Custom ops rather than a model rewritten by hand: the shard is the model's own code, so any
decoder transformers builds with these projection names (Llama, Mistral, Qwen2, Granite,
Gemma) splits the same way; anything else (MoE experts, fused projections) is a
`TensorParallelError` naming it. Per decoder layer each card all-reduces twice a hidden state
of `batch x tokens x hidden` elements.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from ktir.frontend.collectives import all_gather, all_reduce

MAX_CARDS = 8
"""Cards in one tensor-parallel group: Spyre groups up to 8 cards over PCIe."""

_COLUMN_PARALLEL = ("q_proj", "gate_proj", "up_proj")
_KV_PROJECTIONS = ("k_proj", "v_proj")
_ROW_PARALLEL = ("o_proj", "down_proj")
_SPLIT = (*_COLUMN_PARALLEL, *_KV_PROJECTIONS, *_ROW_PARALLEL)


class TensorParallelError(ValueError):
    """A model or card count tensor parallelism cannot split (one line, the numbers in it)."""


def check_cards(cards: Any) -> int:
    """`cards` if it is a group's card count (1 to `MAX_CARDS`); else `TensorParallelError`."""
    if isinstance(cards, bool) or not isinstance(cards, int) or not 1 <= cards <= MAX_CARDS:
        raise TensorParallelError(
            f"cards must be 1 to {MAX_CARDS} (the cards of a tensor-parallel group), not {cards!r}"
        )
    return cards


def kv_heads_per_card(heads: int, kv_heads: int, cards: int) -> int:
    """KV heads each card keeps; `TensorParallelError` when `cards` cannot split the heads."""
    if heads % cards:
        raise TensorParallelError(
            f"{cards} cards cannot split {heads} attention heads evenly "
            "(tensor parallelism gives each card whole heads)"
        )
    if kv_heads % cards and cards % kv_heads:
        raise TensorParallelError(
            f"{cards} cards cannot split {kv_heads} key-value heads "
            "(each card needs the same number of whole heads)"
        )
    return max(1, kv_heads // cards)


class RowParallelLinear(torch.nn.Module):
    """
    A linear layer split by input columns: each card's partial product (`linear`, without its
    bias), all-reduced, then the bias. `linear` stays a module of its own, so a pass that swaps
    linear layers (`ktir.llm.quantization.quantize_model`) swaps it too.
    """

    def __init__(self, linear: torch.nn.Module, cards: int) -> None:
        super().__init__()
        self.bias = linear.bias
        linear.register_parameter("bias", None)  # added once, after the all-reduce
        self.linear, self.cards = linear, cards

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The whole layer's output on every card."""
        y = all_reduce(self.linear(x), self.cards)
        return y if self.bias is None else y + self.bias


class GatheredLinear(torch.nn.Module):
    """A linear layer split by output rows (`linear`) whose blocks every card gathers (the LM head)."""

    def __init__(self, linear: torch.nn.Module, cards: int, outputs: int) -> None:
        super().__init__()
        self.linear, self.cards, self.outputs = linear, cards, outputs

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The whole layer's output (`outputs` columns) on every card."""
        gathered = all_gather(self.linear(x), -1, self.cards)
        return gathered if gathered.shape[-1] == self.outputs else gathered[..., : self.outputs]


_WRAPPERS = (RowParallelLinear, GatheredLinear)


def shard_config(config: Any, cards: int) -> Any:
    """The config of one card's shard: its heads, KV heads and MLP width (`TensorParallelError`)."""
    check_cards(cards)
    heads = config.num_attention_heads
    kv_heads = getattr(config, "num_key_value_heads", None) or heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
    kv_card = kv_heads_per_card(heads, kv_heads, cards)
    intermediate = getattr(config, "intermediate_size", None)
    if intermediate is not None and intermediate % cards:
        raise TensorParallelError(
            f"{cards} cards cannot split an MLP of intermediate_size {intermediate} evenly"
        )
    fields = {
        **config.to_dict(),
        "num_attention_heads": heads // cards,
        "num_key_value_heads": kv_card,
        "head_dim": head_dim,
        "tie_word_embeddings": False,  # the LM head becomes each card's block of rows
    }
    if intermediate is not None:
        fields["intermediate_size"] = intermediate // cards
    return config.__class__.from_dict(fields)


def shard_model(model: torch.nn.Module, rank: int, cards: int) -> torch.nn.Module:
    """
    Card `rank`'s shard of `model` (a Hugging Face causal LM, module docstring): the model's
    class built from `shard_config`, on the model's device and dtype, holding the card's share
    of the weights, with the collectives in place. `TensorParallelError` for a model it cannot split.
    """
    config = getattr(model, "config", None)
    if config is None or not hasattr(config, "num_attention_heads"):
        raise TensorParallelError(
            f"cards={cards} splits a Hugging Face decoder (a model with a config of attention heads), "
            f"not a {type(model).__name__}"
        )
    _check_splittable(model)
    parameter = next(model.parameters())
    with torch.device(parameter.device):
        shard = model.__class__(shard_config(config, cards)).to(parameter.dtype)
    shard = shard.eval().requires_grad_(False)
    _insert_collectives(shard, cards, config.vocab_size)
    if parameter.device.type != "meta":
        _copy_share(model, config, shard, rank, cards)
    return shard


def _check_splittable(model: torch.nn.Module) -> None:
    """Every linear layer of a decoder layer is one the split knows; no expert tensors."""
    for name, module in model.named_modules():
        leaf = name.rsplit(".", 1)[-1]
        if ".layers." not in f".{name}." or leaf.isdigit():
            continue
        if isinstance(module, torch.nn.Linear) and leaf not in _SPLIT:
            raise TensorParallelError(
                f"tensor parallelism splits the projections {', '.join(_SPLIT)}; '{name}' is none of them"
            )
        if any(p.dim() >= 3 for p in module.parameters(recurse=False)):
            raise TensorParallelError(f"tensor parallelism of MoE experts ('{name}') is not modelled")


def _copy_share(model: torch.nn.Module, config: Any, shard: torch.nn.Module, rank: int, cards: int) -> None:
    """Copy card `rank`'s share of every parameter of `model` (whose config is `config`) into `shard`."""
    heads = config.num_attention_heads
    kv_heads = getattr(config, "num_key_value_heads", None) or heads
    full = dict(model.named_parameters(remove_duplicate=False))  # a tied LM head by its own name
    wrappers = {path for path, module in shard.named_modules() if isinstance(module, _WRAPPERS)}
    for name, target in shard.named_parameters():
        name = _unwrapped(name, wrappers)
        source = full[name]
        parts = name.split(".")
        module = parts[-2] if len(parts) > 1 else parts[0]
        with torch.no_grad():
            target.copy_(
                _share(source, module, parts[-1], rank, cards, tuple(target.shape), (heads, kv_heads))
            )


def _unwrapped(name: str, wrappers: set[str]) -> str:
    """The model's name of a shard's parameter: `o_proj.linear.weight` is `o_proj.weight`."""
    path, _, leaf = name.rpartition(".")
    owner, _, last = path.rpartition(".")
    return f"{owner}.{leaf}".lstrip(".") if last == "linear" and owner in wrappers else name


def _share(
    source: torch.Tensor,
    module: str,
    kind: str,
    rank: int,
    cards: int,
    shape: tuple[int, ...],
    heads: tuple[int, int],
) -> torch.Tensor:
    """Card `rank`'s block of one parameter (of the card's `shape`)."""
    if shape == tuple(source.shape):
        return source  # held whole (norms, embedding, a row-parallel bias)
    if module in _ROW_PARALLEL and kind == "weight":
        width = shape[1]
        return source[:, rank * width : (rank + 1) * width]
    rows = shape[0]
    if module in _KV_PROJECTIONS and heads[1] < cards:  # fewer KV heads than cards: the one it reads
        head = rank * heads[1] // cards
        return source[head * rows : (head + 1) * rows]
    block = source[rank * rows : (rank + 1) * rows]
    if block.shape[0] < rows:  # the LM head's last block: zero rows past the vocabulary
        block = torch.cat([block, block.new_zeros((rows - block.shape[0], *block.shape[1:]))])
    return block


def _insert_collectives(shard: torch.nn.Module, cards: int, vocab: int) -> None:
    """Row-parallel o_proj and down_proj all-reduce their output; the LM head gathers its blocks."""
    for module in list(shard.modules()):
        for child_name in _ROW_PARALLEL:
            child = getattr(module, child_name, None)
            if isinstance(child, torch.nn.Linear):
                setattr(module, child_name, RowParallelLinear(child, cards))
    head = getattr(shard, "lm_head", None)
    if not isinstance(head, torch.nn.Linear):
        raise TensorParallelError(f"the model has no lm_head linear layer to split ({type(shard).__name__})")
    rows = math.ceil(vocab / cards)
    block = torch.nn.Linear(head.in_features, rows, bias=head.bias is not None, device=head.weight.device)
    shard.lm_head = GatheredLinear(block.to(head.weight.dtype).requires_grad_(False), cards, vocab)


__all__ = [
    "MAX_CARDS",
    "GatheredLinear",
    "RowParallelLinear",
    "TensorParallelError",
    "check_cards",
    "kv_heads_per_card",
    "shard_config",
    "shard_model",
]
