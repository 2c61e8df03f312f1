"""
The zoo's architectures: tiny, random-initialised Hugging Face models built from their config
classes, each with seeded example inputs.

Every architecture has the zoo's shape where its config allows it (hidden 64, 2 layers, 4 heads,
vocab 256, intermediate 128; images 3x32x32 with patch 8; short audio), and `build()` gives
`(model16, model64, args, kwargs)` like the models of `test/unit/test_compile_models.py`: the
same weights in fp16 and fp64 (`model_zoo.pair`, eval mode) and inputs from a `torch.Generator`
seeded by the architecture's name, so every build is identical.

Families: decoder LLMs (`*ForCausalLM`, 16 token ids, `use_cache=False`), encoders (the base
model on 16 token ids), encoder-decoders (16 source and 8 target ids), MoE decoders, vision
transformers, CNNs (a 3x32x32 image), speech encoders (raw audio or log-mel features) and
state-space / recurrent models. `ARCHITECTURES` keeps the ones this transformers version has;
`SKIPPED` names the rest, and the architectures the zoo leaves out, with the reason.

Where the defaults would not give a fair comparison:

- MoE experts run as `experts_implementation="grouped_mm"` (tokens sorted by expert, one
  matmul per expert: transformers' `grouped_mm_fallback` op, which ktir runs on the chip as
  `ktir.grouped_matmul`). It has no fp64 kernel, so these models' truth runs in fp32.
- Mamba-style models are their base models with `residual_in_fp32=False`: otherwise their output
  is fp32 while the model runs in fp16.
- CNNs have their batch-norm statistics `calibrated` on random images, or MobileNet's and
  EfficientNet's outputs vanish (~1e-30) and any two results compare equal.
"""

from __future__ import annotations

import functools
import importlib
import sys
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal

import torch

UNIT_TESTS = Path(__file__).resolve().parents[1] / "unit"
if str(UNIT_TESTS) not in sys.path:
    sys.path.insert(0, str(UNIT_TESTS))

from model_zoo import TINY, pair  # noqa: E402

Family = Literal["decoder", "encoder", "encoder-decoder", "moe", "vision", "cnn", "speech", "ssm"]
FAMILIES: tuple[Family, ...] = (
    "decoder", "encoder", "encoder-decoder", "moe", "vision", "cnn", "speech", "ssm",
)  # fmt: skip
Built = tuple[torch.nn.Module, torch.nn.Module, tuple, dict]
Inputs = Callable[[Any, torch.Generator], tuple[tuple, dict]]

SEQUENCE = 16
"""Token ids per example (decoders and encoders); encoder-decoders get half as many targets."""
IMAGE = 32
"""Height and width of the example images."""


@dataclass(frozen=True)
class Architecture:
    """One zoo entry: a transformers config class, a model class and how to make its inputs."""

    name: str
    family: Family
    config_class: str
    """A name exported by `transformers`, or a dotted path inside it."""
    model_class: str
    config: Mapping[str, Any] = field(hash=False)
    """The config's keyword arguments."""
    inputs: Inputs = field(hash=False, repr=False)
    """(config, generator) -> the example `(args, kwargs)`."""
    wrap: Callable[[torch.nn.Module], torch.nn.Module] | None = field(default=None, hash=False, repr=False)

    @property
    def seed(self) -> int:
        """The seed of the example inputs: a stable hash of the name."""
        return zlib.crc32(self.name.encode()) % 2**31

    def available(self) -> bool:
        """True if this transformers version has both classes."""
        return all(_exists(path) for path in (self.config_class, self.model_class))

    def build(self) -> Built:
        """`(model16, model64, args, kwargs)`: the model in fp16 and fp64, and its example inputs."""
        config = _resolve(self.config_class)(**self.config)
        model_class = _resolve(self.model_class)

        def factory() -> torch.nn.Module:
            model = model_class(config)
            return self.wrap(model) if self.wrap else model

        model16, model64 = pair(factory)
        if self.config.get("experts_implementation") == "grouped_mm":
            model64 = model64.float()  # grouped_mm has no fp64 kernel: an fp32 truth
        args, kwargs = self.inputs(config, torch.Generator().manual_seed(self.seed))
        return model16, model64, args, kwargs


#### Classes by name ####


def _resolve(path: str) -> Any:
    """`transformers.<path>`: an exported name, or `models.x.modeling_x.Name`."""
    import transformers

    module_name, _, name = path.rpartition(".")
    module = importlib.import_module(f"transformers.{module_name}") if module_name else transformers
    return getattr(module, name)


@functools.cache
def _exported_names() -> frozenset[str]:
    """The names `transformers` exports (listing them imports no model code)."""
    import transformers

    return frozenset(dir(transformers))


