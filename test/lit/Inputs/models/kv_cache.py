# A one-head attention with a static KV cache held in buffers, for `ktir-import` lit tests: each
# call writes its keys and values at `position` (index_copy_) and attends over the whole cache.
import torch


class CachedAttention(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.k = torch.nn.Linear(64, 64, bias=False)
        self.v = torch.nn.Linear(64, 64, bias=False)
        self.register_buffer("key_cache", torch.zeros(1, 1, 16, 64), persistent=False)
        self.register_buffer("value_cache", torch.zeros(1, 1, 16, 64), persistent=False)

    def forward(self, x: torch.Tensor, position: torch.Tensor) -> torch.Tensor:
        self.key_cache.index_copy_(2, position, self.k(x)[None])
        self.value_cache.index_copy_(2, position, self.v(x)[None])
        return torch.nn.functional.scaled_dot_product_attention(x[None], self.key_cache, self.value_cache)


torch.manual_seed(0)
model = CachedAttention().half()
model.key_cache = model.key_cache.half()
model.value_cache = model.value_cache.half()
example_args = (torch.randn(1, 1, 64).half(), torch.tensor([3]))
