"""
Device memory per card (`ktir.llm.capacity`): weights, KV cache, activations and the runtime
reserve against `Target.device_memory_bytes`, on one card and split over several. The expected
bytes are computed here from the models' shapes, independently of the module's parameter walk.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import torch
import transformers

import ktir
from ktir.hardware.target import SPYRE, Target, resolve_target
from ktir.layout.spyre import SpyreTensorLayout
from ktir.llm import estimate as estimate_module
from ktir.llm.capacity import GIB, MemoryModel, _card_shape, _card_weight_bytes, _Shape, card_memory, max_fit
from ktir.llm.estimate import EstimateError
from ktir.llm.quantization import WeightFormat

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


@pytest.mark.slow
def test_an_estimate_carries_its_memory() -> None:
    config = _llama(hidden_size=64, intermediate_size=128, num_attention_heads=4, num_key_value_heads=2,
                    num_hidden_layers=2, vocab_size=256)  # fmt: skip
    estimate = ktir.estimate_llm(config, prompt=8, context=16)
    assert estimate.memory == card_memory(config, context=16, batch=1, prompt=8)
    assert (
        estimate.to_dict()["memory"]["kv_cache"] == 2 * 2 * 2 * 16 * 128
        and estimate.to_dict()["memory"]["fits"]
    )


# -- Precision: fp8 / int8 weights, fp8 KV cache (`ktir.llm.quantization`) ----------------------------


def _llama_fp8_weights(h: int, i: int, heads: int, kv: int, layers: int, vocab: int) -> int:
    """
    Bytes of an untied Llama on one card with 1-byte linear layers (dims multiples of 128),
    fp32 scales per output row (each scale vector padded to whole 32-element sticks), 16-bit
    embedding, LM head and norms.
    """
    head_dim = h // heads
    rows = (h, kv * head_dim, kv * head_dim, h, i, i, h)  # q, k, v, o, gate, up, down
    linear = 2 * h * h + 2 * kv * head_dim * h + 3 * h * i
    scales = sum(-(-r // 32) * 128 for r in rows)
    return layers * (linear + scales + 2 * 2 * h) + 2 * (2 * vocab * h + h)


def test_fp8_weights_take_one_byte_and_a_scale_per_row() -> None:
    config = transformers.AutoConfig.for_model(**json.loads((CONFIGS / "llama-3-8b.json").read_text()))
    fp16, fp8 = (card_memory(config, dtype=d) for d in ("fp16", "fp8"))
    assert fp8.weights == _llama_fp8_weights(4096, 14336, 32, 8, 32, 128256) == 9_086_705_664
    assert fp8.weights / fp16.weights == pytest.approx(0.566, abs=0.001)  # embedding and LM head stay 16-bit
    assert card_memory(config, dtype="int8").weights == fp8.weights
    assert card_memory(config, dtype="fp8", kv_dtype="fp8").kv_cache == fp16.kv_cache // 2


def test_a_stick_holds_128_fp8_elements() -> None:
    # Rows of 96 elements take two 64-element fp16 sticks (256 B) but one 128-element fp8 stick.
    config = _llama(hidden_size=96, intermediate_size=128, num_attention_heads=3, num_key_value_heads=3,
                    num_hidden_layers=1, vocab_size=128)  # fmt: skip
    rows = 4 * 96 + 2 * 128 + 96  # q, k, v, o: 96 rows of 96; gate, up: 128 rows of 96; down: 96 of 128
    scale_sticks = 5 * 3 + 2 * 4  # fp32 scales, 32 per stick: 96 rows take 3 sticks, 128 rows 4
    fp16 = card_memory(config, dtype="fp16", context=64, prompt=8).weights
    fp8 = card_memory(config, dtype="fp8", context=64, prompt=8).weights
    assert fp16 - fp8 == rows * 256 - rows * 128 - scale_sticks * 128 == 91_264


COMPRESSED_FP8 = {
    "quant_method": "compressed-tensors", "format": "float-quantized", "ignore": ["lm_head"],
    "config_groups": {"group_0": {"targets": ["Linear"], "weights": {
        "num_bits": 8, "type": "float", "strategy": "channel", "symmetric": True, "dynamic": False}}},
    "kv_cache_scheme": {"num_bits": 8, "type": "float", "strategy": "tensor"},
}  # fmt: skip


def test_the_checkpoints_quantization_config_is_read() -> None:
    plain = json.loads((CONFIGS / "llama-3-8b.json").read_text())
    expected = card_memory(transformers.AutoConfig.for_model(**plain), dtype="fp8", kv_dtype="fp8")
    compressed = transformers.AutoConfig.for_model(**plain, quantization_config=COMPRESSED_FP8)
    assert card_memory(compressed) == expected
    fbgemm = {
        "quant_method": "fbgemm_fp8",
        "modules_to_not_convert": ["lm_head"],
        "activation_scale_ub": 1200.0,
    }
    memory = card_memory(transformers.AutoConfig.for_model(**plain, quantization_config=fbgemm))
    assert (memory.weights, memory.kv_cache) == (expected.weights, 2 * expected.kv_cache)  # fp16 cache
    # Per-tensor scales: one stick per weight instead of a vector per output row.
    per_tensor = {
        **COMPRESSED_FP8,
        "config_groups": {"g": {"weights": {"num_bits": 8, "type": "float", "strategy": "tensor"}}},
    }
    tensor = card_memory(transformers.AutoConfig.for_model(**plain, quantization_config=per_tensor))
    assert (
        tensor.weights
        == expected.weights
        - 32 * (sum(-(-r // 32) for r in (4096, 1024, 1024, 4096, 14336, 14336, 4096)) - 7) * 128
    )


@pytest.mark.parametrize(
    ("quantization", "message"),
    [
        ({"quant_method": "gptq", "bits": 4}, "quantization_config 'gptq' is not a form ktir reads"),
        (
            {
                **COMPRESSED_FP8,
                "config_groups": {"g": {"weights": {"num_bits": 4, "type": "int", "strategy": "group"}}},
            },
            "compressed-tensors weights of 4 bits, type 'int', strategy 'group'",
        ),
    ],
)
def test_a_quantization_ktir_does_not_read_is_refused(quantization: dict[str, object], message: str) -> None:
    config = _llama(hidden_size=64, intermediate_size=128, num_attention_heads=4, num_hidden_layers=1,
                    vocab_size=256, quantization_config=quantization)  # fmt: skip
    with pytest.raises(EstimateError, match=re.escape(message)):
        card_memory(config)


def test_fp8_puts_llama_3_70b_on_one_card() -> None:
    memory = card_memory(_llama(**LLAMA_70B), dtype="fp8")
    assert memory.fits and memory.weights == _llama_fp8_weights(8192, 28672, 64, 8, 80, 128256)


def test_a_scalar_parameter_is_held_whole_on_every_card() -> None:
    """A 0-d parameter (a learned scale) is replicated on every card, not split, wherever it sits."""
    # Named as the split reads names: a whole-model scale, a K projection's, a column-parallel one's.
    for name in ("logit_scale", "model.layers.0.self_attn.k_proj.weight", "model.layers.0.mlp.up_proj.bias"):
        assert _card_shape(name, (), cards=2, kv_card=1, kv_heads=2) == ()
    model = torch.nn.Module()
    model.logit_scale = torch.nn.Parameter(torch.tensor(1.0))
    shape = _Shape(layers=1, hidden=64, intermediate=128, heads=2, kv_heads=2, head_dim=32, vocab=64)
    one_card, four_cards = (_card_weight_bytes(model, cards, 1, shape, WeightFormat()) for cards in (1, 4))
    assert one_card == four_cards == SpyreTensorLayout((), "float16").device_bytes
