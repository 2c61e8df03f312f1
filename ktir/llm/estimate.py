"""
Whole-model LLM estimates from a Hugging Face config, without weights (`ktir.estimate_llm`).

The question: how long would this model take on the chip to answer a prompt (time to first
token) and to produce each further token at a given context, and how far is that from its
bounds? `estimate_llm(config, prompt=512, context=2048)` answers it without allocating a
weight. First it checks that the model fits the card (`ktir.llm.capacity`: weights, KV cache,
activations and the runtime reserve against `Target.device_memory_bytes`); one that does not
raises `EstimateError` with the numbers (`needs 142.3 GiB per card, has 128 GiB (...)`) and
nothing is compiled. Then:

1. The model is built on PyTorch's `meta` device in fp16 and wrapped with a static KV cache of
   `context` positions (`ktir.llm.cache`), as `ktir.generate` runs it.
2. Two programs are compiled, as `ktir.generate` compiles them: the prefill (`prompt` tokens at
   positions 0..prompt-1, which it knows, so its attention is causal; only the last token's
   logits) and one decode step (one token at position context - 1, attending over the whole
   cache, the position an input).
3. Each is timed without values (`Program.estimate`: the simulator's cycles, exactly).

With `prefill_chunk` (chunked prefill, as vLLM-spyre runs it), each chunk `k` of the prompt,
its tokens at positions after the `k * prefill_chunk` cached ones, is compiled too
(`prefill_program`, over the same static cache, so a chunk of the whole prompt is the prefill
itself) and the time to first token is the sum of the chunks.

Identical decoder layers are compiled once: the model is built with one and with two layers,
and a model of N layers takes `T(1) + (N - 1) * (T(2) - T(1))` for every additive quantity
(cycles, bytes moved, compulsory bytes, matmul FLOPs, each op's cycles). That is the whole
model's figure because a kernel's time depends only on itself and the kernel before it (the
prefetch window), every interior layer follows a layer, and layout and fusion decisions are
local to each layer; `test/unit/llm/test_estimate.py` checks it against whole models of 3 and 4
layers compiled and simulated as they are. Both bounds (`ktir.sim.report`: the sustained bound,
the schedule-quality yardstick, and the datasheet roofline) are computed from the extrapolated
FLOPs and compulsory bytes, so they are the whole model's bounds.

```python
config = transformers.AutoConfig.for_model("llama", hidden_size=4096, ...)
result = ktir.estimate_llm(config, prompt=512, context=2048)
result.time_to_first_token_us, result.decode_us, result.tokens_per_second
result.decode.vs_sustained, result.decode.vs_bound    # x the sustained bound, x the roofline
```
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, cast

import torch

from ktir.compiler import compile as compile_program
from ktir.frontend.tensor_parallel import TensorParallelError, check_cards, shard_config, shard_model
from ktir.hardware.cost_model import ATTENTION_BLOCK
from ktir.hardware.target import Target
from ktir.ir.diagnostics import DiagnosticError
from ktir.llm.architecture import CHECKED_ARCHITECTURES as CHECKED_ARCHITECTURES
from ktir.llm.architecture import EstimateError, check_architecture, meta_model
from ktir.llm.cache import static_cache_model, whole_blocks
from ktir.llm.capacity import CardMemory, MemoryModel
from ktir.llm.quantization import WeightFormat, quantize_model, weight_format
from ktir.pipeline import TargetLike, chip_of
from ktir.program import Program
from ktir.progress import StageProgress
from ktir.sim import Report
from ktir.sim.report import Yardstick


@dataclass
class PhaseEstimate(Yardstick):
    """One program of the model (prefill or a decode step), all layers: time, traffic, both bounds."""

    cycles: float
    matmul_flops: float
    compulsory_bytes: float
    bytes: float
    target: Target
    layer_cycles: float
    """One decoder layer's cycles (the same for every layer)."""
    other_cycles: float
    """Cycles outside the decoder layers: embedding, final norm, LM head."""
    ops: dict[str, float] = field(default_factory=dict)
    """Cycles of each op kind over the whole model, most first."""
    collective_cycles: float = 0.0
    """Cycles of the collectives between cards (`cards` > 1), over the whole model: part of `cycles`."""
    link_bytes: float = 0.0
    """Bytes each card sends to the next over the card link in its collectives, whole model."""

    @property
    def collective_us(self) -> float:
        """Microseconds the card waits for collectives between cards (part of `time_us`)."""
        return self.collective_cycles / self.target.clock_mhz

    @property
    def simulated_cycles(self) -> float:
        """Whole cycles, as a report's total (what `vs_sustained` and `vs_bound` compare with the bounds)."""
        return math.ceil(self.cycles)

    @property
    def time_us(self) -> float:
        """The phase's simulated microseconds."""
        return self.simulated_cycles / self.target.clock_mhz


