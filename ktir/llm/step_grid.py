"""
The points a step-cost table (`ktir.llm.step_costs`) compiles: `Grid`, and `grid_for`, the grid
that covers a run under a scheduling policy.

Upstream vLLM's policy (`ktir.llm.scheduler`) runs prefill chunks of any size up to the token
budget, beside decodes or alone: its grid has chunks of 16 tokens doubling up to the budget and
mixed steps. The Spyre plugin's (`ktir.llm.spyre_scheduler`) runs only whole chunks after whole
chunks, or decode steps: its grid has one chunk size, the cached contexts its padded prompts
reach, and no mixed step, so it compiles fewer programs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ktir.llm.architecture import EstimateError
from ktir.llm.cache import whole_blocks
from ktir.llm.serving_result import Policy
from ktir.llm.spyre_scheduler import PrefillLayout

PREFILL_TOKENS = (128, 256, 512, 1024, 2048)
PREFILL_CACHED = (0, 1024, 2048, 4096)
DECODE_BATCHES = (1, 4, 16, 32, 64)
DECODE_CONTEXTS = (256, 1024, 2048, 4096)
"""The default grid (the simulator's steps inside it are interpolated, outside extrapolated)."""


@dataclass(frozen=True)
class Grid:
    """The measured points: prefill `(tokens, cached)` and decode `(batch, context)` axes, mixed steps."""

    prefill_tokens: tuple[int, ...] = PREFILL_TOKENS
    prefill_cached: tuple[int, ...] = PREFILL_CACHED
    decode_batches: tuple[int, ...] = DECODE_BATCHES
    decode_contexts: tuple[int, ...] = DECODE_CONTEXTS
    mixed: bool = True
    """Whether the table compiles mixed steps (prefill tokens x decode batches); without them
    (the spyre policy, whose steps are never mixed) a prefill axis may hold one value."""

    def check(self) -> None:
        """
        `EstimateError` unless each axis holds increasing values (cached >= 0, others >= 1): two
        or more, or one on a prefill axis of a grid without mixed steps.
        """
        for name in ("prefill_tokens", "prefill_cached", "decode_batches", "decode_contexts"):
            axis = getattr(self, name)
            low = 0 if name == "prefill_cached" else 1
            least = 1 if name.startswith("prefill") and not self.mixed else 2
            if len(axis) < least or list(axis) != sorted(set(axis)) or axis[0] < low:
                count = "one" if least == 1 else "two"
                raise EstimateError(
                    f"grid {name} must hold {count} or more increasing values >= {low}, not {axis}"
                )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Grid:
        """The grid `dataclasses.asdict` wrote (a table's cache file)."""
        axes = {k: tuple(v) for k, v in data.items() if k != "mixed"}
        return cls(**axes, mixed=bool(data.get("mixed", True)))


def grid_for(policy: Policy, longest: int, prompt: int | None = None) -> Grid:
    """
    A grid that covers a run whose longest request is `longest` positions (prompt and output)
    and longest prompt `prompt` (default `longest`): `spyre_grid` for the spyre policy; for
    vLLM's, chunks of 16 tokens doubling up to the step's token budget, cached contexts 0, half
    and all of the longest request (rounded up to whole blocks of 64 positions), batches 1, 2,
    4, ... up to `max_seqs`, decode contexts an eighth, half and all of it.
    """
    if policy.scheduler == "spyre":
        return spyre_grid(policy, longest, longest if prompt is None else prompt)
    budget = policy.max_batched_tokens
    tokens = sorted({*(t for t in _doubling(16, budget)), budget})
    longest = whole_blocks(max(longest, 8))  # contexts with divisors: attention walks keys in equal chunks
    return Grid(
        prefill_tokens=tuple(tokens) if len(tokens) > 1 else (max(1, budget // 2), max(2, budget)),
        prefill_cached=(0, longest // 2, longest),
        decode_batches=_batches(policy),
        decode_contexts=(longest // 8, longest // 2, longest),
    )


def spyre_grid(policy: Policy, longest: int, prompt: int) -> Grid:
    """
    The spyre policy's grid: prefill chunks of `prefill_chunk` tokens after 0, 1, 2, ... chunks,
    as far as the longest padded prompt reaches; decode batches as vLLM's grid, at contexts an
    eighth, half and all of the largest tkv (the padded prompt, its output and a block of the
    batch's padding, in whole blocks); no mixed step.
    """
    chunk = policy.prefill_chunk
    chunks = PrefillLayout(prompt, policy.block_size, chunk).chunks
    top = whole_blocks(chunks * chunk + max(longest - prompt, 1) + policy.block_size)
    return Grid(
        prefill_tokens=(chunk,),
        prefill_cached=tuple(i * chunk for i in range(chunks)),
        decode_batches=_batches(policy),
        decode_contexts=(whole_blocks(top // 8), whole_blocks(top // 2), top),
        mixed=False,
    )


def _batches(policy: Policy) -> tuple[int, ...]:
    """Decode batches 1, 2, 4, ... up to `max_seqs` (at least 1 and 2)."""
    batches = sorted({1, *_doubling(2, policy.max_seqs), policy.max_seqs} | {2})
    return tuple(b for b in batches if b <= max(policy.max_seqs, 2))


def _doubling(start: int, stop: int, factor: int = 2) -> list[int]:
    values, value = [], start
    while value < stop:
        values.append(value)
        value *= factor
    return values


def grid_programs(grid: Grid) -> int:
    """Grid points a table compiles (each with one and two layers): the progress bar's total."""
    tokens, batches = len(grid.prefill_tokens), len(grid.decode_batches)
    mixed = tokens * batches if grid.mixed else 0
    return tokens * len(grid.prefill_cached) + batches * len(grid.decode_contexts) + mixed


__all__ = ["Grid", "grid_for", "grid_programs", "spyre_grid"]
