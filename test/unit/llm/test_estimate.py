"""
Whole-model estimates (`ktir.llm.estimate`): built on the meta device from a config, two
programs (prefill, decode step) timed without values, identical layers compiled once. The
extrapolated figures are those of the whole model compiled and timed as it is.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch
import transformers

import ktir
from ktir.compiler import compile as compile_program
from ktir.hardware.target import SPYRE
from ktir.llm.architecture import meta_model
from ktir.llm.cache import static_cache_model
from ktir.llm.estimate import EstimateError, _ids, estimate_llm

SHAPE = {"hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4, "num_key_value_heads": 2}
CONFIGS = {
    "llama": lambda layers: transformers.LlamaConfig(**SHAPE, num_hidden_layers=layers, vocab_size=256),
    "qwen2": lambda layers: transformers.Qwen2Config(**SHAPE, num_hidden_layers=layers, vocab_size=256),
    "gemma": lambda layers: transformers.GemmaConfig(
        **SHAPE, num_hidden_layers=layers, vocab_size=256, head_dim=16
    ),
}


def _whole(config: object, layers: int, prompt: int, context: int) -> tuple[ktir.sim.Report, ktir.sim.Report]:
    """The model with all its layers, compiled and timed as it is (prefill, decode step)."""
    model = meta_model(config, layers)
    prefill = compile_program(static_cache_model(model, context, 1, prompt), (_ids(1, prompt),), quiet=True)
    step = static_cache_model(model, context, 1)
    decode = compile_program(step, (_ids(1, 1), torch.tensor([context - 1])), quiet=True)
    return prefill.estimate(), decode.estimate()


@pytest.mark.slow
@pytest.mark.parametrize(("name", "layers"), [("llama", 3), ("qwen2", 4)])  # gemma: test_generate
def test_reused_layers_give_the_whole_models_figures(name: str, layers: int) -> None:
    config = CONFIGS[name](layers)
    estimate = estimate_llm(config, prompt=16, context=64)  # whole KV blocks: the cache is the context
    for phase, report in zip(
        (estimate.prefill, estimate.decode), _whole(config, layers, 16, 64), strict=True
    ):
        assert phase.cycles == pytest.approx(sum(k.cycles for k in report.kernels), rel=1e-12)
        assert phase.bytes == pytest.approx(report.bytes, rel=1e-12)
        assert phase.compulsory_bytes == pytest.approx(report.compulsory_bytes, rel=1e-12)
        assert phase.matmul_flops == pytest.approx(report.matmul_flops, rel=1e-12)
        assert phase.vs_bound == pytest.approx(report.vs_bound, rel=1e-9)
        assert phase.vs_sustained == pytest.approx(report.vs_sustained, rel=1e-9)
        assert phase.layer_cycles * layers + phase.other_cycles == pytest.approx(phase.cycles)
        assert sum(phase.ops.values()) == pytest.approx(phase.cycles)


@pytest.fixture(scope="module")
def short() -> object:
    """A 2-layer Llama, 16-token prompt, batch 2, decode at context 48."""
    return estimate_llm(CONFIGS["llama"](2), prompt=16, context=48, batch=2)


@pytest.mark.slow  # the fast tier (make check) leaves out whole-model runs
def test_the_answer_reads_as_a_user_asks(short: object) -> None:
    estimate = short
    assert estimate.layers == 2 and estimate.batch == 2 and estimate.model_type == "llama"
    assert estimate.time_to_first_token_us == pytest.approx(estimate.prefill.time_us)
    assert estimate.tokens_per_second == pytest.approx(2 * 1e6 / estimate.decode.time_us)
    for phase in (estimate.prefill, estimate.decode):  # the sustained bound is the tighter yardstick
        assert phase.vs_bound >= phase.vs_sustained >= 1
        assert phase.sustained_bound_us >= phase.bound_us > 0
    assert estimate.assumptions  # the embedding's gather
    data = estimate.to_dict()
    assert data["format"] == "ktir-llm-estimate" and data["decode"]["time_us"] == estimate.decode_us
    assert data["decode"]["vs_sustained"] == estimate.decode.vs_sustained
    assert data["decode"]["sustained_bound_us"] == estimate.decode.sustained_bound_us


@pytest.mark.slow
def test_a_longer_context_costs_the_decode_step_its_cache(short: object) -> None:
    long = estimate_llm(CONFIGS["llama"](2), prompt=16, context=96, batch=2)
    assert long.decode.compulsory_bytes > short.decode.compulsory_bytes  # type: ignore[attr-defined]
    assert long.decode.cycles > short.decode.cycles  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"prompt": 0}, "prompt must be a positive integer"),
        ({"prompt": 49, "context": 48}, "cannot hold the prompt"),
        ({"batch": -1}, "batch must be a positive integer"),
    ],
)
def test_bad_sizes_are_refused(kwargs: dict[str, int], message: str) -> None:
    with pytest.raises(EstimateError, match=message):
        estimate_llm(CONFIGS["llama"](2), **{"prompt": 16, "context": 48, **kwargs})


def test_a_config_that_is_not_a_language_model_is_refused() -> None:
    with pytest.raises(EstimateError, match="num_hidden_layers"):
        estimate_llm(transformers.ResNetConfig())


def _chunk_us(config: object, tokens: int, cached: int, context: int) -> float:
    """A chunk's whole-model microseconds, compiled through the public builder (2 layers: T(2))."""
    from ktir.llm.estimate import prefill_program

    report = prefill_program(config, 2, tokens, cached=cached, cache=context).estimate()
    return math.ceil(sum(k.cycles for k in report.kernels)) / report.kernels[0].target.clock_mhz


