"""
Real models shared by the end-to-end tests (importer, layout passes): an MLP, a pre-norm
decoder block and a tiny random-initialized Hugging Face Llama.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch


class MLP(torch.nn.Module):
    """Two linear layers with a GELU between them."""

    def __init__(self, d_in: int = 64, d_hidden: int = 256, d_out: int = 32) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(d_in, d_hidden)
        self.fc2 = torch.nn.Linear(d_hidden, d_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.nn.functional.gelu(self.fc1(x)))


class DecoderBlock(torch.nn.Module):
    """Pre-norm transformer decoder block: RMSNorm, causal softmax attention, RMSNorm, SwiGLU."""

    def __init__(self, dim: int = 128, heads: int = 4, hidden: int = 256) -> None:
        super().__init__()
        self.heads = heads
        self.norm1 = torch.nn.RMSNorm(dim, eps=1e-5)
        self.qkv = torch.nn.Linear(dim, 3 * dim, bias=False)
        self.proj = torch.nn.Linear(dim, dim, bias=False)
        self.norm2 = torch.nn.RMSNorm(dim, eps=1e-5)
        self.gate = torch.nn.Linear(dim, hidden, bias=False)
        self.up = torch.nn.Linear(dim, hidden, bias=False)
        self.down = torch.nn.Linear(hidden, dim, bias=False)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(d, dim=-1)
        q, k, v = (t.view(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(d // self.heads) + mask
        attention = torch.softmax(scores, dim=-1) @ v
        x = x + self.proj(attention.transpose(1, 2).reshape(b, s, d))
        h = self.norm2(x)
        return x + self.down(torch.nn.functional.silu(self.gate(h)) * self.up(h))


def pair(factory: Callable[[], torch.nn.Module], seed: int = 0) -> tuple[torch.nn.Module, torch.nn.Module]:
    """The same random-initialized model twice: in fp16 and in fp64 (the "truth")."""
    torch.manual_seed(seed)
    model = factory().eval()
    model64 = factory().eval()
    model64.load_state_dict(model.state_dict())
    return model.half(), model64.double()


TINY = {
    "vocab_size": 256,
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "max_position_embeddings": 64,
}
"""The shape of every Hugging Face model of the zoo: small enough for CI."""


def tiny_llama_config() -> object:
    """A random-initialized Llama small enough for CI: 2 layers, hidden 64, GQA 4:2 heads."""
    import transformers

    return transformers.LlamaConfig(**TINY, num_key_value_heads=2)


def tiny_phi3_config() -> object:
    """Phi-3 in the zoo's shape; its full rotary slices out an empty pass-through half."""
    import transformers

    return transformers.Phi3Config(
        **TINY, num_key_value_heads=2, pad_token_id=0, eos_token_id=1, bos_token_id=1
    )


def tiny_bert_config() -> object:
    """BERT in the zoo's shape; it gathers its token-type ids from a buffer."""
    import transformers

    return transformers.BertConfig(**TINY)
