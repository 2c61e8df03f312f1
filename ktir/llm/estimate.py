"""
Whole-model LLM estimates from a Hugging Face config, without weights (`ktir.estimate_llm`).

The question: how long would this model take on the chip to answer a prompt (time to first
token) and to produce each further token at a given context, and how far is that from the
roofline? `estimate_llm(config, prompt=512, context=2048)` answers it without allocating a
weight:

1. The model is built on PyTorch's `meta` device in fp16 and wrapped with a static KV cache of
   `context` positions (`ktir.llm.cache`), as `ktir.generate` runs it.
2. Two programs are compiled, as `ktir.generate` compiles them: the prefill (`prompt` tokens at
   positions 0..prompt-1, which it knows, so its attention is causal; only the last token's
   logits) and one decode step (one token at position context - 1, attending over the whole
   cache, the position an input).
3. Each is timed without values (`Program.estimate`: the simulator's cycles, exactly).

Identical decoder layers are compiled once: the model is built with one and with two layers,
and a model of N layers takes `T(1) + (N - 1) * (T(2) - T(1))` for every additive quantity
(cycles, bytes moved, compulsory bytes, matmul FLOPs, each op's cycles). That is the whole
model's figure because a kernel's time depends only on itself and the kernel before it (the
prefetch window), every interior layer follows a layer, and layout and fusion decisions are
local to each layer; `test/unit/llm/test_estimate.py` checks it against whole models of 3 and 4
layers compiled and simulated as they are. The roofline bound is computed from the extrapolated
FLOPs and compulsory bytes, so it is the whole model's bound.

```python
config = transformers.AutoConfig.for_model("llama", hidden_size=4096, ...)
result = ktir.estimate_llm(config, prompt=512, context=2048)
result.time_to_first_token_us, result.decode_us, result.tokens_per_second
result.prefill.vs_bound, result.decode.vs_bound
```
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import torch

from ktir.compile import TargetLike, chip_of
from ktir.compile import compile as compile_program
from ktir.hardware.target import Target
from ktir.llm.cache import static_cache_model
from ktir.progress import StageProgress
from ktir.sim import Report
from ktir.sim.report import Yardstick

CHECKED_ARCHITECTURES = ("llama", "mistral", "qwen2", "granite", "gemma")
"""Decoder architectures the tests and `bench/configs` estimate; the error for an unsupported
architecture names them (any other decoder-only causal LM transformers builds is estimated too)."""


class EstimateError(ValueError):
    """A configuration `estimate_llm` cannot estimate (not a causal LM, bad sizes)."""


@dataclass
class PhaseEstimate(Yardstick):
    """One program of the model (prefill or a decode step), all layers: time, traffic, bound."""

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

    @property
    def simulated_cycles(self) -> float:
        """Whole cycles, as a report's total (what `vs_bound` compares with the bound)."""
        return math.ceil(self.cycles)

    @property
    def time_us(self) -> float:
        """The phase's simulated microseconds."""
        return self.simulated_cycles / self.target.clock_mhz

    @property
    def bound_us(self) -> float:
        """The roofline bound in microseconds."""
        return self.bound_cycles / self.target.clock_mhz


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

    @property
    def target(self) -> Target:
        """The chip it was estimated on."""
        return self.prefill.target

    @property
    def time_to_first_token_us(self) -> float:
        """The prefill's simulated time (it gives the first new token)."""
        return self.prefill.time_us

    @property
    def decode_us(self) -> float:
        """One decode step at the full context."""
        return self.decode.time_us

    @property
    def tokens_per_second(self) -> float:
        """New tokens per second of decoding, over the batch."""
        return self.batch * 1e6 / self.decode_us

    def to_dict(self) -> dict[str, Any]:
        """Every number, as plain data (JSON)."""

        def phase(p: PhaseEstimate) -> dict[str, Any]:
            return {
                "time_us": p.time_us, "bound_us": p.bound_us, "vs_bound": p.vs_bound,
                "cycles": p.cycles, "bound_cycles": p.bound_cycles, "bytes": p.bytes,
                "compulsory_bytes": p.compulsory_bytes, "traffic_ratio": p.traffic_ratio,
                "matmul_flops": p.matmul_flops, "layer_cycles": p.layer_cycles,
                "other_cycles": p.other_cycles, "ops": p.ops,
            }  # fmt: skip

        return {
            "format": "ktir-llm-estimate", "version": 1, "target": self.target.name,
            "model_type": self.model_type, "layers": self.layers, "prompt": self.prompt,
            "context": self.context, "batch": self.batch,
            "time_to_first_token_us": self.time_to_first_token_us, "decode_us": self.decode_us,
            "tokens_per_second": self.tokens_per_second, "prefill": phase(self.prefill),
            "decode": phase(self.decode), "assumptions": self.assumptions,
            "wall_seconds": self.wall_seconds,
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
) -> LlmEstimate:
    """
    Time to first token and decode time per token of a Hugging Face causal LM (a
    `PretrainedConfig`, or a model whose config is used; no weight is read) for `prompt`
    tokens, a decode step at `context` positions and `batch` sequences, on `target` (a
    `Target` or a TOML file; default Spyre). See the module docstring for how. Each of its
    `STAGES` programs is announced to `progress` before it is compiled.
    """
    start = time.perf_counter()
    config = getattr(model_or_config, "config", model_or_config)
    layers = _check(config, prompt, context, batch)
    _check_architecture(config)
    chip = chip_of(target)
    prefills, decodes, assumptions = [], [], {}
    for count in (1, 2):
        model = _meta_model(config, count)
        for reports, phase, wrapper, args in (
            (prefills, "prefill", static_cache_model(model, context, batch, prompt), (_ids(batch, prompt),)),
            (
                decodes,
                "decode step",
                static_cache_model(model, context, batch),
                (_ids(batch, 1), torch.tensor([context - 1])),
            ),
        ):
            if progress is not None:
                progress.stage(f"{chip.name}: {phase}, {count} layer{'s' if count > 1 else ''}")
            program = compile_program(wrapper, args, cores=cores, target=chip, quiet=True)
            report = program.estimate()
            reports.append(report)
            assumptions.update(dict.fromkeys(report.assumptions))
    return LlmEstimate(
        model_type=str(getattr(config, "model_type", "?")),
        layers=layers,
        prompt=prompt,
        context=context,
        batch=batch,
        prefill=_extrapolate(*prefills, layers, chip),
        decode=_extrapolate(*decodes, layers, chip),
        assumptions=list(assumptions),
        wall_seconds=time.perf_counter() - start,
    )


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