@pytest.mark.slow
def test_chunked_prefill_is_the_sum_of_its_chunks_over_the_cache_so_far() -> None:
    config = CONFIGS["llama"](2)
    whole = estimate_llm(config, prompt=128, context=128)
    same = estimate_llm(config, prompt=128, context=128, prefill_chunk=128)
    assert [(c.tokens, c.cached) for c in same.chunks] == [(128, 0)]
    assert same.time_to_first_token_us == whole.time_to_first_token_us  # the same program
    halves = estimate_llm(config, prompt=128, context=128, prefill_chunk=64)
    assert [(c.tokens, c.cached) for c in halves.chunks] == [(64, 0), (64, 64)]
    expected = _chunk_us(config, 64, 0, 128) + _chunk_us(config, 64, 64, 128)
    assert halves.time_to_first_token_us == pytest.approx(expected, rel=1e-9)
    # The second chunk attends over the 64 cached tokens as well as itself: it costs more.
    assert halves.chunks[1].phase.cycles > halves.chunks[0].phase.cycles
    # Each chunk reads every weight and the static cache again while the matmul rows and the
    # attention's causal pairs are only split between the chunks: chunking costs time here.
    assert halves.time_to_first_token_us > whole.time_to_first_token_us
    assert halves.prefill.time_us == whole.prefill.time_us  # the unchunked prefill is still reported
    assert halves.memory.activations < whole.memory.activations  # one chunk's rows are live at a time
    data = halves.to_dict()
    assert data["prefill_chunk"] == 64
    assert [(c["tokens"], c["cached"]) for c in data["chunks"]] == [(64, 0), (64, 64)]
    assert data["time_to_first_token_us"] == halves.time_to_first_token_us


def test_a_last_chunk_holds_what_is_left_and_programs_are_counted() -> None:
    from ktir.llm.estimate import STAGES, chunk_pairs, stages

    assert chunk_pairs(2500, 1024) == [(1024, 0), (1024, 1024), (452, 2048)]
    assert chunk_pairs(512, 1024) == [(512, 0)]
    assert stages(512) == STAGES and stages(512, 1024) == STAGES
    assert stages(2500, 1024) == STAGES + 6