@dataclass
class ChunkEstimate:
    """One chunk of a chunked prefill: `tokens` prompt tokens after `cached` ones, all layers."""

    tokens: int
    cached: int
    phase: PhaseEstimate


@dataclass
class LlmEstimate:
    """`estimate_llm`'s answer for one model, shape and target."""

    model_type: str
    layers: int
    prompt: int
    context: int
    batch: int
    prefill: PhaseEstimate
    decode: PhaseEstimate
    assumptions: list[str]
    wall_seconds: float
    """Wall time of the estimate (build, export, compile and timing-only runs)."""
    memory: CardMemory | None = None
    """Device memory the model holds on the card (`ktir.llm.capacity`), checked before compiling."""
    prefill_chunk: int | None = None
    """Prompt tokens per prefill chunk (chunked prefill), or None: the prompt in one program."""
    chunks: list[ChunkEstimate] = field(default_factory=list)
    """With `prefill_chunk`, each chunk in order; the time to first token is their sum."""
    cards: int = 1
    """Cards the model is split over by tensor parallelism: the times are each card's (one shard
    and its collectives, `PhaseEstimate.collective_cycles`)."""

    @property
    def target(self) -> Target:
        """The chip it was estimated on."""
        return self.prefill.target

    @property
    def time_to_first_token_us(self) -> float:
        """
        The prefill's simulated time (it gives the first new token): with chunked prefill, the
        sum of its chunks' times, each at its cached context.
        """
        if self.chunks:
            return sum(chunk.phase.time_us for chunk in self.chunks)
        return self.prefill.time_us

    @property
    def decode_us(self) -> float:
        """One decode step at the full context."""
        return self.decode.time_us

    @property
    def tokens_per_second(self) -> float:
        """New tokens per second of decoding, over the batch."""
        return self.batch * 1e6 / self.decode_us

    @property
    def tokens_per_second_per_card(self) -> float:
        """
        New tokens per second of one card: the batch over the decode step, over the `cards` of
        the group that produces them (`tokens_per_second` on one card).
        """
        return self.tokens_per_second / self.cards

    @property
    def tokens_per_second_per_user(self) -> float:
        """New tokens per second each sequence of the batch sees: one per decode step."""
        return 1e6 / self.decode_us

    def to_dict(self) -> dict[str, Any]:
        """Every number, as plain data (JSON)."""

        def phase(p: PhaseEstimate) -> dict[str, Any]:
            return {
                "time_us": p.time_us, "sustained_bound_us": p.sustained_bound_us,
                "vs_sustained": p.vs_sustained, "bound_us": p.bound_us, "vs_bound": p.vs_bound,
                "cycles": p.cycles, "sustained_bound_cycles": p.sustained_bound_cycles,
                "bound_cycles": p.bound_cycles, "bytes": p.bytes,
                "compulsory_bytes": p.compulsory_bytes, "traffic_ratio": p.traffic_ratio,
                "matmul_flops": p.matmul_flops, "layer_cycles": p.layer_cycles,
                "other_cycles": p.other_cycles, "ops": p.ops,
                "collective_cycles": p.collective_cycles, "collective_us": p.collective_us,
                "link_bytes": p.link_bytes,
            }  # fmt: skip

        return {
            "format": "ktir-llm-estimate", "version": 1, "target": self.target.name,
            "model_type": self.model_type, "layers": self.layers, "cards": self.cards,
            "prompt": self.prompt,
            "context": self.context, "batch": self.batch,
            "time_to_first_token_us": self.time_to_first_token_us, "decode_us": self.decode_us,
            "tokens_per_second": self.tokens_per_second,
            "tokens_per_second_per_card": self.tokens_per_second_per_card,
            "tokens_per_second_per_user": self.tokens_per_second_per_user,
            "prefill": phase(self.prefill), "decode": phase(self.decode),
            "prefill_chunk": self.prefill_chunk,
            "chunks": [{"tokens": c.tokens, "cached": c.cached, **phase(c.phase)} for c in self.chunks],
            "assumptions": self.assumptions,
            "wall_seconds": self.wall_seconds,
            "memory": None if self.memory is None else self.memory.to_dict(),
        }  # fmt: skip


