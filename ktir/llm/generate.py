"""
Greedy generation on the simulated chip with a static KV cache (`ktir.generate`).

A Hugging Face causal LM, wrapped with a static cache (`ktir.llm.cache`), compiles into two
programs over the same state: a prefill program (the prompt at positions 0..n-1, which it knows,
so its attention is causal and skips the empty cache) and a decode step (one token at a
position it takes as an input). The caches live in device memory in the layout the compiler
chose and are updated in place by both (`ktir.scatter_rows ... in_place`): the prefill writes
the prompt's keys and values, each decode step one token's, and the step reads the cache once.
The decode step is compiled once and called for every new token.

```python
result = ktir.generate(model, input_ids, max_new_tokens=8)
result.tokens                    # prompt + new tokens, as model.generate(do_sample=False) gives
result.time_to_first_token_us    # the prefill program's simulated time
result.decode_us                 # each decode step's simulated time
```
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from ktir.compiler import compile as compile_program
from ktir.llm.cache import static_cache_model
from ktir.pipeline import TargetLike, chip_of
from ktir.program import Program
from ktir.sim import Report


@dataclass
class Generation:
    """What `generate` produced and how long the chip took."""

    tokens: torch.Tensor
    """The prompt followed by the new tokens, (batch, prompt + new)."""
    prefill: Report
    """The prefill program's report (its one-time state load shown apart, as `load_us`)."""
    decode: list[Report] = field(default_factory=list)
    """One report per decode step."""

    @property
    def time_to_first_token_us(self) -> float:
        """Simulated time of the prefill, which gives the first new token."""
        return self.prefill.time_us

    @property
    def decode_us(self) -> list[float]:
        """Simulated time of each decode step."""
        return [r.time_us for r in self.decode]

    @property
    def tokens_per_second(self) -> float:
        """Decode throughput: new tokens after the first per second of decode time."""
        total = sum(self.decode_us)
        return len(self.decode) / total * 1e6 if total else 0.0


def generate(
    model: Any,
    input_ids: torch.Tensor,
    max_new_tokens: int,
    *,
    max_cache_len: int | None = None,
    cores: int | None = None,
    target: TargetLike = None,
    quiet: bool = True,
) -> Generation:
    """
    Greedy decoding of `max_new_tokens` after `input_ids` (batch 1) with a static KV cache of
    `max_cache_len` positions (default: prompt + new tokens), every step on the simulator of
    `target` (a `Target` or a TOML file; default Spyre).
    """
    if input_ids.dim() != 2 or input_ids.shape[0] != 1:
        raise ValueError(f"input_ids must be (1, n), not {tuple(input_ids.shape)}")
    if max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be at least 1, not {max_new_tokens}")
    prompt = input_ids.shape[1]
    length = max_cache_len or prompt + max_new_tokens
    if length < prompt + max_new_tokens:
        raise ValueError(f"max_cache_len {length} cannot hold {prompt} + {max_new_tokens} tokens")
    options = {"cores": cores, "target": chip_of(target), "quiet": quiet}
    prefill = compile_program(
        static_cache_model(model, length, prefill_length=prompt), (input_ids,), **options
    )
    assert isinstance(prefill, Program)  # one card
    step_model = static_cache_model(model, length)
    step = compile_program(step_model, (input_ids[:, :1], torch.tensor([prompt])), **options)
    assert isinstance(step, Program)  # one card
    tokens = [input_ids]
    logits = prefill(input_ids)
    tokens.append(logits[:, -1:].argmax(-1))
    result = Generation(torch.cat(tokens, 1), prefill.report)
    prefill.hand_state_to(step)
    for position in range(prompt, prompt + max_new_tokens - 1):
        logits = step(tokens[-1], torch.tensor([position]))
        tokens.append(logits[:, -1:].argmax(-1))
        result.decode.append(step.report)
    result.tokens = torch.cat(tokens, 1)
    return result


__all__ = ["Generation", "Program", "generate"]
