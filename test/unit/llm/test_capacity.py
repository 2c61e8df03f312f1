"""
Device memory per card (`ktir.llm.capacity`): weights, KV cache, activations and the runtime
reserve against `Target.device_memory_bytes`, on one card and split over several. The expected
bytes are computed here from the models' shapes, independently of the module's parameter walk.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import transformers

import ktir
from ktir.hardware.target import SPYRE, Target, resolve_target
from ktir.llm import estimate as estimate_module
from ktir.llm.capacity import GIB, MemoryModel, card_memory, max_fit
from ktir.llm.estimate import EstimateError

LLAMA_70B = {
    "hidden_size": 8192, "intermediate_size": 28672, "num_attention_heads": 64,
    "num_key_value_heads": 8, "num_hidden_layers": 80, "vocab_size": 128256,
}  # fmt: skip
"""Llama-3-70B's shape (its public config.json)."""

CONFIGS = Path(__file__).parents[3] / "bench" / "configs"


def _llama(**sizes: int) -> transformers.PretrainedConfig:
    return transformers.AutoConfig.for_model("llama", **sizes)


def _llama_weights(cards: int, h: int, i: int, heads: int, kv: int, layers: int, vocab: int) -> int:
    """Weight bytes (fp16) per card of an untied Llama split Megatron-style over `cards`."""
    head_dim = h // heads
    kv_card = max(1, kv // cards)
    attention = 2 * h * h // cards + 2 * kv_card * head_dim * h  # q, o; k, v
    layer = attention + 3 * h * i // cards + 2 * h  # the MLP; two norms, whole on every card
    return 2 * (2 * vocab * h // cards + layers * layer + h)  # embedding, LM head; final norm


@pytest.fixture(scope="module")
def llama_70b() -> MemoryModel:
    return MemoryModel(_llama(**LLAMA_70B))


def test_llama_3_70b_does_not_fit_one_card_with_the_numbers(llama_70b: MemoryModel) -> None:
    params = 2 * 128256 * 8192 + 80 * (2 * 8192**2 + 2 * 1024 * 8192 + 3 * 8192 * 28672 + 2 * 8192) + 8192
    assert params == 70_553_706_496  # the published count, about 70.6 billion
    memory = llama_70b.per_card(context=2048, batch=1, prompt=512)
    assert memory.weights == params * 2
    assert memory.kv_cache == 2 * 80 * 8 * 2048 * 128 * 2  # keys and values, 8 heads of 128
    assert memory.activations == 2 * (512 * (2 * 8192 + 28672) + 128256)  # the MLP's live set, logits
    assert memory.reserve == int(0.08 * 128 * GIB)
    assert memory.capacity == SPYRE.device_memory_bytes == 128 * GIB
    assert not memory.fits
    assert memory.needed / GIB == pytest.approx(142.3, abs=0.05)
    assert memory.describe().startswith(
        "needs 142.3 GiB per card, has 128 GiB (weights 131.4 + KV cache 0.62"
    )


@pytest.mark.parametrize(("cards", "needed_gib"), [(2, 76.3), (4, 43.3), (8, 26.8)])
def test_llama_3_70b_fits_two_four_and_eight_cards(
    llama_70b: MemoryModel, cards: int, needed_gib: float
) -> None:
    memory = llama_70b.per_card(context=2048, batch=1, prompt=512, cards=cards)
    assert memory.weights == _llama_weights(cards, 8192, 28672, 64, 8, 80, 128256)
    assert memory.kv_cache == 2 * 80 * (8 // cards) * 2048 * 128 * 2
    assert memory.fits and memory.needed / GIB == pytest.approx(needed_gib, abs=0.05)
    assert f"needs {needed_gib} GiB on each of {cards} cards, has 128 GiB" in memory.describe()


def test_max_fit_gives_the_largest_batch_and_context_that_fit(llama_70b: MemoryModel) -> None:
    rows = max_fit(llama_70b, context=2048, batch=4, prompt=512)
    assert [row.cards for row in rows] == [1, 2, 4, 8]
    assert (rows[0].batch, rows[0].context) == (0, 0)  # the weights alone do not fit one card
    for row in rows[1:]:
        at = {"prompt": 512, "cards": row.cards}
        assert row.batch > 100 and row.context > 50_000
        assert llama_70b.per_card(context=2048, batch=row.batch, **at).fits
        assert not llama_70b.per_card(context=2048, batch=row.batch + 1, **at).fits
        assert llama_70b.per_card(context=row.context, batch=4, **at).fits
        assert not llama_70b.per_card(context=row.context + 1, batch=4, **at).fits
    assert rows[1].batch < rows[2].batch < rows[3].batch
    # On 2 cards each sequence adds its cache (4 KV heads per card) and its live activations.
    free = 128 * GIB - int(0.08 * 128 * GIB) - _llama_weights(2, 8192, 28672, 64, 8, 80, 128256)
    per_sequence = 2 * 80 * 4 * 2048 * 128 * 2 + 2 * (512 * (2 * 8192 + 28672 // 2) + 128256 // 2)
    assert rows[1].batch == free // per_sequence


def test_the_worked_example_llama_3_8b() -> None:
    config = transformers.AutoConfig.for_model(**json.loads((CONFIGS / "llama-3-8b.json").read_text()))
    memory = card_memory(config, context=2048, batch=1, prompt=512)
    assert memory.weights == 8_030_261_248 * 2 == _llama_weights(1, 4096, 14336, 32, 8, 32, 128256)
    assert memory.kv_cache == 268_435_456
    assert memory.activations == 23_325_184
    assert memory.needed / GIB == pytest.approx(25.47, abs=0.005)
    (one, *_) = max_fit(MemoryModel(config), context=2048, batch=1, prompt=512, cards=(1,))
    assert one.batch == 378  # the module docstring's figure


def test_the_kv_cache_pads_head_dim_to_whole_sticks() -> None:
    # head_dim 16 fills a quarter of a 64-element fp16 stick: the cache takes 4x its elements.
    config = _llama(hidden_size=64, intermediate_size=128, num_attention_heads=4, num_key_value_heads=2,
                    num_hidden_layers=3, vocab_size=256)  # fmt: skip
    memory = card_memory(config, context=100, batch=3, prompt=10)
    assert memory.kv_cache == 2 * 3 * (3 * 2 * 100) * 128  # one 128-byte stick per position and head


def test_fewer_kv_heads_than_cards_keep_one_head_per_card() -> None:
    config = _llama(hidden_size=256, intermediate_size=512, num_attention_heads=8, num_key_value_heads=2,
                    num_hidden_layers=2, vocab_size=512)  # fmt: skip
    model = MemoryModel(config)
    assert model.weights(4) == _llama_weights(4, 256, 512, 8, 2, 2, 512)
    assert model.per_card(context=64, batch=1, prompt=8, cards=4).kv_cache == 2 * 2 * 64 * 64 * 2  # 1 head
    assert model.weights(1) == _llama_weights(1, 256, 512, 8, 2, 2, 512)


def test_cards_that_cannot_split_the_heads_are_refused() -> None:
    config = _llama(hidden_size=384, intermediate_size=512, num_attention_heads=6, num_key_value_heads=6,
                    num_hidden_layers=2, vocab_size=512)  # fmt: skip
    model = MemoryModel(config)
    with pytest.raises(EstimateError, match=r"^4 cards cannot split 6 attention heads evenly"):
        model.per_card(context=64, batch=1, prompt=8, cards=4)
    rows = max_fit(model, context=64, batch=1, prompt=8)
    assert [(row.cards, bool(row.reason)) for row in rows] == [(1, False), (2, False), (4, True), (8, True)]


def test_a_bigger_card_holds_what_spyre_cannot() -> None:
    big = Target(name="big", device_memory_bytes=256 * GIB)
    memory = card_memory(_llama(**LLAMA_70B), context=2048, batch=1, prompt=512, target=big)
    assert memory.fits and memory.reserve == int(0.08 * 256 * GIB)


def test_the_reserve_fraction_is_checked() -> None:
    with pytest.raises(ValueError, match=r"device_memory_reserved_fraction must be in \[0, 1\), not 1.0"):
        resolve_target(Target(device_memory_reserved_fraction=1.0))
    assert resolve_target(Target(device_memory_reserved_fraction=0.0)).device_memory_reserved_fraction == 0


def test_estimate_llm_refuses_a_model_that_does_not_fit_before_compiling(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def compiled(*args: object, **kwargs: object) -> None:
        raise AssertionError("compiled a model that does not fit")

    monkeypatch.setattr(estimate_module, "compile_program", compiled)
    with pytest.raises(EstimateError) as error:
        ktir.estimate_llm(_llama(**LLAMA_70B), prompt=512, context=2048)
    assert str(error.value) == (
        "llama with 80 layers at context 2048 x batch 1 does not fit on spyre: needs 142.3 GiB per card, "
        "has 128 GiB (weights 131.4 + KV cache 0.62 + activations 0.04 + runtime reserve 10.2 GiB)"
    )


def test_an_estimate_carries_its_memory() -> None:
    config = _llama(hidden_size=64, intermediate_size=128, num_attention_heads=4, num_key_value_heads=2,
                    num_hidden_layers=2, vocab_size=256)  # fmt: skip
    estimate = ktir.estimate_llm(config, prompt=8, context=16)
    assert estimate.memory == card_memory(config, context=16, batch=1, prompt=8)
    assert (
        estimate.to_dict()["memory"]["kv_cache"] == 2 * 2 * 2 * 16 * 128
        and estimate.to_dict()["memory"]["fits"]
    )