def estimate_llm(
    model_or_config: Any,
    *,
    prompt: int = 512,
    context: int = 2048,
    batch: int = 1,
    target: TargetLike = None,
    cores: int | None = None,
    progress: StageProgress | None = None,
    dtype: str | None = None,
    kv_dtype: str | None = None,
    prefill_chunk: int | None = None,
    cards: int = 1,
) -> LlmEstimate:
    """
    Time to first token and decode time per token of a Hugging Face causal LM (a
    `PretrainedConfig`, or a model whose config is used; no weight is read) for `prompt`
    tokens, a decode step at `context` positions and `batch` sequences, on `target` (a
    `Target` or a TOML file; default Spyre). See the module docstring for how. Each of its
    `STAGES` programs is announced to `progress` before it is compiled. `dtype` and
    `kv_dtype` (`ktir.llm.quantization`; default: the config's `quantization_config`, else
    fp16) set the formats the device-memory check counts; fp8 weights are also compiled and
    timed (`ktir.llm.quantization.Fp8Linear`, W8A8), other formats are timed in fp16.
    With `prefill_chunk`, the prompt is also prefilled that many tokens at a time (as vLLM-spyre
    runs it): each distinct chunk (tokens, cached tokens before it) is compiled and timed over
    the cache so far, and the time to first token is the sum of the chunks.
    With `cards` > 1 (1 to 8) the model is split over that many cards by tensor parallelism
    (`ktir.frontend.tensor_parallel`): the memory is each card's, and each program is one card's
    shard with its collectives (an all-reduce after each attention and MLP, an all-gather of the
    logits), timed from the card-to-card link; the times are each card's.
    """
    start = time.perf_counter()
    config = getattr(model_or_config, "config", model_or_config)
    layers = _check(config, prompt, context, batch)
    if prefill_chunk is not None and (not isinstance(prefill_chunk, int) or prefill_chunk < 1):
        raise EstimateError(f"prefill_chunk must be a positive integer, not {prefill_chunk!r}")
    check_architecture(config)
    check_card_split(cards, config)
    chip = chip_of(target)
    step = min(prompt, prefill_chunk or prompt)  # a chunked prefill's activations are one chunk's
    memory, stored = _check_fit(config, chip, (step, context, batch), dtype, kv_dtype, cards)
    assumptions = dict.fromkeys(stored)
    if cards > 1:
        assumptions[_tensor_parallel_assumption(cards, chip)] = None
    shared = {"batch": batch, "target": chip, "cores": cores, "weights": _compiled_format(config, dtype)}
    shared["cards"] = cards
    cache = whole_blocks(context)  # a paged cache: attention reads whole blocks of keys
    if cache != context:
        assumptions[_whole_blocks_assumption(context, cache)] = None
    programs: dict[str, Callable[[int], Program]] = {
        "prefill": partial(prefill_program, config, tokens=prompt, cache=cache, **shared),
        "decode step": partial(decode_program, config, context=context, cache=cache, **shared),
    }
    pairs = chunk_pairs(prompt, prefill_chunk) if prefill_chunk is not None else []
    for tokens, cached in dict.fromkeys(pairs):  # the chunk (prompt, 0) is the prefill itself
        if (tokens, cached) != (prompt, 0):
            programs[_chunk_name(tokens, cached)] = partial(
                prefill_program, config, tokens=tokens, cached=cached, cache=cache, **shared
            )
    phases = _time_programs(programs, layers, chip, progress, assumptions)
    phases[_chunk_name(prompt, 0)] = phases["prefill"]
    return LlmEstimate(
        model_type=str(getattr(config, "model_type", "?")),
        layers=layers,
        prompt=prompt,
        context=context,
        batch=batch,
        prefill=phases["prefill"],
        decode=phases["decode step"],
        assumptions=list(assumptions),
        wall_seconds=time.perf_counter() - start,
        memory=memory,
        prefill_chunk=prefill_chunk,
        chunks=[ChunkEstimate(n, c, phases[_chunk_name(n, c)]) for n, c in pairs],
        cards=cards,
    )