def test_tokens_per_second_per_card_and_per_user(short: object) -> None:
    estimate = short
    step = estimate.decode.time_us  # type: ignore[attr-defined]
    assert estimate.tokens_per_second_per_card == pytest.approx(2 * 1e6 / step)  # type: ignore[attr-defined]
    assert estimate.tokens_per_second_per_user == pytest.approx(1e6 / step)  # type: ignore[attr-defined]
    data = estimate.to_dict()  # type: ignore[attr-defined]
    assert data["tokens_per_second_per_user"] == pytest.approx(1e6 / step)
    assert data["tokens_per_second_per_card"] == pytest.approx(2e6 / step)
    assert data["prefill_chunk"] is None and data["chunks"] == []


def test_a_bad_prefill_chunk_is_refused() -> None:
    with pytest.raises(EstimateError, match="prefill_chunk must be a positive integer, not 0"):
        estimate_llm(CONFIGS["llama"](2), prompt=16, context=48, prefill_chunk=0)


@pytest.mark.slow
def test_a_decode_step_reads_its_weights_no_faster_than_the_card_sustains() -> None:
    """
    Llama-3.2-1B (bench/configs; its LM head is the embedding table, tied, so a decode step
    reads every weight): 2.47 GB of fp16 weights take at least 16.48 ms at the card's sustained
    150 GB/s, and the step (17.0 ms when written) is no faster; its sustained bound counts them.
    """
    from ktir.tools.ktir_estimate import read_config

    config = read_config(str(Path(__file__).parents[3] / "bench" / "configs" / "llama-3.2-1b.json"))
    estimate = estimate_llm(config, prompt=16, context=512)
    assert config.tie_word_embeddings and estimate.memory.weights == 2 * 1_235_814_400
    read_us = estimate.memory.weights / SPYRE.sustained_memory_bandwidth * 1e6
    assert read_us == pytest.approx(16_477.5, abs=0.1)
    assert estimate.decode_us >= estimate.decode.sustained_bound_us >= read_us
    assert estimate.decode.bound_us == pytest.approx(estimate.decode.compulsory_bytes / 204.8e3)


def test_a_recurrent_hybrid_is_refused_before_compiling() -> None:
    config = transformers.GraniteMoeHybridConfig(
        hidden_size=64, intermediate_size=64, shared_intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2,
        vocab_size=256, layer_types=["mamba", "attention"], mamba_n_heads=4, mamba_d_head=32,
        mamba_d_state=16, mamba_expand=2,
    )  # fmt: skip
    with pytest.raises(
        EstimateError, match=r"'granitemoehybrid' has .*layers \(a recurrent state, not a KV cache\)"
    ):
        estimate_llm(config, prompt=8, context=16)


def test_an_architecture_that_does_not_compile_is_an_estimate_error() -> None:
    """gpt-oss's router counts experts with histc on integers, which ktir refuses (was: internal error)."""
    config = transformers.GptOssConfig(
        hidden_size=64, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, head_dim=16, num_local_experts=4, num_experts_per_tok=2,
        vocab_size=256, layer_types=["sliding_attention", "full_attention"],
    )  # fmt: skip
    message = r"ktir cannot compile this 'gpt_oss' model: 'ktir.histc' op histc needs a floating"
    with pytest.raises(EstimateError, match=message):
        estimate_llm(config, prompt=8, context=16)


# -- Several cards: tensor parallelism (`cards`), one shard timed with its collectives ----------------