def _check_architecture(config: Any) -> None:
    """
    An `EstimateError` naming the architecture unless transformers builds it as a decoder-only
    causal LM: an encoder-decoder, an encoder (a masked-LM architecture, such as BERT, whose
    config is not set up as a decoder: its causal-LM head ignores the KV cache) or an
    architecture with no causal LM at all cannot be estimated.
    """
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    )

    model_type = str(getattr(config, "model_type", "?"))
    if model_type not in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        problem = "has no causal language model in transformers"
    elif getattr(config, "is_encoder_decoder", False):
        problem = "is an encoder-decoder"
    elif model_type in MODEL_FOR_MASKED_LM_MAPPING_NAMES and not getattr(config, "is_decoder", False):
        problem = "is an encoder (its config does not set is_decoder)"
    else:
        return
    raise EstimateError(
        f"architecture '{model_type}' {problem}: ktir estimates decoder-only causal "
        f"language models, such as {', '.join(CHECKED_ARCHITECTURES)}"
    )


def _ids(batch: int, tokens: int) -> torch.Tensor:
    return torch.zeros(batch, tokens, dtype=torch.long)


def _meta_model(config: Any, layers: int) -> torch.nn.Module:
    """The model with `layers` decoder layers on the meta device (fp16)."""
    import transformers

    fields = {**config.to_dict(), "num_hidden_layers": layers, "use_cache": True}
    if isinstance(fields.get("layer_types"), list):  # one entry per layer (sliding or full attention)
        fields["layer_types"] = fields["layer_types"][:layers]
    small = config.__class__.from_dict(fields)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.device("meta"):
            try:
                model = transformers.AutoModelForCausalLM.from_config(small, dtype=torch.float16)
            except ValueError as error:
                raise EstimateError(f"not a causal language model transformers knows: {error}") from None
        return model.eval().requires_grad_(False)


def _extrapolate(one: Report, two: Report, layers: int, target: Target) -> PhaseEstimate:
    """The N-layer figures from the 1- and 2-layer reports: T(1) + (N - 1) * (T(2) - T(1))."""

    def whole(first: float, second: float) -> float:
        return first + (layers - 1) * (second - first)

    ops_one, ops_two = ({o.op: o.cycles for o in r.ops} for r in (one, two))
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
    )


__all__ = ["CHECKED_ARCHITECTURES", "STAGES", "EstimateError", "LlmEstimate", "PhaseEstimate", "estimate_llm"]