def check_card_split(cards: int, config: Any) -> None:
    """`EstimateError` for a card count the model cannot be split over (one line, the numbers)."""

    try:
        if check_cards(cards) > 1:
            shard_config(config, cards)
    except TensorParallelError as error:
        raise EstimateError(str(error)) from None


def _tensor_parallel_assumption(cards: int, chip: Target) -> str:
    """What a tensor-parallel estimate assumes about the cards' collectives (docs/hardware.md)."""
    return (
        f"tensor parallelism over {cards} cards: one card's shard is timed, and its collectives as "
        f"rings peer to peer over PCIe at {chip.card_link_bandwidth / 1e9:g} GB/s a direction plus "
        f"{chip.card_link_latency_us:g} µs a step, not overlapped with compute"
    )


def chunk_pairs(prompt: int, chunk: int) -> list[tuple[int, int]]:
    """
    The chunks of a `prompt` prefilled `chunk` tokens at a time, in order: (tokens, cached
    tokens before it); the last chunk holds what is left.
    """
    return [(min(chunk, prompt - cached), cached) for cached in range(0, prompt, chunk)]


def _chunk_name(tokens: int, cached: int) -> str:
    return f"prefill chunk of {tokens} after {cached}"


def _time_programs(
    programs: dict[str, Callable[[int], Program]],
    layers: int,
    chip: Target,
    progress: StageProgress | None,
    assumptions: dict[str, None],
) -> dict[str, PhaseEstimate]:
    """
    Each program built with one and with two decoder layers, compiled, timed without values
    and extrapolated to `layers` (`extrapolate_layers`); each announced to `progress` (all programs
    with one layer first, then with two), its assumptions added to `assumptions`.
    """
    reports: dict[str, list[Report]] = {name: [] for name in programs}
    for count in (1, 2):
        for name, build in programs.items():
            if progress is not None:
                progress.stage(f"{chip.name}: {name}, {count} layer{'s' if count > 1 else ''}")
            report = build(count).estimate()
            reports[name].append(report)
            assumptions.update(dict.fromkeys(report.assumptions))
    return {name: extrapolate_layers(*pair, layers, chip) for name, pair in reports.items()}  # pyright: ignore[reportCallIssue]  # two reports: 1 and 2 layers


def prefill_program(
    config: Any,
    layers: int,
    tokens: int,
    *,
    cached: int = 0,
    cache: int | None = None,
    batch: int = 1,
    target: TargetLike = None,
    cores: int | None = None,
    weights: WeightFormat | None = None,
    cards: int = 1,
    handoff: bool = True,
) -> Program:
    """
    The prefill (chunk) of `batch` sequences of `tokens` prompt tokens at positions
    `cached..cached+tokens-1` (after `cached` tokens already in the cache), of the model with
    `layers` decoder layers, compiled. The positions are compile-time constants, so the
    attention mask folds to a causal one: the chunk attends over the cached tokens and itself,
    and its attention kernel skips the cache past them. The static cache holds `cache`
    positions (default `cached + tokens`, exactly what the chunk reads). `weights`: fp8 linear
    layers (`ktir.llm.quantization.quantize_model`), or fp16 for None. With `cards` > 1, one
    card's shard of the model split over them (`card_model`). `handoff` as in `ktir.compile`.
    """
    size = cached + tokens if cache is None else cache
    wrapper = static_cache_model(card_model(config, layers, weights, cards), size, batch, tokens)
    wrapper.prefill_positions = torch.arange(cached, cached + tokens)  # after `cached` tokens
    return compiled_program(config, wrapper, (_ids(batch, tokens),), cores, target, handoff)


