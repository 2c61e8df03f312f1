"""
fp8 weights end to end (docs/estimating.md "fp8 weights"): `Fp8Linear` (W8A8: per-channel fp8
weights, per-token fp8 activations, torch-spyre's `_scaled_mm` form) compiled by `ktir.compile`
and compared with a float64 oracle that quantizes the same way (`round_e4m3`, deterministic on
every CPU); and the fp8 program reads about half the weight bytes of the fp16 one.
"""

import numpy as np
import pytest
import torch
import transformers
from model_zoo import tiny_llama_config

import ktir
from ktir.frontend.fx import import_fx
from ktir.llm.quantization import FP8_MAX, Fp8Linear, quantize_model, weight_format
from ktir.reference.precision import round_e4m3

E4M3_ROUNDING = 2.0**-4
"""Relative error of one rounding to e4m3 (3 mantissa bits, round to nearest)."""


def _oracle_linear(x: np.ndarray, layer: Fp8Linear) -> np.ndarray:
    """`layer` in float64: the same per-token quantization, exact products, no fp16 rounding."""
    w = layer.weight.float().double().numpy()  # e4m3 values, exact in float64
    w_scale = layer.weight_scale.double().numpy()
    scale = np.maximum(np.abs(x).max(-1, keepdims=True) / FP8_MAX, 2.0**-14)
    xq = round_e4m3(np.clip(x / scale, -FP8_MAX, FP8_MAX)).astype(np.float64)
    return (xq @ w.T) * scale * w_scale


class _OracleLinear(torch.nn.Module):
    """An `Fp8Linear` computed in float64 (`_oracle_linear`): the oracle's linear layers."""

    def __init__(self, layer: Fp8Linear) -> None:
        super().__init__()
        self.layer = layer

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.from_numpy(_oracle_linear(x.detach().numpy(), self.layer))


def _quantized_llama() -> tuple[torch.nn.Module, torch.nn.Module, torch.nn.Module]:
    """
    The tiny Llama three ways: fp8 linear layers (per-channel, quantized from its fp16 weights)
    with the rest fp16; the same fp8 layers and the same rest in float64; unquantized float64.
    """
    config = tiny_llama_config()
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(config).eval().half()
    truth = transformers.LlamaForCausalLM(config).eval().double()
    truth.load_state_dict(model.state_dict())
    oracle = transformers.LlamaForCausalLM(config).eval().double()
    oracle.load_state_dict(model.state_dict())
    fp8 = quantize_model(model, weight_format(config, dtype="fp8"))
    for name, module in fp8.named_modules():
        if isinstance(module, Fp8Linear):
            parent, _, leaf = name.rpartition(".")
            setattr(oracle.get_submodule(parent), leaf, _OracleLinear(module))
    return fp8, oracle, truth


def test_an_fp8_linear_layer_is_within_its_derived_bound_of_the_float64_oracle():
    torch.manual_seed(1)
    layer = Fp8Linear.from_linear(torch.nn.Linear(256, 192, bias=False))
    x = torch.randn(16, 256).half()
    program = ktir.compile(layer, (x,), cores=4)
    y = program(x).double().numpy()
    x64 = x.double().numpy()
    exact = _oracle_linear(x64, layer)
    # Both sides quantize x per token; a quantized element may round to the other neighbour when
    # fp16's x / scale differs from float64's, one e4m3 step, at most 2 x 2^-4 of |x_i| / scale:
    # |dy| <= 2 x 2^-4 x (|x| @ |W_q|) x w_scale, plus the f16 roundings of the product and of
    # its two scalings (3 x 2^-11 relative) and the f32 accumulation (K x 2^-24).
    w = layer.weight.float().double().numpy() * layer.weight_scale.double().numpy().T
    magnitude = np.abs(x64) @ np.abs(w).T
    bound = 2 * E4M3_ROUNDING * magnitude + (3 * 2.0**-11 + 256 * 2.0**-24) * (np.abs(exact) + magnitude)
    assert (np.abs(y - exact) <= bound).all()
    # and the weights are fp8 on the device: the program moves the fp8 weight's 256 x 192 bytes once
    assert program.report.compulsory_bytes < 2 * 256 * 192


def test_an_fp8_linear_on_a_batch_of_sequences_multiplies_its_unflattened_rows():
    """
    `Fp8Linear` flattens (batch, tokens) into rows for `_scaled_mm`. The importer multiplies the
    3-D x it came from, as `linear` does, so no reshape is left whose row dim work division could
    only cut batch ways (Granite-3.3-8B fp8 prefill at batch 2 x 1024 needed 8.5 MB of LX per
    core for its scale's max). The values stay the oracle's.
    """
    torch.manual_seed(2)
    layer = Fp8Linear.from_linear(torch.nn.Linear(256, 192, bias=False))
    x = torch.randn(2, 64, 256).half()
    graph = import_fx(layer, (x,))
    names = [op.name for op in graph.walk()]
    assert "ktir.reshape" not in names
    matmul = next(op for op in graph.walk() if op.name == "ktir.matmul")
    assert list(matmul.results[0].type.get_shape()) == [2, 64, 192]
    y = ktir.compile(layer, (x,), cores=8)(x).double().numpy()
    exact = _oracle_linear(x.double().numpy(), layer)
    w = layer.weight.float().double().numpy() * layer.weight_scale.double().numpy().T
    magnitude = np.abs(x.double().numpy()) @ np.abs(w).T
    bound = 2 * E4M3_ROUNDING * magnitude + (3 * 2.0**-11 + 256 * 2.0**-24) * (np.abs(exact) + magnitude)
    assert y.shape == (2, 64, 192) and (np.abs(y - exact) <= bound).all()


@pytest.mark.slow
def test_a_tiny_fp8_llama_runs_end_to_end_within_its_bound():
    fp8, oracle, truth = _quantized_llama()
    ids = torch.randint(0, 256, (1, 24), generator=torch.Generator().manual_seed(3))
    program = ktir.compile(fp8, (ids,), {"use_cache": False}, cores=8)
    logits = program(ids).logits.double().numpy()
    with torch.no_grad():
        expected = oracle(ids, use_cache=False).logits.numpy()
        exact = truth(ids, use_cache=False).logits.numpy()
    # fp8 quantization moves the logits away from the unquantized model; ktir and the oracle both
    # quantize, each activation within one e4m3 rounding (2^-4) of the other's choice, so ktir
    # stays within twice the oracle's own quantization error of it, plus fp16's 8 ulps of the
    # largest logit (the zoo's eager bound).
    quantization_error = np.abs(expected - exact).max()
    slack = 8 * 2.0**-10 * np.abs(expected).max()
    assert np.abs(logits - expected).max() <= 2 * quantization_error + slack
    assert quantization_error > 0  # the oracle quantizes: the bound is not vacuous