def _exists(path: str) -> bool:
    import importlib.util

    module_name, _, name = path.rpartition(".")
    if not module_name:
        return name in _exported_names()
    try:
        return importlib.util.find_spec(f"transformers.{module_name}") is not None
    except ModuleNotFoundError:
        return False


#### Example inputs ####


def token_ids(config: Any, generator: torch.Generator, length: int = SEQUENCE) -> torch.Tensor:
    """(1, length) ids in [3, vocab): clear of the usual pad / bos / eos ids 0-2."""
    return torch.randint(3, config.vocab_size, (1, length), generator=generator)


def causal_inputs(config: Any, generator: torch.Generator) -> tuple[tuple, dict]:
    """A decoder's inputs: token ids, without a KV cache."""
    return (token_ids(config, generator),), {"use_cache": False}


def encoder_inputs(config: Any, generator: torch.Generator) -> tuple[tuple, dict]:
    """An encoder's inputs: token ids."""
    return (token_ids(config, generator),), {}


def seq2seq_inputs(config: Any, generator: torch.Generator) -> tuple[tuple, dict]:
    """An encoder-decoder's inputs: source ids and (half as many) target ids."""
    return (token_ids(config, generator), token_ids(config, generator, SEQUENCE // 2)), {}


def noise_inputs(shape: tuple[int, ...], config: Any, generator: torch.Generator) -> tuple[tuple, dict]:
    """One fp16 standard-normal tensor of `shape`: an image, raw audio or log-mel features."""
    return (torch.randn(shape, generator=generator).half(),), {}


IMAGE_INPUTS: Inputs = partial(noise_inputs, (1, 3, IMAGE, IMAGE))


class Seq2Seq(torch.nn.Module):
    """An encoder-decoder called positionally: (source ids, target ids) -> the decoder's states."""

    def __init__(self, inner: torch.nn.Module) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, input_ids: torch.Tensor, decoder_input_ids: torch.Tensor) -> Any:
        """The inner model on both sequences, without a cache."""
        return self.inner(input_ids=input_ids, decoder_input_ids=decoder_input_ids, use_cache=False)


def calibrated(model: torch.nn.Module, batch: int = 4) -> torch.nn.Module:
    """
    `model` with its batch-norm statistics measured on a batch of seeded random images.

    A random-initialised CNN keeps the default statistics (mean 0, variance 1) while its
    activations shrink layer by layer (MobileNet's and EfficientNet's outputs measured ~1e-30),
    which leaves nothing to compare; a trained network's statistics match its activations.
    """
    norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    for norm in norms:
        norm.momentum = None  # a cumulative average: after one batch, that batch's statistics
    images = torch.randn(batch, 3, IMAGE, IMAGE, generator=torch.Generator().manual_seed(0))
    model.train()
    with torch.no_grad():
        model(images)
    return model.eval()


#### Shapes ####

SPECIAL_TOKENS = {"pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2}
LLAMA = {
    "vocab_size": 256,
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "max_position_embeddings": 64,
    **SPECIAL_TOKENS,
}
HEAD16 = {"head_dim": 16}
BERT = TINY
"""Encoders take the shape of every model of the unit tests' zoo (`model_zoo.TINY`)."""
T5 = {
    "vocab_size": 256,
    "d_model": 64,
    "d_kv": 16,
    "d_ff": 128,
    "num_layers": 2,
    "num_heads": 4,
    "relative_attention_num_buckets": 8,
    "relative_attention_max_distance": 16,
    **SPECIAL_TOKENS,
    "decoder_start_token_id": 0,
}
BART = {
    "vocab_size": 256,
    "d_model": 64,
    "encoder_layers": 2,
    "decoder_layers": 2,
    "encoder_attention_heads": 4,
    "decoder_attention_heads": 4,
    "encoder_ffn_dim": 128,
    "decoder_ffn_dim": 128,
    "max_position_embeddings": 64,
    **SPECIAL_TOKENS,
    "decoder_start_token_id": 2,
}
VIT = {
    "image_size": IMAGE,
    "patch_size": 8,
    "num_channels": 3,
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "intermediate_size": 128,
}
SWIN = {
    "image_size": IMAGE, "patch_size": 4, "embed_dim": 32, "depths": [2, 2], "num_heads": [2, 4],
    "window_size": 4,
}  # fmt: skip
STAGES = {"hidden_sizes": [16, 32], "depths": [1, 1]}
AUDIO_ENCODER = {
    "vocab_size": 256,
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "intermediate_size": 128,
    "conv_dim": (32, 32),
    "conv_stride": (5, 2),
    "conv_kernel": (10, 3),
    "num_conv_pos_embeddings": 16,
    "num_conv_pos_embedding_groups": 4,
}
RAW_AUDIO: Inputs = partial(noise_inputs, (1, 400))
MOE = {"num_local_experts": 4, "num_experts_per_tok": 2}
GROUPED = {"experts_implementation": "grouped_mm"}


#### The registry ####


def decoder(name: str, config_class: str, model_class: str, **config: Any) -> Architecture:
    """A causal LM in the Llama shape, `config` overriding it."""
    return Architecture(name, "decoder", config_class, model_class, {**LLAMA, **config}, causal_inputs)


def custom_decoder(name: str, config_class: str, model_class: str, **config: Any) -> Architecture:
    """A causal LM whose config names its sizes its own way: `config` is all of it."""
    return Architecture(name, "decoder", config_class, model_class, config, causal_inputs)


def moe(name: str, config_class: str, model_class: str, **config: Any) -> Architecture:
    """A mixture-of-experts causal LM in the Llama shape."""
    return Architecture(name, "moe", config_class, model_class, {**LLAMA, **GROUPED, **config}, causal_inputs)


def encoder(name: str, config_class: str, model_class: str, **config: Any) -> Architecture:
    """A text encoder (its base model) in the BERT shape."""
    return Architecture(name, "encoder", config_class, model_class, {**BERT, **config}, encoder_inputs)


def seq2seq(name: str, config_class: str, model_class: str, **config: Any) -> Architecture:
    """An encoder-decoder's base model, called on source and target ids."""
    return Architecture(
        name, "encoder-decoder", config_class, model_class, config, seq2seq_inputs, wrap=Seq2Seq
    )


def image(name: str, family: Family, config_class: str, model_class: str, **config: Any) -> Architecture:
    """A vision model on one 3x32x32 image."""
    return Architecture(name, family, config_class, model_class, config, IMAGE_INPUTS)


def cnn(name: str, config_class: str, model_class: str, **config: Any) -> Architecture:
    """A convolutional network on one 3x32x32 image, its batch norms `calibrated`."""
    return Architecture(name, "cnn", config_class, model_class, config, IMAGE_INPUTS, wrap=calibrated)


def speech(
    name: str, config_class: str, model_class: str, shape: tuple[int, ...], **config: Any
) -> Architecture:
    """A speech encoder on one fp16 tensor of `shape` (raw audio or features)."""
    return Architecture(name, "speech", config_class, model_class, config, partial(noise_inputs, shape))


def ssm(name: str, config_class: str, model_class: str, **config: Any) -> Architecture:
    """A state-space, recurrent or hybrid causal LM."""
    return Architecture(name, "ssm", config_class, model_class, config, causal_inputs)


# fmt: off
DECODERS = (
    decoder("llama", "LlamaConfig", "LlamaForCausalLM"),
    decoder("mistral", "MistralConfig", "MistralForCausalLM"),
    decoder("ministral", "MinistralConfig", "MinistralForCausalLM", **HEAD16),
    decoder("qwen2", "Qwen2Config", "Qwen2ForCausalLM"),
    decoder("qwen3", "Qwen3Config", "Qwen3ForCausalLM", **HEAD16),
    decoder("gemma", "GemmaConfig", "GemmaForCausalLM", **HEAD16),
    decoder("gemma2", "Gemma2Config", "Gemma2ForCausalLM", **HEAD16, query_pre_attn_scalar=16),
    decoder("gemma3-text", "Gemma3TextConfig", "Gemma3ForCausalLM", **HEAD16, query_pre_attn_scalar=16),
    decoder("vaultgemma", "VaultGemmaConfig", "VaultGemmaForCausalLM", **HEAD16, query_pre_attn_scalar=16),
    decoder("phi", "PhiConfig", "PhiForCausalLM"),
    decoder("phi3", "Phi3Config", "Phi3ForCausalLM"),
    decoder("stablelm", "StableLmConfig", "StableLmForCausalLM"),
    decoder("starcoder2", "Starcoder2Config", "Starcoder2ForCausalLM"),
    decoder("cohere", "CohereConfig", "CohereForCausalLM"),
    decoder("cohere2", "Cohere2Config", "Cohere2ForCausalLM"),
    decoder("olmo", "OlmoConfig", "OlmoForCausalLM"),
    decoder("olmo2", "Olmo2Config", "Olmo2ForCausalLM"),
    decoder("olmo3", "Olmo3Config", "Olmo3ForCausalLM"),
    decoder("granite", "GraniteConfig", "GraniteForCausalLM"),
    decoder("persimmon", "PersimmonConfig", "PersimmonForCausalLM"),
    decoder("nemotron", "NemotronConfig", "NemotronForCausalLM", **HEAD16),
    decoder("glm", "GlmConfig", "GlmForCausalLM", **HEAD16),
    decoder("glm4", "Glm4Config", "Glm4ForCausalLM", **HEAD16),
    decoder("helium", "HeliumConfig", "HeliumForCausalLM", **HEAD16),
    decoder("smollm3", "SmolLM3Config", "SmolLM3ForCausalLM"),
    decoder("exaone4", "Exaone4Config", "Exaone4ForCausalLM"),
    decoder("arcee", "ArceeConfig", "ArceeForCausalLM"),
    decoder("ernie4.5", "Ernie4_5Config", "Ernie4_5ForCausalLM", **HEAD16),
    decoder("seed-oss", "SeedOssConfig", "SeedOssForCausalLM", **HEAD16),
    decoder("hunyuan-dense", "HunYuanDenseV1Config", "HunYuanDenseV1ForCausalLM", **HEAD16),
    decoder("apertus", "ApertusConfig", "ApertusForCausalLM"),
    decoder("diffllama", "DiffLlamaConfig", "DiffLlamaForCausalLM"),
    decoder("doge", "DogeConfig", "DogeForCausalLM"),
    decoder("modernbert-decoder", "ModernBertDecoderConfig", "ModernBertDecoderForCausalLM"),
    custom_decoder(
        "gpt2", "GPT2Config", "GPT2LMHeadModel", vocab_size=256, n_positions=64, n_embd=64, n_layer=2,
        n_head=4, n_inner=128,
    ),
    custom_decoder(
        "gpt-bigcode", "GPTBigCodeConfig", "GPTBigCodeForCausalLM", vocab_size=256, n_positions=64,
        n_embd=64, n_layer=2, n_head=4, n_inner=128,
    ),
    custom_decoder(
        "gpt-neo", "GPTNeoConfig", "GPTNeoForCausalLM", vocab_size=256, max_position_embeddings=64,
        hidden_size=64, num_layers=2, num_heads=4, intermediate_size=128,
        attention_types=[[["global", "local"], 1]],
    ),
    custom_decoder(
        "gpt-neox", "GPTNeoXConfig", "GPTNeoXForCausalLM", vocab_size=256, hidden_size=64,
        num_hidden_layers=2, num_attention_heads=4, intermediate_size=128, max_position_embeddings=64,
    ),
    custom_decoder(
        "gpt-j", "GPTJConfig", "GPTJForCausalLM", vocab_size=256, n_positions=64, n_embd=64, n_layer=2,
        n_head=4, rotary_dim=8, n_inner=128,
    ),
    custom_decoder(
        "codegen", "CodeGenConfig", "CodeGenForCausalLM", vocab_size=256, n_positions=64, n_ctx=64,
        n_embd=64, n_layer=2, n_head=4, rotary_dim=8, n_inner=128,
    ),
    custom_decoder(
        "opt", "OPTConfig", "OPTForCausalLM", vocab_size=256, hidden_size=64, num_hidden_layers=2,
        ffn_dim=128, num_attention_heads=4, max_position_embeddings=64, word_embed_proj_dim=64,
    ),
    custom_decoder(
        "bloom", "BloomConfig", "BloomForCausalLM", vocab_size=256, hidden_size=64, n_layer=2, n_head=4,
    ),
    custom_decoder(
        "falcon", "FalconConfig", "FalconForCausalLM", vocab_size=256, hidden_size=64,
        num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=64,
    ),
    custom_decoder(
        "mpt", "MptConfig", "MptForCausalLM", d_model=64, n_heads=4, n_layers=2, expansion_ratio=2,
        max_seq_len=64, vocab_size=256,
    ),
    custom_decoder(
        "biogpt", "BioGptConfig", "BioGptForCausalLM", vocab_size=256, hidden_size=64,
        num_hidden_layers=2, num_attention_heads=4, intermediate_size=128, max_position_embeddings=64,
    ),
    custom_decoder(
        "ctrl", "CTRLConfig", "CTRLLMHeadModel", vocab_size=256, n_positions=64, n_embd=64, dff=128,
        n_layer=2, n_head=4,
    ),
)

MOES = (
    moe("mixtral", "MixtralConfig", "MixtralForCausalLM", **MOE),
    moe("phimoe", "PhimoeConfig", "PhimoeForCausalLM", **MOE),
    moe("granite-moe", "GraniteMoeConfig", "GraniteMoeForCausalLM", **MOE),
    moe(
        "granite-moe-shared", "GraniteMoeSharedConfig", "GraniteMoeSharedForCausalLM", **MOE,
        shared_intermediate_size=64,
    ),
    moe(
        "qwen2-moe", "Qwen2MoeConfig", "Qwen2MoeForCausalLM", num_experts=4, num_experts_per_tok=2,
        moe_intermediate_size=32, shared_expert_intermediate_size=64,
    ),
    moe(
        "qwen3-moe", "Qwen3MoeConfig", "Qwen3MoeForCausalLM", **HEAD16, num_experts=4,
        num_experts_per_tok=2, moe_intermediate_size=32,
    ),
    moe("olmoe", "OlmoeConfig", "OlmoeForCausalLM", num_experts=4, num_experts_per_tok=2),
    moe(
        "deepseek-v2", "DeepseekV2Config", "DeepseekV2ForCausalLM", num_key_value_heads=4,
        moe_intermediate_size=32, n_routed_experts=4, n_shared_experts=1, num_experts_per_tok=2,
        n_group=1, topk_group=1, first_k_dense_replace=1, q_lora_rank=32, kv_lora_rank=16,
        qk_rope_head_dim=8, qk_nope_head_dim=8, v_head_dim=16,
    ),
    moe(
        "deepseek-v3", "DeepseekV3Config", "DeepseekV3ForCausalLM", num_key_value_heads=4,
        moe_intermediate_size=32, n_routed_experts=4, n_shared_experts=1, num_experts_per_tok=2,
        n_group=1, topk_group=1, first_k_dense_replace=1, q_lora_rank=32, kv_lora_rank=16,
        qk_rope_head_dim=8, qk_nope_head_dim=8, v_head_dim=16,
    ),
    moe(
        "glm4-moe", "Glm4MoeConfig", "Glm4MoeForCausalLM", **HEAD16, moe_intermediate_size=32,
        n_routed_experts=4, n_shared_experts=1, num_experts_per_tok=2, n_group=1, topk_group=1,
        first_k_dense_replace=1,
    ),
    moe(
        "ernie4.5-moe", "Ernie4_5_MoeConfig", "Ernie4_5_MoeForCausalLM", **HEAD16, moe_num_experts=4,
        moe_k=2, moe_intermediate_size=32, moe_layer_start_index=0,
    ),
    moe(
        "llama4-text", "Llama4TextConfig", "Llama4ForCausalLM", **HEAD16, num_local_experts=4,
        num_experts_per_tok=1, intermediate_size_mlp=128, interleave_moe_layer_step=1,
        experts_implementation=None,  # its own expert loop: setting one is refused
    ),
    moe("gpt-oss", "GptOssConfig", "GptOssForCausalLM", **HEAD16, **MOE),
    moe(
        "jetmoe", "JetMoeConfig", "JetMoeForCausalLM", kv_channels=16, num_local_experts=4,
        num_experts_per_tok=2, experts_implementation=None,  # its own expert loop
    ),
    Architecture(
        "dbrx", "moe", "DbrxConfig", "DbrxForCausalLM",
        {
            "d_model": 64, "n_heads": 4, "n_layers": 2, "max_seq_len": 64, "vocab_size": 256,
            "attn_config": {"kv_n_heads": 2, "rope_theta": 10000.0, "clip_qkv": 8.0},
            "ffn_config": {"ffn_hidden_size": 128, "moe_num_experts": 4, "moe_top_k": 2},
        },
        causal_inputs,
    ),
)

ENCODERS = (
    encoder("bert", "BertConfig", "BertModel"),
    encoder("roberta", "RobertaConfig", "RobertaModel"),
    encoder("xlm-roberta", "XLMRobertaConfig", "XLMRobertaModel"),
    encoder("xlm-roberta-xl", "XLMRobertaXLConfig", "XLMRobertaXLModel"),
    encoder("camembert", "CamembertConfig", "CamembertModel"),
    encoder("ernie", "ErnieConfig", "ErnieModel"),
    encoder("megatron-bert", "MegatronBertConfig", "MegatronBertModel"),
    encoder("layoutlm", "LayoutLMConfig", "LayoutLMModel"),
    encoder("albert", "AlbertConfig", "AlbertModel", embedding_size=32),
    encoder("electra", "ElectraConfig", "ElectraModel", embedding_size=32),
    encoder("roformer", "RoFormerConfig", "RoFormerModel", embedding_size=64),
    encoder("convbert", "ConvBertConfig", "ConvBertModel", embedding_size=64, conv_kernel_size=3),
    encoder(
        "deberta", "DebertaConfig", "DebertaModel", relative_attention=True, pos_att_type=["c2p", "p2c"],
        position_biased_input=False,
    ),
    encoder(
        "deberta-v2", "DebertaV2Config", "DebertaV2Model", relative_attention=True,
        pos_att_type=["p2c", "c2p"], position_buckets=32, norm_rel_ebd="layer_norm", share_att_key=True,
        position_biased_input=False,
    ),
    encoder("mpnet", "MPNetConfig", "MPNetModel"),
    encoder("modernbert", "ModernBertConfig", "ModernBertModel", **SPECIAL_TOKENS, local_attention=8),
    encoder("eurobert", "EuroBertConfig", "EuroBertModel", num_key_value_heads=4, **SPECIAL_TOKENS),
    encoder(
        "esm", "EsmConfig", "EsmModel", pad_token_id=1, mask_token_id=2, position_embedding_type="rotary",
    ),
    encoder("big-bird", "BigBirdConfig", "BigBirdModel", attention_type="original_full"),
    encoder("squeezebert", "SqueezeBertConfig", "SqueezeBertModel", embedding_size=64),
    encoder(
        "mobilebert", "MobileBertConfig", "MobileBertModel", embedding_size=32, intra_bottleneck_size=32,
        true_hidden_size=32, num_feedforward_networks=2,
    ),
    encoder("rembert", "RemBertConfig", "RemBertModel", input_embedding_size=32, output_embedding_size=32),
    Architecture(
        "funnel", "encoder", "FunnelConfig", "FunnelBaseModel",
        {"vocab_size": 256, "block_sizes": [1, 1], "d_model": 64, "n_head": 4, "d_head": 16, "d_inner": 128},
        encoder_inputs,
    ),
    Architecture(
        "distilbert", "encoder", "DistilBertConfig", "DistilBertModel",
        {
            "vocab_size": 256, "max_position_embeddings": 64, "n_layers": 2, "n_heads": 4, "dim": 64,
            "hidden_dim": 128,
        },
        encoder_inputs,
    ),
    Architecture("t5-encoder", "encoder", "T5Config", "T5EncoderModel", T5, encoder_inputs),
    Architecture("mt5-encoder", "encoder", "MT5Config", "MT5EncoderModel", T5, encoder_inputs),
    Architecture("umt5-encoder", "encoder", "UMT5Config", "UMT5EncoderModel", T5, encoder_inputs),
)

ENCODER_DECODERS = (
    seq2seq("t5", "T5Config", "T5Model", **T5),
    seq2seq("bart", "BartConfig", "BartModel", **BART),
    seq2seq("mbart", "MBartConfig", "MBartModel", **BART),
    seq2seq("marian", "MarianConfig", "MarianModel", **BART),
    seq2seq("pegasus", "PegasusConfig", "PegasusModel", **BART),
    seq2seq("blenderbot-small", "BlenderbotSmallConfig", "BlenderbotSmallModel", **BART),
    seq2seq("m2m100", "M2M100Config", "M2M100Model", **BART),
)

VISION = (
    image("vit", "vision", "ViTConfig", "ViTModel", **VIT),
    image("deit", "vision", "DeiTConfig", "DeiTModel", **VIT),
    image("vit-msn", "vision", "ViTMSNConfig", "ViTMSNModel", **VIT),
    image("dinov2", "vision", "Dinov2Config", "Dinov2Model", **VIT),
    image(
        "dinov2-registers", "vision", "Dinov2WithRegistersConfig", "Dinov2WithRegistersModel", **VIT,
        num_register_tokens=2,
    ),
    image("dinov3-vit", "vision", "DINOv3ViTConfig", "DINOv3ViTModel", **VIT, num_register_tokens=2),
    image("clip-vision", "vision", "CLIPVisionConfig", "CLIPVisionModel", **VIT),
    image("siglip-vision", "vision", "SiglipVisionConfig", "SiglipVisionModel", **VIT),
    image("beit", "vision", "BeitConfig", "BeitModel", **VIT, use_relative_position_bias=True),
    image("data2vec-vision", "vision", "Data2VecVisionConfig", "Data2VecVisionModel", **VIT),
    image("swin", "vision", "SwinConfig", "SwinModel", **SWIN),
    image("swinv2", "vision", "Swinv2Config", "Swinv2Model", **SWIN),
    image(
        "pvt", "vision", "PvtConfig", "PvtModel", image_size=IMAGE, num_encoder_blocks=2, depths=[1, 1],
        sequence_reduction_ratios=[2, 1], hidden_sizes=[16, 32], patch_sizes=[4, 2], strides=[4, 2],
        num_attention_heads=[1, 2], mlp_ratios=[2, 2],
    ),
    image(
        "segformer", "vision", "SegformerConfig", "SegformerModel", num_encoder_blocks=2, depths=[1, 1],
        sr_ratios=[2, 1], hidden_sizes=[16, 32], patch_sizes=[7, 3], strides=[4, 2],
        num_attention_heads=[1, 2], mlp_ratios=[2, 2],
    ),
)

CNNS = (
    cnn("resnet", "ResNetConfig", "ResNetModel", embedding_size=16, **STAGES, layer_type="basic"),
    cnn("resnet-bottleneck", "ResNetConfig", "ResNetModel", embedding_size=16, **STAGES),
    cnn("convnext", "ConvNextConfig", "ConvNextModel", num_stages=2, **STAGES),
    cnn("convnextv2", "ConvNextV2Config", "ConvNextV2Model", num_stages=2, **STAGES),
    cnn("regnet", "RegNetConfig", "RegNetModel", embedding_size=16, **STAGES, groups_width=8),
    # BiT's group norms have `num_groups` groups (32 by default): 8 fit its 8-channel bottlenecks.
    cnn(
        "bit", "BitConfig", "BitModel", embedding_size=32, hidden_sizes=[32, 64], depths=[1, 1], num_groups=8,
    ),
    cnn("mobilenet-v1", "MobileNetV1Config", "MobileNetV1Model", image_size=IMAGE, depth_multiplier=0.25),
    cnn("mobilenet-v2", "MobileNetV2Config", "MobileNetV2Model", image_size=IMAGE, depth_multiplier=0.25),
    # EfficientNet draws its batch-norm scales from N(0, initializer_range): at the default 0.02
    # its output is ~1e-30 even with calibrated statistics.
    cnn(
        "efficientnet", "EfficientNetConfig", "EfficientNetModel", image_size=IMAGE,
        width_coefficient=0.25, depth_coefficient=0.25, hidden_dim=320, initializer_range=1.0,
    ),
)

SPEECH = (
    speech(
        "whisper-encoder", "WhisperConfig", "models.whisper.modeling_whisper.WhisperEncoder", (1, 16, 32),
        vocab_size=256, num_mel_bins=16, d_model=64, encoder_layers=2, encoder_attention_heads=4,
        encoder_ffn_dim=128, decoder_layers=2, decoder_attention_heads=4, decoder_ffn_dim=128,
        max_source_positions=16, max_target_positions=16,
    ),
    speech("wav2vec2", "Wav2Vec2Config", "Wav2Vec2Model", (1, 400), **AUDIO_ENCODER),
    speech("hubert", "HubertConfig", "HubertModel", (1, 400), **AUDIO_ENCODER),
    speech("data2vec-audio", "Data2VecAudioConfig", "Data2VecAudioModel", (1, 400), **AUDIO_ENCODER),
    speech("unispeech", "UniSpeechConfig", "UniSpeechModel", (1, 400), **AUDIO_ENCODER),
    speech(
        "wavlm", "WavLMConfig", "WavLMModel", (1, 400), **AUDIO_ENCODER, num_buckets=32,
        max_bucket_distance=64,
    ),
    speech("sew", "SEWConfig", "SEWModel", (1, 400), **AUDIO_ENCODER, squeeze_factor=2),
    speech(
        "wav2vec2-conformer", "Wav2Vec2ConformerConfig", "Wav2Vec2ConformerModel", (1, 400),
        **AUDIO_ENCODER, conv_depthwise_kernel_size=3, position_embeddings_type="rotary",
    ),
    speech(
        "ast", "ASTConfig", "ASTModel", (1, 32, 32), hidden_size=64, num_hidden_layers=2,
        num_attention_heads=4, intermediate_size=128, patch_size=16, frequency_stride=8, time_stride=8,
        max_length=32, num_mel_bins=32,
    ),
    speech(
        "speech2text-encoder", "Speech2TextConfig",
        "models.speech_to_text.modeling_speech_to_text.Speech2TextEncoder", (1, 32, 16),
        vocab_size=256, d_model=64, encoder_layers=2, encoder_attention_heads=4, encoder_ffn_dim=128,
        decoder_layers=2, decoder_attention_heads=4, decoder_ffn_dim=128,
        input_feat_per_channel=16, conv_channels=32, max_source_positions=64, max_target_positions=64,
    ),
    speech(
        "moonshine-encoder", "MoonshineConfig", "models.moonshine.modeling_moonshine.MoonshineEncoder",
        (1, 2000),
        vocab_size=256, hidden_size=64, intermediate_size=128, encoder_num_hidden_layers=2,
        decoder_num_hidden_layers=2, encoder_num_attention_heads=4, decoder_num_attention_heads=4,
    ),
)

SSMS = (
    ssm(
        "mamba", "MambaConfig", "MambaModel", vocab_size=256, hidden_size=64, state_size=8,
        num_hidden_layers=2, expand=2, conv_kernel=4, time_step_rank=8, residual_in_fp32=False,
    ),
    ssm(
        "falcon-mamba", "FalconMambaConfig", "FalconMambaModel", vocab_size=256, hidden_size=64,
        state_size=8, num_hidden_layers=2, expand=2, conv_kernel=4, time_step_rank=8, residual_in_fp32=False,
    ),
    ssm(
        "mamba2", "Mamba2Config", "Mamba2Model", vocab_size=256, hidden_size=64, num_heads=8,
        head_dim=16, state_size=8, n_groups=1, expand=2, num_hidden_layers=2, chunk_size=16,
        residual_in_fp32=False,
    ),
    ssm(
        "recurrent-gemma", "RecurrentGemmaConfig", "RecurrentGemmaForCausalLM", vocab_size=256,
        hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=1, lru_width=64, attention_window_size=16, conv1d_width=4,
        block_types=["recurrent", "attention"], **SPECIAL_TOKENS,
    ),
    # RWKV rescales its weights in place on the first inference call unless rescale_every=0
    # (an fp16 overflow guard for deep models; 2 layers do not need it).
    ssm(
        "rwkv", "RwkvConfig", "RwkvForCausalLM", vocab_size=256, context_length=64, hidden_size=64,
        num_hidden_layers=2, attention_hidden_size=64, intermediate_size=128, rescale_every=0,
    ),
    ssm(
        "jamba", "JambaConfig", "JambaForCausalLM", **LLAMA, **GROUPED, num_experts=2, num_experts_per_tok=1,
        expert_layer_period=2, expert_layer_offset=1, attn_layer_period=2, attn_layer_offset=1,
        mamba_d_state=8, mamba_d_conv=4, mamba_expand=2, mamba_dt_rank=8, use_mamba_kernels=False,
    ),
    ssm(
        "bamba", "BambaConfig", "BambaForCausalLM", **LLAMA, attn_layer_indices=[1], mamba_n_heads=8,
        mamba_d_head=16, mamba_n_groups=1, mamba_d_state=8, mamba_chunk_size=16,
    ),
    ssm(
        "falcon-h1", "FalconH1Config", "FalconH1ForCausalLM", **LLAMA, mamba_n_heads=8, mamba_d_head=16,
        mamba_n_groups=1, mamba_d_state=8, mamba_chunk_size=16, mamba_d_ssm=128,
    ),
    ssm(
        "granite-moe-hybrid", "GraniteMoeHybridConfig", "GraniteMoeHybridForCausalLM", **LLAMA, **GROUPED,
        **MOE, shared_intermediate_size=64, layer_types=["mamba", "attention"], mamba_n_heads=8,
        mamba_d_head=16, mamba_n_groups=1, mamba_d_state=8, mamba_chunk_size=16,
    ),
    ssm(
        "lfm2", "Lfm2Config", "Lfm2ForCausalLM", **LLAMA, layer_types=["conv", "full_attention"],
        conv_L_cache=3,
    ),
    ssm(
        "qwen3-next", "Qwen3NextConfig", "Qwen3NextForCausalLM", **LLAMA, **HEAD16, **GROUPED,
        layer_types=["linear_attention", "full_attention"], linear_key_head_dim=16,
        linear_value_head_dim=16, linear_num_key_heads=2, linear_num_value_heads=4, num_experts=4,
        num_experts_per_tok=2, moe_intermediate_size=32, shared_expert_intermediate_size=64,
    ),
    ssm(
        "zamba2", "Zamba2Config", "Zamba2ForCausalLM", **LLAMA, layers_block_type=["mamba", "hybrid"],
        mamba_d_state=8, n_mamba_heads=8, mamba_ngroups=1, chunk_size=16, adapter_rank=8,
        use_mamba_kernels=False,
    ),
)

# fmt: on

SKIPPED: dict[str, str] = {
    "internlm2": "no InternLM2 config or model in transformers 5.23 (remote code only)",
    "internlm3": "transformers 5.23 has InternLM3Config but no InternLM3 model class",
    "exaone": "EXAONE 3 is remote code only in transformers 5.23; EXAONE 4 is in the zoo (exaone4)",
    "minicpm": "no MiniCPM (text) model in transformers 5.23",
    "open-llama": "OpenLlama was removed from transformers 5",
    "nomic-bert": "remote code only",
    "xglm": "the fp64 truth cannot run: XGLM's eager attention (it has no SDPA) clamps with "
    "torch.full((), finfo(float64).min), which overflows float32",
    "fnet": "eager fp16 cannot run: torch.fft has no fp16 CPU kernel",
}
"""Architectures the zoo leaves out, and why; classes missing from transformers are added on import."""


def _registry() -> dict[str, Architecture]:
    """The available architectures, in family order; the missing ones go to `SKIPPED`."""
    found: dict[str, Architecture] = {}
    for architecture in (*DECODERS, *ENCODERS, *ENCODER_DECODERS, *MOES, *VISION, *CNNS, *SPEECH, *SSMS):
        assert architecture.name not in found, architecture.name
        if architecture.available():
            found[architecture.name] = architecture
        else:
            classes = f"{architecture.config_class} / {architecture.model_class}"
            SKIPPED[architecture.name] = f"{classes} not in this transformers version"
    return found


ARCHITECTURES: dict[str, Architecture] = _registry()
"""Every architecture of the zoo by name, in a fixed order (the runner's order)."""