def decode_program(
    config: Any,
    layers: int,
    *,
    batch: int = 1,
    context: int,
    cache: int | None = None,
    target: TargetLike = None,
    cores: int | None = None,
    weights: WeightFormat | None = None,
    cards: int = 1,
    handoff: bool = True,
) -> Program:
    """
    One decode step of the model with `layers` decoder layers, compiled: `batch` sequences of
    one token each at position `context - 1` (an input) over a static cache of `cache`
    positions (default `context`; every sequence's cache padded to it, the positions past the
    token masked). `weights`, `cards` and `handoff` as in `prefill_program`.
    """
    size = context if cache is None else cache
    if size < context:
        raise EstimateError(f"a cache of {size} positions cannot hold context {context}")
    wrapper = static_cache_model(card_model(config, layers, weights, cards), size, batch)
    args = (_ids(batch, 1), torch.tensor([context - 1]))
    return compiled_program(config, wrapper, args, cores, target, handoff)


def _whole_blocks_assumption(context: int, cache: int) -> str:
    """The line that says a context was read as whole KV blocks (`ktir.llm.cache.whole_blocks`)."""
    return (
        f"the KV cache is paged in blocks of {ATTENTION_BLOCK} positions and attention reads whole "
        f"blocks: context {context:,} is read as {cache:,} positions"
    )


def card_model(config: Any, layers: int, weights: WeightFormat | None, cards: int) -> torch.nn.Module:
    """
    The `meta` model with `layers` decoder layers on one card: the whole model, or with `cards`
    > 1 card 0's shard (`ktir.frontend.tensor_parallel.shard_model`; every card's is the same
    program, so card 0's time is each card's), its linear layers quantized after the split.
    """
    if cards == 1:
        model = meta_model(config, layers)
        return model if weights is None else quantize_model(model, weights)
    shard = shard_model(meta_model(config, layers), 0, cards)
    if weights is None:
        return shard

    # A split layer's matmul is the `linear` inside its wrapper: the formats' kept layers by that name too
    wrapped = tuple(f"{entry}.linear" for entry in weights.keep if not entry.startswith("re:"))
    return quantize_model(shard, dataclasses.replace(weights, keep=(*weights.keep, *wrapped)))


def compiled_program(
    config: Any, wrapper: Any, args: tuple, cores: int | None, target: TargetLike, handoff: bool = True
) -> Program:
    """
    `ktir.compile` of a model wrapper; an architecture whose graph ktir cannot compile (an op
    or dtype it does not support) is an `EstimateError` that names it, not an internal error.
    """
    try:
        program = compile_program(wrapper, args, cores=cores, target=target, handoff=handoff, quiet=True)
        return cast(Program, program)  # one card
    except DiagnosticError as error:
        first = str(error).strip().splitlines()[0]
        model_type = str(getattr(config, "model_type", "?"))
        raise EstimateError(f"ktir cannot compile this '{model_type}' model: {first}") from None


def _check_fit(
    config: Any,
    chip: Target,
    sizes: tuple[int, int, int],
    dtype: str | None,
    kv_dtype: str | None,
    cards: int = 1,
) -> tuple[CardMemory, list[str]]:
    """
    The card's memory for the model at (prompt, context, batch) `sizes` (`ktir.llm.capacity`;
    the prompt tokens of one prefill step: a chunk's with chunked prefill),
    and the assumption to report when its weights or cache are not fp16; `EstimateError` if it
    does not fit.
    """

    prompt, context, batch = sizes
    model = MemoryModel(config, dtype=dtype, kv_dtype=kv_dtype, target=chip)
    memory = model.per_card(context=context, batch=batch, prompt=prompt, cards=cards)
    if not memory.fits:
        where = chip.name if cards == 1 else f"{cards} cards of {chip.name}"
        raise EstimateError(
            f"{getattr(config, 'model_type', '?')} with {config.num_hidden_layers} layers at context "
            f"{context} x batch {batch} does not fit on {where}: {memory.describe()}"
        )
    form = model.format
    if (form.dtype, form.kv_cache) == ("fp16", "fp16"):
        return memory, []
    if form.dtype == "fp8":  # the programs run fp8 weights (`_compiled_format`)
        timed = f"fp8 weights ({form.source}, {form.scales} scales) are timed as W8A8 (`Fp8Linear`)"
        return memory, [f"{timed}; the {form.kv_cache} KV cache is counted in device memory, timed in fp16"]
    stored = f"{form.dtype} weights ({form.source}) and {form.kv_cache} KV cache"
    return memory, [f"{stored} are counted in device memory; the programs are timed with fp16 ones"]