@pytest.mark.slow
@pytest.mark.parametrize("cards", [2, pytest.param(4, marks=pytest.mark.slow)])
def test_a_tensor_parallel_estimate_times_the_collectives_the_split_must_move(cards: int) -> None:
    from ktir.hardware.cost_model import collective_cycles

    estimate = estimate_llm(CONFIGS["llama"](2), prompt=16, context=48, cards=cards)
    assert estimate.cards == cards and estimate.to_dict()["cards"] == cards
    assert any(a.startswith(f"tensor parallelism over {cards} cards") for a in estimate.assumptions)
    for phase, tokens in ((estimate.prefill, 16), (estimate.decode, 1)):
        hidden_state = tokens * 64 * 2  # batch x tokens x hidden fp16, after attention and the MLP
        logits = 256 * 2  # the last token's, gathered (256 / N per card)
        expected = 2 * 2 * collective_cycles(
            "ktir.all_reduce", hidden_state, cards, target=SPYRE
        ) + collective_cycles("ktir.all_gather", logits, cards, target=SPYRE)
        assert phase.collective_cycles == pytest.approx(expected, rel=1e-12)
        assert (
            phase.link_bytes == 2 * 2 * 2 * (cards - 1) / cards * hidden_state + (cards - 1) / cards * logits
        )
        assert phase.ops["ktir.all_reduce (link)"] + phase.ops["ktir.all_gather (link)"] == pytest.approx(
            expected
        )
        assert phase.collective_us < phase.time_us


def test_one_card_has_no_collectives(short: object) -> None:
    assert short.cards == 1  # type: ignore[attr-defined]
    assert short.decode.collective_cycles == 0 == short.prefill.link_bytes  # type: ignore[attr-defined]
    assert not any("link" in op for op in short.decode.ops)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"cards": 3},
            "3 cards cannot split 4 attention heads evenly (tensor parallelism gives each card whole heads)",
        ),
        ({"cards": 9}, "cards must be 1 to 8 (the cards of a tensor-parallel group), not 9"),
    ],
)
def test_cards_it_cannot_split_over_are_one_line(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(EstimateError) as caught:
        estimate_llm(CONFIGS["llama"](2), prompt=16, context=48, **kwargs)  # type: ignore[arg-type]
    assert str(caught.value) == message


@pytest.mark.slow
def test_fp8_weights_are_split_then_quantized() -> None:
    """On 2 cards every projection runs fp8, o_proj and down_proj in their wrappers too; the LM head fp16."""
    from ktir.frontend.tensor_parallel import GatheredLinear, RowParallelLinear
    from ktir.llm.estimate import card_model
    from ktir.llm.quantization import Fp8Linear, weight_format

    config = CONFIGS["llama"](2)
    shard = card_model(config, 1, weight_format(config, "fp8"), 2)
    layer = shard.model.layers[0]
    assert isinstance(layer.self_attn.o_proj, RowParallelLinear) and isinstance(
        layer.mlp.down_proj, RowParallelLinear
    )
    for projection in (layer.self_attn.q_proj, layer.self_attn.o_proj.linear, layer.mlp.down_proj.linear):
        assert isinstance(projection, Fp8Linear)
    assert isinstance(shard.lm_head, GatheredLinear) and type(shard.lm_head.linear) is torch.nn.Linear
    fp16, fp8 = (estimate_llm(config, prompt=16, context=48, cards=2, dtype=d) for d in ("fp16", "fp8"))
    assert fp8.decode.collective_cycles == fp16.decode.collective_cycles > 0
    assert fp8.decode.matmul_flops < fp16.decode.matmul_flops  # fp8 MACs count at the fp8 rate


@pytest.mark.slow
def test_a_context_of_no_whole_blocks_is_read_as_whole_blocks() -> None:
    """
    A paged KV cache holds whole blocks of 64 positions and attention reads them: context
    18,433 (prime, so no equal key chunks: its attention fit no scratchpad and the model did not
    compile) is timed as 18,496 positions, and the estimate says so; 18,496 is timed as it is.
    """
    prime = estimate_llm(CONFIGS["llama"](2), prompt=16, context=18433)
    whole = estimate_llm(CONFIGS["llama"](2), prompt=16, context=18496)
    assert (prime.decode.time_us, prime.prefill.time_us) == (whole.decode.time_us, whole.prefill.time_us)
    said = [line for line in prime.assumptions if "whole blocks" in line]
    assert said == [
        "the KV cache is paged in blocks of 64 positions and attention reads whole blocks: "
        "context 18,433 is read as 18,496 positions"
    ]
    assert not any("whole blocks" in line for line in whole.assumptions)
    assert prime.context == 18433
