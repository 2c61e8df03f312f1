"""
Tensor parallelism (`ktir.frontend.tensor_parallel`, `ktir.compile(..., cards=N)`): a tiny
Llama split over 2 and 4 cards gives the unsharded program's logits within the suite's fp16
bounds, and its collectives move what Megatron's split must move.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import transformers
from helpers import check_against_eager, fp16_ulp_at_largest

import ktir
from ktir.frontend.tensor_parallel import TensorParallelError, shard_config, shard_model

BATCH, TOKENS, HIDDEN, LAYERS, VOCAB = 1, 8, 128, 2, 250


def tiny_llama(**overrides: int) -> transformers.LlamaForCausalLM:
    """4 query heads over 2 KV heads (so 4 cards share KV heads), a vocabulary 4 does not divide."""
    torch.manual_seed(0)
    fields = dict(
        hidden_size=HIDDEN, intermediate_size=256, num_hidden_layers=LAYERS, num_attention_heads=4,
        num_key_value_heads=2, vocab_size=VOCAB, max_position_embeddings=64,
    )  # fmt: skip
    config = transformers.LlamaConfig(**{**fields, **overrides})
    return transformers.LlamaForCausalLM(config).half().eval().requires_grad_(False)


@pytest.fixture(scope="module")
def model() -> transformers.LlamaForCausalLM:
    return tiny_llama()


@pytest.fixture(scope="module")
def ids() -> torch.Tensor:
    return torch.randint(0, VOCAB, (BATCH, TOKENS), generator=torch.Generator().manual_seed(1))


@pytest.fixture(scope="module")
def unsharded(model: transformers.LlamaForCausalLM, ids: torch.Tensor) -> np.ndarray:
    program = ktir.compile(model, (ids,), quiet=True)
    return program(ids).logits.numpy()


@pytest.mark.slow  # the fast tier (make check) leaves out whole-model runs
@pytest.mark.parametrize("cards", [2, 4])
def test_tensor_parallel_logits_equal_the_unsharded_programs(
    model: transformers.LlamaForCausalLM, ids: torch.Tensor, unsharded: np.ndarray, cards: int
) -> None:
    program = ktir.compile(model, (ids,), cards=cards, quiet=True)
    assert isinstance(program, ktir.program.ShardedProgram) and program.cards == cards
    logits = program(ids).logits.numpy()
    assert logits.shape == unsharded.shape == (BATCH, TOKENS, VOCAB)
    # As accurate as PyTorch's own fp16 run (the suite's model bound), and within its 8 ulps of
    # the unsharded program: the cards round their partial sums to fp16 before the all-reduce.
    check_against_eager(logits, model, tiny_llama().double(), (ids,))
    ulp = fp16_ulp_at_largest(unsharded)
    assert np.abs(logits.astype(np.float64) - unsharded).max() <= 8 * ulp
    assert not np.array_equal(logits, unsharded)  # the shards ran: rounding differs somewhere


@pytest.mark.slow
@pytest.mark.slow  # the fast tier (make check) leaves out whole-model runs
@pytest.mark.parametrize("cards", [2, 4])
def test_the_collectives_move_what_the_megatron_split_must(
    model: transformers.LlamaForCausalLM, ids: torch.Tensor, cards: int
) -> None:
    report = ktir.compile(model, (ids,), cards=cards, quiet=True).estimate()
    collectives = report.collectives
    hidden_state = BATCH * TOKENS * HIDDEN * 2  # fp16 bytes all-reduced after attention and the MLP
    reduces = [k for k in collectives if k.op == "ktir.all_reduce (link)"]
    assert len(reduces) == 2 * LAYERS
    assert [k.link_bytes for k in reduces] == [2 * (cards - 1) / cards * hidden_state] * (2 * LAYERS)
    # The LM head's blocks of ceil(250 / N) rows, gathered: (N - 1) / N of the N blocks' logits
    # in their device layout (the vocabulary padded to whole sticks of 64).
    (gather,) = [k for k in collectives if k.op == "ktir.all_gather (link)"]
    sticks = -(-cards * -(-VOCAB // cards) // 64)
    assert gather.link_bytes == (cards - 1) / cards * BATCH * TOKENS * sticks * 64 * 2
    assert report.collective_cycles == pytest.approx(sum(k.cycles for k in collectives))
    assert report.collective_cycles > 0


def test_each_card_holds_its_share_of_the_weights(model: transformers.LlamaForCausalLM) -> None:
    # 4 cards over 2 KV heads: cards 0, 1 read KV head 0 and cards 2, 3 KV head 1.
    shards = [shard_model(model, rank, 4) for rank in range(4)]
    full = model.model.layers[0]
    for rank, shard in enumerate(shards):
        layer = shard.model.layers[0]
        torch.testing.assert_close(
            layer.self_attn.q_proj.weight, full.self_attn.q_proj.weight[rank * 32 : (rank + 1) * 32]
        )
        head = rank // 2
        torch.testing.assert_close(
            layer.self_attn.k_proj.weight, full.self_attn.k_proj.weight[head * 32 : (head + 1) * 32]
        )
        torch.testing.assert_close(
            layer.self_attn.o_proj.linear.weight, full.self_attn.o_proj.weight[:, rank * 32 : (rank + 1) * 32]
        )
        torch.testing.assert_close(
            layer.mlp.down_proj.linear.weight, full.mlp.down_proj.weight[:, rank * 64 : (rank + 1) * 64]
        )
        torch.testing.assert_close(layer.input_layernorm.weight, full.input_layernorm.weight)
    # The LM head: blocks of 63 rows, the last one's 2 rows past the vocabulary zero.
    assert shards[3].lm_head.linear.weight.shape == (63, HIDDEN)
    torch.testing.assert_close(shards[3].lm_head.linear.weight[:61], model.lm_head.weight[189:])
    assert not shards[3].lm_head.linear.weight[61:].any()


@pytest.mark.parametrize(
    ("cards", "message"),
    [
        (3, "3 cards cannot split 4 attention heads evenly (tensor parallelism gives each card whole heads)"),
        (9, "cards must be 1 to 8 (the cards of a tensor-parallel group), not 9"),
        (0, "cards must be 1 to 8 (the cards of a tensor-parallel group), not 0"),
    ],
)
def test_a_card_count_it_cannot_split_is_one_line(
    model: transformers.LlamaForCausalLM, ids: torch.Tensor, cards: int, message: str
) -> None:
    with pytest.raises(TensorParallelError) as caught:
        ktir.compile(model, (ids,), cards=cards, quiet=True)
    assert str(caught.value) == message


def test_kv_heads_the_cards_cannot_share_are_refused() -> None:
    config = transformers.LlamaConfig(hidden_size=192, num_attention_heads=12, num_key_value_heads=3)
    with pytest.raises(TensorParallelError, match="4 cards cannot split 3 key-value heads"):
        shard_config(config, 4)


def test_a_model_without_a_decoder_config_is_refused() -> None:
    with pytest.raises(TensorParallelError, match=r"splits a Hugging Face decoder .* not a Linear"):
        ktir.compile(torch.nn.Linear(64, 64).half(), (torch.zeros(2, 64).half(),), cards=2, quiet=True)


def test_in_eager_pytorch_a_card_is_alone() -> None:
    x = torch.ones(4)
    assert torch.equal(torch.ops.ktir.all_reduce(x, 1), x)
    with pytest.raises(RuntimeError, match="ktir::all_reduce over 2 cards has no other cards in eager"):
        torch.ops.ktir.all_reduce(x, 2)


SMALL = {"hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4, "num_key_value_heads": 2}
OTHER_DECODERS = {
    # q/k/v biases, split with their rows
    "qwen2": lambda: transformers.Qwen2Config(**SMALL, num_hidden_layers=2, vocab_size=256),
    # an LM head tied to the embedding, and a head_dim of its own
    "gemma": lambda: transformers.GemmaConfig(**SMALL, num_hidden_layers=2, vocab_size=256, head_dim=16),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(OTHER_DECODERS))
def test_other_decoders_split_over_two_cards_as_accurately_as_eager(name: str, ids: torch.Tensor) -> None:
    def build(dtype: torch.dtype) -> torch.nn.Module:
        torch.manual_seed(0)
        model = transformers.AutoModelForCausalLM.from_config(OTHER_DECODERS[name]())
        return model.to(dtype).eval().requires_grad_(False)

    model = build(torch.float16)
    logits = ktir.compile(model, (ids,), cards=2, quiet=True)(ids).logits.numpy()
    check_against_eager(logits, model, build(torch.float64), (ids,))