def _compiled_format(config: Any, dtype: str | None) -> WeightFormat | None:
    """The weight format the programs are compiled with: fp8 weights' format, else None (fp16)."""

    form = weight_format(config, dtype)
    return form if form.dtype == "fp8" else None


def _check(config: Any, prompt: int, context: int, batch: int) -> int:
    """The model's layer count; an `EstimateError` for sizes that cannot be estimated."""
    layers = getattr(config, "num_hidden_layers", None)
    if not isinstance(layers, int) or layers < 1:
        raise EstimateError("the config has no num_hidden_layers: is it a decoder-only language model?")
    for name, value in (("prompt", prompt), ("context", context), ("batch", batch)):
        if not isinstance(value, int) or value < 1:
            raise EstimateError(f"{name} must be a positive integer, not {value!r}")
    if context < prompt:
        raise EstimateError(f"context {context} cannot hold the prompt ({prompt} tokens)")
    return layers


STAGES = 4
"""Programs `estimate_llm` compiles and times: the prefill and the decode step, with 1 and 2 layers."""


def stages(prompt: int, prefill_chunk: int | None = None) -> int:
    """Programs `estimate_llm` compiles for `prompt` and `prefill_chunk`: `STAGES`, and 2 per other chunk."""
    if prefill_chunk is None:
        return STAGES
    chunks = set(chunk_pairs(prompt, prefill_chunk)) - {(prompt, 0)}
    return STAGES + 2 * len(chunks)


def _ids(batch: int, tokens: int) -> torch.Tensor:
    return torch.zeros(batch, tokens, dtype=torch.long)


def extrapolate_layers(one: Report, two: Report, layers: int, target: Target) -> PhaseEstimate:
    """The N-layer figures from the 1- and 2-layer reports: T(1) + (N - 1) * (T(2) - T(1))."""

    def whole(first: float, second: float) -> float:
        return first + (layers - 1) * (second - first)

    ops_one, ops_two = ({o.op: o.cycles for o in r.ops} for r in (one, two))
    links = [sum(k.link_bytes for k in r.collectives) for r in (one, two)]
    ops = {op: whole(ops_one.get(op, 0.0), ops_two.get(op, 0.0)) for op in {*ops_one, *ops_two}}
    cycles_one, cycles_two = (sum(k.cycles for k in r.kernels) for r in (one, two))
    layer = cycles_two - cycles_one
    return PhaseEstimate(
        cycles=whole(cycles_one, cycles_two),
        matmul_flops=whole(one.matmul_flops, two.matmul_flops),
        compulsory_bytes=whole(one.compulsory_bytes, two.compulsory_bytes),
        bytes=whole(one.bytes, two.bytes),
        target=target,
        layer_cycles=layer,
        other_cycles=cycles_one - layer,
        ops=dict(sorted(ops.items(), key=lambda item: -item[1])),
        collective_cycles=whole(one.collective_cycles, two.collective_cycles),
        link_bytes=whole(*links),
    )


__all__ = [
    "CHECKED_ARCHITECTURES",
    "STAGES",
    "ChunkEstimate",
    "EstimateError",
    "LlmEstimate",
    "PhaseEstimate",
    "check_card_split",
    "chunk_pairs",
    "decode_program",
    "estimate_llm",
    "prefill_program",
    "stages",
]
